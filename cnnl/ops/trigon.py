"""Trigonometric functions: cnnlCreate/Destroy/SetTrigonDescriptor(_v2) and cnnlTrigonForward.

Argument order from DeepLink DIOPI's Cambricon backend (functions/asin.cpp). x and y have the same dims and data
type (HALF, BFLOAT16, FLOAT, DOUBLE); y may alias x. Every computation preference computes at high precision.
"""
from __future__ import annotations

from mlusim.validate import as_enum

from .. import checks
from .. import enums as E
from ..descriptors import Descriptor, lifecycle, live, ready
from ..kernels import trigon as K
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from . import nn_common as N

_TRANSCENDENTAL_FLOPS = 8


class TrigonDescriptor(Descriptor):
    """cnnlTrigonDescriptor_t: the function and the computation preference."""

    c_type = "cnnlTrigonDescriptor_t"
    setter = "cnnlSetTrigonDescriptor_v2"

    def __init__(self):
        super().__init__()
        self.mode = E.CNNL_TRIGON_SIN
        self.prefer = E.CNNL_COMPUTATION_HIGH_PRECISION


createTrigonDescriptor, destroyTrigonDescriptor = lifecycle(TrigonDescriptor, "cnnlCreateTrigonDescriptor",
                                                            "cnnlDestroyTrigonDescriptor")


@api("cnnlSetTrigonDescriptor")
def setTrigonDescriptor(desc, mode) -> None:
    """cnnlSetTrigonDescriptor(desc, cnnlTrigonFunctionMode_t mode)."""
    target = live(desc, TrigonDescriptor, "desc")
    target.mode = as_enum(mode, "mode", E.TRIGON_MODES, "cnnlTrigonFunctionMode_t")
    target.is_set = True


@api("cnnlSetTrigonDescriptor_v2")
def setTrigonDescriptor_v2(desc, mode, prefer) -> None:
    """cnnlSetTrigonDescriptor_v2(desc, cnnlTrigonFunctionMode_t mode, cnnlComputationPreference_t prefer)."""
    target = live(desc, TrigonDescriptor, "desc")
    function = as_enum(mode, "mode", E.TRIGON_MODES, "cnnlTrigonFunctionMode_t")
    target.prefer = checks.preference(prefer)
    target.mode = function
    target.is_set = True


@api("cnnlTrigonForward")
def trigonForward(handle, desc, x_desc, x, y_desc, y) -> None:
    """cnnlTrigonForward(handle, desc, x_desc, x, y_desc, y): y = f(x) for the descriptor's function."""
    op = "cnnlTrigonForward"
    with OpCall(op, handle) as call:
        trig = ready(desc, TrigonDescriptor, "desc")
        xd, yd = tensor_arg(x_desc, "x_desc"), tensor_arg(y_desc, "y_desc")
        N.float_tensor(xd, "x_desc", op)
        checks.same_dtype(xd, "x_desc", (yd, "y_desc"))
        checks.same_shape(xd, "x_desc", (yd, "y_desc"))
        xv, yv = call.input(xd, x, "x"), call.output(yd, y, "y")
        mode = trig.mode
        call.submit(lambda: K.trigon(mode, xv, yv), flops=_TRANSCENDENTAL_FLOPS * xd.size, dtype=xd.dtype)
