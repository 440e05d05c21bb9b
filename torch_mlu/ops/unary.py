"""Elementwise unary math over cnnl: abs, neg, exp, expm1, log/log2/log10, log1p, sqrt, rsqrt, reciprocal, sin, cos,
floor, ceil, round, trunc, frac, sign/sgn, erf, erfinv (cnnl's unary functions), tan, asin, acos, atan, sinh,
cosh, asinh, acosh, atanh (cnnlTrigonForward), sigmoid and tanh (cnnlActivationForward) and the backward kernels
of the last two (cnnlActivationBackward).

Each op is registered as its `.out` overload: torch's structured-kernel wrappers turn `torch.exp(x)` and
`x.exp_()` into exp.out with the output already allocated, so one kernel serves all three forms. Integer inputs
of the floating-point functions compute in the default float dtype, as torch does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

import cnnl

from ._core import FLOATING, aten, check_same_device, desc, fallback, handle, register
from ._iter import Destination, check_castable, float_result

HIGH = cnnl.CNNL_COMPUTATION_HIGH_PRECISION
NUMERIC = frozenset({torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.int16,
                     torch.int32, torch.int64, torch.uint8})


@dataclass(frozen=True)
class Unary:
    """An aten unary op and the cnnl call that computes it: call(handle, x_desc, x, y_desc, y)."""
    name: str
    call: Callable
    dtypes: frozenset
    to_float: bool


def _activation(mode: int) -> object:
    made = cnnl.createActivationDescriptor()
    cnnl.setActivationDescriptor_v2(made, mode, cnnl.CNNL_ACTIVATION_HIGH_PRECISION, cnnl.CNNL_NOT_PROPAGATE_NAN, 0.0)
    return made


_SIGMOID = _activation(cnnl.CNNL_ACTIVATION_SIGMOID)
_TANH = _activation(cnnl.CNNL_ACTIVATION_TANH)


def _activation_call(descriptor):
    return lambda h, xd, x, yd, y: cnnl.activationForward(h, descriptor, 1.0, xd, x, 0.0, yd, y)


def _log(base):
    return lambda h, xd, x, yd, y: cnnl.log_v2(h, HIGH, base, xd, x, yd, y)


def _v2(function):
    return lambda h, xd, x, yd, y: function(h, HIGH, xd, x, yd, y)


def _trigon(mode: int):
    descriptor = cnnl.createTrigonDescriptor()
    cnnl.setTrigonDescriptor_v2(descriptor, mode, HIGH)
    return lambda h, xd, x, yd, y: cnnl.trigonForward(h, descriptor, xd, x, yd, y)


OPS = [
    Unary("abs", cnnl.abs, NUMERIC, False),
    Unary("neg", cnnl.negTensor, NUMERIC, False),
    Unary("exp", _v2(cnnl.exp_v2), FLOATING, True),
    Unary("log", _log(cnnl.CNNL_LOG_E), FLOATING, True),
    Unary("log2", _log(cnnl.CNNL_LOG_2), FLOATING, True),
    Unary("log10", _log(cnnl.CNNL_LOG_10), FLOATING, True),
    Unary("sqrt", _v2(cnnl.sqrt_v2), FLOATING, True),
    Unary("rsqrt", _v2(cnnl.rsqrt_v2), FLOATING, True),
    Unary("reciprocal", cnnl.reciprocal, FLOATING, True),
    Unary("sin", _v2(cnnl.sin_v2), FLOATING, True),
    Unary("cos", _v2(cnnl.cos_v2), FLOATING, True),
    Unary("floor", cnnl.floor, NUMERIC, False),
    Unary("ceil", cnnl.ceil, NUMERIC, False),
    Unary("round", cnnl.round, NUMERIC, False),
    Unary("sign", cnnl.sign, NUMERIC, False),
    Unary("sigmoid", _activation_call(_SIGMOID), FLOATING, True),
    Unary("tanh", _activation_call(_TANH), FLOATING, True),
    Unary("expm1", _v2(cnnl.expm1), FLOATING, True),
    Unary("log1p", _v2(cnnl.log1p), FLOATING, True),
    Unary("erf", _v2(cnnl.erf_v2), FLOATING, True),
    Unary("erfinv", _v2(cnnl.erfinv), FLOATING, True),
    Unary("trunc", cnnl.trunc, NUMERIC, False),
    Unary("sgn", cnnl.sign, NUMERIC, False),
    *(Unary(name, _trigon(getattr(cnnl, f"CNNL_TRIGON_{name.upper()}")), FLOATING, True)
      for name in ("tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")),
]


def compute_unary(spec: Unary, self: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """out = spec(self) with torch's dtype rules; the shared body of every kernel of this module."""
    check_same_device(self, out)
    dtype = float_result(self.dtype) if spec.to_float else self.dtype
    if dtype not in spec.dtypes or self.device.type != "mlu":  # (complex abs gives a real result: the CPU knows)
        return fallback(getattr(aten, spec.name).out, self, out=out)
    check_castable(dtype, out)
    x = self if self.dtype == dtype else self.to(dtype)
    target = Destination(out, self.shape, dtype, (self,))
    result = target.target
    if result.numel():
        spec.call(handle(result), desc(x), x.data_ptr(), desc(result), result.data_ptr())
    return target.finish()


def compute_sign(spec: Unary, self: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    """sign / sgn: cnnlSign, then 0 where x is NaN (torch's sign(NaN) is 0; cnnlSign keeps NaN)."""
    result = compute_unary(spec, self, out)
    if self.is_floating_point() and self.device.type == "mlu" and result.numel():
        result.masked_fill_(torch.isnan(self), 0)
    return result


def _register(spec: Unary) -> None:
    signs = spec.name in ("sign", "sgn")

    def kernel(self, *, out):
        return compute_sign(spec, self, out) if signs else compute_unary(spec, self, out)

    kernel.__name__ = f"{spec.name}_out"
    kernel.__doc__ = f"aten::{spec.name}.out(self, *, out) (torch.{spec.name}, its in-place and out= forms)."
    register(f"aten::{spec.name}.out")(kernel)


for _spec in OPS:
    _register(_spec)


@register("aten::frac.out")
def frac_out(self, *, out):
    """aten::frac.out(self, *, out): x - trunc(x) (cnnlTrunc, then cnnlOpTensor)."""
    check_same_device(self, out)
    if self.dtype not in FLOATING or self.device.type != "mlu":
        return fallback(aten.frac.out, self, out=out)
    check_castable(self.dtype, out)
    target = Destination(out, self.shape, self.dtype, (self,))
    result = target.target
    if result.numel():
        whole = torch.empty(self.shape, dtype=self.dtype, device=self.device)
        cnnl.trunc(handle(whole), desc(self), self.data_ptr(), desc(whole), whole.data_ptr())
        torch.sub(self, whole, out=result)
    return target.finish()


# ---- conjugation ----------------------------------------------------------------------------------------------------
def _negate_imaginary(values: torch.Tensor) -> None:
    if values.numel():
        torch.view_as_real(values).select(-1, 1).neg_()


@register("aten::conj_physical.out")
def conj_physical_out(self, *, out):
    """aten::conj_physical.out(self, *, out): the conjugate's values (a copy for real dtypes): the imaginary parts
    negated in place through a real view."""
    check_same_device(self, out)
    if self.device.type != "mlu" or self.is_conj() or self.is_neg() or out.is_conj() or out.is_neg():
        return fallback(aten.conj_physical.out, self, out=out)
    check_castable(self.dtype, out)
    target = Destination(out, self.shape, self.dtype, (self,))
    target.target.copy_(self)
    if self.is_complex():
        _negate_imaginary(target.target)
    return target.finish()


@register("aten::conj_physical_")
def conj_physical_(self):
    """aten::conj_physical_(self): conjugate in place (nothing to do for real dtypes). torch routes it to a device
    stub that a PrivateUse1 backend does not have."""
    if self.is_complex():
        if self.is_conj() or self.is_neg():
            return fallback(aten.conj_physical_.default, self)
        _negate_imaginary(self)
    return self


# ---- backward of sigmoid and tanh -----------------------------------------------------------------------------------
def _activation_backward(name: str, descriptor, grad_output: torch.Tensor, output: torch.Tensor,
                         grad_input: torch.Tensor) -> torch.Tensor:
    check_same_device(grad_output, output, grad_input)
    dtype = torch.result_type(grad_output, output)
    check_castable(dtype, grad_input)
    if dtype not in FLOATING or grad_output.device.type != "mlu":
        return fallback(getattr(aten, f"{name}_backward").grad_input, grad_output, output, grad_input=grad_input)
    shape = torch.broadcast_shapes(grad_output.shape, output.shape)
    dy = grad_output.to(dtype).expand(shape) if grad_output.shape != shape or grad_output.dtype != dtype \
        else grad_output
    y = output.to(dtype).expand(shape) if output.shape != shape or output.dtype != dtype else output
    target = Destination(grad_input, shape, dtype, (grad_output, output))
    result = target.target
    if result.numel():
        cnnl.activationBackward(handle(result), descriptor, 1.0, desc(y), y.data_ptr(), desc(dy), dy.data_ptr(),
                                None, None, 0.0, desc(result), result.data_ptr())
    return target.finish()


@register("aten::sigmoid_backward.grad_input")
def sigmoid_backward_out(grad_output, output, *, grad_input):
    """aten::sigmoid_backward.grad_input(grad_output, output, *, grad_input): grad * y * (1 - y)."""
    return _activation_backward("sigmoid", _SIGMOID, grad_output, output, grad_input)


@register("aten::tanh_backward.grad_input")
def tanh_backward_out(grad_output, output, *, grad_input):
    """aten::tanh_backward.grad_input(grad_output, output, *, grad_input): grad * (1 - y^2)."""
    return _activation_backward("tanh", _TANH, grad_output, output, grad_input)
