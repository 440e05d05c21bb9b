/* mm_parser.h: MagicMind's framework parsers on mlusim: CreateIParser<ModelKind::kOnnx, std::string>(),
 * CreateIParser<ModelKind::kCaffe, std::string, std::string>() (weights, then prototxt), SetModelParam, Parse. */
#ifndef MLUSIM_MM_PARSER_H
#define MLUSIM_MM_PARSER_H

#include <string>
#include <vector>

#include "mm_builder.h"

namespace magicmind {

namespace detail {
inline std::string Json(const std::string &value) { return "\"" + value + "\""; }
inline std::string Json(const char *value) { return Json(std::string(value)); }
inline std::string Json(bool value) { return value ? "true" : "false"; }
inline std::string Json(const std::vector<std::string> &values) {
  std::string json = "[";
  for (size_t i = 0; i < values.size(); ++i) json += (i ? ", " : "") + Json(values[i]);
  return json + "]";
}
inline std::string Json(const std::vector<DataType> &values) {
  std::string json = "[";
  for (size_t i = 0; i < values.size(); ++i) json += (i ? ", \"" : "\"") + std::string(DataTypeName(values[i])) + "\"";
  return json + "]";
}
}  // namespace detail

template <ModelKind Kind, typename... Paths>
class IParser {
 public:
  explicit IParser(int64_t handle) : handle_(handle) {}
  template <typename Value>
  Status SetModelParam(const std::string &key, const Value &value) {
    return Status::FromCall(mmsim_parser_set_model_param(handle_, key.c_str(), detail::Json(value).c_str()));
  }
  Status Parse(INetwork *network, const std::string &path) {
    return Status::FromCall(mmsim_parser_parse(handle_, network->Handle(), path.c_str(), nullptr));
  }
  Status Parse(INetwork *network, const std::string &path, const std::string &second) {
    return Status::FromCall(mmsim_parser_parse(handle_, network->Handle(), path.c_str(), second.c_str()));
  }
  void Destroy() {
    mmsim_destroy(handle_);
    delete this;
  }

 private:
  int64_t handle_;
};

template <ModelKind Kind, typename... Paths>
inline IParser<Kind, Paths...> *CreateIParser() {
  int64_t parser = mmsim_create_parser(static_cast<int64_t>(Kind));
  return parser ? new IParser<Kind, Paths...>(parser) : nullptr;
}

}  // namespace magicmind

#endif
