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


@api("cnnlAbs")
def abs(handle, x_desc, x, y_desc, y) -> None:
    """cnnlAbs(handle, x_desc, x, y_desc, y): y = |x| (integers wrap: abs(INT_MIN) = INT_MIN)."""
    _unary("cnnlAbs", "abs", handle, x_desc, x, y_desc, y, float_only=False)


@api("cnnlNegTensor")
def negTensor(handle, x_desc, x, y_desc, y) -> None:
    """cnnlNegTensor(handle, x_desc, x, y_desc, y): y = -x."""
    _unary("cnnlNegTensor", "neg", handle, x_desc, x, y_desc, y, float_only=False)


@api("cnnlExp_v2")
def exp_v2(handle, prefer, x_desc, x, y_desc, y) -> None:
    """cnnlExp_v2(handle, prefer, x_desc, x, y_desc, y): y = e**x."""
    checks.preference(prefer)
    _unary("cnnlExp_v2", "exp", handle, x_desc, x, y_desc, y, float_only=True,
           flops_per_element=_TRANSCENDENTAL_FLOPS)


@api("cnnlExpm1")
def expm1(handle, prefer, x_desc, x, y_desc, y) -> None:
    """cnnlExpm1(handle, prefer, x_desc, x, y_desc, y): y = e**x - 1, exact for small x."""
    checks.preference(prefer)
    _unary("cnnlExpm1", "expm1", handle, x_desc, x, y_desc, y, float_only=True,
           flops_per_element=_TRANSCENDENTAL_FLOPS)


@api("cnnlLog1p")
def log1p(handle, prefer, x_desc, x, y_desc, y) -> None:
    """cnnlLog1p(handle, prefer, x_desc, x, y_desc, y): y = log(1 + x), exact for small x."""
    checks.preference(prefer)
    _unary("cnnlLog1p", "log1p", handle, x_desc, x, y_desc, y, float_only=True,
           flops_per_element=_TRANSCENDENTAL_FLOPS)


@api("cnnlLog_v2")
def log_v2(handle, prefer, base, x_desc, x, y_desc, y) -> None:
    """cnnlLog_v2(handle, prefer, cnnlLogBase_t base, x_desc, x, y_desc, y): y = log_base(x), base e, 2 or 10."""
    checks.preference(prefer)
    op = _LOG_BASES[as_enum(base, "base", _LOG_BASES, "cnnlLogBase_t")]
    _unary("cnnlLog_v2", op, handle, x_desc, x, y_desc, y, float_only=True, flops_per_element=_TRANSCENDENTAL_FLOPS)


@api("cnnlSqrt_v2")
def sqrt_v2(handle, prefer, x_desc, x, y_desc, y) -> None:
    """cnnlSqrt_v2(handle, prefer, x_desc, x, y_desc, y): y = sqrt(x) (NaN below 0)."""
    checks.preference(prefer)
    _unary("cnnlSqrt_v2", "sqrt", handle, x_desc, x, y_desc, y, float_only=True)


@api("cnnlRsqrt_v2")
def rsqrt_v2(handle, prefer, x_desc, x, y_desc, y) -> None:
    """cnnlRsqrt_v2(handle, prefer, x_desc, x, y_desc, y): y = 1 / sqrt(x)."""
    checks.preference(prefer)
    _unary("cnnlRsqrt_v2", "rsqrt", handle, x_desc, x, y_desc, y, float_only=True, flops_per_element=2)


@api("cnnlSquare")
def square(handle, x_desc, x, y_desc, y) -> None:
    """cnnlSquare(handle, x_desc, x, y_desc, y): y = x * x."""
    _unary("cnnlSquare", "square", handle, x_desc, x, y_desc, y, float_only=False)


@api("cnnlReciprocal")
def reciprocal(handle, x_desc, x, y_desc, y) -> None:
    """cnnlReciprocal(handle, x_desc, x, y_desc, y): y = 1 / x."""
    _unary("cnnlReciprocal", "reciprocal", handle, x_desc, x, y_desc, y, float_only=True)


@api("cnnlSin_v2")
def sin_v2(handle, prefer, x_desc, x, y_desc, y) -> None:
    """cnnlSin_v2(handle, prefer, x_desc, x, y_desc, y): y = sin(x)."""
    checks.preference(prefer)
    _unary("cnnlSin_v2", "sin", handle, x_desc, x, y_desc, y, float_only=True,
           flops_per_element=_TRANSCENDENTAL_FLOPS)


@api("cnnlCos_v2")
def cos_v2(handle, prefer, x_desc, x, y_desc, y) -> None:
    """cnnlCos_v2(handle, prefer, x_desc, x, y_desc, y): y = cos(x)."""
    checks.preference(prefer)
    _unary("cnnlCos_v2", "cos", handle, x_desc, x, y_desc, y, float_only=True,
           flops_per_element=_TRANSCENDENTAL_FLOPS)


@api("cnnlFloor")
def floor(handle, x_desc, x, y_desc, y) -> None:
    """cnnlFloor(handle, x_desc, x, y_desc, y): y = floor(x) (the identity on integers)."""
    _unary("cnnlFloor", "floor", handle, x_desc, x, y_desc, y, float_only=False)


@api("cnnlCeil")
def ceil(handle, x_desc, x, y_desc, y) -> None:
    """cnnlCeil(handle, x_desc, x, y_desc, y): y = ceil(x) (the identity on integers)."""
    _unary("cnnlCeil", "ceil", handle, x_desc, x, y_desc, y, float_only=False)


@api("cnnlRound")
def round(handle, x_desc, x, y_desc, y) -> None:
    """cnnlRound(handle, x_desc, x, y_desc, y): y = x rounded to the nearest integer, ties to even."""
    _unary("cnnlRound", "round", handle, x_desc, x, y_desc, y, float_only=False)


@api("cnnlSign")
def sign(handle, x_desc, x, y_desc, y) -> None:
    """cnnlSign(handle, x_desc, x, y_desc, y): y = -1, 0 or 1 by the sign of x (NaN stays NaN)."""
    _unary("cnnlSign", "sign", handle, x_desc, x, y_desc, y, float_only=False)
