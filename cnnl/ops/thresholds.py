"""Threshold and hardtanh activations with their backward passes: cnnlThreshold, cnnlThresholdBackward,
cnnlHardtanh, cnnlHardtanhBackward (torch.nn.functional.threshold / hardtanh and their gradients).

All tensors of a call have the same dims and data type. Threshold takes every numeric type, its `threshold` and
`value` are host scalars of the tensors' type (Python numbers, rounded to that type); hardtanh takes floating types
and its bounds are floats passed by value.
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault
from mlusim.validate import as_number

from .. import checks
from .. import dtypes as D
from ..kernels import thresholds as K
from ..kernels.dtypes import compute_dtype
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from . import pointer_scalars as P


def _tensors(c_name: str, allowed, *pairs):
    descs = [(tensor_arg(desc, arg), arg) for desc, arg in pairs]
    first, first_arg = descs[0]
    checks.supported_dtype(first, first_arg, allowed, c_name)
    checks.same_dtype(first, first_arg, *descs[1:])
    checks.same_shape(first, first_arg, *descs[1:])
    return [desc for desc, _ in descs]


def _typed_scalar(value, arg: str, dtype: int):
    """A host scalar rounded to the tensors' storage type, as a number of their compute type."""
    stored = P.host_scalar(value, arg, dtype)
    return compute_dtype(stored.dtype).type(stored)


@api("cnnlThreshold")
def threshold(handle, input_desc, input, threshold, value, output_desc, output) -> None:
    """cnnlThreshold(handle, input_desc, input, const void *threshold, const void *value, output_desc, output):
    output = value where input <= threshold, else input."""
    with OpCall("cnnlThreshold", handle) as call:
        xd, yd = _tensors("cnnlThreshold", D.NUMERIC, (input_desc, "input_desc"), (output_desc, "output_desc"))
        limit, fill = _typed_scalar(threshold, "threshold", xd.dtype), _typed_scalar(value, "value", xd.dtype)
        x_view, y_view = call.input(xd, input, "input"), call.output(yd, output, "output")
        call.submit(lambda: K.threshold(x_view, limit, fill, y_view), flops=2 * yd.size, dtype=yd.dtype)


@api("cnnlThresholdBackward")
def thresholdBackward(handle, x_desc, x, diff_y_desc, diff_y, threshold, diff_x_desc, diff_x) -> None:
    """cnnlThresholdBackward(handle, x_desc, x, diff_y_desc, diff_y, const void *threshold, diff_x_desc, diff_x):
    diff_x = 0 where x <= threshold, else diff_y."""
    with OpCall("cnnlThresholdBackward", handle) as call:
        xd, dyd, dxd = _tensors("cnnlThresholdBackward", D.NUMERIC, (x_desc, "x_desc"),
                                (diff_y_desc, "diff_y_desc"), (diff_x_desc, "diff_x_desc"))
        limit = _typed_scalar(threshold, "threshold", xd.dtype)
        x_view, dy_view = call.input(xd, x, "x"), call.input(dyd, diff_y, "diff_y")
        dx_view = call.output(dxd, diff_x, "diff_x")
        call.submit(lambda: K.threshold_backward(x_view, dy_view, limit, dx_view), flops=2 * dxd.size,
                    dtype=dxd.dtype)


def _bounds(max_val, min_val) -> tuple[float, float]:
    high, low = float(as_number(max_val, "max_val")), float(as_number(min_val, "min_val"))
    if low > high:
        raise ArgumentFault(f"min_val {low} is above max_val {high}", "min_val")
    return low, high


@api("cnnlHardtanh")
def hardtanh(handle, x_desc, x, max_val, min_val, y_desc, y) -> None:
    """cnnlHardtanh(handle, x_desc, x, float max_val, float min_val, y_desc, y): y = min(max(x, min_val), max_val)
    (min_val > max_val is BAD_PARAM, as PyTorch refuses it)."""
    with OpCall("cnnlHardtanh", handle) as call:
        xd, yd = _tensors("cnnlHardtanh", D.FLOATING, (x_desc, "x_desc"), (y_desc, "y_desc"))
        low, high = _bounds(max_val, min_val)
        x_view, y_view = call.input(xd, x, "x"), call.output(yd, y, "y")
        call.submit(lambda: K.hardtanh(x_view, low, high, y_view), flops=2 * yd.size, dtype=yd.dtype)


@api("cnnlHardtanhBackward")
def hardtanhBackward(handle, x_desc, x, diff_y_desc, diff_y, max_val, min_val, diff_x_desc, diff_x) -> None:
    """cnnlHardtanhBackward(handle, x_desc, x, diff_y_desc, diff_y, float max_val, float min_val, diff_x_desc,
    diff_x): diff_x = diff_y where min_val < x < max_val, else 0 (also for NaN x, as PyTorch)."""
    with OpCall("cnnlHardtanhBackward", handle) as call:
        xd, dyd, dxd = _tensors("cnnlHardtanhBackward", D.FLOATING, (x_desc, "x_desc"), (diff_y_desc, "diff_y_desc"),
                                (diff_x_desc, "diff_x_desc"))
        low, high = _bounds(max_val, min_val)
        x_view, dy_view = call.input(xd, x, "x"), call.input(dyd, diff_y, "diff_y")
        dx_view = call.output(dxd, diff_x, "diff_x")
        call.submit(lambda: K.hardtanh_backward(x_view, dy_view, low, high, dx_view), flops=3 * dxd.size,
                    dtype=dxd.dtype)
