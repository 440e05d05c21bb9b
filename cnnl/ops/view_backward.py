"""Gradients of views: cnnlStridedSliceBackward (of cnnlStridedSlice) and cnnlAsStridedBackward with its workspace
query (of torch.as_strided; DIOPI uses it for unfold's backward). Floating types for as_strided (its overlapping
positions accumulate), every type for the strided slice.
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.validate import as_int, as_int_sequence

from .. import checks
from .. import dtypes as D
from .. import workspace as W
from ..handle import handle_arg
from ..kernels import view_backward as K
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from ..views import self_overlapping
from . import nn_common as N
from .movement import _slice_shape


@api("cnnlStridedSliceBackward")
def stridedSliceBackward(handle, begin, end, stride, dy_desc, dy, dx_desc, dx) -> None:
    """cnnlStridedSliceBackward(handle, const int begin[], const int end[], const int stride[], dy_desc, dy,
    dx_desc, dx): dx = 0 except dx[begin:end:stride] = dy (the slice taken with cnnlStridedSlice's Python rules
    on dx's dims)."""
    with OpCall("cnnlStridedSliceBackward", handle) as call:
        gy, gx = tensor_arg(dy_desc, "dy_desc"), tensor_arg(dx_desc, "dx_desc")
        checks.supported_dtype(gx, "dx_desc", D.ALL, "cnnlStridedSliceBackward")
        checks.same_dtype(gx, "dx_desc", (gy, "dy_desc"))
        starts, stops, steps, shape = _slice_shape(gx.dims, begin, end, stride)
        if gy.dims != shape:
            raise ArgumentFault(f"dims {list(gy.dims)}; the slice of {list(gx.dims)} has {list(shape)}", "dy_desc")
        index = tuple(slice(b, e, s) for b, e, s in zip(starts, stops, steps))
        dy_view, dx_view = call.input(gy, dy, "dy"), call.output(gx, dx, "dx")
        call.submit(lambda: K.strided_slice_backward(dy_view, index, dx_view), flops=0, dtype=gx.dtype)


def _grad_input(dx_desc):
    gx = tensor_arg(dx_desc, "dx_desc")
    N.float_tensor(gx, "dx_desc", "cnnlAsStridedBackward")
    return gx


@api("cnnlGetAsStridedBackwardWorkspaceSize")
def getAsStridedBackwardWorkspaceSize(handle, dx_desc) -> int:
    """cnnlGetAsStridedBackwardWorkspaceSize(handle, dx_desc, size_t *size) -> size: a float32 accumulator of dx for
    half/bfloat16, else 0."""
    handle_arg(handle)
    gx = _grad_input(dx_desc)
    size = W.float32_accumulator(gx, gx.dtype)
    if size > 0xFFFFFFFF:  # the C output is a uint32_t
        raise NotSupportedFault(f"the {size}-byte workspace does not fit the uint32_t size", "dx_desc")
    return size


@api("cnnlAsStridedBackward")
def asStridedBackward(handle, dy_desc, dy, dx_desc, dx, stride, storage_offset, workspace, workspace_size) -> None:
    """cnnlAsStridedBackward(handle, dy_desc, dy, dx_desc, dx, const int stride[], int storage_offset, workspace,
    workspace_size): dx, seen as flat row-major storage, = 0 plus every element of dy added at storage_offset +
    sum(index * stride) (dy is the view torch.as_strided(x, dy.dims, stride, storage_offset) of x = dx)."""
    with OpCall("cnnlAsStridedBackward", handle) as call:
        gy, gx = tensor_arg(dy_desc, "dy_desc"), _grad_input(dx_desc)
        checks.same_dtype(gx, "dx_desc", (gy, "dy_desc"))
        steps = as_int_sequence(stride, "stride", length=len(gy.dims), minimum=0)
        offset = as_int(storage_offset, "storage_offset", minimum=0)
        if gy.size:
            last = offset + sum((n - 1) * s for n, s in zip(gy.dims, steps))
            if last >= gx.size:
                raise ArgumentFault(f"the view reaches element {last} of a {gx.size}-element input", "stride")
        overlapping = self_overlapping(gy.dims, steps)
        dy_view, dx_view = call.input(gy, dy, "dy"), call.output(gx, dx, "dx")
        call.workspace(workspace, workspace_size, W.float32_accumulator(gx, gx.dtype),
                       "cnnlGetAsStridedBackwardWorkspaceSize")
        call.submit(lambda: K.as_strided_backward(dy_view, steps, offset, overlapping, dx_view),
                    flops=gy.size, dtype=gx.dtype)
