/* mm_capi.h: the C functions libmagicmind_runtime.so exports for MagicMind's C++ headers (mm_runtime.h,
 * mm_builder.h, mm_parser.h, mm_calibrator.h), which are inline classes over them. Programs use the C++ API;
 * this layer is the simulator's own (MagicMind's C++ ABI is not public).
 *
 * Objects are opaque handles (int64_t, 0 = none); a call returns a magicmind::error::Code value (0 = OK) or, for
 * a query, its result (-1 on failure); the message of the last failure on the calling thread is
 * mmsim_last_message's. Device pointers are the simulated device's addresses, as everywhere in the Neuware tree.
 */
#ifndef MLUSIM_MM_CAPI_H
#define MLUSIM_MM_CAPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int64_t mmsim_last_message(char *buffer, int64_t capacity);
int mmsim_destroy(int64_t handle);

/* IModel */
int64_t mmsim_create_model(void);
int mmsim_model_deserialize_from_file(int64_t model, const char *path);
int mmsim_model_deserialize_from_memory(int64_t model, const void *data, int64_t size);
int mmsim_model_serialize_to_file(int64_t model, const char *path);
int64_t mmsim_model_serialized_size(int64_t model);
int mmsim_model_serialize_to_memory(int64_t model, void *data, int64_t size);
int64_t mmsim_model_count(int64_t model, int outputs);
int64_t mmsim_model_name(int64_t model, int outputs, int64_t index, char *buffer, int64_t capacity);
int64_t mmsim_model_dims(int64_t model, int outputs, int64_t index, int64_t *dims, int64_t capacity);
int64_t mmsim_model_dtype(int64_t model, int outputs, int64_t index);
int64_t mmsim_model_create_engine(int64_t model, const char *device_type, int const_data_init);

/* IEngine */
int mmsim_engine_const_data_size(int64_t engine, int64_t *size);
int mmsim_engine_context_workspace_size(int64_t engine, const int64_t *ranks, const int64_t *dims, int64_t count,
                                        int64_t *size);
int64_t mmsim_engine_create_context(int64_t engine);

/* IContext */
int64_t mmsim_context_create_tensors(int64_t context, int outputs, int64_t *tensors, int64_t capacity);
int mmsim_context_infer_output_shape(int64_t context, const int64_t *inputs, int64_t input_count,
                                     const int64_t *outputs, int64_t output_count);
int64_t mmsim_context_enqueue(int64_t context, const int64_t *inputs, int64_t input_count, const int64_t *outputs,
                              int64_t output_count, int64_t *produced, int64_t capacity, intptr_t queue);

/* IRTTensor */
int64_t mmsim_tensor_name(int64_t tensor, char *buffer, int64_t capacity);
int64_t mmsim_tensor_dims(int64_t tensor, int64_t *dims, int64_t capacity);
int mmsim_tensor_set_dims(int64_t tensor, const int64_t *dims, int64_t rank);
int64_t mmsim_tensor_dtype(int64_t tensor);
int64_t mmsim_tensor_size(int64_t tensor);
int mmsim_tensor_set_data(int64_t tensor, void *data);
void *mmsim_tensor_data(int64_t tensor);
int64_t mmsim_tensor_location(int64_t tensor);

/* INetwork and its ITensors, IParser, IBuilderConfig, IBuilder */
int64_t mmsim_create_network(void);
int64_t mmsim_network_count(int64_t network, int outputs);
int64_t mmsim_network_tensor(int64_t network, int outputs, int64_t index);
int64_t mmsim_network_add_input(int64_t network, int64_t dtype, const int64_t *dims, int64_t rank);
int mmsim_network_mark_output(int64_t network, int64_t tensor, int unmark);
int64_t mmsim_network_tensor_dims(int64_t tensor, int64_t *dims, int64_t capacity);
int mmsim_network_tensor_set_dims(int64_t tensor, const int64_t *dims, int64_t rank);
int64_t mmsim_network_tensor_dtype(int64_t tensor);
int mmsim_network_tensor_set_dtype(int64_t tensor, int64_t dtype);
int64_t mmsim_network_tensor_name(int64_t tensor, char *buffer, int64_t capacity);
int64_t mmsim_create_parser(int64_t kind);
int mmsim_parser_set_model_param(int64_t parser, const char *key, const char *json_value);
int mmsim_parser_parse(int64_t parser, int64_t network, const char *path, const char *second_path);
int64_t mmsim_create_builder_config(void);
int mmsim_builder_config_parse(int64_t config, const char *text, int from_file);
int64_t mmsim_create_builder(void);
int64_t mmsim_builder_build_model(int64_t builder, const char *name, int64_t network, int64_t config);

/* ICalibData (the program's: its methods are called back) and ICalibrator */
typedef int (*mmsim_calib_shape_fn)(void *object, int64_t *dims, int64_t capacity);
typedef int (*mmsim_calib_int_fn)(void *object);
typedef void *(*mmsim_calib_sample_fn)(void *object);
typedef int (*mmsim_calib_status_fn)(void *object, char *message, int64_t capacity);
int64_t mmsim_create_calib_data(void *object, mmsim_calib_shape_fn shape, mmsim_calib_int_fn data_type,
                                mmsim_calib_sample_fn sample, mmsim_calib_status_fn next,
                                mmsim_calib_status_fn reset);
int64_t mmsim_create_calibrator(const int64_t *data, int64_t count);
int mmsim_calibrator_set_algorithm(int64_t calibrator, int64_t algorithm);
int mmsim_calibrator_calibrate(int64_t calibrator, int64_t network, int64_t config);

#ifdef __cplusplus
}
#endif
#endif
