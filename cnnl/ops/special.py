"""More elementwise math: cnnlErf_v2, cnnlErfinv, cnnlLog (the form without a preference), cnnlTrunc, cnnlIsNan.

x and y have the same dims; erf/erfinv/log take floating types, trunc every numeric type (the identity on integers),
isnan any numeric input and a BOOL (or 0/1 numeric) output.
"""
from __future__ import annotations

from mlusim.validate import as_enum

from .. import checks
from .. import dtypes as D
from ..kernels import special as K
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from .unary import _LOG_BASES, _TRANSCENDENTAL_FLOPS, _unary

#: modelled operations per element of erf / erfinv (a rational approximation plus Newton steps)
_SPECIAL_FLOPS = 24


def _special(c_name: str, op: str, handle, prefer, x_desc, x, y_desc, y) -> None:
    checks.preference(prefer)
    with OpCall(c_name, handle) as call:
        xd, yd = tensor_arg(x_desc, "x_desc"), tensor_arg(y_desc, "y_desc")
        checks.supported_dtype(xd, "x_desc", D.FLOATING, c_name)
        checks.same_dtype(xd, "x_desc", (yd, "y_desc"))
        checks.same_shape(xd, "x_desc", (yd, "y_desc"))
        x_view, y_view = call.input(xd, x, "x"), call.output(yd, y, "y")
        call.submit(lambda: K.special(op, x_view, y_view), flops=yd.size * _SPECIAL_FLOPS, dtype=yd.dtype)


@api("cnnlErf_v2")
def erf_v2(handle, prefer, x_desc, x, y_desc, y) -> None:
    """cnnlErf_v2(handle, prefer, x_desc, x, y_desc, y): y = erf(x)."""
    _special("cnnlErf_v2", "erf", handle, prefer, x_desc, x, y_desc, y)


@api("cnnlErfinv")
def erfinv(handle, prefer, x_desc, x, y_desc, y) -> None:
    """cnnlErfinv(handle, prefer, x_desc, x, y_desc, y): y = erfinv(x) (torch.erfinv: +-inf at +-1, NaN outside
    [-1, 1])."""
    _special("cnnlErfinv", "erfinv", handle, prefer, x_desc, x, y_desc, y)


@api("cnnlLog")
def log(handle, base, x_desc, x, y_desc, y) -> None:
    """cnnlLog(handle, cnnlLogBase_t base, x_desc, x, y_desc, y): y = log_base(x), base e, 2 or 10 (the older
    form of cnnlLog_v2, without the preference)."""
    op = _LOG_BASES[as_enum(base, "base", _LOG_BASES, "cnnlLogBase_t")]
    _unary("cnnlLog", op, handle, x_desc, x, y_desc, y, float_only=True, flops_per_element=_TRANSCENDENTAL_FLOPS)


@api("cnnlTrunc")
def trunc(handle, x_desc, x, y_desc, y) -> None:
    """cnnlTrunc(handle, x_desc, x, y_desc, y): y = x rounded toward zero (the identity on integers; -0.0 stays)."""
    _unary("cnnlTrunc", "trunc", handle, x_desc, x, y_desc, y, float_only=False)


@api("cnnlIsNan")
def isNan(handle, x_desc, x, y_desc, y) -> None:
    """cnnlIsNan(handle, x_desc, x, y_desc, y): y = isnan(x) as BOOL (or 0/1 in a numeric y); never true for
    integer inputs."""
    with OpCall("cnnlIsNan", handle) as call:
        xd, yd = tensor_arg(x_desc, "x_desc"), tensor_arg(y_desc, "y_desc")
        checks.supported_dtype(xd, "x_desc", D.NUMERIC, "cnnlIsNan")
        checks.supported_dtype(yd, "y_desc", D.ALL, "cnnlIsNan")
        checks.same_shape(xd, "x_desc", (yd, "y_desc"))
        x_view, y_view = call.input(xd, x, "x"), call.output(yd, y, "y")
        call.submit(lambda: K.isnan(x_view, y_view), flops=yd.size, dtype=xd.dtype)
