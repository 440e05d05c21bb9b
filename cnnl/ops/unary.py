"""Elementwise unary math: cnnlAbs, cnnlNegTensor, cnnlExp_v2, cnnlExpm1, cnnlLog_v2 (base e/2/10), cnnlLog1p,
cnnlSqrt_v2, cnnlRsqrt_v2, cnnlSquare, cnnlReciprocal, cnnlSin_v2, cnnlCos_v2, cnnlFloor, cnnlCeil, cnnlRound
(half to even), cnnlSign.

x and y have the same dims and data type; y may alias x. Float-only functions reject integer tensors with
NOT_SUPPORTED. The `prefer` argument of the _v2 forms is checked; every preference computes at high precision.
"""
from __future__ import annotations

from mlusim.validate import as_enum

from .. import checks
from .. import dtypes as D
from .. import enums as E
from .. import kernels
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg

#: modelled operations per element of the transcendental functions
_TRANSCENDENTAL_FLOPS = 8
_LOG_BASES = {E.CNNL_LOG_E: "log", E.CNNL_LOG_2: "log2", E.CNNL_LOG_10: "log10"}


def _unary(c_name: str, kernel_op: str, handle, x_desc, x, y_desc, y, *, float_only: bool,
           flops_per_element: int = 1) -> None:
    with OpCall(c_name, handle) as call:
        xd, yd = tensor_arg(x_desc, "x_desc"), tensor_arg(y_desc, "y_desc")
        checks.supported_dtype(xd, "x_desc", D.FLOATING if float_only else D.NUMERIC, c_name)
        checks.same_dtype(xd, "x_desc", (yd, "y_desc"))
        checks.same_shape(xd, "x_desc", (yd, "y_desc"))
        x_view = call.input(xd, x, "x")
        y_view = call.output(yd, y, "y")
        call.submit(lambda: kernels.unary(kernel_op, x_view, y_view), flops=yd.size * flops_per_element,
                    dtype=yd.dtype)


def _function(c_name: str, kernel_op: str, meaning: str, *, prefer: bool, float_only: bool,
              flops_per_element: int = 1):
    """The cnnl function `c_name`, applying kernel `kernel_op`; with `prefer`, its first argument after the
    handle is the checked cnnlComputationPreference_t of the _v2 forms."""
    if prefer:
        def function(handle, prefer, x_desc, x, y_desc, y) -> None:
            checks.preference(prefer)
            _unary(c_name, kernel_op, handle, x_desc, x, y_desc, y, float_only=float_only,
                   flops_per_element=flops_per_element)
        signature = "handle, prefer, x_desc, x, y_desc, y"
    else:
        def function(handle, x_desc, x, y_desc, y) -> None:
            _unary(c_name, kernel_op, handle, x_desc, x, y_desc, y, float_only=float_only,
                   flops_per_element=flops_per_element)
        signature = "handle, x_desc, x, y_desc, y"
    function.__name__ = function.__qualname__ = api.python_name(c_name)
    function.__doc__ = f"{c_name}({signature}): {meaning}"
    return api(c_name)(function)


_T = _TRANSCENDENTAL_FLOPS
abs = _function("cnnlAbs", "abs", "y = |x| (integers wrap: abs(INT_MIN) = INT_MIN).", prefer=False, float_only=False)
negTensor = _function("cnnlNegTensor", "neg", "y = -x.", prefer=False, float_only=False)
exp_v2 = _function("cnnlExp_v2", "exp", "y = e**x.", prefer=True, float_only=True, flops_per_element=_T)
expm1 = _function("cnnlExpm1", "expm1", "y = e**x - 1, exact for small x.", prefer=True, float_only=True,
                  flops_per_element=_T)
log1p = _function("cnnlLog1p", "log1p", "y = log(1 + x), exact for small x.", prefer=True, float_only=True,
                  flops_per_element=_T)
sqrt_v2 = _function("cnnlSqrt_v2", "sqrt", "y = sqrt(x) (NaN below 0).", prefer=True, float_only=True)
rsqrt_v2 = _function("cnnlRsqrt_v2", "rsqrt", "y = 1 / sqrt(x).", prefer=True, float_only=True, flops_per_element=2)
square = _function("cnnlSquare", "square", "y = x * x.", prefer=False, float_only=False)
reciprocal = _function("cnnlReciprocal", "reciprocal", "y = 1 / x.", prefer=False, float_only=True)
sin_v2 = _function("cnnlSin_v2", "sin", "y = sin(x).", prefer=True, float_only=True, flops_per_element=_T)
cos_v2 = _function("cnnlCos_v2", "cos", "y = cos(x).", prefer=True, float_only=True, flops_per_element=_T)
floor = _function("cnnlFloor", "floor", "y = floor(x) (the identity on integers).", prefer=False, float_only=False)
ceil = _function("cnnlCeil", "ceil", "y = ceil(x) (the identity on integers).", prefer=False, float_only=False)
round = _function("cnnlRound", "round", "y = x rounded to the nearest integer, ties to even.", prefer=False,
                  float_only=False)
sign = _function("cnnlSign", "sign", "y = -1, 0 or 1 by the sign of x (NaN stays NaN).", prefer=False,
                 float_only=False)


@api("cnnlLog_v2")
def log_v2(handle, prefer, base, x_desc, x, y_desc, y) -> None:
    """cnnlLog_v2(handle, prefer, cnnlLogBase_t base, x_desc, x, y_desc, y): y = log_base(x), base e, 2 or 10."""
    checks.preference(prefer)
    op = _LOG_BASES[as_enum(base, "base", _LOG_BASES, "cnnlLogBase_t")]
    _unary("cnnlLog_v2", op, handle, x_desc, x, y_desc, y, float_only=True, flops_per_element=_TRANSCENDENTAL_FLOPS)
