"""IContext: runs the model on a cnrt queue. Each step of the program is ONE command on the queue (built by
mlusim's submission builder, so it is ordered with every other cnrt command of the queue, traced, sanitized and
costed); enqueue returns as soon as the commands are queued.

Per enqueue: the input shapes are checked against the model (and its dim_range), the shape plan and memory plan of
those shapes are made (cached per shape), host inputs are copied into the arena (device inputs are read where
they are), each output gets a buffer of its own (the returned tensors own them), then the steps are queued.
A model whose shapes depend on data (a slice ending where a reduction says) plans as it goes: before such a
step the queue is synchronised and the small tensors the shape comes from are read back, as on hardware.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

import cnnl
import cnrt
from mlusim import cost
from mlusim.submit import Kind, Submission

from ..dims import Dims
from ..dtypes import get_datatype_by_numpy
from ..enums import TensorLocation
from ..graph import ops as O
from ..graph.infer import infer_node
from ..status import Code, MagicMindError, Status
from . import library, profiler
from . import plan as P
from .system import queue_arg
from .tensor import IRTTensor

_RATE = {"float16": "half", "float32": "float", "float64": "double", "int8": "int8", "int16": "int16"}


@dataclass
class ContextDumpInfo:
    """Context.ContextDumpInfo(path=, tensor_name=[], dump_mode=, file_format=): after each enqueue, the named
    intermediate tensors (all when tensor_name is empty; dump_mode 0 = none, 1 = the named ones, 2 = all) are
    written to `path` as .npy (file_format 0) or raw bytes (1), one file per tensor."""

    path: str = ""
    tensor_name: list = field(default_factory=list)
    dump_mode: int = 2
    file_format: int = 0


def _rate(step, in_infos, out_infos) -> str:
    """The cost model's rate of a step: its quantized arithmetic, else the type it computes in (a conv's or
    matmul's inputs, else its first output)."""
    quant = step.attrs.get("quant") or step.attrs.get("quant_a")
    if quant:
        return "int8" if quant["bits"] == 8 else "int16"
    dtype = out_infos[0].dtype if out_infos else np.dtype(np.float32)
    if step.op in ("conv", "matmul") and in_infos:
        dtype = in_infos[0].dtype
    return _RATE.get(np.dtype(dtype).name, "float")


class Context:
    """IContext: made by Engine.create_i_context() on the current device."""

    ContextDumpInfo = ContextDumpInfo

    def __init__(self, engine, device: int):
        self.engine = engine
        self.program = engine.program
        self.model = engine.model
        self.device = device
        self._shape_plans: dict = {}
        self._memory_plans: dict = {}
        self._arena = 0
        self._arena_bytes = 0
        self._lock = threading.Lock()
        self._dump: Optional[ContextDumpInfo] = None
        self.last_memory_plan: Optional[P.MemoryPlan] = None
        self._spec = None
        self._handles: dict = {}  # cnrt queue -> the cnnl handle bound to it (library layers)
        #: value id -> a function the value's data is given to after each enqueue computed it (calibration)
        self.observers: dict = {}

    # ---- tensors -----------------------------------------------------------------------------------------------

    def create_inputs(self) -> list:
        """IContext::CreateInputTensors(): one tensor per model input, of the model's type and dims (-1 on mutable
        axes until from_numpy or set_dimensions gives a shape), located on the MLU without data: set_data gives it
        device memory, from_numpy host data."""
        tensors = []
        for key in self.program.inputs:
            value = self.program.values[key]
            tensors.append(IRTTensor(value.name, get_datatype_by_numpy(value.dtype), Dims(value.shape or ()),
                                     TensorLocation.kMLU))
        return tensors

    def create_outputs(self, inputs=None) -> list:
        """IContext::CreateOutputTensors: the output tensors (their dims for these inputs' shapes, or the model's;
        on the MLU without data: an enqueue writes into memory given with set_data, else gives them buffers)."""
        if inputs is None:
            return [IRTTensor(self.program.values[k].name, get_datatype_by_numpy(self.program.values[k].dtype),
                              Dims(self.program.values[k].shape or ()), TensorLocation.kMLU)
                    for k in self.program.outputs]
        infos = self._shape_plan(self._shapes(inputs)).infos
        return [IRTTensor(self.program.values[k].name, get_datatype_by_numpy(infos[k].dtype),
                          Dims(infos[k].shape if infos[k].shape is not None else ()), TensorLocation.kMLU)
                for k in self.program.outputs]

    def infer_output_shape(self, inputs, outputs=None) -> Status:
        """IContext::InferOutputShape(inputs, outputs): the outputs' dims for these inputs; UNAVAILABLE when they
        depend on data."""
        try:
            plan = self._shape_plan(self._shapes(inputs))
        except MagicMindError as error:
            return error.status
        if plan.dynamic:
            return Status(Code.UNAVAILABLE, "infer_output_shape: the output shapes depend on the data")
        if outputs is not None:
            for tensor, key in zip(outputs, self.program.outputs):
                tensor.set_dimensions(Dims(plan.infos[key].shape))
        return Status()

    def set_context_dump_info(self, info: ContextDumpInfo) -> Status:
        """IContext::SetContextDumpInfo: dump intermediate results after each enqueue (debug mode)."""
        if not isinstance(info, ContextDumpInfo):
            return Status(Code.INVALID_ARGUMENT, "set_context_dump_info: expects a Context.ContextDumpInfo")
        if info.dump_mode not in (0, 1, 2) or info.file_format not in (0, 1):
            return Status(Code.INVALID_ARGUMENT, f"set_context_dump_info: dump_mode {info.dump_mode!r} (0-2) or "
                                                 f"file_format {info.file_format!r} (0-1) is not valid")
        if info.dump_mode and not info.path:
            return Status(Code.INVALID_ARGUMENT, "set_context_dump_info: path is empty")
        self._dump = info if info.dump_mode else None
        return Status()

    # ---- enqueue -----------------------------------------------------------------------------------------------

    def enqueue(self, inputs, outputs, queue, input_by_tensor_order: bool = True) -> Status:
        """IContext::Enqueue(inputs, outputs, queue): queue the model's run; `outputs` (a list) is filled with the
        output tensors (its old contents are replaced). Returns the Status (the error names the argument)."""
        try:
            self._enqueue(inputs, outputs, queue)
        except MagicMindError as error:
            return error.status
        except cnrt.CnrtError as error:
            return Status(Code.INTERNAL, f"enqueue: {error}")
        return Status()

    def _shapes(self, inputs) -> list:
        if not isinstance(inputs, (list, tuple)):
            raise MagicMindError(Code.INVALID_ARGUMENT, f"enqueue: inputs must be a list of tensors, not "
                                                        f"{type(inputs).__name__}")
        if len(inputs) != len(self.program.inputs):
            raise MagicMindError(Code.INVALID_ARGUMENT, f"enqueue: {len(inputs)} inputs given; the model takes "
                                                        f"{len(self.program.inputs)}")
        shapes = []
        for i, (tensor, key) in enumerate(zip(inputs, self.program.inputs)):
            if not isinstance(tensor, IRTTensor):
                raise MagicMindError(Code.INVALID_ARGUMENT, f"enqueue: inputs[{i}] is not an IRTTensor")
            if tensor.get_dimensions().HasUnknownDim():
                raise MagicMindError(Code.INVALID_ARGUMENT, f"enqueue: inputs[{i}] ({tensor.get_name()!r}) has "
                                                            f"no shape yet (from_numpy or set_dimensions)")
            want = self.program.values[key].dtype
            got = tensor.host_array.dtype if tensor.host_array is not None else want
            if got != want:
                raise MagicMindError(Code.INVALID_ARGUMENT, f"enqueue: inputs[{i}] holds {got}; the model input is "
                                                            f"{want}")
            shapes.append(tuple(tensor.get_dimensions().as_tuple()))
        P.check_range(self.program, shapes, [self.program.values[k].name for k in self.program.inputs])
        return shapes

    def _shape_plan(self, shapes) -> P.ShapePlan:
        key = tuple(shapes)
        found = self._shape_plans.get(key)
        if found is None:
            found = P.plan_shapes(self.program, list(shapes))
            if len(self._shape_plans) > 64:
                self._forget_plans()
            self._shape_plans[key] = found
        return found

    def _enqueue(self, inputs, outputs, queue) -> None:
        if not isinstance(outputs, list):
            raise MagicMindError(Code.INVALID_ARGUMENT, "enqueue: outputs must be a list (it is filled)")
        q = queue_arg(queue)
        if q.device.index != self.device:
            raise MagicMindError(Code.INVALID_ARGUMENT, f"enqueue: the queue is on device {q.device.index}; the "
                                                        f"context was created on device {self.device}")
        for i, tensor in enumerate(inputs if isinstance(inputs, (list, tuple)) else ()):
            if isinstance(tensor, IRTTensor) and tensor.device_address and tensor.device_index != self.device:
                raise MagicMindError(Code.INVALID_ARGUMENT, f"enqueue: inputs[{i}] is on device "
                                                            f"{tensor.device_index}, the context on {self.device}")
            if isinstance(tensor, IRTTensor) and not tensor.device_address and tensor.host_array is None:
                raise MagicMindError(Code.INVALID_ARGUMENT, f"enqueue: inputs[{i}] ({tensor.get_name()!r}) holds no "
                                                            f"data (from_numpy first)")
        shapes = self._shapes(inputs)
        given = outputs if outputs and all(isinstance(t, IRTTensor) and t.user_memory for t in outputs) else None
        if given is not None and len(given) != len(self.program.outputs):
            raise MagicMindError(Code.INVALID_ARGUMENT, f"enqueue: {len(given)} output tensors given; the model has "
                                                        f"{len(self.program.outputs)} outputs")
        with self._lock:
            plan = self._shape_plan(shapes)
            run = _Run(self, q, inputs, plan, given)
            if plan.dynamic:
                produced = run.dynamic()
            else:
                produced = run.planned()
        outputs[:] = produced

    def _ensure_arena(self, size: int) -> int:
        if size > self._arena_bytes:
            previous = cnrt.getDevice()
            cnrt.setDevice(self.device)
            try:
                if self._arena:
                    cnrt.free(self._arena)  # waits for queued work that still uses it
                self._arena = cnrt.malloc(size)
                self._arena_bytes = size
            finally:
                cnrt.setDevice(previous)
        return self._arena

    def handle(self, queue):
        """The cnnl handle of this context on `queue` (made on first use, bound to the queue)."""
        found = self._handles.get(queue)
        if found is None:
            previous = cnrt.getDevice()
            cnrt.setDevice(self.device)
            try:
                found = cnnl.create()
                cnnl.setQueue(found, queue)
            finally:
                cnrt.setDevice(previous)
            self._handles[queue] = found
        return found

    def _forget_plans(self) -> None:
        for plan in self._shape_plans.values():
            plan.release()
        self._shape_plans.clear()

    def destroy(self) -> Status:
        self._forget_plans()
        for handle in self._handles.values():
            try:
                cnnl.destroy(handle)
            except cnnl.CnnlError:
                pass
        self._handles.clear()
        if self._arena:
            try:
                cnrt.free(self._arena)
            except Exception:
                pass
            self._arena, self._arena_bytes = 0, 0
        return Status()

    def __del__(self):
        try:
            self.destroy()
        except Exception:
            pass


class _Run:
    """One enqueue: addresses of every value and the commands of every step."""

    def __init__(self, context: Context, queue, inputs, plan: P.ShapePlan, given_outputs=None):
        self.context, self.queue, self.inputs, self.plan = context, queue, inputs, plan
        #: output tensors with memory of the caller's (set_data), written in place
        self.given = dict(zip(context.program.outputs, given_outputs)) if given_outputs else {}
        self.program = context.program
        self.infos = plan.infos
        self.address: dict = {}
        self.owned: list = []
        self.spec = queue.device.spec
        self._buffers: dict = {}
        self.serial = next(profiler.RUNS)
        self.const_base, self.const_offsets = context.engine.constants(context.device)
        for key, offset in self.const_offsets.items():
            self.address[key] = self.const_base + offset

    # ---- the two ways to run -----------------------------------------------------------------------------------

    def planned(self) -> list:
        ctx = self.context
        memory = ctx._memory_plans.get(tuple(self.infos[k].shape for k in self.program.inputs))
        if memory is None:
            memory = P.plan_memory(self.program, self.plan)
            ctx._memory_plans[tuple(self.infos[k].shape for k in self.program.inputs)] = memory
        ctx.last_memory_plan = memory
        arena = ctx._ensure_arena(max(memory.arena_bytes, 1))
        for key, (kind, where) in memory.places.items():
            if kind == "arena":
                self.address[key] = arena + where
        for key, (kind, where) in memory.places.items():
            if kind == "alias":
                self.address[key] = self.address[where]
        outputs = self._outputs()
        self._stage_inputs()
        self._observe(self.program.inputs)
        for index, step in enumerate(self.program.steps):
            if index in self.plan.host_steps:
                self._observe(step.outs)
                continue
            if not (step.op in P.VIEW_OPS and
                    all(memory.places.get(k, ("", None))[0] == "alias" for k in step.outs)):
                self._issue(step, index)  # (a view's output is its input's bytes: nothing to run)
            self._dump_step(step)
        self._finish_outputs()
        return outputs

    def dynamic(self) -> list:
        """Plan while running: every value gets its own buffer, freed on the queue after its last reader."""
        infos = self.program.base_infos([self.infos[k].shape for k in self.program.inputs])
        self.infos = infos
        consumers = self.program.consumers()
        outputs_set = set(self.program.outputs)
        for key in self.program.inputs:
            if key not in outputs_set:
                self._own_buffer(key)
        self._stage_inputs()
        self._observe(self.program.inputs)
        results = {}
        for index, step in enumerate(self.program.steps):
            ins = [infos[v] for v in step.ins]
            op = O.get(step.op)
            for position in op.value_inputs:
                if position < len(ins) and ins[position].value is None:
                    ins[position] = self._read_back(step.ins[position])
            outs = infer_node(step.op, step.attrs, ins, step.name)
            for key, info in zip(step.outs, outs):
                if not info.known:
                    raise MagicMindError(Code.INTERNAL, f"node {step.name!r}: output shape {info.shape} unknown")
                infos[key] = info
            if all(o.value is not None for o in outs):
                for key in step.outs:
                    if key in outputs_set:
                        results[key] = self._output_tensor(key)
                continue
            for key in step.outs:
                if key in outputs_set:
                    results[key] = self._output_tensor(key)
                else:
                    self._own_buffer(key)
            self._issue(step)
            self._dump_step(step)
            for key in step.ins:
                if key in self.address and key not in outputs_set and key not in self.const_offsets and \
                        max(consumers.get(key, [index])) <= index and key in self._buffers:
                    cnrt.memFreeAsync(self._buffers.pop(key), self.queue)
        for key in list(self._buffers):
            cnrt.memFreeAsync(self._buffers.pop(key), self.queue)
        self._finish_outputs()
        return [results[k] if k in results else self._output_tensor(k) for k in self.program.outputs]

    # ---- pieces ------------------------------------------------------------------------------------------------

    def _own_buffer(self, key) -> None:
        size = P.nbytes(self.infos[key])
        previous = cnrt.getDevice()
        cnrt.setDevice(self.context.device)
        try:
            address = cnrt.malloc(max(size, 1))
        finally:
            cnrt.setDevice(previous)
        self._buffers[key] = address
        self.address[key] = address

    def _read_back(self, key):
        info = self.infos[key]
        cnrt.queueSync(self.queue)
        data = np.empty(info.shape, info.dtype)
        if data.nbytes:
            cnrt.memcpy(data, self.address[key], data.nbytes, cnrt.cnrtMemcpyDevToHost)
        return O.Info(info.shape, info.dtype, data)

    def _outputs(self) -> list:
        return [self._output_tensor(k) for k in self.program.outputs]

    def _output_tensor(self, key) -> IRTTensor:
        info = self.infos[key]
        given = self.given.get(key)
        if given is not None:
            if given.get_data_type() != get_datatype_by_numpy(info.dtype):
                raise MagicMindError(Code.INVALID_ARGUMENT, f"enqueue: output {given.get_name()!r} is "
                                                            f"{given.get_data_type().name}; the model writes "
                                                            f"{get_datatype_by_numpy(info.dtype).name}")
            given.set_dimensions(Dims(info.shape))
            if key not in self.program.inputs:
                self.address[key] = given.device_address
            self._output_tensors = getattr(self, "_output_tensors", {})
            self._output_tensors[key] = given
            return given
        tensor = IRTTensor(self.program.values[key].name, get_datatype_by_numpy(info.dtype), Dims(info.shape))
        previous = cnrt.getDevice()
        cnrt.setDevice(self.context.device)
        try:
            address = cnrt.malloc(max(P.nbytes(info), 1))
        finally:
            cnrt.setDevice(previous)
        tensor._own(address, self.context.device)
        if key not in self.program.inputs:
            self.address[key] = address
        self._output_tensors = getattr(self, "_output_tensors", {})
        self._output_tensors[key] = tensor
        return tensor

    def _stage_inputs(self) -> None:
        for tensor, key in zip(self.inputs, self.program.inputs):
            if tensor.device_address:
                if key in self.address and key not in self.program.outputs:
                    self._copy(self.address[key], tensor.device_address, tensor.get_size())
                else:
                    self.address[key] = tensor.device_address
                continue
            data = tensor.host_array
            if key not in self.address:
                self.address[key] = None
            if data.nbytes:
                cnrt.memcpyAsync(self.address[key], data, data.nbytes, self.queue, cnrt.cnrtMemcpyHostToDev)

    def _copy(self, dst, src, nbytes) -> None:
        if nbytes:
            cnrt.memcpyAsync(dst, src, nbytes, self.queue, cnrt.cnrtMemcpyDevToDev)

    def _finish_outputs(self) -> None:
        """Outputs that no device step writes: constants, host-known values, inputs passed through."""
        written = {k for i, s in enumerate(self.program.steps) for k in s.outs
                   if i not in self.plan.host_steps or self.plan.dynamic}
        for key, tensor in getattr(self, "_output_tensors", {}).items():
            info = self.infos[key]
            if key in self.program.inputs:
                source = self.address.get(key)
                staged = next(t for t, k in zip(self.inputs, self.program.inputs) if k == key)
                if staged.device_address:
                    self._copy(tensor.device_address, staged.device_address, P.nbytes(info))
                elif staged.host_array.nbytes:
                    cnrt.memcpyAsync(tensor.device_address, staged.host_array, staged.host_array.nbytes,
                                     self.queue, cnrt.cnrtMemcpyHostToDev)
                del source
            elif key in written and info.value is None:
                continue
            elif info.value is not None and P.nbytes(info):
                data = np.ascontiguousarray(info.value, info.dtype)
                cnrt.memcpyAsync(tensor.device_address, data, data.nbytes, self.queue, cnrt.cnrtMemcpyHostToDev)

    def _issue(self, step, index=None) -> None:
        """Queue one step: a library layer through its cnnl call, anything else as one command of our own kernel
        (tagged with the layer for a running mm.Profiler)."""
        with profiler.issuing(self.context.model.get_name(), step.name, step.op, self.serial):
            if step.op in library.PREPARE:
                self._issue_library(step, index)
            else:
                self._issue_kernel(step, index)

    def _prepared(self, step, index, make):
        """The step's layer for this run's shapes: made once per shape plan (planned runs), or now."""
        cache = self.plan.layers if index is not None and not self.plan.dynamic else None
        if cache is not None and index in cache:
            return cache[index]
        layer = make()
        if cache is not None:
            cache[index] = layer
        return layer

    def _issue_library(self, step, index) -> None:
        infos = self.infos
        in_infos = [infos[v] for v in step.ins]
        out_infos = [infos[v] for v in step.outs]
        layer = self._prepared(step, index, lambda: library.prepare(step, in_infos, out_infos))
        handle = self.context.handle(self.queue)
        inputs = [self.address.get(k) for k in step.ins]
        outputs = [self.address[k] for k in step.outs]
        try:
            layer.issue(handle, inputs, outputs, 0)
        except cnnl.CnnlError as error:
            raise MagicMindError(Code.INTERNAL, f"node {step.name!r} ({step.op}): {error}") from None

    def _issue_kernel(self, step, index) -> None:
        op = O.get(step.op)
        infos = self.infos
        in_infos = [infos[v] for v in step.ins]
        out_infos = [infos[v] for v in step.outs]
        kernel = self._prepared(step, index, lambda: op.prepare(step.attrs, in_infos, out_infos))
        with Submission(Kind.OP, f"mm:{step.name}") as submission:
            sources = []
            nbytes = 0
            for position, (key, info) in enumerate(zip(step.ins, in_infos)):
                size = P.nbytes(info)
                if info.value is not None and key not in self.address:
                    sources.append(("host", np.asarray(info.value)))
                elif size == 0:
                    sources.append(("host", np.empty(info.shape, info.dtype)))
                else:
                    span = submission.read(self.address[key], size, f"{step.name} input {position}")
                    sources.append(("span", (span, info.dtype, info.shape)))
                    nbytes += size
            targets = []
            for position, (key, info) in enumerate(zip(step.outs, out_infos)):
                size = P.nbytes(info)
                if size == 0:
                    targets.append(("host", np.empty(info.shape, info.dtype)))
                else:
                    span = submission.write(self.address[key], size, f"{step.name} output {position}")
                    targets.append(("span", (span, info.dtype, info.shape)))
                    nbytes += size
            flops = getattr(kernel, "flops", None)
            if flops is None:
                flops = op.flops(step.attrs, [i.shape for i in in_infos], [o.shape for o in out_infos])
            model_us = cost.op_us(self.spec, flops, nbytes, _rate(step, in_infos, out_infos), op.unit)

            def view(entry):
                kind, item = entry
                if kind == "host":
                    return item
                span, dt, shape = item
                return span.typed(dt, shape)

            def run():
                with np.errstate(all="ignore"):
                    kernel([view(s) for s in sources], [view(t) for t in targets])

            submission.submit(self.queue, run, model_us,
                               info={"flops": flops, "bytes": nbytes, "unit": op.unit, "layer": step.name,
                                     "op": step.op})

    def _read_after(self, key) -> np.ndarray:
        """A host array the queue fills with value `key` when it gets here (its current bytes: arena bytes are
        reused later)."""
        info = self.infos[key]
        address = self.address.get(key)
        data = np.empty(info.shape, info.dtype) if info.value is None else np.array(info.value, info.dtype)
        if info.value is None and address and data.nbytes:
            cnrt.memcpyAsync(data, address, data.nbytes, self.queue, cnrt.cnrtMemcpyDevToHost)
        return data

    def _observe(self, keys) -> None:
        """Hand the values the context's observers watch (calibration) to them, in queue order."""
        observers = self.context.observers
        for key in keys:
            observer = observers.get(key)
            if observer is not None:
                data = self._read_after(key)
                cnrt.invokeHostFunc(self.queue, lambda _=None, data=data, observer=observer: observer(data))

    def _dump_step(self, step) -> None:
        """Copy the step's outputs back right after it (arena bytes are reused later) and write them in order;
        hand the watched ones to the observers."""
        if self.context.observers:
            self._observe(step.outs)
        dump = self.context._dump
        if dump is None:
            return
        os.makedirs(dump.path, exist_ok=True)
        for key in step.outs:
            value = self.program.values[key]
            if dump.dump_mode == 1 and value.name not in set(dump.tensor_name):
                continue
            data = self._read_after(key)
            safe = value.name.replace("/", "_").replace(":", "_")
            target = os.path.join(dump.path, safe + (".npy" if dump.file_format == 0 else ".bin"))

            def write(_=None, data=data, target=target, raw=dump.file_format == 1):
                if raw:
                    data.tofile(target)
                else:
                    np.save(target, data)
            cnrt.invokeHostFunc(self.queue, write)
