"""Softmax: cnnlSoftmaxForward, cnnlSoftmaxForward_v2 and cnnlSoftmaxBackward.

The mode names the axis: LOW_DIMENSION the last, MEDIUM_DIMENSION the second to last, HIGH_DIMENSION the third to
last (for the 3-D tensors real callers pass, [N, C, L]: axis 2, 1, 0). ACCURATE and FAST compute softmax the same
way (with the maximum subtracted, which never overflows); LOG gives log-softmax. HALF, BFLOAT16, FLOAT, DOUBLE.
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum

from .. import checks
from .. import enums as E
from ..kernels.softmax import softmax_backward, softmax_forward
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from . import nn_common as N

_AXIS_FROM_END = {E.CNNL_SOFTMAX_MODE_LOW_DIMENSION: 1, E.CNNL_SOFTMAX_MODE_MEDIUM_DIMENSION: 2,
                  E.CNNL_SOFTMAX_MODE_HIGH_DIMENSION: 3}
#: modelled operations per element (max, subtract, exp, sum, divide)
_FLOPS_PER_ELEMENT = 5


def _axis(mode, desc: TensorDescriptor, arg: str) -> int:
    from_end = _AXIS_FROM_END[as_enum(mode, "mode", E.SOFTMAX_MODES, "cnnlSoftmaxMode_t")]
    if len(desc.dims) < from_end:
        raise ArgumentFault(f"{len(desc.dims)} dims; softmax mode {mode} needs at least {from_end}", arg)
    return len(desc.dims) - from_end


def _is_log(algorithm) -> bool:
    return as_enum(algorithm, "algorithm", E.SOFTMAX_ALGORITHMS, "cnnlSoftmaxAlgorithm_t") == E.CNNL_SOFTMAX_LOG


def _forward(c_name, handle, algorithm, mode, alpha, x_desc, x, beta, y_desc, y) -> None:
    with OpCall(c_name, handle) as call:
        log = _is_log(algorithm)
        xd, yd = tensor_arg(x_desc, "x_desc"), tensor_arg(y_desc, "y_desc")
        N.float_tensor(xd, "x_desc", c_name)
        checks.same_dtype(xd, "x_desc", (yd, "y_desc"))
        checks.same_shape(xd, "x_desc", (yd, "y_desc"))
        axis = _axis(mode, xd, "x_desc")
        scale, accumulate = checks.scalar(alpha, "alpha", 1, xd.dtype), checks.scalar(beta, "beta", 0, xd.dtype)
        xv = call.input(xd, x, "x")
        yv = call.output(yd, y, "y", read=accumulate != 0)
        call.submit(lambda: softmax_forward(xv, yv, axis, log, scale, accumulate),
                    flops=_FLOPS_PER_ELEMENT * xd.size, dtype=xd.dtype)


@api("cnnlSoftmaxForward")
def softmaxForward(handle, algorithm, mode, alpha, x_desc, x, beta, y_desc, y) -> None:
    """cnnlSoftmaxForward(handle, algorithm, mode, alpha, x_desc, x, beta, y_desc, y):
    y = alpha * softmax(x) + beta * y along the axis `mode` names (alpha, beta NULL = 1, 0)."""
    _forward("cnnlSoftmaxForward", handle, algorithm, mode, alpha, x_desc, x, beta, y_desc, y)


@api("cnnlSoftmaxForward_v2")
def softmaxForward_v2(handle, algorithm, mode, prefer, alpha, x_desc, x, beta, y_desc, y) -> None:
    """cnnlSoftmaxForward_v2(handle, algorithm, mode, prefer, alpha, x_desc, x, beta, y_desc, y): as
    cnnlSoftmaxForward with a cnnlComputationPreference_t (every preference computes at high precision)."""
    checks.preference(prefer)
    _forward("cnnlSoftmaxForward_v2", handle, algorithm, mode, alpha, x_desc, x, beta, y_desc, y)


@api("cnnlSoftmaxBackward")
def softmaxBackward(handle, algorithm, mode, alpha, y_desc, y, diff_y_desc, diff_y, beta, diff_x_desc,
                    diff_x) -> None:
    """cnnlSoftmaxBackward(handle, algorithm, mode, alpha, y_desc, y, diff_y_desc, diff_y, beta, diff_x_desc,
    diff_x): diff_x = alpha * (gradient of the (log-)softmax whose output is y) + beta * diff_x."""
    with OpCall("cnnlSoftmaxBackward", handle) as call:
        log = _is_log(algorithm)
        yd, dyd, dxd = (tensor_arg(y_desc, "y_desc"), tensor_arg(diff_y_desc, "diff_y_desc"),
                        tensor_arg(diff_x_desc, "diff_x_desc"))
        N.float_tensor(yd, "y_desc", "cnnlSoftmaxBackward")
        checks.same_dtype(yd, "y_desc", (dyd, "diff_y_desc"), (dxd, "diff_x_desc"))
        checks.same_shape(yd, "y_desc", (dyd, "diff_y_desc"), (dxd, "diff_x_desc"))
        axis = _axis(mode, yd, "y_desc")
        scale, accumulate = checks.scalar(alpha, "alpha", 1, yd.dtype), checks.scalar(beta, "beta", 0, yd.dtype)
        yv, dyv = call.input(yd, y, "y"), call.input(dyd, diff_y, "diff_y")
        dxv = call.output(dxd, diff_x, "diff_x", read=accumulate != 0)
        call.submit(lambda: softmax_backward(yv, dyv, dxv, axis, log, scale, accumulate),
                    flops=_FLOPS_PER_ELEMENT * yd.size, dtype=yd.dtype)
