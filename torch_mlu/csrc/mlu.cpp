// The C++ part of the "mlu" PyTorch backend over mlusim (torch's PrivateUse1 device, renamed "mlu").
//
// Only what torch needs in C++ lives here, and each piece forwards to one Python object, the runtime
// (torch_mlu/_runtime.py), so the simulator stays the only implementation of the device:
//   * the device allocator: a DataPtr's pointer IS the simulated device address the runtime's caching allocator
//     hands out; freeing calls back into it (stream-ordered, never a device sync). Also a c10::DeviceAllocator, so
//     torch.accelerator's memory functions work.
//   * the pinned host allocator (cnrtHostMalloc buffers) and isPinnedPtr.
//   * DeviceGuardImpl: current device and current stream per host thread; streams are cnrt queues, events cnrt
//     notifiers, both named by small integer ids that the runtime maps to its objects.
//   * PrivateUse1 hooks, and the generator: a Philox (seed, offset) pair that the random kernels hand to cnnl.
//   * the metadata-only aten kernels (empty, empty_strided, as_strided, view, _reshape_alias, unfold,
//     view_as_real/complex, set_, resize_); resize_ and set_ grow a storage by a device-to-device copy, never by
//     touching memory on the host.
//   * the boxed CPU fallback (mixed-device check, per-op counting and error mode in the runtime), and torch's
//     autocast op lists for AutocastPrivateUse1.
//   * each allocation and free reported to torch's profiler when it records memory.
// The device side of torch's profiler is csrc/profiler.cpp, in the same module.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/EmptyTensor.h>
#include <ATen/autocast_mode.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/transformers/attention.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/ApproximateClock.h>
#include <torch/csrc/Generator.h>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/csrc/utils/device_lazy_init.h>
#include <torch/csrc/utils/pybind.h>
#include <torch/library.h>

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <optional>
#include <thread>
#include <map>
#include <mutex>
#include <random>

namespace py = pybind11;
using c10::DeviceIndex;
using c10::DeviceType;

namespace mlu {

constexpr DeviceType kMLU = DeviceType::PrivateUse1;
constexpr int kMaxDevices = 64;

// ---- the Python runtime -------------------------------------------------------------------------------------------
// Bound methods of the runtime object, looked up once at init and kept for the life of the process (never
// released: they may be needed by deleters running during interpreter teardown, which check py_alive first).
struct Runtime {
  PyObject* malloc = nullptr;          // (nbytes, device, stream_id) -> address
  PyObject* free = nullptr;            // (address) -> None
  PyObject* record_stream = nullptr;   // (address, device, stream_id)
  PyObject* copy_d2d = nullptr;        // (dst, src, nbytes, device, stream_id): queued on that stream
  PyObject* set_device = nullptr;      // (device)
  PyObject* new_stream = nullptr;      // (device, priority) -> stream id
  PyObject* query_stream = nullptr;    // (device, stream_id) -> bool
  PyObject* sync_stream = nullptr;     // (device, stream_id)
  PyObject* sync_device = nullptr;     // (device)
  PyObject* record_event = nullptr;    // (event_id or 0, device, stream_id, timing) -> event_id
  PyObject* block_event = nullptr;     // (event_id, device, stream_id)
  PyObject* query_event = nullptr;     // (event_id) -> bool
  PyObject* sync_event = nullptr;      // (event_id)
  PyObject* elapsed_time = nullptr;    // (event_id, event_id) -> ms
  PyObject* destroy_event = nullptr;   // (event_id)
  PyObject* host_alloc = nullptr;      // (nbytes) -> (address, owner)
  PyObject* host_free = nullptr;       // (owner)
  PyObject* device_of = nullptr;       // (address) -> device
  PyObject* empty_cache = nullptr;     // ()
  PyObject* device_stats = nullptr;    // (device) -> {name: [[current, peak, allocated, freed] x 3] or int}
  PyObject* reset_peak = nullptr;      // (device)
  PyObject* reset_accumulated = nullptr;  // (device)
  PyObject* mem_get_info = nullptr;    // (device) -> (free, total)
  PyObject* memory_totals = nullptr;   // (device) -> (allocated bytes, reserved bytes)
  PyObject* on_fallback = nullptr;     // (op name): counts, warns once, raises in error mode
  PyObject* device_count = nullptr;    // () -> int, after following a rebuilt device table
};
Runtime rt;
// -1 until the first question about the devices asks mlusim's table (importing torch_mlu builds no table: the
// device is initialised lazily, after the program may have set MLU_VISIBLE_DEVICES)
std::atomic<DeviceIndex> g_count{-1};
bool g_ready = false;
// Bumped when mlusim's device table is rebuilt: every thread's current device and streams start over then.
std::atomic<int> g_generation{0};

thread_local int t_generation = 0;
thread_local DeviceIndex t_device_ = 0;
thread_local std::array<int64_t, kMaxDevices> t_stream_{};  // current stream id per device; 0 = the default queue

void thread_fresh() {
  const int generation = g_generation.load(std::memory_order_relaxed);
  if (t_generation != generation) {
    t_generation = generation;
    t_device_ = 0;
    t_stream_.fill(0);
  }
}
// This thread's current device and current stream ids (per device), after thread_fresh().
DeviceIndex& current_device() {
  thread_fresh();
  return t_device_;
}
std::array<int64_t, kMaxDevices>& current_streams() {
  thread_fresh();
  return t_stream_;
}

#if PY_VERSION_HEX >= 0x030D0000
bool py_alive() { return Py_IsInitialized() && !Py_IsFinalizing(); }
#else
bool py_alive() { return Py_IsInitialized() && !_Py_IsFinalizing(); }
#endif

// torch's own threads (the autograd engine's device thread) free blocks and events, and their frees call into
// Python. Once the interpreter finalizes, a thread asking for the GIL is ended by pthread_exit, whose unwinding
// through these noexcept deleters calls std::terminate ("terminate called without an active exception", seen at
// the exit of a script whose backward pass had just returned). `quiesce_at_exit` (an atexit handler) closes the
// door: later frees from threads without the GIL are dropped (the process is ending; torch lets go of the GIL to
// free a tensor, so that is every free but those made under the GIL), and it waits for those already inside.
std::atomic<bool> g_exiting{false};
std::atomic<int> g_foreign_releases{0};

// Holds the GIL for one release (a free) while it lives, when `open()`: Python is alive and, for a thread without
// the GIL, the exit has not closed the door.
class ReleaseSection {
 public:
  ReleaseSection() {
    if (!PyGILState_Check()) {
      g_foreign_releases.fetch_add(1);
      counted_ = true;
      if (g_exiting.load()) return;
    }
    open_ = py_alive();
    if (open_) gil_.emplace();
  }
  ~ReleaseSection() {
    gil_.reset();
    if (counted_) g_foreign_releases.fetch_sub(1);
  }
  ReleaseSection(const ReleaseSection&) = delete;
  ReleaseSection& operator=(const ReleaseSection&) = delete;
  bool open() const { return open_; }

 private:
  bool open_ = false;
  bool counted_ = false;
  std::optional<py::gil_scoped_acquire> gil_;
};

// Called by Python's atexit (with the GIL): no new release from a thread without the GIL enters Python; the ones
// inside finish (the GIL is let go meanwhile), for at most 2 s.
void quiesce_at_exit() {
  g_exiting.store(true);
  py::gil_scoped_release release;
  for (int waited = 0; waited < 2000 && g_foreign_releases.load() > 0; ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

template <typename... Args>
py::object call(PyObject* fn, Args&&... args) {
  return py::reinterpret_borrow<py::object>(fn)(std::forward<Args>(args)...);
}

// A Python exception raised by the runtime becomes a c10::Error of the same kind of failure.
[[noreturn]] void rethrow(py::error_already_set& e, const char* what) {
  std::string message = std::string("mlu: ") + what + ": " + e.what();
  if (e.matches(PyExc_MemoryError) || e.matches(py::module_::import("torch").attr("OutOfMemoryError").ptr())) {
    std::string text = py::str(e.value());
    TORCH_CHECK_WITH(OutOfMemoryError, false, text);
  }
  if (e.matches(PyExc_NotImplementedError)) {
    std::string text = py::str(e.value());
    TORCH_CHECK_NOT_IMPLEMENTED(false, text);
  }
  if (e.matches(PyExc_IndexError)) {
    std::string text = py::str(e.value());
    TORCH_CHECK_INDEX(false, text);
  }
  if (e.matches(PyExc_ValueError)) {
    std::string text = py::str(e.value());
    TORCH_CHECK_VALUE(false, text);
  }
  TORCH_CHECK(false, message);
}

// Run `body` under the GIL; a Python error becomes a c10::Error (never a crash).
template <typename F>
auto with_gil(const char* what, F&& body) -> decltype(body()) {
  TORCH_CHECK(g_ready, "mlu: the torch_mlu runtime is not initialised (import torch_mlu)");
  py::gil_scoped_acquire gil;
  try {
    return body();
  } catch (py::error_already_set& e) {
    rethrow(e, what);
  }
}

// Asks the runtime for the device count; the table follows a rebuild, whose reset() stores the new count.
void ask_device_count() {
  py::gil_scoped_acquire gil;
  try {
    call(rt.device_count);
  } catch (py::error_already_set& e) {
    rethrow(e, "device_count");
  }
}

DeviceIndex device_count() {
  if (g_count.load() < 0 && g_ready) ask_device_count();
  return std::max<DeviceIndex>(g_count.load(), 0);
}

DeviceIndex device_count_or_none() noexcept {
  try {
    return device_count();
  } catch (...) {
    return 0;
  }
}

DeviceIndex checked_index(DeviceIndex index) {
  if (index < 0) return current_device();
  if (index >= device_count() && g_ready) ask_device_count();  // the table may have been rebuilt with more devices
  const DeviceIndex count = std::max<DeviceIndex>(g_count.load(), 0);
  TORCH_CHECK_INDEX(index < count, "mlu: invalid device ordinal ", static_cast<int>(index), ": there are ",
                    static_cast<int>(count), " mlu device(s) (MLUSIM_DEVICE_COUNT sets the number)");
  return index;
}

void set_current_device(DeviceIndex index) {
  index = checked_index(index);
  if (index == current_device()) return;
  with_gil("set_device", [&] { call(rt.set_device, index); });
  current_device() = index;
}

// ---- device allocator ---------------------------------------------------------------------------------------------
// A DataPtr's context: the address and the device table it came from. A block of a table that was rebuilt since
// went with the old devices, and its address may already belong to a new block: such a free is not forwarded.
struct DeviceBlock {
  uintptr_t address;
  int generation;
  size_t nbytes;
  DeviceIndex device;
};

// torch's profiler with profile_memory=True records each allocation and free with the device's totals after it.
// Call with the GIL held.
void report_to_profiler(uintptr_t address, int64_t delta, DeviceIndex device) {
  auto totals = call(rt.memory_totals, device).cast<std::pair<size_t, size_t>>();
  c10::reportMemoryUsageToProfiler(reinterpret_cast<void*>(address), delta, totals.first, totals.second,
                                   c10::Device(kMLU, device));
}

void device_delete(void* raw) {
  auto* block = static_cast<DeviceBlock*>(raw);
  if (block == nullptr) return;
  const bool current = block->generation == g_generation.load();
  const uintptr_t address = block->address;
  const auto nbytes = static_cast<int64_t>(block->nbytes);
  const DeviceIndex device = block->device;
  delete block;
  if (!current || !g_ready) return;
  ReleaseSection section;
  if (!section.open()) return;
  py::error_scope keep_pending_error;  // storage may die while a Python exception is being raised
  try {
    call(rt.free, address);
    if (c10::memoryProfilingEnabled()) report_to_profiler(address, -nbytes, device);
  } catch (py::error_already_set& e) {
    e.discard_as_unraisable("torch_mlu device free");
  }
}

c10::CachingDeviceAllocator::DeviceStats stats_from(const py::dict& source) {
  c10::CachingDeviceAllocator::DeviceStats stats;
  auto fill = [&](const char* key, c10::CachingAllocator::StatArray& target) {
    if (!source.contains(key)) return;
    auto rows = source[key].cast<std::vector<std::array<int64_t, 4>>>();
    for (size_t i = 0; i < rows.size() && i < target.size(); ++i) {
      target[i].current = rows[i][0];
      target[i].peak = rows[i][1];
      target[i].allocated = rows[i][2];
      target[i].freed = rows[i][3];
    }
  };
  fill("allocation", stats.allocation);
  fill("segment", stats.segment);
  fill("active", stats.active);
  fill("inactive_split", stats.inactive_split);
  fill("allocated_bytes", stats.allocated_bytes);
  fill("reserved_bytes", stats.reserved_bytes);
  fill("active_bytes", stats.active_bytes);
  fill("inactive_split_bytes", stats.inactive_split_bytes);
  fill("requested_bytes", stats.requested_bytes);
  auto scalar = [&](const char* key, int64_t& target) {
    if (source.contains(key)) target = source[key].cast<int64_t>();
  };
  scalar("num_alloc_retries", stats.num_alloc_retries);
  scalar("num_ooms", stats.num_ooms);
  scalar("num_sync_all_streams", stats.num_sync_all_streams);
  scalar("num_device_alloc", stats.num_device_alloc);
  scalar("num_device_free", stats.num_device_free);
  scalar("max_split_size", stats.max_split_size);
  return stats;
}

struct DeviceAllocator final : c10::DeviceAllocator {
  c10::DataPtr allocate(size_t nbytes) override {
    const DeviceIndex device = current_device();
    c10::Device where(kMLU, device);
    if (nbytes == 0) return {nullptr, nullptr, &device_delete, where};
    uintptr_t address = with_gil("malloc", [&] {
      const auto allocated = call(rt.malloc, nbytes, device, current_streams()[device]).cast<uintptr_t>();
      if (c10::memoryProfilingEnabled()) report_to_profiler(allocated, static_cast<int64_t>(nbytes), device);
      return allocated;
    });
    auto* block = new DeviceBlock{address, g_generation.load(), nbytes, device};
    return {reinterpret_cast<void*>(address), block, &device_delete, where};
  }
  // raw_allocate needs the context to be the pointer itself; mlu DataPtrs carry their device table too
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dst, const void* src, std::size_t nbytes) const override {
    if (nbytes == 0) return;
    const DeviceIndex device = current_device();
    with_gil("copy_data", [&] {
      call(rt.copy_d2d, reinterpret_cast<uintptr_t>(dst), reinterpret_cast<uintptr_t>(src), nbytes, device,
           current_streams()[device]);
    });
  }
  bool initialized() override { return g_ready; }
  void emptyCache(c10::MempoolId_t) override {
    with_gil("empty_cache", [&] { call(rt.empty_cache); });
  }
  void recordStream(const c10::DataPtr& ptr, c10::Stream stream) override {
    if (ptr.get() == nullptr) return;
    with_gil("record_stream", [&] {
      call(rt.record_stream, reinterpret_cast<uintptr_t>(ptr.get()), stream.device_index(), stream.id());
    });
  }
  c10::CachingDeviceAllocator::DeviceStats getDeviceStats(DeviceIndex device) override {
    device = checked_index(device);
    return with_gil("memory_stats", [&] { return stats_from(call(rt.device_stats, device).cast<py::dict>()); });
  }
  void resetAccumulatedStats(DeviceIndex device) override {
    device = checked_index(device);
    with_gil("reset_accumulated_memory_stats", [&] { call(rt.reset_accumulated, device); });
  }
  void resetPeakStats(DeviceIndex device) override {
    device = checked_index(device);
    with_gil("reset_peak_memory_stats", [&] { call(rt.reset_peak, device); });
  }
  std::pair<size_t, size_t> getMemoryInfo(DeviceIndex device) override {
    device = checked_index(device);
    return with_gil("mem_get_info", [&] { return call(rt.mem_get_info, device).cast<std::pair<size_t, size_t>>(); });
  }
};
DeviceAllocator g_allocator;
REGISTER_ALLOCATOR(kMLU, &g_allocator);

// ---- pinned host memory: cnrtHostMalloc buffers -------------------------------------------------------------------
std::mutex g_pinned_mutex;
std::map<uintptr_t, size_t> g_pinned;  // start -> size of live pinned buffers

struct PinnedContext {
  PyObject* owner;  // the runtime's buffer object (a strong reference)
  uintptr_t start;
};

void pinned_delete(void* raw) {
  auto* context = static_cast<PinnedContext*>(raw);
  {
    std::lock_guard<std::mutex> lock(g_pinned_mutex);
    g_pinned.erase(context->start);
  }
  ReleaseSection section;
  if (section.open()) {
    py::error_scope keep_pending_error;
    try {
      call(rt.host_free, py::handle(context->owner));
    } catch (py::error_already_set& e) {
      e.discard_as_unraisable("torch_mlu pinned free");
    }
    Py_DECREF(context->owner);
  }
  delete context;
}

struct PinnedAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    c10::Device cpu(DeviceType::CPU);
    if (nbytes == 0) return {nullptr, nullptr, &pinned_delete, cpu};
    auto* context = new PinnedContext{nullptr, 0};
    try {
      with_gil("pin_memory", [&] {
        py::tuple result = call(rt.host_alloc, nbytes).cast<py::tuple>();
        context->start = result[0].cast<uintptr_t>();
        context->owner = py::object(result[1]).release().ptr();
      });
    } catch (...) {
      delete context;
      throw;
    }
    {
      std::lock_guard<std::mutex> lock(g_pinned_mutex);
      g_pinned[context->start] = nbytes;
    }
    return {reinterpret_cast<void*>(context->start), context, &pinned_delete, cpu};
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dst, const void* src, std::size_t nbytes) const override { std::memcpy(dst, src, nbytes); }
};
PinnedAllocator g_pinned_allocator;

bool is_pinned(const void* ptr) {
  auto address = reinterpret_cast<uintptr_t>(ptr);
  std::lock_guard<std::mutex> lock(g_pinned_mutex);
  auto it = g_pinned.upper_bound(address);
  if (it == g_pinned.begin()) return false;
  --it;
  return address < it->first + it->second;
}

// ---- device guard: devices, streams (cnrt queues), events (cnrt notifiers) ----------------------------------------
void* event_handle(int64_t id) { return reinterpret_cast<void*>(static_cast<intptr_t>(id)); }
int64_t event_id(void* event) { return static_cast<int64_t>(reinterpret_cast<intptr_t>(event)); }

struct GuardImpl final : c10::impl::DeviceGuardImplInterface {
  DeviceType type() const override { return kMLU; }
  c10::Device exchangeDevice(c10::Device device) const override {
    const DeviceIndex old = current_device();
    if (device.index() >= 0) set_current_device(device.index());
    return {kMLU, old};
  }
  c10::Device getDevice() const override { return {kMLU, current_device()}; }
  void setDevice(c10::Device device) const override {
    if (device.index() >= 0) set_current_device(device.index());
  }
  void uncheckedSetDevice(c10::Device device) const noexcept override {
    try {
      if (device.index() >= 0) set_current_device(device.index());
    } catch (...) {
    }
  }
  c10::Stream getStream(c10::Device device) const override {
    const DeviceIndex index = checked_index(device.index());
    return c10::Stream(c10::Stream::UNSAFE, c10::Device(kMLU, index), current_streams()[index]);
  }
  c10::Stream getDefaultStream(c10::Device device) const override {
    return c10::Stream(c10::Stream::UNSAFE, c10::Device(kMLU, checked_index(device.index())), 0);
  }
  c10::Stream getNewStream(c10::Device device, int priority) const override {
    const DeviceIndex index = checked_index(device.index());
    int64_t id = with_gil("new_stream", [&] { return call(rt.new_stream, index, priority).cast<int64_t>(); });
    return c10::Stream(c10::Stream::UNSAFE, c10::Device(kMLU, index), id);
  }
  c10::Stream getStreamFromGlobalPool(c10::Device device, bool high_priority) const override {
    return getNewStream(device, high_priority ? -1 : 0);
  }
  c10::Stream exchangeStream(c10::Stream stream) const noexcept override {
    const DeviceIndex index = stream.device_index() < 0 ? current_device() : stream.device_index();
    if (index >= kMaxDevices) return stream;
    c10::Stream old(c10::Stream::UNSAFE, c10::Device(kMLU, index), current_streams()[index]);
    current_streams()[index] = stream.id();
    return old;
  }
  void* getStreamNativeHandle(const c10::Stream stream) const override {
    return reinterpret_cast<void*>(static_cast<intptr_t>(stream.id()));
  }
  DeviceIndex deviceCount() const noexcept override { return device_count_or_none(); }
  void record(void** event, const c10::Stream& stream, const DeviceIndex device_index,
              const c10::EventFlag flag) const override {
    TORCH_CHECK(device_index == -1 || device_index == stream.device_index(), "Event device index ",
                static_cast<int>(device_index), " does not match recording stream's device index ",
                static_cast<int>(stream.device_index()), ".");
    const bool timing = flag == c10::EventFlag::BACKEND_DEFAULT;
    int64_t id = with_gil("record_event", [&] {
      return call(rt.record_event, event_id(*event), stream.device_index(), stream.id(), timing).cast<int64_t>();
    });
    *event = event_handle(id);
  }
  void block(void* event, const c10::Stream& stream) const override {
    if (event == nullptr) return;
    with_gil("wait_event", [&] { call(rt.block_event, event_id(event), stream.device_index(), stream.id()); });
  }
  bool queryEvent(void* event) const override {
    if (event == nullptr) return true;
    return with_gil("query_event", [&] { return call(rt.query_event, event_id(event)).cast<bool>(); });
  }
  void destroyEvent(void* event, const DeviceIndex) const noexcept override {
    if (event == nullptr || !g_ready) return;
    ReleaseSection section;
    if (!section.open()) return;
    py::error_scope keep_pending_error;
    try {
      call(rt.destroy_event, event_id(event));
    } catch (py::error_already_set& e) {
      e.discard_as_unraisable("torch_mlu destroy event");
    }
  }
  void synchronizeEvent(void* event) const override {
    if (event == nullptr) return;
    with_gil("synchronize_event", [&] { call(rt.sync_event, event_id(event)); });
  }
  double elapsedTime(void* start, void* end, const DeviceIndex) const override {
    TORCH_CHECK(start && end, "Both events must be recorded before calculating elapsed time.");
    return with_gil("elapsed_time", [&] {
      return call(rt.elapsed_time, event_id(start), event_id(end)).cast<double>();
    });
  }
  bool queryStream(const c10::Stream& stream) const override {
    return with_gil("query_stream", [&] {
      return call(rt.query_stream, stream.device_index(), stream.id()).cast<bool>();
    });
  }
  void synchronizeStream(const c10::Stream& stream) const override {
    with_gil("synchronize_stream", [&] { call(rt.sync_stream, stream.device_index(), stream.id()); });
  }
  void synchronizeDevice(const DeviceIndex device_index) const override {
    const DeviceIndex index = checked_index(device_index);
    with_gil("synchronize", [&] { call(rt.sync_device, index); });
  }
  void recordDataPtrOnStream(const c10::DataPtr& ptr, const c10::Stream& stream) const override {
    g_allocator.recordStream(ptr, stream);
  }
};
C10_REGISTER_GUARD_IMPL(PrivateUse1, GuardImpl);

// ---- generator: Philox (seed, offset) for cnnl's counter-based random numbers -----------------------------------
constexpr uint64_t kDefaultSeed = 67280421310721ULL;  // torch's default_rng_seed_val, as CUDA's generators start
constexpr int64_t kStateBytes = 16;                     // seed and offset, two little-endian 64-bit integers

struct Generator final : c10::GeneratorImpl {
  explicit Generator(DeviceIndex index)
      : c10::GeneratorImpl(c10::Device(kMLU, index), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)) {}
  void set_current_seed(uint64_t seed) override {
    seed_ = seed;
    offset_ = 0;
  }
  void set_offset(uint64_t offset) override { offset_ = offset; }
  uint64_t get_offset() const override { return offset_; }
  uint64_t current_seed() const override { return seed_; }
  uint64_t seed() override {
    set_current_seed(c10::detail::getNonDeterministicRandom(true));
    return seed_;
  }
  void set_state(const c10::TensorImpl& state) override {
    at::detail::check_rng_state(state);
    TORCH_CHECK(state.numel() == kStateBytes, "RNG state is wrong size: an mlu generator state holds ", kStateBytes,
                " bytes (seed and offset), got ", state.numel());
    uint64_t values[2];
    std::memcpy(values, state.data(), sizeof(values));
    seed_ = values[0];
    offset_ = values[1];
  }
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override {
    auto state = at::detail::empty_cpu({kStateBytes}, at::kByte, std::nullopt, std::nullopt, std::nullopt,
                                       std::nullopt);
    uint64_t values[2] = {seed_, offset_};
    std::memcpy(state.data_ptr(), values, sizeof(values));
    return state.getIntrusivePtr();
  }
  static DeviceType device_type() { return kMLU; }

 private:
  Generator* clone_impl() const override {
    auto* copy = new Generator(device().index());
    copy->seed_ = seed_;
    copy->offset_ = offset_;
    return copy;
  }
  uint64_t seed_ = kDefaultSeed;
  uint64_t offset_ = 0;
};

// ---- hooks ---------------------------------------------------------------------------------------------------------
void resize_storage_bytes(const c10::Storage& storage, size_t nbytes);

struct Hooks final : at::PrivateUse1HooksInterface {
  void init() const override {}
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return device_count_or_none() > 0; }
  bool hasPrimaryContext(DeviceIndex) const override { return true; }
  DeviceIndex deviceCount() const override { return device_count_or_none(); }
  DeviceIndex getCurrentDevice() const override { return current_device(); }
  void setCurrentDevice(DeviceIndex device) const override { set_current_device(device); }
  DeviceIndex exchangeDevice(DeviceIndex device) const override {
    const DeviceIndex old = current_device();
    if (device >= 0) set_current_device(device);
    return old;
  }
  DeviceIndex maybeExchangeDevice(DeviceIndex device) const override { return exchangeDevice(device); }
  bool isPinnedPtr(const void* data) const override { return is_pinned(data); }
  at::Allocator* getPinnedMemoryAllocator() const override { return &g_pinned_allocator; }
  const at::Generator& getDefaultGenerator(DeviceIndex device) const override {
    // one per device, made on first use; a std::deque never moves the generators it holds
    static std::mutex mutex;
    static std::deque<at::Generator> generators;
    const DeviceIndex index = checked_index(device);
    std::lock_guard<std::mutex> lock(mutex);
    while (static_cast<DeviceIndex>(generators.size()) <= index) {
      generators.push_back(at::make_generator<Generator>(static_cast<DeviceIndex>(generators.size())));
    }
    return generators[index];
  }
  at::Generator getNewGenerator(DeviceIndex device) const override {
    return at::make_generator<Generator>(checked_index(device));
  }
  at::Device getDeviceFromPtr(void* data) const override {
    auto index = with_gil("device_of", [&] {
      return call(rt.device_of, reinterpret_cast<uintptr_t>(data)).cast<int>();
    });
    return {kMLU, static_cast<DeviceIndex>(index)};
  }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t nbytes) const override {
    resize_storage_bytes(storage, nbytes);
  }
};
Hooks g_hooks;

// ---- metadata-only kernels ------------------------------------------------------------------------------------------
const c10::DispatchKeySet kKeys(c10::DispatchKey::PrivateUse1);

// A storage's bytes change size by a fresh allocation and a device-to-device copy of what it held, queued on the
// current stream (at::native's CPU resize would memcpy the simulated addresses on the host).
void resize_storage_bytes(const c10::Storage& storage, size_t nbytes) {
  TORCH_CHECK(storage.resizable(), "Trying to resize storage that is not resizable");
  const size_t old = storage.nbytes();
  if (nbytes == old) return;
  c10::DataPtr fresh = g_allocator.allocate(nbytes);
  const size_t keep = std::min(old, nbytes);
  if (keep && storage.data() != nullptr) g_allocator.copy_data(fresh.get(), storage.data(), keep);
  auto& target = const_cast<c10::Storage&>(storage);
  target.set_data_ptr_noswap(std::move(fresh));
  target.set_nbytes(nbytes);
}

void ensure_storage_holds(const at::Tensor& self) {
  auto* impl = self.unsafeGetTensorImpl();
  if (impl->numel() == 0) return;
  const size_t needed = at::detail::computeStorageNbytes(impl->sizes(), impl->strides(), self.itemsize(),
                                                         impl->storage_offset());
  const auto& storage = impl->unsafe_storage();
  if (needed > storage.nbytes()) {
    const c10::DeviceGuard guard(self.device());
    resize_storage_bytes(storage, needed);
  }
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype,
                               std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                               std::optional<bool> pin_memory, std::optional<c10::MemoryFormat> memory_format) {
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided, "mlu: only strided tensors are supported");
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_generic(size, &g_allocator, kKeys, c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<c10::ScalarType> dtype,
                         std::optional<c10::Layout> layout, std::optional<c10::Device> device,
                         std::optional<bool> pin_memory) {
  TORCH_CHECK(c10::layout_or_default(layout) == c10::Layout::Strided, "mlu: only strided tensors are supported");
  const c10::DeviceGuard guard(c10::device_or_default(device));
  return at::detail::empty_strided_generic(size, stride, &g_allocator, kKeys, c10::dtype_or_default(dtype));
}

at::Tensor as_strided(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride,
                      std::optional<int64_t> storage_offset) {
  return at::native::as_strided_tensorimpl(self, size, stride, storage_offset);
}

at::Tensor view(const at::Tensor& self, c10::IntArrayRef size) { return at::native::view(self, size); }

at::Tensor reshape_alias(const at::Tensor& self, c10::IntArrayRef size, c10::IntArrayRef stride) {
  return at::native::_reshape_alias(self, size, stride);
}

at::Tensor unfold(const at::Tensor& self, int64_t dimension, int64_t size, int64_t step) {
  return at::native::unfold(self, dimension, size, step);
}

const at::Tensor& resize_(const at::Tensor& self, c10::IntArrayRef size,
                          std::optional<c10::MemoryFormat> memory_format) {
  auto* impl = self.unsafeGetTensorImpl();
  if (impl->sizes() != size || memory_format.has_value()) {
    impl->set_sizes_contiguous(size);
    if (memory_format.has_value() && *memory_format != c10::MemoryFormat::Preserve) {
      TORCH_CHECK(*memory_format != c10::MemoryFormat::Preserve, "Unsupported memory format Preserve");
      impl->empty_tensor_restride(*memory_format);
    }
  }
  ensure_storage_holds(self);
  return self;
}

at::Tensor& set_storage(at::Tensor& self, c10::Storage source, int64_t storage_offset, c10::IntArrayRef size,
                        c10::IntArrayRef stride) {
  // A cpu tensor reaches this kernel too when its source is an mlu tensor (set_.source_Tensor dispatches on both).
  TORCH_CHECK(self.device() == source.device(), "Attempted to set the storage of a tensor on device \"",
              self.device(), "\" to a storage on different device \"", source.device(),
              "\".  This is no longer allowed; the devices must match.");
  TORCH_CHECK(storage_offset >= 0, "Tensor: invalid storage offset ", storage_offset);
  TORCH_CHECK(stride.empty() || stride.size() == size.size(),
              "unequal size length (", size.size(), ") and stride length (", stride.size(), ")");
  auto* impl = self.unsafeGetTensorImpl();
  if (!impl->storage().is_alias_of(source)) impl->set_storage_keep_dtype(std::move(source));
  impl->set_storage_offset(storage_offset);
  if (stride.empty()) {
    impl->set_sizes_contiguous(size);
  } else {
    impl->set_sizes_and_strides(size, stride);
  }
  ensure_storage_holds(self);
  return self;
}

at::Tensor& set_source_storage(at::Tensor& self, c10::Storage source) {
  const int64_t elements = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  return set_storage(self, std::move(source), 0, {elements}, {});
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& source) {
  if (self.unsafeGetTensorImpl() == source.unsafeGetTensorImpl()) return self;
  TORCH_CHECK(self.dtype() == source.dtype(), "Could not set tensor of type ", source.dtype(),
              " to a tensor of type ", self.dtype());
  return set_storage(self, source.storage(), source.storage_offset(), source.sizes(), source.strides());
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, &g_allocator, /*resizable=*/true);
  return set_storage(self, std::move(storage), 0, {0}, {});
}

void record_stream(at::Tensor& self, c10::Stream stream) {
  g_allocator.recordStream(self.storage().data_ptr(), stream);
}

// ---- CPU fallback ---------------------------------------------------------------------------------------------------
// Ops whose index arguments may live on the CPU while the data lives on the device (as on CUDA), by base name.
bool accepts_cpu_indices(const std::string& name) {
  return name == "aten::index" || name == "aten::index_put_" || name == "aten::index_put" ||
         name == "aten::_index_put_impl_";
}

// torch's usual error when an op mixes devices: tensors on two different devices (a 0-dim cpu tensor is a scalar
// and is allowed, as in TensorIterator).
void check_same_device(const c10::OperatorHandle& op, const torch::jit::Stack& stack, size_t first, size_t count) {
  std::optional<c10::Device> device;
  const bool cpu_ok = accepts_cpu_indices(op.schema().name());
  auto visit = [&](const at::Tensor& tensor) {
    if (!tensor.defined()) return;
    const c10::Device where = tensor.device();
    if (where.is_cpu() && (tensor.dim() == 0 || cpu_ok)) return;
    if (!device) {
      device = where;
    } else if (*device != where) {
      const c10::Device mlu_device = device->type() == kMLU ? *device : where;
      const c10::Device other = device->type() == kMLU ? where : *device;
      TORCH_CHECK(false, "Expected all tensors to be on the same device, but found at least two devices, ",
                  mlu_device, " and ", other, "! (in ", op.schema().operator_name(), ")");
    }
  };
  for (size_t i = first; i < first + count; ++i) {
    const c10::IValue& value = stack[i];
    if (value.isTensor()) {
      visit(value.toTensor());
    } else if (value.isTensorList()) {
      for (const at::Tensor& tensor : value.toTensorList()) visit(tensor);
    } else if (value.isList()) {
      for (const c10::IValue& item : value.toListRef()) {
        if (item.isTensor()) visit(item.toTensor());
      }
    }
  }
}

bool is_generator_type(const c10::TypePtr& type) {
  if (type->kind() == c10::TypeKind::GeneratorType) return true;
  if (type->kind() != c10::TypeKind::OptionalType) return false;
  return type->castRaw<c10::OptionalType>()->getElementType()->kind() == c10::TypeKind::GeneratorType;
}

// The device an op runs on: its first mlu tensor argument's, else the current device.
DeviceIndex op_device(const torch::jit::Stack& stack, size_t first, size_t count) {
  for (size_t i = first; i < first + count; ++i) {
    const c10::IValue& value = stack[i];
    if (value.isTensor() && value.toTensor().defined() && value.toTensor().device().type() == kMLU) {
      return value.toTensor().device().index();
    }
  }
  return current_device();
}

uint64_t mix(uint64_t seed, uint64_t offset) {  // splitmix64 of the pair
  uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (offset + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A random op on the CPU fallback draws from a CPU generator seeded from its mlu generator's (seed, offset) (the
// device's default generator when none is given), whose offset then advances: the same seed gives the same
// numbers, later calls new ones, and torch.mlu.manual_seed governs fallback random ops too.
void cpu_generators(const c10::OperatorHandle& op, torch::jit::Stack* stack, size_t first, size_t count) {
  const auto& arguments = op.schema().arguments();
  for (size_t i = 0; i < count; ++i) {
    if (!is_generator_type(arguments[i].type())) continue;
    c10::IValue& value = (*stack)[first + i];
    at::Generator source = value.isNone() ? g_hooks.getDefaultGenerator(op_device(*stack, first, count))
                                          : value.toGenerator();
    // an mlu op draws from an mlu generator only (torch's check_generator rule of device kernels)
    TORCH_CHECK(source.device().type() == kMLU, "Expected a 'mlu' device type for generator but found '",
                source.device().type(), "'");
    uint64_t seed = 0, offset = 0;
    {
      std::lock_guard<std::mutex> lock(source.mutex());
      seed = source.current_seed();
      offset = source.get_offset();
      source.set_offset(offset + 1);
    }
    value = c10::IValue(at::make_generator<at::CPUGeneratorImpl>(mix(seed, offset)));
  }
}

void cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const size_t count = op.schema().arguments().size();
  const size_t first = stack->size() - count;
  check_same_device(op, *stack, first, count);
  const std::string name = c10::toString(op.schema().operator_name());
  with_gil("cpu fallback", [&] { call(rt.on_fallback, name); });
  cpu_generators(op, stack, first, count);
  at::native::cpu_fallback(op, stack);
}

// ---- Python functions of the module ----------------------------------------------------------------------------------
void init(py::object runtime) {
  TORCH_CHECK(!g_ready, "mlu: the runtime is already initialised");
  auto bind = [&](const char* name) { return py::object(runtime.attr(name)).release().ptr(); };
  rt.malloc = bind("malloc");
  rt.free = bind("free");
  rt.record_stream = bind("record_stream");
  rt.copy_d2d = bind("copy_d2d");
  rt.set_device = bind("set_device");
  rt.new_stream = bind("new_stream");
  rt.query_stream = bind("query_stream");
  rt.sync_stream = bind("sync_stream");
  rt.sync_device = bind("sync_device");
  rt.record_event = bind("record_event");
  rt.block_event = bind("block_event");
  rt.query_event = bind("query_event");
  rt.sync_event = bind("sync_event");
  rt.elapsed_time = bind("elapsed_time");
  rt.destroy_event = bind("destroy_event");
  rt.host_alloc = bind("host_alloc");
  rt.host_free = bind("host_free");
  rt.device_of = bind("device_of");
  rt.empty_cache = bind("empty_cache");
  rt.device_stats = bind("device_stats");
  rt.reset_peak = bind("reset_peak");
  rt.reset_accumulated = bind("reset_accumulated");
  rt.mem_get_info = bind("mem_get_info");
  rt.memory_totals = bind("memory_totals");
  rt.on_fallback = bind("on_fallback");
  rt.device_count = bind("device_count");
  g_ready = true;
  at::RegisterPrivateUse1HooksInterface(&g_hooks);
}

int64_t current_stream_id(DeviceIndex device) { return current_streams()[checked_index(device)]; }

// mlusim's device table was rebuilt with `count` devices: streams and current devices of every thread start over.
void reset(int count) {
  TORCH_CHECK(count >= 0 && count <= kMaxDevices, "mlu: ", count, " devices; at most ", kMaxDevices);
  g_count = static_cast<DeviceIndex>(count);
  g_generation.fetch_add(1);
}

py::tuple current_stream(DeviceIndex device) {
  const DeviceIndex index = checked_index(device);
  return py::make_tuple(current_streams()[index], index);
}

void set_stream(int64_t stream_id, DeviceIndex device) { current_streams()[checked_index(device)] = stream_id; }

DeviceIndex exchange_device(DeviceIndex device) {
  const DeviceIndex old = current_device();
  if (device >= 0) set_current_device(device);
  return old;
}

py::object default_generator(DeviceIndex device) {
  return py::reinterpret_borrow<py::object>(THPGenerator_initDefaultGenerator(g_hooks.getDefaultGenerator(device)));
}

// Run an op through the CPU fallback from a Python kernel that cannot serve these arguments natively.
py::object run_fallback(const c10::OperatorHandle& op, py::args args, const py::kwargs& kwargs) {
  auto stack = torch::jit::createStackForSchema(op.schema(), args, kwargs, std::nullopt);
  cpu_fallback(op, &stack);
  return torch::jit::createPyObjectForStack(std::move(stack));
}

}  // namespace mlu

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", mlu::empty_memory_format);
  m.impl("empty_strided", mlu::empty_strided);
  m.impl("as_strided", mlu::as_strided);
  m.impl("view", mlu::view);
  m.impl("_reshape_alias", mlu::reshape_alias);
  m.impl("unfold", mlu::unfold);
  m.impl("view_as_real", [](const at::Tensor& self) { return at::native::view_as_real(self); });
  m.impl("view_as_complex", [](const at::Tensor& self) { return at::native::view_as_complex(self); });
  m.impl("resize_", mlu::resize_);
  m.impl("set_.source_Storage_storage_offset", mlu::set_storage);
  m.impl("set_.source_Storage", mlu::set_source_storage);
  m.impl("set_.source_Tensor", mlu::set_source_tensor);
  m.impl("set_", mlu::set_empty);
  m.impl("record_stream", mlu::record_stream);
}

// scaled_dot_product_attention asks a DispatchStub, not an aten op, which implementation to take: the answer for mlu
// comes from aten::_fused_sdp_choice, whose mlu kernel (ops/attention.py) picks cnnl's flash attention or torch's math.
// The stub asks that kernel directly (a redispatch to PrivateUse1), as CUDA's stub is a plain function: through the
// whole dispatcher, tracing (make_fx, AOTAutograd under torch.compile) would record the choice, an int, as a node
// of the graph, which the partitioner refuses.
namespace mlu {
int64_t fused_sdp_choice(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                         const std::optional<at::Tensor>& attn_mask, double dropout_p, bool is_causal,
                         std::optional<double> scale, bool enable_gqa) {
  return at::_ops::_fused_sdp_choice::redispatch(c10::DispatchKeySet(c10::DispatchKey::PrivateUse1), query, key,
                                                 value, attn_mask, dropout_p, is_causal, scale, enable_gqa);
}
}  // namespace mlu

namespace at::native {
REGISTER_PRIVATEUSE1_DISPATCH(_fused_sdp_choice_stub, &mlu::fused_sdp_choice);
}  // namespace at::native

// Copies see conjugate / negative views as they are (ops/copy.py resolves the bits): torch's Conjugate and Negative
// fallbacks would resolve them by a clone, which copies through _copy_from again, without end.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&mlu::cpu_fallback>());
}

// torch.autocast("mlu"): torch's own op lists (lower precision / fp32 / promote), as CUDA registers them.
namespace {
using at::Tensor;
using c10::IntArrayRef;
using c10::Scalar;
using c10::ScalarType;
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }
TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
#define MLU_AUTOCAST_LOWER(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define MLU_AUTOCAST_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define MLU_AUTOCAST_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define MLU_AUTOCAST_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(MLU_AUTOCAST_LOWER)
  AT_FORALL_FP32(MLU_AUTOCAST_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(MLU_AUTOCAST_FP32_SET_OPT_DTYPE)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(MLU_AUTOCAST_PROMOTE)
}
}  // namespace

namespace mlu::profiler {
void define(py::module_& m);  // csrc/profiler.cpp
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "The C++ part of torch_mlu: allocator, device guard, hooks, metadata kernels, CPU fallback";
  m.def("init", &mlu::init, "Bind the Python runtime and register the hooks");
  m.def("current_stream", &mlu::current_stream, "(stream id, device) of the thread's current stream");
  m.def("reset", &mlu::reset, "The device table was rebuilt with this many devices");
  m.def("current_stream_id", &mlu::current_stream_id, "The thread's current stream id of a device");
  m.def("set_stream", &mlu::set_stream, "Make a stream id the thread's current stream of a device");
  m.def("get_device", [] { return mlu::current_device(); });
  m.def("set_device", [](DeviceIndex device) { if (device >= 0) mlu::set_current_device(device); });
  m.def("exchange_device", &mlu::exchange_device);
  m.def("device_count", [] { return mlu::device_count(); });
  m.def("default_generator", &mlu::default_generator);
  m.def("is_pinned_ptr", [](uintptr_t ptr) { return mlu::is_pinned(reinterpret_cast<void*>(ptr)); });
  m.def("run_fallback", &mlu::run_fallback, "Run an aten op through the CPU fallback");
  m.def("quiesce_at_exit", &mlu::quiesce_at_exit, "Close Python to late frees from torch's threads (atexit)");
  m.def(
      "require_device_init", [] { torch::utils::set_requires_device_init(c10::DeviceType::PrivateUse1, true); },
      "torch calls torch.mlu._lazy_init again before the next mlu tensor (a forked child)");
  mlu::profiler::define(m);
}
