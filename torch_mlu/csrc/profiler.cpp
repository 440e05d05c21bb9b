// torch.profiler on the "mlu" device: the device side of torch's profiler, forwarded to one Python object, the
// collector (torch_mlu/_profiler.py), which watches the simulated queues.
//
//   * Kineto's PrivateUse1 activity profiler (torch.profiler.profile with ProfilerActivity.MLU / PrivateUse1): a
//     session starts and stops the collector and turns its records (one per command a queue ran: kernel, copy,
//     fill) into Kineto activities, each linked to the torch op that queued it. Kineto pushes each op's
//     correlation id on the op's thread; the collector reads the innermost one when a command is queued.
//   * The legacy profiler's device events (torch.autograd.profiler.profile(use_device="mlu"), Kineto's
//     PRIVATEUSE1_FALLBACK): a notifier placed on the current stream at the start and the end of each op; the time
//     between them is the modelled device time (cnrtNotifierDuration).
// Kineto's activities format their metadata with fmt, whose compiled part torch does not export: this file uses
// fmt as a header-only library.
#define FMT_HEADER_ONLY
#include <torch/csrc/profiler/stubs/base.h>
#include <torch/csrc/utils/pybind.h>

// The registry is declared only for a torch built with Kineto (torch's own build defines USE_KINETO; an
// extension's does not); the wheels this package supports all have it.
#ifndef USE_KINETO
#define USE_KINETO
#endif
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

#include <GenericTraceActivity.h>
#include <IActivityProfiler.h>
#include <libkineto.h>
#include <output_base.h>

#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/ApproximateClock.h>

#include <mutex>
#include <set>
#include <string>
#include <vector>

namespace py = pybind11;

namespace mlu::profiler {
namespace {

using libkineto::ActivityType;

// The collector, bound once by bind(); never released (a session may end while the interpreter finalizes).
PyObject* g_collector = nullptr;

bool python_alive() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() && !Py_IsFinalizing();
#else
  return Py_IsInitialized() && !_Py_IsFinalizing();
#endif
}

// The correlation ids Kineto pushed on this thread (innermost last): the torch ops now running here.
thread_local std::vector<uint64_t> t_correlation;

// Call a method of the collector under the GIL. A Python error is returned as text (Kineto reports a session's
// errors; an exception must not leave through its callbacks).
template <typename... Args>
std::string call_collector(const char* method, py::object* result, Args&&... args) {
  if (g_collector == nullptr || !python_alive()) return "torch_mlu: the profiler's collector is not bound";
  py::gil_scoped_acquire gil;
  try {
    py::object value = py::handle(g_collector).attr(method)(std::forward<Args>(args)...);
    if (result != nullptr) *result = std::move(value);
    return {};
  } catch (py::error_already_set& e) {
    return std::string("torch_mlu profiler: ") + method + ": " + e.what();
  }
}

ActivityType activity_type(int code) {
  switch (code) {
    case 1: return ActivityType::GPU_MEMCPY;
    case 2: return ActivityType::GPU_MEMSET;
    default: return ActivityType::CONCURRENT_KERNEL;
  }
}

class Session final : public libkineto::IActivityProfilerSession {
 public:
  explicit Session(std::set<ActivityType> types) : types_(std::move(types)) {}
  void start() override {
    note(call_collector("start", nullptr));
    status_ = libkineto::TraceStatus::RECORDING;
  }
  void stop() override {
    note(call_collector("stop", nullptr));
    status_ = libkineto::TraceStatus::PROCESSING;
  }
  std::vector<std::string> errors() override { return errors_; }

  void processTrace(libkineto::ActivityLogger& logger) override { processTrace(logger, nullptr, 0, 0); }

  void processTrace(libkineto::ActivityLogger& logger, libkineto::getLinkedActivityCallback linked_op,
                    int64_t window_start, int64_t window_end) override {
    buffer_.span = libkineto::TraceSpan(window_start, window_end, "mlu");
    py::object records;
    if (!note(call_collector("activities", &records))) return;
    py::gil_scoped_acquire gil;
    // (the records are let go here, under the GIL: `gil` ends before a local declared ahead of it would)
    struct Release {
      py::object& held;
      ~Release() { held = py::object(); }
    } release{records};
    try {
      // (name, kind code, device, queue id, queue label, start ns, end ns, correlation id, {metadata})
      for (py::handle item : records) {
        auto row = item.cast<py::tuple>();
        const ActivityType type = activity_type(row[1].cast<int>());
        if (!types_.count(type)) continue;
        buffer_.emplace_activity(buffer_.span, type, row[0].cast<std::string>());
        auto& activity = libkineto::CpuTraceBuffer::toRef(buffer_.activities.back());
        activity.device = row[2].cast<int32_t>();
        activity.resource = row[3].cast<int32_t>();
        activity.startTime = row[5].cast<int64_t>();
        activity.endTime = row[6].cast<int64_t>();
        const auto correlation = row[7].cast<int64_t>();
        activity.id = static_cast<int32_t>(correlation);
        if (correlation > 0) {
          activity.flow.id = static_cast<uint32_t>(correlation);
          activity.flow.type = libkineto::kLinkAsyncCpuGpu;
          activity.flow.start = false;
          if (linked_op) activity.linked = linked_op(static_cast<int32_t>(correlation));
        }
        for (auto entry : row[8].cast<py::dict>()) {
          const std::string key = py::str(entry.first);
          if (py::isinstance<py::str>(entry.second)) {
            activity.addMetadataQuoted(key, entry.second.cast<std::string>());
          } else {
            activity.addMetadata(key, py::str(entry.second).cast<std::string>());
          }
        }
        remember_resource(activity.device, activity.resource, row[4].cast<std::string>());
        logger.handleActivity(activity);
      }
    } catch (py::error_already_set& e) {
      errors_.push_back(std::string("torch_mlu profiler: a device record: ") + e.what());
    } catch (py::cast_error& e) {
      errors_.push_back(std::string("torch_mlu profiler: a device record: ") + e.what());
    }
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    const int64_t device = resources_.empty() ? 0 : resources_.front().deviceId;
    return std::make_unique<libkineto::DeviceInfo>(device, device, "MLU " + std::to_string(device) + " (mlusim)",
                                                   "mlu:" + std::to_string(device));
  }
  std::vector<libkineto::ResourceInfo> getResourceInfos() override { return resources_; }
  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    return std::make_unique<libkineto::CpuTraceBuffer>(std::move(buffer_));
  }

  void pushCorrelationId(uint64_t id) override { t_correlation.push_back(id); }
  void popCorrelationId() override {
    if (!t_correlation.empty()) t_correlation.pop_back();
  }

 private:
  bool note(const std::string& error) {
    if (error.empty()) return true;
    errors_.push_back(error);
    status_ = libkineto::TraceStatus::ERROR;
    return false;
  }
  void remember_resource(int64_t device, int64_t queue, const std::string& label) {
    for (const auto& known : resources_) {
      if (known.deviceId == device && known.id == queue) return;
    }
    resources_.push_back(libkineto::ResourceInfo{queue, queue, device, label});
  }

  std::set<ActivityType> types_;
  libkineto::CpuTraceBuffer buffer_;
  std::vector<libkineto::ResourceInfo> resources_;
  std::vector<std::string> errors_;
};

// The device's activity types among those a trace asks for. torch asks for the PrivateUse1 runtime and driver types
// in CPU-only traces too: only kernels, copies and fills say that the device is profiled.
std::set<ActivityType> device_types(const std::set<ActivityType>& types) {
  std::set<ActivityType> chosen;
  for (auto type : {ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY, ActivityType::GPU_MEMSET}) {
    if (types.count(type)) chosen.insert(type);
  }
  return chosen;
}

class ActivityProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override { return name_; }
  const std::set<ActivityType>& availableActivities() const override { return activities_; }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(const std::set<ActivityType>& types,
                                                                 const libkineto::Config&) override {
    auto chosen = device_types(types);
    if (chosen.empty()) return nullptr;
    return std::make_unique<Session>(std::move(chosen));
  }
  std::unique_ptr<libkineto::IActivityProfilerSession> configure(int64_t, int64_t,
                                                                 const std::set<ActivityType>& types,
                                                                 const libkineto::Config& config) override {
    return configure(types, config);
  }

 private:
  std::string name_{"mlusim"};
  std::set<ActivityType> activities_{ActivityType::CONCURRENT_KERNEL, ActivityType::GPU_MEMCPY,
                                     ActivityType::GPU_MEMSET};
};

REGISTER_PRIVATEUSE1_PROFILER(ActivityProfiler);

// ---- the legacy profiler's device events ---------------------------------------------------------------------------
const c10::impl::DeviceGuardImplInterface* guard() {
  return c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1);
}

struct Stubs final : torch::profiler::impl::ProfilerStubs {
  void record(c10::DeviceIndex* device, torch::profiler::impl::ProfilerVoidEventStub* event,
              int64_t* cpu_ns) const override {
    const auto* impl = guard();
    const c10::DeviceIndex index = impl->getDevice().index();
    if (device != nullptr) *device = index;
    const c10::Stream stream = impl->getStream(c10::Device(c10::DeviceType::PrivateUse1, index));
    void* handle = nullptr;
    impl->record(&handle, stream, index, c10::EventFlag::BACKEND_DEFAULT);
    *event = torch::profiler::impl::ProfilerVoidEventStub(handle, [index](void* recorded) {
      if (recorded != nullptr && python_alive()) guard()->destroyEvent(recorded, index);
    });
    if (cpu_ns != nullptr) *cpu_ns = c10::getTime();
  }
  // Microseconds (as torch's CUDA stubs answer) of modelled device time between the two events.
  float elapsed(const torch::profiler::impl::ProfilerVoidEventStub* first,
                const torch::profiler::impl::ProfilerVoidEventStub* second) const override {
    py::object value;
    const std::string error = call_collector("modelled_us", &value, reinterpret_cast<intptr_t>(first->get()),
                                             reinterpret_cast<intptr_t>(second->get()));
    TORCH_CHECK(error.empty(), error);
    py::gil_scoped_acquire gil;
    float microseconds = 0;
    try {
      microseconds = value.cast<float>();
    } catch (...) {
      value = py::object();  // let go under the GIL (`gil` ends before `value` would)
      throw;
    }
    value = py::object();
    return microseconds;
  }
  void mark(const char*) const override {}
  void rangePush(const char*) const override {}
  void rangePop() const override {}
  bool enabled() const override { return true; }
  void onEachDevice(std::function<void(int)> op) const override {
    c10::OptionalDeviceGuard device_guard;
    const auto count = guard()->deviceCount();
    for (c10::DeviceIndex index = 0; index < count; ++index) {
      device_guard.reset_device(c10::Device(c10::DeviceType::PrivateUse1, index));
      op(index);
    }
  }
  void synchronize() const override {
    const auto count = guard()->deviceCount();
    for (c10::DeviceIndex index = 0; index < count; ++index) guard()->synchronizeDevice(index);
  }
};

Stubs g_stubs;

struct RegisterStubs {
  RegisterStubs() { torch::profiler::impl::registerPrivateUse1Methods(&g_stubs); }
};
RegisterStubs g_register_stubs;

}  // namespace

void define(py::module_& m) {
  m.def(
      "profiler_bind", [](py::object collector) { g_collector = collector.release().ptr(); },
      "Bind torch_mlu's profiler collector (torch_mlu/_profiler.py)");
  m.def(
      "profiler_correlation_id", [] { return t_correlation.empty() ? uint64_t{0} : t_correlation.back(); },
      "The correlation id of the innermost torch op the profiler sees running on this thread (0: none)");
}

}  // namespace mlu::profiler
