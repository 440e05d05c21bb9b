"""Activations and their backward kernels: relu, gelu (erf and tanh forms), silu, leaky_relu (and rrelu over it),
elu and hardswish through cnnlActivationForward / cnnlActivationBackward; softplus, mish, hardsigmoid, log_sigmoid and logit composed
of native elementwise ops (cnnl has no mode for them)."""
from __future__ import annotations

import math

import torch

import cnnl
from mlusim.memo import BoundedMemo

from ._core import FLOATING, aten, check_same_device, desc, fallback, handle, register
from ._iter import Destination, check_castable

_descriptors = BoundedMemo(4096)  # made cnnl descriptors, by what they were set to


def _descriptor(mode: int, coef: float = 0.0, approximate: bool = False):
    key = (mode, float(coef), approximate)
    found = _descriptors.get(key)
    if found is None:
        found = cnnl.createActivationDescriptor()
        cnnl.setActivationDescriptor_v6(found, mode, cnnl.CNNL_ACTIVATION_HIGH_PRECISION, cnnl.CNNL_NOT_PROPAGATE_NAN,
                                        float(coef), 0, 0.0, 0.0, False, approximate)
        _descriptors.put(key, found)
    return found


def activation_forward(descriptor, x: torch.Tensor, out: torch.Tensor, overload, args) -> torch.Tensor:
    """out = f(x) (cnnlActivationForward) with torch's out= rules; floating dtypes, else the CPU fallback."""
    check_same_device(x, out)
    if x.device.type != "mlu" or x.dtype not in FLOATING:
        return fallback(overload, *args, out=out)
    check_castable(x.dtype, out)
    target = Destination(out, x.shape, x.dtype, (x,))
    result = target.target
    if result.numel():
        cnnl.activationForward(handle(result), descriptor, 1.0, desc(x), x.data_ptr(), 0.0, desc(result),
                               result.data_ptr())
    return target.finish()


def activation_backward(descriptor, grad_output: torch.Tensor, x: torch.Tensor, grad_input: torch.Tensor,
                        overload, args, kwargs) -> torch.Tensor:
    """grad_input = f'(x) * grad_output (cnnlActivationBackward reading x)."""
    check_same_device(grad_output, x, grad_input)
    if x.device.type != "mlu" or x.dtype not in FLOATING or grad_output.dtype != x.dtype:
        return fallback(overload, *args, **kwargs)
    if grad_output.shape != x.shape:
        shape = torch.broadcast_shapes(grad_output.shape, x.shape)
        grad_output, x = grad_output.expand(shape), x.expand(shape)
    target = Destination(grad_input, x.shape, x.dtype, (grad_output, x))
    result = target.target
    if result.numel():
        cnnl.activationBackward(handle(result), descriptor, 1.0, None, None, desc(grad_output),
                                grad_output.data_ptr(), desc(x), x.data_ptr(), 0.0, desc(result), result.data_ptr())
    return target.finish()


# ---- relu -----------------------------------------------------------------------------------------------------------
_RELU = _descriptor(cnnl.CNNL_ACTIVATION_RELU)


@register("aten::relu")
def relu(self):
    """aten::relu(self) (its backward is threshold_backward on the result)."""
    if self.device.type != "mlu" or self.dtype not in FLOATING:
        return fallback(aten.relu.default, self)
    return activation_forward(_RELU, self, torch.empty_like(self), aten.relu.out, (self,))


@register("aten::relu_")
def relu_(self):
    """aten::relu_(self)."""
    if self.device.type != "mlu" or self.dtype not in FLOATING:
        return fallback(aten.relu_.default, self)
    return activation_forward(_RELU, self, self, aten.relu.out, (self,))


@register("aten::relu.out")
def relu_out(self, *, out):
    """aten::relu.out(self, *, out)."""
    return activation_forward(_RELU, self, out, aten.relu.out, (self,))


# ---- gelu, silu, leaky_relu, elu, hardswish --------------------------------------------------------------------------
def _gelu(approximate: str):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return _descriptor(cnnl.CNNL_ACTIVATION_GELU, 0.0, approximate == "tanh")


@register("aten::gelu.out")
def gelu_out(self, *, approximate="none", out):
    """aten::gelu.out(self, *, approximate, out): x * Phi(x), or its tanh approximation."""
    return activation_forward(_gelu(approximate), self, out, aten.gelu.out, (self,))


@register("aten::gelu_backward.grad_input")
def gelu_backward_out(grad_output, self, *, approximate="none", grad_input):
    """aten::gelu_backward.grad_input(grad_output, self, *, approximate, grad_input)."""
    return activation_backward(_gelu(approximate), grad_output, self, grad_input, aten.gelu_backward.grad_input,
                               (grad_output, self), {"approximate": approximate, "grad_input": grad_input})


_SILU = _descriptor(cnnl.CNNL_ACTIVATION_SILU)


@register("aten::silu.out")
def silu_out(self, *, out):
    """aten::silu.out(self, *, out): x * sigmoid(x)."""
    return activation_forward(_SILU, self, out, aten.silu.out, (self,))


@register("aten::silu_backward.grad_input")
def silu_backward_out(grad_output, self, *, grad_input):
    """aten::silu_backward.grad_input(grad_output, self, *, grad_input)."""
    return activation_backward(_SILU, grad_output, self, grad_input, aten.silu_backward.grad_input,
                               (grad_output, self), {"grad_input": grad_input})


@register("aten::leaky_relu.out")
def leaky_relu_out(self, negative_slope=0.01, *, out):
    """aten::leaky_relu.out(self, negative_slope, *, out)."""
    return activation_forward(_descriptor(cnnl.CNNL_ACTIVATION_LEAKYRELU, negative_slope), self, out,
                              aten.leaky_relu.out, (self, negative_slope))


@register("aten::leaky_relu_backward.grad_input")
def leaky_relu_backward_out(grad_output, self, negative_slope, self_is_result, *, grad_input):
    """aten::leaky_relu_backward.grad_input(grad_output, self, negative_slope, self_is_result, *, grad_input)."""
    args = (grad_output, self, negative_slope, self_is_result)
    if self_is_result and negative_slope < 0:
        raise RuntimeError("In-place leakyReLu backward calculation is triggered with a negative slope which is not "
                           "supported. This is caused by calling in-place forward function with a negative slope, "
                           "please call out-of-place version instead. File an issue at "
                           "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
                           "backward calculation with negative slope")
    return activation_backward(_descriptor(cnnl.CNNL_ACTIVATION_LEAKYRELU, negative_slope), grad_output, self,
                               grad_input, aten.leaky_relu_backward.grad_input, args, {"grad_input": grad_input})


# ---- rrelu --------------------------------------------------------------------------------------------------------
def _rrelu_slope(self, lower, upper, training: bool, generator) -> float:
    """torch_mlu's rule (csrc/aten/operators/cnnl/activation.cpp): in training ONE slope per call, drawn uniformly
    from [lower, upper) by a CPU generator (the one given, else torch's default) and rounded to the input's dtype;
    in evaluation (lower + upper) / 2. torch's CPU kernel draws a slope per negative element instead."""
    if not training:
        return (float(lower) + float(upper)) / 2
    if generator is not None and generator.device.type != "cpu":
        raise RuntimeError(f"Expected a 'cpu' device type for generator but found '{generator.device.type}'")
    slope = torch.empty((), dtype=torch.float64).uniform_(float(lower), float(upper), generator=generator)
    return float(slope.to(self.dtype))


def _rrelu(self, noise, lower, upper, training, generator, out):
    check_same_device(self, noise, out)
    if self.dtype not in FLOATING or self.device.type != "mlu":
        return fallback(aten.rrelu_with_noise.out, self, noise, lower, upper, training, generator, out=out)
    if self.numel() == 0:
        return out
    slope = _rrelu_slope(self, lower, upper, training, generator)
    if training:
        # the backward multiplies by the noise: the slope where the input is <= 0, else 1 (torch's CPU noise);
        # torch_mlu leaves the noise unwritten, which makes its training backward wrong
        if noise.shape != self.shape:
            raise RuntimeError(f"rrelu_with_noise: noise of shape {list(noise.shape)} for an input of shape "
                               f"{list(self.shape)}")
        noise.copy_(torch.where(self <= 0, slope, 1.0))
    return leaky_relu_out(self, slope, out=out)


@register("aten::rrelu_with_noise.out")
def rrelu_with_noise_out(self, noise, lower=0.125, upper=1 / 3, training=False, generator=None, *, out):
    """aten::rrelu_with_noise.out: leaky_relu with a random slope (see _rrelu_slope)."""
    return _rrelu(self, noise, lower, upper, training, generator, out)


@register("aten::rrelu_with_noise")
def rrelu_with_noise(self, noise, lower=0.125, upper=1 / 3, training=False, generator=None):
    """aten::rrelu_with_noise (torch.rrelu and nn.RReLU reach it)."""
    return _rrelu(self, noise, lower, upper, training, generator, torch.empty_like(self))


@register("aten::rrelu_with_noise_")
def rrelu_with_noise_(self, noise, lower=0.125, upper=1 / 3, training=False, generator=None):
    """aten::rrelu_with_noise_ (torch.rrelu_)."""
    return _rrelu(self, noise, lower, upper, training, generator, self)


@register("aten::elu.out")
def elu_out(self, alpha=1, scale=1, input_scale=1, *, out):
    """aten::elu.out(self, alpha, scale, input_scale, *, out): cnnl's ELU for scale = input_scale = 1."""
    args = (self, alpha, scale, input_scale)
    if scale != 1 or input_scale != 1:
        return fallback(aten.elu.out, *args, out=out)
    return activation_forward(_descriptor(cnnl.CNNL_ACTIVATION_ELU, alpha), self, out, aten.elu.out, args)


@register("aten::elu_backward.grad_input")
def elu_backward_out(grad_output, alpha, scale, input_scale, is_result, self_or_result, *, grad_input):
    """aten::elu_backward.grad_input(grad_output, alpha, scale, input_scale, is_result, self_or_result, *,
    grad_input) (cnnl reads the input; an in-place elu's result goes to the CPU formula)."""
    args = (grad_output, alpha, scale, input_scale, is_result, self_or_result)
    if scale != 1 or input_scale != 1 or is_result:
        return fallback(aten.elu_backward.grad_input, *args, grad_input=grad_input)
    return activation_backward(_descriptor(cnnl.CNNL_ACTIVATION_ELU, alpha), grad_output, self_or_result,
                               grad_input, aten.elu_backward.grad_input, args, {"grad_input": grad_input})


_HARDSWISH = _descriptor(cnnl.CNNL_ACTIVATION_HARDSWISH)


@register("aten::hardswish.out")
def hardswish_out(self, *, out):
    """aten::hardswish.out(self, *, out): x * relu6(x + 3) / 6."""
    return activation_forward(_HARDSWISH, self, out, aten.hardswish.out, (self,))


@register("aten::hardswish")
def hardswish(self):
    """aten::hardswish(self)."""
    return hardswish_out(self, out=torch.empty_like(self))


@register("aten::hardswish_")
def hardswish_(self):
    """aten::hardswish_(self)."""
    return hardswish_out(self, out=self)


@register("aten::hardswish_backward")
def hardswish_backward(grad_output, self):
    """aten::hardswish_backward(grad_output, self)."""
    return activation_backward(_HARDSWISH, grad_output, self, torch.empty_like(self), aten.hardswish_backward.out,
                               (grad_output, self), {"out": torch.empty_like(self)})


# ---- composed of elementwise ops --------------------------------------------------------------------------------------
def _composed(self, out, overload, args, compute) -> torch.Tensor:
    """out = compute(self) for floating mlu tensors, else the CPU fallback."""
    check_same_device(self, out)
    if self.device.type != "mlu" or self.dtype not in FLOATING:
        return fallback(overload, *args, out=out)
    check_castable(self.dtype, out)
    target = Destination(out, self.shape, self.dtype, (self,))
    if target.target.numel():
        target.target.copy_(compute(self))
    return target.finish()


def _softplus(x: torch.Tensor, beta, threshold) -> torch.Tensor:
    """torch's softplus: x where beta * x > threshold, else log1p(exp(beta * x)) / beta."""
    scaled = x * beta
    return torch.where(scaled > threshold, x, torch.log1p(torch.exp(scaled)) / beta)


@register("aten::softplus.out")
def softplus_out(self, beta=1, threshold=20, *, out):
    """aten::softplus.out(self, beta, threshold, *, out)."""
    return _composed(self, out, aten.softplus.out, (self, beta, threshold),
                     lambda x: _softplus(x, beta, threshold))


@register("aten::softplus_backward.grad_input")
def softplus_backward_out(grad_output, self, beta, threshold, *, grad_input):
    """aten::softplus_backward.grad_input(grad_output, self, beta, threshold, *, grad_input): grad * sigmoid(beta x)
    (grad where beta x > threshold)."""
    check_same_device(grad_output, self, grad_input)
    if self.device.type != "mlu" or self.dtype not in FLOATING:
        return fallback(aten.softplus_backward.grad_input, grad_output, self, beta, threshold, grad_input=grad_input)
    scaled = self * beta
    result = torch.where(scaled > threshold, grad_output, grad_output * torch.sigmoid(scaled))
    target = Destination(grad_input, result.shape, self.dtype, ())
    target.target.copy_(result)
    return target.finish()


@register("aten::mish.out")
def mish_out(self, *, out):
    """aten::mish.out(self, *, out): x * tanh(softplus(x))."""
    return _composed(self, out, aten.mish.out, (self,), lambda x: x * torch.tanh(_softplus(x, 1, 20)))


@register("aten::hardsigmoid.out")
def hardsigmoid_out(self, *, out):
    """aten::hardsigmoid.out(self, *, out): clamp(x / 6 + 1/2, 0, 1)."""
    return _composed(self, out, aten.hardsigmoid.out, (self,), lambda x: torch.clamp(x / 6 + 0.5, 0, 1))


@register("aten::hardsigmoid_backward.grad_input")
def hardsigmoid_backward_out(grad_output, self, *, grad_input):
    """aten::hardsigmoid_backward.grad_input(grad_output, self, *, grad_input): grad / 6 inside (-3, 3), else 0."""
    check_same_device(grad_output, self, grad_input)
    if self.device.type != "mlu" or self.dtype not in FLOATING:
        return fallback(aten.hardsigmoid_backward.grad_input, grad_output, self, grad_input=grad_input)
    result = torch.where((self > -3) & (self < 3), grad_output / 6, 0.0)
    target = Destination(grad_input, result.shape, self.dtype, ())
    target.target.copy_(result)
    return target.finish()


@register("aten::log_sigmoid_forward")
def log_sigmoid_forward(self):
    """aten::log_sigmoid_forward(self) -> (output, buffer): min(x, 0) - log1p(exp(-|x|)); the buffer is unused."""
    if self.device.type != "mlu" or self.dtype not in FLOATING:
        return fallback(aten.log_sigmoid_forward.default, self)
    output = torch.clamp_max(self, 0) - torch.log1p(torch.exp(-torch.abs(self)))
    return output, torch.empty(0, dtype=self.dtype, device=self.device)


@register("aten::log_sigmoid_backward")
def log_sigmoid_backward(grad_output, self, buffer):
    """aten::log_sigmoid_backward(grad_output, self, buffer): grad * sigmoid(-x)."""
    if self.device.type != "mlu" or self.dtype not in FLOATING:
        return fallback(aten.log_sigmoid_backward.default, grad_output, self, buffer)
    return grad_output * torch.sigmoid(-self)


def _logit(x: torch.Tensor, eps) -> torch.Tensor:
    clamped = x if eps is None else torch.clamp(x, eps, 1 - eps)
    return torch.log(clamped) - torch.log1p(-clamped)


@register("aten::logit")
def logit(self, eps=None):
    """aten::logit(self, eps): log(x / (1 - x)), x clamped to [eps, 1 - eps] when eps is given."""
    if self.device.type != "mlu" or self.dtype not in FLOATING:
        return fallback(aten.logit.default, self, eps)
    return _logit(self, eps)


@register("aten::logit_backward.grad_input")
def logit_backward_out(grad_output, self, eps=None, *, grad_input):
    """aten::logit_backward.grad_input(grad_output, self, eps, *, grad_input): grad / (x (1 - x)), 0 outside
    [eps, 1 - eps] when eps is given (NaN outside [0, 1] without it)."""
    check_same_device(grad_output, self, grad_input)
    if self.device.type != "mlu" or self.dtype not in FLOATING:
        return fallback(aten.logit_backward.grad_input, grad_output, self, eps, grad_input=grad_input)
    result = grad_output / (self * (1 - self))
    if eps is None:
        result = torch.where((self < 0) | (self > 1), math.nan, result)
    else:
        result = torch.where((self < eps) | (self > 1 - eps), 0.0, result)
    target = Destination(grad_input, result.shape, self.dtype, ())
    target.target.copy_(result)
    return target.finish()
