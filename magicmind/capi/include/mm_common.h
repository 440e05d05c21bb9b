/* mm_common.h: MagicMind's shared C++ types on mlusim (Status, error::Code, DataType, TensorLocation, ModelKind,
 * QuantizationAlgorithm, Dims). Enum values are this clone's (MagicMind publishes only the names). */
#ifndef MLUSIM_MM_COMMON_H
#define MLUSIM_MM_COMMON_H

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "mm_capi.h"

namespace magicmind {

namespace error {
enum class Code : int {
  OK = 0, CANCELLED = 1, UNKNOWN = 2, INVALID_ARGUMENT = 3, DEADLINE_EXCEEDED = 4, NOT_FOUND = 5,
  ALREADY_EXISTS = 6, PERMISSION_DENIED = 7, RESOURCE_EXHAUSTED = 8, FAILED_PRECONDITION = 9, ABORTED = 10,
  OUT_OF_RANGE = 11, UNIMPLEMENTED = 12, INTERNAL = 13, UNAVAILABLE = 14, DATA_LOSS = 15, UNAUTHENTICATED = 16
};
}  // namespace error

class Status {
 public:
  Status() : code_(error::Code::OK) {}
  Status(error::Code code, const std::string &message) : code_(code), message_(message) {}
  static Status OK() { return Status(); }
  bool ok() const { return code_ == error::Code::OK; }
  error::Code code() const { return code_; }
  const std::string &error_message() const { return message_; }
  std::string ToString() const { return ok() ? std::string("OK") : message_; }
  bool operator==(const Status &other) const { return code_ == other.code_; }
  bool operator!=(const Status &other) const { return code_ != other.code_; }
  /* A call's status: OK, or its code with the message the library left for this thread. */
  static Status FromCall(int code) {
    if (code == 0) return Status();
    char buffer[2048];
    mmsim_last_message(buffer, sizeof(buffer));
    return Status(static_cast<error::Code>(code), buffer);
  }

 private:
  error::Code code_;
  std::string message_;
};

inline std::ostream &operator<<(std::ostream &out, const Status &status) { return out << status.ToString(); }

enum class DataType : int {
  INVALID = 0, FLOAT32 = 1, FLOAT16 = 2, INT8 = 3, INT16 = 4, INT32 = 5, INT64 = 6, UINT8 = 7, UINT16 = 8,
  UINT32 = 9, UINT64 = 10, BOOL = 11, QINT8 = 12, QINT16 = 13, FLOAT64 = 14, BFLOAT16 = 15, TENSORLIST = 16
};

inline const char *DataTypeName(DataType type) {
  static const char *names[] = {"INVALID", "FLOAT32", "FLOAT16", "INT8",  "INT16",  "INT32",   "INT64",    "UINT8",
                                "UINT16",  "UINT32",  "UINT64",  "BOOL",  "QINT8",  "QINT16",  "FLOAT64",  "BFLOAT16",
                                "TENSORLIST"};
  int index = static_cast<int>(type);
  return index >= 0 && index <= 16 ? names[index] : "INVALID";
}

inline size_t DataTypeSize(DataType type) {
  switch (type) {
    case DataType::INT8: case DataType::UINT8: case DataType::BOOL: case DataType::QINT8: return 1;
    case DataType::FLOAT16: case DataType::INT16: case DataType::UINT16: case DataType::QINT16:
    case DataType::BFLOAT16: return 2;
    case DataType::FLOAT32: case DataType::INT32: case DataType::UINT32: return 4;
    case DataType::INT64: case DataType::UINT64: case DataType::FLOAT64: return 8;
    default: return 0;
  }
}

inline std::ostream &operator<<(std::ostream &out, DataType type) { return out << DataTypeName(type); }

enum class TensorLocation : int { kHost = 0, kMLU = 1, kRemoteHost = 2, kRemoteMLU = 3 };
enum class ModelKind : int { kOnnx = 0, kPytorch = 1, kCaffe = 2, kTensorflow = 3 };
enum class QuantizationAlgorithm : int { INVALID = 0, LINEAR_ALGORITHM = 1, EQNM_ALGORITHM = 2 };

class Dims {
 public:
  Dims() {}
  Dims(const std::vector<int64_t> &dims) : dims_(dims) {}
  Dims(std::initializer_list<int64_t> dims) : dims_(dims) {}
  const std::vector<int64_t> &GetDims() const { return dims_; }
  int64_t GetDimsNum() const { return static_cast<int64_t>(dims_.size()); }
  int64_t GetDimValue(int64_t index) const { return dims_.at(static_cast<size_t>(index)); }
  int64_t GetElementCount() const {
    int64_t count = 1;
    for (int64_t d : dims_) {
      if (d < 0) return -1;
      count *= d;
    }
    return count;
  }
  int64_t operator[](int64_t index) const { return dims_.at(static_cast<size_t>(index)); }
  bool operator==(const Dims &other) const { return dims_ == other.dims_; }
  bool operator!=(const Dims &other) const { return dims_ != other.dims_; }

 private:
  std::vector<int64_t> dims_;
};

inline std::ostream &operator<<(std::ostream &out, const Dims &dims) {
  out << "[";
  for (size_t i = 0; i < dims.GetDims().size(); ++i) out << (i ? ", " : "") << dims.GetDims()[i];
  return out << "]";
}

namespace detail {
inline std::string Text(int64_t (*query)(int64_t, char *, int64_t), int64_t handle) {
  char buffer[1024];
  return query(handle, buffer, sizeof(buffer)) >= 0 ? std::string(buffer) : std::string();
}
inline Dims DimsOf(int64_t rank, const int64_t *values) {
  return rank < 0 ? Dims() : Dims(std::vector<int64_t>(values, values + rank));
}
}  // namespace detail

}  // namespace magicmind

#endif
