"""One CNNL op call: its operands are checked and pinned, then ONE Command goes on the handle's queue.

Usage inside an op (after its descriptors and arguments were validated):

    with OpCall("cnnlOpTensor", handle) as call:
        a = call.input(a_desc, a, "a")
        c = call.output(c_desc, c, "c")
        call.workspace(workspace, workspace_size, needed, "cnnlGetOpTensorWorkspaceSize")
        call.submit(lambda: kernel(a, c), flops=c_desc.size, dtype=c_desc.dtype)

OpCall is cnnl's face of mlusim.submit.Submission (the one builder of queued work): if anything fails before
`submit`, the pins taken so far are released. The modelled duration comes from
`mlusim.cost.op_us` (a roofline over the board's GDRAM bandwidth and the peak of the unit the op runs on: the tensor
unit for matmul-like ops, the vector unit otherwise). The flops, bytes, data type and unit are kept in `Command.info`.
"""
from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from mlusim import cost
from mlusim.device import owner_of
from mlusim.errors import ArgumentFault, NullPointerFault
from mlusim.memo import BoundedMemo
from mlusim.memory import ADDRESS_SPAN
from mlusim.submit import Access, Kind, Submission
from mlusim.transfer import DeviceRange, acquire
from mlusim.validate import as_size

from . import dtypes as D
from . import enums as E
from .handle import Handle, handle_arg
from .tensor import TensorDescriptor
from .views import acquire_tensor, pointer_value, self_overlapping, tensor_view

#: Ops whose arithmetic runs on the tensor unit (MACs); every other op runs on the vector unit.
TENSOR_UNIT_OPS = frozenset({"cnnlMatMul", "cnnlMatMul_v2", "cnnlBatchMatMulBCast", "cnnlBatchMatMulBCast_v2",
                             "cnnlBatchMatMul", "cnnlConvolutionForward", "cnnlConvolutionBackwardData",
                             "cnnlConvolutionBackwardFilter", "cnnlDeconvolution"})


#: modelled durations of recent (spec, flops, bytes, rate, unit): ops called again and again on the same shapes
#: skip the roofline arithmetic (a few µs of the per-call host cost)
_model_us = BoundedMemo(4096)
_rate_keys: dict = {}
_dtype_names: dict = {}


def rate_key(dtype: int) -> str:
    """The mlusim.cost rate key ("half", "float", "double", ...) of a cnnlDataType_t."""
    key = _rate_keys.get(dtype)
    if key is None:
        key = _rate_keys[dtype] = "double" if dtype == E.CNNL_DTYPE_DOUBLE else D.cost_class(dtype)
    return key


def _dtype_name(dtype: int) -> str:
    name = _dtype_names.get(dtype)
    if name is None:
        name = _dtype_names[dtype] = D.name(dtype)
    return name


try:  # numpy 2 keeps its floating-point error state in a context variable; np.errstate builds a new state object
    # on every entry, which costs a µs per queued op: the "ignore all" state is made once and set directly
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
    _IGNORE_ALL = _make_extobj(all="ignore")
except (ImportError, AttributeError, TypeError):  # another numpy: np.errstate
    _extobj_contextvar = None


def quietly(run: Callable[[], None]) -> Callable[[], None]:
    """`run` with numpy's floating-point warnings off: NaN and inf are results of IEEE arithmetic (as on the
    device), and a warning turned into an error (-W error) must not make a valid op fail."""
    if _extobj_contextvar is None:
        def quiet():
            with np.errstate(all="ignore"):
                return run()
        return quiet

    def quiet():
        token = _extobj_contextvar.set(_IGNORE_ALL)
        try:
            return run()
        finally:
            _extobj_contextvar.reset(token)
    return quiet


def unit_of(name: str) -> str:
    """The execution unit (mlusim.cost.TENSOR or VECTOR) an op of C name `name` computes on."""
    return cost.TENSOR if name in TENSOR_UNIT_OPS else cost.VECTOR


def _nothing() -> None:
    """The work of an op with only empty outputs."""


class OpCall:
    """Collects the pinned operands of one op call and enqueues its single Command."""

    def __init__(self, name: str, handle):
        self.name = name
        self.handle: Handle = handle_arg(handle)
        self.submission = Submission(Kind.OP, name)
        self.bytes_moved = 0
        self._outputs = 0  # outputs declared, and their elements: an op all of whose outputs are empty runs nothing
        self._output_elements = 0
        # the handle's address range, for `_pin`'s one-lookup path (none when the device table was rebuilt since
        # the handle was made: its addresses now belong to another device, which the general path reports)
        self._device = device = self.handle.device
        self._space = space = device.memory
        self._base = space.base
        self._limit = space.base + ADDRESS_SPAN if owner_of(space.base) is device else space.base

    def __enter__(self) -> "OpCall":
        return self

    def __exit__(self, kind, value, traceback) -> bool:
        if kind is not None:
            self.submission.release()
        return False

    def _claim(self, span: DeviceRange, arg: str, access: int, layout=None) -> None:
        """Hold the pin of `span` for this call (only the elements of `layout` are accessed, when given); it must
        be on the handle's device."""
        self.submission.hold(span, access, layout)
        if span.device is not self.handle.device:
            raise ArgumentFault(f"0x{span.address:x} is on device {span.device.index} but the handle is bound to "
                                f"device {self.handle.device.index}", arg)

    def _pin(self, desc: TensorDescriptor, pointer, arg: str, access: int) -> Optional[DeviceRange]:
        """The pinned span `desc` addresses from `pointer`, recorded with `access`; None for an empty tensor. An
        aligned address in the handle's device takes one lookup in its memory (which checks the block's bounds and
        lifetime); anything else goes through acquire_tensor, whose checks name what is wrong with it."""
        nbytes = desc.span_bytes
        if type(pointer) is int and nbytes and self._base <= pointer < self._limit and not pointer % desc.itemsize:
            block, offset = self._space.acquire(pointer, nbytes, arg)
            return self.submission.hold(DeviceRange(self._device, block, offset, nbytes, pointer), access,
                                        desc.element_layout)
        span = acquire_tensor(desc, pointer, arg)
        if span is not None:
            self._claim(span, arg, access, desc.element_layout)
        return span

    def input(self, desc: TensorDescriptor, pointer, arg: str) -> np.ndarray:
        """A read-only view of an input tensor."""
        span = self._pin(desc, pointer, arg, Access.READ)
        if span is not None:
            self.bytes_moved += desc.read_bytes
        return tensor_view(desc, span, writable=False)

    def output(self, desc: TensorDescriptor, pointer, arg: str, *, read: bool = False) -> np.ndarray:
        """A writable view of an output tensor (`read`: the op also reads it, e.g. beta != 0)."""
        if not desc.is_dense and self_overlapping(desc.dims, desc.strides):
            raise ArgumentFault(f"output strides {list(desc.strides)} make elements of {list(desc.dims)} overlap",
                                arg)
        span = self._pin(desc, pointer, arg, Access.READ_WRITE if read else Access.WRITE)
        self._outputs += 1
        self._output_elements += desc.size
        if span is not None:
            self.bytes_moved += desc.size * desc.itemsize * (2 if read else 1)
        return tensor_view(desc, span, writable=True)

    def workspace(self, pointer, size, needed: int, query: str) -> None:
        """Check the caller's workspace against the `needed` bytes that `query` reports, and claim it (as written:
        the op never depends on what it held before)."""
        if pointer is None and needed == 0 and type(size) is int and size == 0:
            return  # no workspace, none needed: the common case of the hot elementwise ops
        nbytes = as_size(size, "workspace_size")
        address = pointer_value(pointer, "workspace")
        if nbytes < needed:
            raise ArgumentFault(f"workspace_size {nbytes} is smaller than the {needed} bytes {query} reports",
                                "workspace_size")
        if nbytes == 0:
            return
        if address == 0:
            raise NullPointerFault(f"workspace is NULL but workspace_size is {nbytes}", "workspace", 0)
        self._claim(acquire(address, nbytes, "workspace"), "workspace", Access.WRITE)

    def device_scalar(self, pointer, dtype: int, arg: str) -> np.ndarray:
        """A read-only 1-element view of a scalar in device memory (CNNL_POINTER_MODE_DEVICE)."""
        desc = TensorDescriptor()
        desc.assign(E.CNNL_LAYOUT_ARRAY, dtype, (1,), (1,))
        return self.input(desc, pointer, arg)

    def submit(self, run: Callable[[], None], flops: float, dtype: int, unit: Optional[str] = None) -> None:
        """Submit the op to the handle's queue; the queue owns the pins from here on, and decides from the op's
        bytes whether the calling thread runs it now (mlusim.queue.Queue.submit). `unit` (mlusim.cost.TENSOR or
        VECTOR) defaults to the op's unit by name (`unit_of`). An op whose outputs are all empty has nothing to
        write: its command runs nothing (a kernel need not cope with, say, a gradient of zero channels)."""
        if self._outputs and not self._output_elements:
            run = _nothing
        queue = self.handle.queue
        unit = unit or unit_of(self.name)
        rate = rate_key(dtype)
        spec = queue.device.spec
        key = (id(spec), flops, self.bytes_moved, rate, unit)
        known = _model_us.get(key)
        if known is None or known[0] is not spec:  # (an id of a spec since collected names another spec)
            known = _model_us.put(key, (spec, cost.op_us(spec, flops, self.bytes_moved, rate, unit)))
        model_us = known[1]
        info = {"flops": float(flops), "bytes": self.bytes_moved, "dtype": _dtype_name(dtype), "rate": rate,
                "unit": unit}
        queue.submit(self.submission.command(quietly(run), model_us, info, self.bytes_moved))
