/* mm_runtime.h: MagicMind's deployment API on mlusim: IModel, IEngine, IContext, IRTTensor (link
 * -lmagicmind_runtime -lcnrt). The classes are thin inline wrappers over libmagicmind_runtime's C functions
 * (mm_capi.h), which run MagicMind's Python implementation on the simulated MLU. */
#ifndef MLUSIM_MM_RUNTIME_H
#define MLUSIM_MM_RUNTIME_H

#include <cnrt.h>

#include <string>
#include <vector>

#include "mm_common.h"

namespace magicmind {

class IRTTensor {
 public:
  explicit IRTTensor(int64_t handle) : handle_(handle) {}
  std::string GetName() const { return detail::Text(mmsim_tensor_name, handle_); }
  Dims GetDimensions() const {
    int64_t dims[16];
    return detail::DimsOf(mmsim_tensor_dims(handle_, dims, 16), dims);
  }
  Status SetDimensions(const Dims &dims) {
    return Status::FromCall(mmsim_tensor_set_dims(handle_, dims.GetDims().data(), dims.GetDimsNum()));
  }
  DataType GetDataType() const { return static_cast<DataType>(mmsim_tensor_dtype(handle_)); }
  int64_t GetSize() const { return mmsim_tensor_size(handle_); }
  Status SetData(void *data) { return Status::FromCall(mmsim_tensor_set_data(handle_, data)); }
  void *GetMutableData() { return mmsim_tensor_data(handle_); }
  const void *GetData() const { return mmsim_tensor_data(handle_); }
  TensorLocation GetMemoryLocation() const { return static_cast<TensorLocation>(mmsim_tensor_location(handle_)); }
  void Destroy() {
    mmsim_destroy(handle_);
    delete this;
  }
  int64_t Handle() const { return handle_; }

 private:
  int64_t handle_;
};

namespace detail {
inline std::vector<int64_t> Handles(const std::vector<IRTTensor *> &tensors) {
  std::vector<int64_t> handles;
  for (IRTTensor *tensor : tensors) handles.push_back(tensor ? tensor->Handle() : 0);
  return handles;
}
}  // namespace detail

class IContext {
 public:
  explicit IContext(int64_t handle) : handle_(handle) {}
  Status CreateInputTensors(std::vector<IRTTensor *> *tensors) { return Create(0, tensors); }
  Status CreateOutputTensors(std::vector<IRTTensor *> *tensors) { return Create(1, tensors); }
  Status InferOutputShape(const std::vector<IRTTensor *> &inputs, const std::vector<IRTTensor *> &outputs) {
    std::vector<int64_t> in = detail::Handles(inputs), out = detail::Handles(outputs);
    return Status::FromCall(mmsim_context_infer_output_shape(handle_, in.data(), in.size(), out.data(),
                                                             out.size()));
  }
  /* Outputs given: written into the memory their SetData gave. */
  Status Enqueue(const std::vector<IRTTensor *> &inputs, const std::vector<IRTTensor *> &outputs, cnrtQueue_t queue) {
    std::vector<int64_t> in = detail::Handles(inputs), out = detail::Handles(outputs);
    int64_t produced = mmsim_context_enqueue(handle_, in.data(), in.size(), out.data(), out.size(), nullptr, 0,
                                             reinterpret_cast<intptr_t>(queue));
    return produced < 0 ? Status::FromCall(static_cast<int>(-produced)) : Status();
  }
  /* Outputs made by MagicMind (their memory its own): the vector is filled. */
  Status Enqueue(const std::vector<IRTTensor *> &inputs, std::vector<IRTTensor *> *outputs, cnrtQueue_t queue) {
    std::vector<int64_t> in = detail::Handles(inputs), made(64);
    int64_t count = mmsim_context_enqueue(handle_, in.data(), in.size(), nullptr, 0, made.data(), made.size(),
                                          reinterpret_cast<intptr_t>(queue));
    if (count < 0) return Status::FromCall(static_cast<int>(-count));
    outputs->clear();
    for (int64_t i = 0; i < count; ++i) outputs->push_back(new IRTTensor(made[i]));
    return Status();
  }
  void Destroy() {
    mmsim_destroy(handle_);
    delete this;
  }

 private:
  Status Create(int outputs, std::vector<IRTTensor *> *tensors) {
    std::vector<int64_t> made(64);
    int64_t count = mmsim_context_create_tensors(handle_, outputs, made.data(), made.size());
    if (count < 0) return Status::FromCall(static_cast<int>(-count));
    tensors->clear();
    for (int64_t i = 0; i < count; ++i) tensors->push_back(new IRTTensor(made[i]));
    return Status();
  }
  int64_t handle_;
};

class IEngine {
 public:
  explicit IEngine(int64_t handle) : handle_(handle) {}
  IContext *CreateIContext() {
    int64_t context = mmsim_engine_create_context(handle_);
    return context ? new IContext(context) : nullptr;
  }
  Status QueryConstDataSize(size_t *size) {
    int64_t bytes = 0;
    int code = mmsim_engine_const_data_size(handle_, &bytes);
    *size = static_cast<size_t>(bytes);
    return Status::FromCall(code);
  }
  Status QueryContextMaxWorkspaceSize(const std::vector<Dims> &dims, size_t *size) {
    std::vector<int64_t> ranks, values;
    for (const Dims &d : dims) {
      ranks.push_back(d.GetDimsNum());
      values.insert(values.end(), d.GetDims().begin(), d.GetDims().end());
    }
    int64_t bytes = 0;
    int code = mmsim_engine_context_workspace_size(handle_, ranks.data(), values.data(), ranks.size(), &bytes);
    *size = static_cast<size_t>(bytes);
    return Status::FromCall(code);
  }
  void Destroy() {
    mmsim_destroy(handle_);
    delete this;
  }

 private:
  int64_t handle_;
};

class IModel {
 public:
  class EngineConfig {
   public:
    EngineConfig() : device_type_("MLU"), const_data_init_(false) {}
    void SetDeviceType(const std::string &type) { device_type_ = type; }
    void SetConstDataInit(bool init) { const_data_init_ = init; }
    const std::string &GetDeviceType() const { return device_type_; }
    bool GetConstDataInit() const { return const_data_init_; }

   private:
    std::string device_type_;
    bool const_data_init_;
  };

  explicit IModel(int64_t handle) : handle_(handle) {}
  Status DeserializeFromFile(const std::string &path) {
    return Status::FromCall(mmsim_model_deserialize_from_file(handle_, path.c_str()));
  }
  Status DeserializeFromMemory(const void *data, size_t size) {
    return Status::FromCall(mmsim_model_deserialize_from_memory(handle_, data, static_cast<int64_t>(size)));
  }
  Status SerializeToFile(const std::string &path) const {
    return Status::FromCall(mmsim_model_serialize_to_file(handle_, path.c_str()));
  }
  Status GetSerializedModelSize(size_t *size) const {
    int64_t bytes = mmsim_model_serialized_size(handle_);
    if (bytes < 0) return Status::FromCall(static_cast<int>(-bytes));
    *size = static_cast<size_t>(bytes);
    return Status();
  }
  Status SerializeToMemory(void *data, size_t size) const {
    return Status::FromCall(mmsim_model_serialize_to_memory(handle_, data, static_cast<int64_t>(size)));
  }
  int64_t GetInputNum() const { return mmsim_model_count(handle_, 0); }
  int64_t GetOutputNum() const { return mmsim_model_count(handle_, 1); }
  std::vector<std::string> GetInputNames() const { return Names(0); }
  std::vector<std::string> GetOutputNames() const { return Names(1); }
  Dims GetInputDimension(int64_t index) const { return DimsAt(0, index); }
  Dims GetOutputDimension(int64_t index) const { return DimsAt(1, index); }
  std::vector<Dims> GetInputDimensions() const { return AllDims(0); }
  std::vector<Dims> GetOutputDimensions() const { return AllDims(1); }
  DataType GetInputDataType(int64_t index) const {
    return static_cast<DataType>(mmsim_model_dtype(handle_, 0, index));
  }
  DataType GetOutputDataType(int64_t index) const {
    return static_cast<DataType>(mmsim_model_dtype(handle_, 1, index));
  }
  std::vector<DataType> GetInputDataTypes() const { return Types(0); }
  std::vector<DataType> GetOutputDataTypes() const { return Types(1); }
  IEngine *CreateIEngine() { return CreateIEngine(EngineConfig()); }
  IEngine *CreateIEngine(const EngineConfig &config) {
    int64_t engine = mmsim_model_create_engine(handle_, config.GetDeviceType().c_str(), config.GetConstDataInit());
    return engine ? new IEngine(engine) : nullptr;
  }
  void Destroy() {
    mmsim_destroy(handle_);
    delete this;
  }
  int64_t Handle() const { return handle_; }

 private:
  Dims DimsAt(int outputs, int64_t index) const {
    int64_t dims[16];
    return detail::DimsOf(mmsim_model_dims(handle_, outputs, index, dims, 16), dims);
  }
  std::vector<Dims> AllDims(int outputs) const {
    std::vector<Dims> all;
    for (int64_t i = 0; i < mmsim_model_count(handle_, outputs); ++i) all.push_back(DimsAt(outputs, i));
    return all;
  }
  std::vector<std::string> Names(int outputs) const {
    std::vector<std::string> names;
    char buffer[1024];
    for (int64_t i = 0; i < mmsim_model_count(handle_, outputs); ++i) {
      names.push_back(mmsim_model_name(handle_, outputs, i, buffer, sizeof(buffer)) >= 0 ? buffer : "");
    }
    return names;
  }
  std::vector<DataType> Types(int outputs) const {
    std::vector<DataType> types;
    for (int64_t i = 0; i < mmsim_model_count(handle_, outputs); ++i) {
      types.push_back(static_cast<DataType>(mmsim_model_dtype(handle_, outputs, i)));
    }
    return types;
  }
  int64_t handle_;
};

inline IModel *CreateIModel() {
  int64_t model = mmsim_create_model();
  return model ? new IModel(model) : nullptr;
}

}  // namespace magicmind

#endif
