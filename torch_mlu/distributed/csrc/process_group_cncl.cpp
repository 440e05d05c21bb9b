// The C++ face of the torch.distributed backend "cncl": a c10d::Backend (what ProcessGroup dispatches every
// collective of an mlu tensor to) and a c10d::Work, both forwarding every call to a Python object
// (torch_mlu/distributed/backend.py and work.py), where the collectives are written over cncl.
//
// torch lets a Python class stand in for a whole ProcessGroup, but then ProcessGroup's own C++ paths (functional
// collectives, _allgather_base / _reduce_scatter_base from C++, coalescing, batch_isend_irecv) do not reach it:
// they ask the ProcessGroup for its Backend of the tensor's device. A real Backend, as Cambricon's
// ProcessGroupCNCL is, receives all of them. Options are flattened into plain values for Python.
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <torch/csrc/jit/python/pybind_utils.h>
#include <torch/csrc/utils/pybind.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <atomic>
#include <chrono>

namespace py = pybind11;

namespace mlu_distributed {

using c10d::OpType;

// Drop a Python reference from C++ code that may run without the GIL, or after the interpreter is gone.
void release(py::object& object) {
  if (!object) {
    return;
  }
  if (!Py_IsInitialized()) {
    object.release();  // the interpreter is gone: leak rather than touch it
    return;
  }
  py::gil_scoped_acquire gil;
  object = py::object();
}

// A work whose collective already ran in the calling thread (`ran_in_call`, read once while the GIL is held)
// answers wait() and the state queries here: a small collective's wait() costs no trip back into Python.
class WorkCNCL : public c10d::Work {
 public:
  WorkCNCL(py::object impl, int rank, OpType type)
      : Work(rank, type), impl_(std::move(impl)), ran_in_call_(impl_.attr("ran_in_call").cast<bool>()) {}
  ~WorkCNCL() override { release(impl_); }

  bool isCompleted() override {
    if (ran_in_call_) {
      return true;
    }
    py::gil_scoped_acquire gil;
    return impl_.attr("is_completed")().cast<bool>();
  }
  bool isSuccess() const override {
    if (ran_in_call_) {
      return true;
    }
    py::gil_scoped_acquire gil;
    return impl_.attr("is_success")().cast<bool>();
  }
  std::exception_ptr exception() const override {
    if (ran_in_call_) {
      return nullptr;
    }
    py::gil_scoped_acquire gil;
    py::object message = impl_.attr("exception_message")();
    if (message.is_none()) {
      return nullptr;
    }
    return std::make_exception_ptr(c10::DistBackendError(
        {__func__, __FILE__, static_cast<uint32_t>(__LINE__)}, message.cast<std::string>()));
  }
  int sourceRank() const override {
    py::gil_scoped_acquire gil;
    return impl_.attr("source_rank")().cast<int>();
  }
  std::vector<at::Tensor> result() override {
    py::gil_scoped_acquire gil;
    return impl_.attr("result")().cast<std::vector<at::Tensor>>();
  }
  void synchronize() override {
    if (ran_in_call_) {
      return;
    }
    py::gil_scoped_acquire gil;
    impl_.attr("synchronize")();
  }
  bool wait(std::chrono::milliseconds timeout) override {
    if (ran_in_call_) {
      return true;
    }
    py::gil_scoped_acquire gil;
    return impl_.attr("wait")(timeout.count()).cast<bool>();
  }
  void blockCurrentStream() override { synchronize(); }
  void abort() override {
    py::gil_scoped_acquire gil;
    impl_.attr("abort")();
  }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override {
    py::gil_scoped_acquire gil;
    py::object future = impl_.attr("get_future")();
    return future.cast<std::shared_ptr<torch::jit::PythonFutureWrapper>>()->fut;
  }
  uint64_t getSequencenumber() const override {
    py::gil_scoped_acquire gil;
    return impl_.attr("sequence_number").cast<uint64_t>();
  }
  py::object impl() const { return impl_; }

 private:
  mutable py::object impl_;
  const bool ran_in_call_;
};

// (op, factor): the ReduceOp's type as an int, and PREMUL_SUM's factor (a float or a 1-element tensor) or None.
py::tuple reduce_op(const c10d::ReduceOp& op) {
  py::object factor = py::none();
  if (op.op_ == c10d::ReduceOp::PREMUL_SUM && op.supplement_) {
    auto* supplement = static_cast<c10d::PreMulSumSupplement*>(op.supplement_.get());
    if (supplement->tensor_factor.defined()) {
      factor = py::cast(supplement->tensor_factor);
    } else {
      factor = py::cast(supplement->double_factor);
    }
  }
  return py::make_tuple(static_cast<int>(op.op_), factor);
}

class ProcessGroupCNCL : public c10d::Backend {
 public:
  ProcessGroupCNCL(py::object impl, int rank, int size) : Backend(rank, size), impl_(std::move(impl)) {}
  ~ProcessGroupCNCL() override { release(impl_); }

  const std::string getBackendName() const override { return "cncl"; }
  bool supportsCoalescing() const override { return true; }
  py::object impl() const { return impl_; }

  template <typename... Args>
  c10::intrusive_ptr<c10d::Work> forward(const char* name, OpType type, Args&&... args) {
    py::gil_scoped_acquire gil;
    py::object work = impl_.attr(name)(std::forward<Args>(args)...);
    return c10::make_intrusive<WorkCNCL>(std::move(work), getRank(), type);
  }

  void startCoalescing() override {
    py::gil_scoped_acquire gil;
    impl_.attr("start_coalescing")();
  }
  c10::intrusive_ptr<c10d::Work> endCoalescing() override { return forward("end_coalescing", OpType::COALESCED); }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("broadcast", OpType::BROADCAST, tensors, opts.rootRank, opts.rootTensor);
  }
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    if (tensors.size() == 1 && opts.reduceOp.op_ != c10d::ReduceOp::PREMUL_SUM) {
      const at::Tensor& tensor = tensors[0];
      if (tensor.device().is_privateuseone() && tensor.layout() == c10::kStrided && tensor.is_contiguous()) {
        // the common call: one dense tensor, checked here, with its device's current stream read here
        const c10::Stream stream =
            c10::impl::getDeviceGuardImpl(c10::DeviceType::PrivateUse1)->getStream(tensor.device());
        return forward("allreduce_dense", OpType::ALLREDUCE, tensor, static_cast<int>(tensor.device().index()),
                       stream.id(), static_cast<int>(opts.reduceOp.op_));
      }
    }
    return forward("allreduce", OpType::ALLREDUCE, tensors, reduce_op(opts.reduceOp));
  }
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceCoalescedOptions& opts) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("allreduce_coalesced", OpType::ALLREDUCE_COALESCED, tensors, reduce_op(opts.reduceOp));
  }
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors, const c10d::ReduceOptions& opts) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("reduce", OpType::REDUCE, tensors, reduce_op(opts.reduceOp), opts.rootRank, opts.rootTensor);
  }
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("allgather", OpType::ALLGATHER, outputs, inputs);
  }
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("allgather_into_tensor", OpType::_ALLGATHER_BASE, output, input);
  }
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& opts) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("allgather_coalesced", OpType::ALLGATHER_COALESCED, outputs, inputs);
  }
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::AllgatherOptions& opts) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("allgather_into_tensor_coalesced", OpType::COALESCED, outputs, inputs);
  }
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs, const c10d::GatherOptions& opts) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("gather", OpType::GATHER, outputs, inputs, opts.rootRank);
  }
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("scatter", OpType::SCATTER, outputs, inputs, opts.rootRank);
  }
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("reduce_scatter", OpType::REDUCE_SCATTER, outputs, inputs, reduce_op(opts.reduceOp));
  }
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                      const c10d::ReduceScatterOptions& opts) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("reduce_scatter_tensor", OpType::_REDUCE_SCATTER_BASE, output, input,
                   reduce_op(opts.reduceOp));
  }
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                 std::vector<at::Tensor>& inputs,
                                                                 const c10d::ReduceScatterOptions& opts) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("reduce_scatter_tensor_coalesced", OpType::REDUCE_SCATTER_TENSOR_COALESCED, outputs, inputs,
                   reduce_op(opts.reduceOp));
  }
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_splits,
                                               std::vector<int64_t>& input_splits,
                                               const c10d::AllToAllOptions& opts) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("alltoall_base", OpType::ALLTOALL_BASE, output, input, output_splits, input_splits);
  }
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("alltoall", OpType::ALLTOALL, outputs, inputs);
  }
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("send", OpType::SEND, tensors, dst, tag);
  }
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("recv", OpType::RECV, tensors, src, tag);
  }
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override {
    py::gil_scoped_acquire gil;  // the arguments may be made into Python objects before forward() runs
    return forward("recv_anysource", OpType::RECVANYSOURCE, tensors, tag);
  }
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override {
    py::gil_scoped_acquire gil;
    py::object device = opts.device ? py::cast(opts.device->index()) : py::none();
    return forward("barrier", OpType::BARRIER, opts.device_ids, device);
  }

  void setTimeout(std::chrono::milliseconds timeout) override {
    py::gil_scoped_acquire gil;
    impl_.attr("set_timeout")(timeout.count());
  }
  void setSequenceNumberForGroup() override {}
  uint64_t getSequenceNumberForGroup() override {
    py::gil_scoped_acquire gil;
    return impl_.attr("sequence_number").cast<uint64_t>();
  }
  void waitForPendingWorks() override {
    py::gil_scoped_acquire gil;
    impl_.attr("wait_for_pending_works")();
  }
  void eagerConnectSingleDevice(at::Device device) override {
    py::gil_scoped_acquire gil;
    impl_.attr("connect")(device.index());
  }
  void abort() override {
    py::gil_scoped_acquire gil;
    impl_.attr("abort")();
  }
  void shutdown() override {
    py::gil_scoped_acquire gil;
    impl_.attr("shutdown")();
  }

 private:
  py::object impl_;
};

}  // namespace mlu_distributed

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  using mlu_distributed::ProcessGroupCNCL;
  using mlu_distributed::WorkCNCL;
  py::object backend_class = py::module::import("torch._C._distributed_c10d").attr("Backend");
  py::object work_class = py::module::import("torch._C._distributed_c10d").attr("Work");
  (void)backend_class;
  (void)work_class;
  py::class_<ProcessGroupCNCL, c10d::Backend, c10::intrusive_ptr<ProcessGroupCNCL>>(m, "ProcessGroupCNCL")
      .def(py::init<py::object, int, int>(), py::arg("impl"), py::arg("rank"), py::arg("size"))
      .def_property_readonly("impl", &ProcessGroupCNCL::impl);
  py::class_<WorkCNCL, c10d::Work, c10::intrusive_ptr<WorkCNCL>>(m, "WorkCNCL")
      .def_property_readonly("impl", &WorkCNCL::impl);
}
