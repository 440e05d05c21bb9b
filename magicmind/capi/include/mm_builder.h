/* mm_builder.h: MagicMind's build API on mlusim: INetwork and its ITensors, IBuilderConfig, IBuilder (link
 * -lmagicmind -lmagicmind_runtime -lcnrt); thin inline wrappers over libmagicmind_runtime's C functions. */
#ifndef MLUSIM_MM_BUILDER_H
#define MLUSIM_MM_BUILDER_H

#include <string>
#include <vector>

#include "mm_runtime.h"

namespace magicmind {

class ITensor {
 public:
  explicit ITensor(int64_t handle) : handle_(handle) {}
  Dims GetDimension() const {
    int64_t dims[16];
    return detail::DimsOf(mmsim_network_tensor_dims(handle_, dims, 16), dims);
  }
  Status SetDimension(const Dims &dims) {
    return Status::FromCall(mmsim_network_tensor_set_dims(handle_, dims.GetDims().data(), dims.GetDimsNum()));
  }
  DataType GetDataType() const { return static_cast<DataType>(mmsim_network_tensor_dtype(handle_)); }
  Status SetDataType(DataType type) {
    return Status::FromCall(mmsim_network_tensor_set_dtype(handle_, static_cast<int64_t>(type)));
  }
  std::string GetTensorName() const { return detail::Text(mmsim_network_tensor_name, handle_); }
  int64_t Handle() const { return handle_; }

 private:
  int64_t handle_;
};

class INetwork {
 public:
  explicit INetwork(int64_t handle) : handle_(handle) {}
  int64_t GetInputCount() const { return mmsim_network_count(handle_, 0); }
  int64_t GetOutputCount() const { return mmsim_network_count(handle_, 1); }
  ITensor *GetInput(int64_t index) { return Tensor(0, index); }
  ITensor *GetOutput(int64_t index) { return Tensor(1, index); }
  ITensor *AddInput(DataType type, const Dims &dims) {
    int64_t tensor = mmsim_network_add_input(handle_, static_cast<int64_t>(type), dims.GetDims().data(),
                                             dims.GetDimsNum());
    return Keep(tensor);
  }
  Status MarkOutput(ITensor *tensor) { return Status::FromCall(mmsim_network_mark_output(handle_, tensor->Handle(), 0)); }
  Status UnmarkOutput(ITensor *tensor) {
    return Status::FromCall(mmsim_network_mark_output(handle_, tensor->Handle(), 1));
  }
  void Destroy() {
    for (ITensor *tensor : tensors_) delete tensor;
    mmsim_destroy(handle_);
    delete this;
  }
  int64_t Handle() const { return handle_; }

 private:
  ITensor *Tensor(int outputs, int64_t index) { return Keep(mmsim_network_tensor(handle_, outputs, index)); }
  ITensor *Keep(int64_t tensor) {
    if (!tensor) return nullptr;
    tensors_.push_back(new ITensor(tensor));
    return tensors_.back();
  }
  int64_t handle_;
  std::vector<ITensor *> tensors_;
};

class IBuilderConfig {
 public:
  explicit IBuilderConfig(int64_t handle) : handle_(handle) {}
  Status ParseFromString(const std::string &json) {
    return Status::FromCall(mmsim_builder_config_parse(handle_, json.c_str(), 0));
  }
  Status ParseFromFile(const std::string &path) {
    return Status::FromCall(mmsim_builder_config_parse(handle_, path.c_str(), 1));
  }
  Status SetMLUArch(const std::vector<std::string> &archs) {
    std::string json = "{\"archs\": [";
    for (size_t i = 0; i < archs.size(); ++i) json += (i ? ", \"" : "\"") + archs[i] + "\"";
    return ParseFromString(json + "]}");
  }
  void Destroy() {
    mmsim_destroy(handle_);
    delete this;
  }
  int64_t Handle() const { return handle_; }

 private:
  int64_t handle_;
};

class IBuilder {
 public:
  explicit IBuilder(int64_t handle) : handle_(handle) {}
  IModel *BuildModel(const std::string &name, INetwork *network, IBuilderConfig *config = nullptr) {
    int64_t model = mmsim_builder_build_model(handle_, name.c_str(), network->Handle(),
                                              config ? config->Handle() : 0);
    return model ? new IModel(model) : nullptr;
  }
  void Destroy() {
    mmsim_destroy(handle_);
    delete this;
  }

 private:
  int64_t handle_;
};

inline INetwork *CreateINetwork() {
  int64_t network = mmsim_create_network();
  return network ? new INetwork(network) : nullptr;
}
inline IBuilderConfig *CreateIBuilderConfig() {
  int64_t config = mmsim_create_builder_config();
  return config ? new IBuilderConfig(config) : nullptr;
}
inline IBuilder *CreateIBuilder() {
  int64_t builder = mmsim_create_builder();
  return builder ? new IBuilder(builder) : nullptr;
}

}  // namespace magicmind

#endif
