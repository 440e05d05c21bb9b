/* mm_calibrator.h: MagicMind's calibration on mlusim: the program's ICalibData (its methods are called back while
 * the network runs on the calibration data) and ICalibrator (CreateICalibrator, SetQuantizationAlgorithm,
 * Calibrate). */
#ifndef MLUSIM_MM_CALIBRATOR_H
#define MLUSIM_MM_CALIBRATOR_H

#include <cstring>
#include <string>
#include <vector>

#include "mm_builder.h"

namespace magicmind {

class ICalibData {
 public:
  virtual ~ICalibData() {}
  virtual Dims GetShape() const = 0;
  virtual DataType GetDataType() const = 0;
  virtual void *GetSample() = 0;
  virtual Status Next() = 0;
  virtual Status Reset() = 0;
};

namespace detail {
inline int CalibShape(void *object, int64_t *dims, int64_t capacity) {
  Dims shape = static_cast<ICalibData *>(object)->GetShape();
  for (int64_t i = 0; i < shape.GetDimsNum() && i < capacity; ++i) dims[i] = shape[i];
  return static_cast<int>(shape.GetDimsNum());
}
inline int CalibType(void *object) { return static_cast<int>(static_cast<ICalibData *>(object)->GetDataType()); }
inline void *CalibSample(void *object) { return static_cast<ICalibData *>(object)->GetSample(); }
inline int CalibStatus(const Status &status, char *message, int64_t capacity) {
  std::strncpy(message, status.error_message().c_str(), static_cast<size_t>(capacity) - 1);
  message[capacity - 1] = 0;
  return static_cast<int>(status.code());
}
inline int CalibNext(void *object, char *message, int64_t capacity) {
  return CalibStatus(static_cast<ICalibData *>(object)->Next(), message, capacity);
}
inline int CalibReset(void *object, char *message, int64_t capacity) {
  return CalibStatus(static_cast<ICalibData *>(object)->Reset(), message, capacity);
}
}  // namespace detail

class ICalibrator {
 public:
  explicit ICalibrator(int64_t handle) : handle_(handle) {}
  Status SetQuantizationAlgorithm(QuantizationAlgorithm algorithm) {
    return Status::FromCall(mmsim_calibrator_set_algorithm(handle_, static_cast<int64_t>(algorithm)));
  }
  Status Calibrate(INetwork *network, IBuilderConfig *config) {
    return Status::FromCall(mmsim_calibrator_calibrate(handle_, network->Handle(), config->Handle()));
  }
  void Destroy() {
    mmsim_destroy(handle_);
    delete this;
  }

 private:
  int64_t handle_;
};

inline ICalibrator *CreateICalibrator(const std::vector<ICalibData *> &data) {
  std::vector<int64_t> handles;
  for (ICalibData *d : data) {
    handles.push_back(mmsim_create_calib_data(d, detail::CalibShape, detail::CalibType, detail::CalibSample,
                                              detail::CalibNext, detail::CalibReset));
  }
  int64_t calibrator = mmsim_create_calibrator(handles.data(), handles.size());
  return calibrator ? new ICalibrator(calibrator) : nullptr;
}
inline ICalibrator *CreateICalibrator(ICalibData *data) { return CreateICalibrator(std::vector<ICalibData *>{data}); }

}  // namespace magicmind

#endif
