"""What every native mlu op is written with: registration, dtype mapping, cached cnnl descriptors, the cnnl handle
of the current stream, outputs from the caching allocator, the same-device check and the CPU fallback.

A native op is a Python function registered for the PrivateUse1 key over public cnnl functions (docs/torch.md,
"Adding an op", has the full pattern; tests/test_docs.py runs it):

    @register("aten::neg")
    def neg(self):
        if self.dtype not in TORCH_TO_CNNL:           # no cnnl data type: the CPU fallback
            return fallback(aten.neg.default, self)
        out = torch.empty_like(self)                  # from the caching allocator, on self's device
        cnnl.negTensor(handle(out), desc(self), self.data_ptr(), desc(out), out.data_ptr())
        return out
"""
from __future__ import annotations

import functools

import torch

import cnnl
import cnrt
from mlusim.memo import BoundedMemo

from .. import _state

aten = torch.ops.aten

#: the library that holds every native mlu kernel
LIBRARY = torch.library.Library("aten", "IMPL")
#: registered op name ("aten::add.Tensor") -> Python kernel
REGISTERED: dict[str, object] = {}

TORCH_TO_CNNL = {
    torch.float32: cnnl.CNNL_DTYPE_FLOAT, torch.float16: cnnl.CNNL_DTYPE_HALF,
    torch.bfloat16: cnnl.CNNL_DTYPE_BFLOAT16, torch.float64: cnnl.CNNL_DTYPE_DOUBLE,
    torch.int8: cnnl.CNNL_DTYPE_INT8, torch.int16: cnnl.CNNL_DTYPE_INT16, torch.int32: cnnl.CNNL_DTYPE_INT32,
    torch.int64: cnnl.CNNL_DTYPE_INT64, torch.uint8: cnnl.CNNL_DTYPE_UINT8, torch.bool: cnnl.CNNL_DTYPE_BOOL,
}
FLOATING = frozenset({torch.float32, torch.float16, torch.bfloat16, torch.float64})


DEVICE_ERRORS = (cnrt.CnrtError, cnnl.CnnlError)


def device_error(error: Exception) -> RuntimeError:
    """A cnrt/cnnl error as the RuntimeError torch code expects from a device (the original is its __cause__)."""
    failure = RuntimeError(f"mlu: {error}")
    failure.__cause__ = error
    return failure


def register(*names: str):
    """Decorator: register the function as the mlu (PrivateUse1) kernel of each aten overload named, e.g.
    "aten::add.Tensor" or "add.Tensor" (the overload's full name; ".default" for the default overload). A cnrt or
    cnnl error inside the kernel (a bad pointer, a sticky error of queued work at a sync) reaches the caller as a
    RuntimeError, as device errors do in torch."""

    def wrap(kernel):
        @functools.wraps(kernel)
        def guarded(*args, **kwargs):
            try:
                return kernel(*args, **kwargs)
            except DEVICE_ERRORS as error:
                raise device_error(error) from error

        for name in names:
            qualified = name if name.startswith("aten::") else f"aten::{name}"
            short = qualified[len("aten::"):]
            if short.endswith(".default"):
                short = short[:-len(".default")]
            LIBRARY.impl(short, guarded, "PrivateUse1")
            REGISTERED[qualified] = kernel
        return kernel

    return wrap


# ---- descriptors ------------------------------------------------------------------------------------------------
#: descriptors are small; past 8192 distinct (shape, strides, dtype) the memo starts over (a dropped descriptor is
#: not destroyed: a caller may still hold it)
_descriptors = BoundedMemo(8192)


def desc_for(shape: tuple, strides: tuple, dtype: torch.dtype):
    """A cnnl tensor descriptor (CNNL_LAYOUT_ARRAY) for (shape, strides in elements, dtype), made once and cached:
    a 0-d tensor is described as {1}. Descriptors are never changed after they are made, so sharing is safe."""
    key = (shape, strides, dtype)
    found = _descriptors.get(key)
    if found is not None:
        return found
    made = cnnl.createTensorDescriptor()
    dims, steps = (list(shape), list(strides)) if shape else ([1], [1])
    cnnl.setTensorDescriptorEx_v2(made, cnnl.CNNL_LAYOUT_ARRAY, TORCH_TO_CNNL[dtype], dims, steps)
    return _descriptors.put(key, made)


def desc(tensor: torch.Tensor):
    """The cached cnnl descriptor of a tensor's shape, strides and dtype (pass tensor.data_ptr() with it)."""
    return desc_for(tensor.shape, tensor.stride(), tensor.dtype)  # (a torch.Size is a tuple: same key)


_CHANNEL_LAST = {4: (0, 2, 3, 1), 5: (0, 2, 3, 4, 1)}
_LAYOUTS = {(4, False): cnnl.CNNL_LAYOUT_NCHW, (4, True): cnnl.CNNL_LAYOUT_NHWC,
            (5, False): cnnl.CNNL_LAYOUT_NCDHW, (5, True): cnnl.CNNL_LAYOUT_NDHWC}


def feature_desc(tensor: torch.Tensor, channel_last: bool):
    """A cached cnnl descriptor of a 4-D/5-D feature map (or filter) in NCHW/NCDHW order, or in NHWC/NDHWC order
    (the same memory seen channel-last) when `channel_last`; strides in elements."""
    key = ("feature", tensor.shape, tensor.stride(), tensor.dtype, channel_last)  # (torch order: looked up as is)
    found = _descriptors.get(key)
    if found is not None:
        return found
    order = _CHANNEL_LAST[tensor.dim()] if channel_last else tuple(range(tensor.dim()))
    shape = tuple(tensor.shape[i] for i in order)
    strides = tuple(tensor.stride(i) for i in order)
    made = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptorEx_v2(made, _LAYOUTS[(tensor.dim(), channel_last)], TORCH_TO_CNNL[tensor.dtype],
                                  list(shape), list(strides))
    return _descriptors.put(key, made)


# ---- handles and outputs ------------------------------------------------------------------------------------------
def handle(tensor: torch.Tensor):
    """The cnnl handle of the current stream of the tensor's device: ops on it run in stream order."""
    index = tensor.device.index
    return _state.runtime.streams.handle(index, _state.C.current_stream_id(index))


def workspace(nbytes: int, device: torch.device):
    """(address, tensor keeping it alive) of `nbytes` of device scratch from the caching allocator; (None, None)
    for 0 bytes. Keep the tensor until the op is queued: freeing is stream-ordered, so it may then go."""
    if nbytes == 0:
        return None, None
    scratch = torch.empty(nbytes, dtype=torch.uint8, device=device)
    return scratch.data_ptr(), scratch


# ---- checks and the fallback --------------------------------------------------------------------------------------
def check_same_device(*tensors: torch.Tensor, argument_order: bool = False) -> torch.device:
    """The common device of the tensors, with torch's usual error when they differ (0-d cpu tensors are scalars
    and may mix in, as in TensorIterator). The error names the mlu device first (TensorIterator's common device),
    or with `argument_order` the devices as the arguments come (ops that compare their arguments: dot)."""
    device = None
    for tensor in tensors:
        where = tensor.device
        if where.type == "cpu" and tensor.dim() == 0:
            continue
        if device is None:
            device = where
        elif where != device:
            first, second = (device, where) if device.type == "mlu" or argument_order else (where, device)
            raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                               f"{first} and {second}!")
    return device


def fallback(op, *args, **kwargs):
    """Run aten overload `op` (e.g. aten.add.Tensor) through the CPU fallback: counted, warned once, refused in
    MLUSIM_TORCH_FALLBACK=error mode (torch_mlu.fallback)."""
    return _state.C.run_fallback(op._handle, *args, **kwargs)
