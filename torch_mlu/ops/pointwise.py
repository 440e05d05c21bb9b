"""Binary elementwise math with torch's promotion and broadcasting: maximum, minimum (cnnlMaximum / cnnlMinimum,
NaN propagating as torch), the clamp family (maximum then minimum: NaN stays NaN, min > max gives max, as torch;
number bounds of a floating tensor in one pass, cnnlClip_v2),
pow (cnnlPow) in its Tensor/Tensor, Tensor/Scalar and Scalar/Tensor forms, atan2 (cnnlAtan2), floor division,
truncated division, remainder and fmod (cnnlFloorDiv_v2, cnnlFloorDivTrunc, cnnlFloorMod, cnnlFloorModTrunc;
div's rounding modes),
the bitwise ops (cnnlBitCompute_v2), lerp (cnnlLerp), addcmul and addcdiv (cnnlAddcmul / cnnlAddcdiv)."""
from __future__ import annotations

import math

import torch

import cnnl

from ._core import TORCH_TO_CNNL, aten, check_same_device, desc, fallback, handle, register, workspace
from ._iter import Destination, INTEGRAL, check_castable, on_device

NUMERIC = frozenset(TORCH_TO_CNNL) - {torch.bool}


def _tensors(*values) -> list:
    return [v for v in values if isinstance(v, torch.Tensor)]


def _shape(*values) -> tuple:
    shapes = [v.shape for v in _tensors(*values)]
    if all(s == shapes[0] for s in shapes):
        return tuple(shapes[0])
    return tuple(torch.broadcast_shapes(*shapes))


def extreme(function, a: torch.Tensor, b: torch.Tensor, result: torch.Tensor) -> None:
    """cnnlMaximum / cnnlMinimum of a and b (result's dtype, broadcasting) into result."""
    h = handle(result)
    r_desc = desc(result)
    size = (cnnl.getMaximumWorkspaceSize if function is cnnl.maximum else cnnl.getMinimumWorkspaceSize)(h, r_desc)
    ws, _keep = workspace(size, result.device)
    function(h, desc(a), a.data_ptr(), desc(b), b.data_ptr(), r_desc, result.data_ptr(), ws, size)


def power(a: torch.Tensor, b: torch.Tensor, result: torch.Tensor) -> None:
    """cnnlPow of a ** b (result's dtype, broadcasting) into result."""
    h = handle(result)
    a_desc, b_desc, r_desc = desc(a), desc(b), desc(result)
    size = cnnl.getPowWorkspaceSize(h, a_desc, b_desc, r_desc)
    ws, _keep = workspace(size, result.device)
    cnnl.pow(h, cnnl.CNNL_COMPUTATION_HIGH_PRECISION, a_desc, a.data_ptr(), b_desc, b.data_ptr(), ws, size, r_desc,
             result.data_ptr())


def _binary(compute, overload, self, other, out: torch.Tensor, args=None, dtypes=NUMERIC,
            to_float: bool = False) -> torch.Tensor:
    device = check_same_device(*_tensors(self, other), out)
    dtype = torch.result_type(self, other)
    if to_float and not dtype.is_floating_point:
        dtype = torch.get_default_dtype()
    if device is None or device.type != "mlu" or dtype not in dtypes:
        return fallback(overload, *(args or (self, other)), out=out)
    check_castable(dtype, out)
    shape = _shape(self, other)
    a, b = on_device(self, dtype, device), on_device(other, dtype, device)
    target = Destination(out, shape, dtype, (self, other))
    if target.target.numel():
        compute(a, b, target.target)
    return target.finish()


@register("aten::maximum.out")
def maximum_out(self, other, *, out):
    """aten::maximum.out(self, other, *, out) (also torch.max(a, b))."""
    return _binary(lambda a, b, r: extreme(cnnl.maximum, a, b, r), aten.maximum.out, self, other, out)


@register("aten::minimum.out")
def minimum_out(self, other, *, out):
    """aten::minimum.out(self, other, *, out) (also torch.min(a, b))."""
    return _binary(lambda a, b, r: extreme(cnnl.minimum, a, b, r), aten.minimum.out, self, other, out)


# ---- clamp ----------------------------------------------------------------------------------------------------------
def _clamp(self, low, high, out: torch.Tensor, overload, args) -> torch.Tensor:
    """out = minimum(maximum(self, low), high) for the bounds that are given (numbers or tensors)."""
    if low is None and high is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [b for b in (low, high) if b is not None]
    device = check_same_device(self, *_tensors(*bounds), out)
    dtype = self.dtype
    for bound in bounds:
        dtype = torch.promote_types(dtype, torch.result_type(self, bound))
    if device.type != "mlu" or dtype not in NUMERIC:
        return fallback(overload, *args, out=out)
    check_castable(dtype, out)
    shape = _shape(self, *bounds)
    target = Destination(out, shape, dtype, (self, *bounds))
    result = target.target
    if result.numel() and dtype == self.dtype and dtype in FLOATS and not _tensors(*bounds) and all(
            abs(float(b)) <= torch.finfo(dtype).max or not math.isfinite(float(b)) for b in bounds):
        # number bounds of a floating tensor: one pass (cnnlClip_v2, the bounds rounded to the tensor's type; the
        # result is stored in that type, and rounding is monotonic, so this is min(max(x, low), high) as torch's;
        # a bound beyond the type's range, which torch's CPU kernel refuses, keeps the two-op path)
        cnnl.clip_v2(handle(result), cnnl.CNNL_POINTER_MODE_HOST, desc(self), self.data_ptr(),
                     None if low is None else float(low), None if high is None else float(high), desc(result),
                     result.data_ptr())
    elif result.numel():
        x = on_device(self, dtype, device)
        if low is not None:
            extreme(cnnl.maximum, x, on_device(low, dtype, device), result)
            x = result
        if high is not None:
            extreme(cnnl.minimum, x, on_device(high, dtype, device), result)
    return target.finish()


@register("aten::clamp.out")
def clamp_out(self, min=None, max=None, *, out):
    """aten::clamp.out(self, min: Scalar?, max: Scalar?, *, out)."""
    return _clamp(self, min, max, out, aten.clamp.out, (self, min, max))


@register("aten::clamp.Tensor_out")
def clamp_tensor_out(self, min=None, max=None, *, out):
    """aten::clamp.Tensor_out(self, min: Tensor?, max: Tensor?, *, out)."""
    return _clamp(self, min, max, out, aten.clamp.Tensor_out, (self, min, max))


@register("aten::clamp_min.out")
def clamp_min_out(self, min, *, out):
    """aten::clamp_min.out(self, min: Scalar, *, out)."""
    return _clamp(self, min, None, out, aten.clamp_min.out, (self, min))


@register("aten::clamp_max.out")
def clamp_max_out(self, max, *, out):
    """aten::clamp_max.out(self, max: Scalar, *, out)."""
    return _clamp(self, None, max, out, aten.clamp_max.out, (self, max))


@register("aten::clamp_min.Tensor_out")
def clamp_min_tensor_out(self, min, *, out):
    """aten::clamp_min.Tensor_out(self, min: Tensor, *, out)."""
    return _clamp(self, min, None, out, aten.clamp_min.Tensor_out, (self, min))


@register("aten::clamp_max.Tensor_out")
def clamp_max_tensor_out(self, max, *, out):
    """aten::clamp_max.Tensor_out(self, max: Tensor, *, out)."""
    return _clamp(self, None, max, out, aten.clamp_max.Tensor_out, (self, max))


# ---- pow ------------------------------------------------------------------------------------------------------------
def _check_integer_power(base_dtype: torch.dtype, exponent) -> None:
    if base_dtype in INTEGRAL and not isinstance(exponent, torch.Tensor) and not isinstance(exponent, bool) \
            and isinstance(exponent, int) and exponent < 0:
        raise RuntimeError("Integers to negative integer powers are not allowed.")


@register("aten::pow.Tensor_Tensor_out")
def pow_tensor_tensor_out(self, exponent, *, out):
    """aten::pow.Tensor_Tensor_out(self, exponent, *, out)."""
    return _binary(power, aten.pow.Tensor_Tensor_out, self, exponent, out)


@register("aten::pow.Tensor_Scalar_out")
def pow_tensor_scalar_out(self, exponent, *, out):
    """aten::pow.Tensor_Scalar_out(self, exponent: Scalar, *, out)."""
    _check_integer_power(self.dtype, exponent)
    return _binary(power, aten.pow.Tensor_Scalar_out, self, exponent, out)


@register("aten::pow.Scalar_out")
def pow_scalar_out(self, exponent, *, out):
    """aten::pow.Scalar_out(self: Scalar, exponent, *, out)."""
    return _binary(power, aten.pow.Scalar_out, self, exponent, out)


# ---- atan2, division, remainder, bitwise ------------------------------------------------------------------------------
def with_workspace(query, run):
    """compute(a, b, result) for a cnnl binary function with a workspace query: query(h, a_d, b_d, out_d) and
    run(h, a_d, a, b_d, b, out_d, out, ws, ws_size)."""
    def compute(a: torch.Tensor, b: torch.Tensor, result: torch.Tensor) -> None:
        h = handle(result)
        a_desc, b_desc, r_desc = desc(a), desc(b), desc(result)
        size = query(h, a_desc, b_desc, r_desc)
        ws, _keep = workspace(size, result.device)
        run(h, a_desc, a.data_ptr(), b_desc, b.data_ptr(), r_desc, result.data_ptr(), ws, size)
    return compute


HIGH = cnnl.CNNL_COMPUTATION_HIGH_PRECISION
_atan2 = with_workspace(cnnl.getAtan2WorkspaceSize,
                        lambda h, ad, a, bd, b, od, o, ws, n: cnnl.atan2(h, HIGH, ad, a, bd, b, ws, n, od, o))
_floor_div = with_workspace(cnnl.getFloorDivWorkspaceSize,
                            lambda h, ad, a, bd, b, od, o, ws, n: cnnl.floorDiv_v2(h, HIGH, ad, a, bd, b, od, o, ws,
                                                                                    n))
_trunc_div = with_workspace(cnnl.getFloorDivTruncWorkspaceSize,
                            lambda h, ad, a, bd, b, od, o, ws, n: cnnl.floorDivTrunc(h, HIGH, ad, a, bd, b, od, o,
                                                                                      ws, n))
_floor_mod = with_workspace(cnnl.getFloorModWorkspaceSize, cnnl.floorMod)
_fmod = with_workspace(cnnl.getFloorModTruncWorkspaceSize, cnnl.floorModTrunc)


def _bitwise(op: int):
    return with_workspace(cnnl.getBitComputeWorkspaceSize,
                          lambda h, ad, a, bd, b, od, o, ws, n: cnnl.bitCompute_v2(h, op, ad, a, bd, b, od, o, ws, n))


FLOATS = frozenset({torch.float32, torch.float16, torch.bfloat16, torch.float64})
INTEGERS = frozenset({torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool})


@register("aten::atan2.out")
def atan2_out(self, other, *, out):
    """aten::atan2.out(self, other, *, out) (integers compute in the default float dtype)."""
    return _binary(_atan2, aten.atan2.out, self, other, out, dtypes=FLOATS, to_float=True)


@register("aten::floor_divide.out")
def floor_divide_out(self, other, *, out):
    """aten::floor_divide.out(self, other, *, out): the quotient rounded toward -inf."""
    return _binary(_floor_div, aten.floor_divide.out, self, other, out)


@register("aten::remainder.Tensor_out")
def remainder_tensor_out(self, other, *, out):
    """aten::remainder.Tensor_out(self, other, *, out): the remainder with the divisor's sign (Python's %)."""
    return _binary(_floor_mod, aten.remainder.Tensor_out, self, other, out)


@register("aten::remainder.Scalar_out")
def remainder_scalar_out(self, other, *, out):
    """aten::remainder.Scalar_out(self, other: Scalar, *, out)."""
    return _binary(_floor_mod, aten.remainder.Scalar_out, self, other, out)


@register("aten::fmod.Tensor_out")
def fmod_tensor_out(self, other, *, out):
    """aten::fmod.Tensor_out(self, other, *, out)."""
    return _binary(_fmod, aten.fmod.Tensor_out, self, other, out)


@register("aten::fmod.Scalar_out")
def fmod_scalar_out(self, other, *, out):
    """aten::fmod.Scalar_out(self, other: Scalar, *, out)."""
    return _binary(_fmod, aten.fmod.Scalar_out, self, other, out)


@register("aten::div.out_mode")
def div_out_mode(self, other, *, rounding_mode=None, out):
    """aten::div.out_mode(self, other, *, rounding_mode, out): "trunc" (cnnlFloorDivTrunc), "floor"
    (cnnlFloorDiv_v2) or true division."""
    if rounding_mode is None:
        return torch.div(self, other, out=out)
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    compute = _trunc_div if rounding_mode == "trunc" else _floor_div
    if _tensors(self, other) and torch.result_type(self, other) not in NUMERIC:
        return fallback(aten.div.out_mode, self, other, rounding_mode=rounding_mode, out=out)
    return _binary(compute, aten.div.out_mode, self, other, out)


for _name, _op in (("bitwise_and", cnnl.CNNL_CYCLE_BAND_OP), ("bitwise_or", cnnl.CNNL_CYCLE_BOR_OP),
                   ("bitwise_xor", cnnl.CNNL_CYCLE_BXOR_OP), ("bitwise_left_shift", cnnl.CNNL_BLEFT_SHIFT_OP_V),
                   ("bitwise_right_shift", cnnl.CNNL_BRIGHT_SHIFT_OP_V)):
    def _make(name=_name, op=_op):
        compute = _bitwise(op)
        shifts = "shift" in name
        for overload_name in ("Tensor_out", "Tensor_Scalar_out" if shifts else "Scalar_out"):
            overload = getattr(getattr(aten, name), overload_name)

            def kernel(self, other, *, out, _overload=overload):
                return _binary(compute, _overload, self, other, out,
                               dtypes=INTEGERS - {torch.bool} if shifts else INTEGERS)

            kernel.__name__ = f"{name}_{overload_name.lower()}"
            kernel.__doc__ = f"aten::{name}.{overload_name}(self, other, *, out) (integers and bool)."
            register(f"aten::{name}.{overload_name}")(kernel)
    _make()


# The operator forms (a << b, a >>= b) are ops of their own in aten, with CPU kernels of their own: the same
# shifts for integers (torch's kernels are shared); any other dtype gets the CPU kernel's own error.
for _operator, _function in (("__lshift__", "bitwise_left_shift"), ("__rshift__", "bitwise_right_shift")):
    def _make_operator(operator=_operator, function=_function):
        in_place = "__i" + operator[2:]
        for overload_name in ("Scalar", "Tensor"):
            overload, in_place_overload = (getattr(getattr(aten, operator), overload_name),
                                           getattr(getattr(aten, in_place), overload_name))

            def kernel(self, other, _overload=overload):
                if self.dtype not in INTEGERS - {torch.bool} or (
                        isinstance(other, torch.Tensor) and other.dtype not in INTEGERS - {torch.bool}):
                    return fallback(_overload, self, other)
                return getattr(torch, function)(self, other)

            def in_place_kernel(self, other, _overload=in_place_overload):
                if self.dtype not in INTEGERS - {torch.bool} or (
                        isinstance(other, torch.Tensor) and other.dtype not in INTEGERS - {torch.bool}):
                    return fallback(_overload, self, other)
                return getattr(self, function + "_")(other)

            kernel.__name__, in_place_kernel.__name__ = f"{operator}_{overload_name}", f"{in_place}_{overload_name}"
            kernel.__doc__ = f"aten::{operator}.{overload_name}(self, other): torch.{function} (integers)."
            in_place_kernel.__doc__ = f"aten::{in_place}.{overload_name}(self, other): {function}_ (integers)."
            register(f"aten::{operator}.{overload_name}")(kernel)
            register(f"aten::{in_place}.{overload_name}")(in_place_kernel)
    _make_operator()


@register("aten::bitwise_not.out")
def bitwise_not_out(self, *, out):
    """aten::bitwise_not.out(self, *, out) (integers and bool)."""
    check_same_device(self, out)
    if self.device.type != "mlu" or self.dtype not in INTEGERS:
        return fallback(aten.bitwise_not.out, self, out=out)
    check_castable(self.dtype, out)
    target = Destination(out, self.shape, self.dtype, (self,))
    result = target.target
    if result.numel():
        h = handle(result)
        x_desc, r_desc = desc(self), desc(result)
        size = cnnl.getBitComputeWorkspaceSize(h, x_desc, None, r_desc)
        ws, _keep = workspace(size, result.device)
        cnnl.bitCompute_v2(h, cnnl.CNNL_BNOT_OP, x_desc, self.data_ptr(), None, None, r_desc, result.data_ptr(), ws,
                           size)
    return target.finish()


# ---- lerp, addcmul, addcdiv -------------------------------------------------------------------------------------------
def _lerp(self, end, weight, out, overload):
    device = check_same_device(*_tensors(self, end, weight), out)
    dtype = self.dtype
    if device.type != "mlu" or dtype not in FLOATS or end.dtype != dtype:
        return fallback(overload, self, end, weight, out=out)
    check_castable(dtype, out)
    shape = _shape(self, end, weight)
    w = on_device(weight, dtype, device)
    target = Destination(out, shape, dtype, (self, end, weight))
    result = target.target
    if result.numel():
        h = handle(result)
        a_desc, e_desc, w_desc, r_desc = desc(self), desc(end), desc(w), desc(result)
        size = cnnl.getLerpWorkspaceSize(h, a_desc, e_desc, w_desc, r_desc)
        ws, _keep = workspace(size, device)
        cnnl.lerp(h, a_desc, self.data_ptr(), e_desc, end.data_ptr(), w_desc, w.data_ptr(), ws, size, r_desc,
                  result.data_ptr())
    return target.finish()


@register("aten::lerp.Scalar_out")
def lerp_scalar_out(self, end, weight, *, out):
    """aten::lerp.Scalar_out(self, end, weight: Scalar, *, out)."""
    return _lerp(self, end, weight, out, aten.lerp.Scalar_out)


@register("aten::lerp.Tensor_out")
def lerp_tensor_out(self, end, weight, *, out):
    """aten::lerp.Tensor_out(self, end, weight, *, out)."""
    return _lerp(self, end, weight, out, aten.lerp.Tensor_out)


def _addc(function, query, self, tensor1, tensor2, value, out, overload, name: str):
    device = check_same_device(self, tensor1, tensor2, out)
    dtype = torch.promote_types(torch.promote_types(self.dtype, tensor1.dtype), tensor2.dtype)
    if name == "addcdiv" and tensor1.dtype in INTEGERS and tensor2.dtype in INTEGERS:
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future release addcdiv "
                           "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
                           "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
                           "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
                           "addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
                           "tensor2), for all dtypes.")
    allowed = FLOATS if name == "addcdiv" else NUMERIC
    if device.type != "mlu" or dtype not in allowed:
        return fallback(overload, self, tensor1, tensor2, value=value, out=out)
    check_castable(dtype, out)
    shape = _shape(self, tensor1, tensor2)
    a, t1, t2 = (on_device(t, dtype, device) for t in (self, tensor1, tensor2))
    a = a.expand(shape) if tuple(a.shape) != shape else a
    target = Destination(out, shape, dtype, (self, tensor1, tensor2))
    result = target.target
    if result.numel():
        h = handle(result)
        a_desc, d1, d2, r_desc = desc(a), desc(t1), desc(t2), desc(result)
        size = query(h, a_desc, d1, d2)
        ws, _keep = workspace(size, device)
        function(h, a_desc, a.data_ptr(), value, d1, t1.data_ptr(), d2, t2.data_ptr(), ws, size, r_desc,
                 result.data_ptr())
    return target.finish()


@register("aten::addcmul.out")
def addcmul_out(self, tensor1, tensor2, *, value=1, out):
    """aten::addcmul.out(self, tensor1, tensor2, *, value, out): self + value * tensor1 * tensor2."""
    return _addc(cnnl.addcmul, cnnl.getAddcmulWorkspaceSize, self, tensor1, tensor2, value, out, aten.addcmul.out,
                 "addcmul")


@register("aten::addcdiv.out")
def addcdiv_out(self, tensor1, tensor2, *, value=1, out):
    """aten::addcdiv.out(self, tensor1, tensor2, *, value, out): self + value * tensor1 / tensor2."""
    return _addc(cnnl.addcdiv, cnnl.getAddcdivWorkspaceSize, self, tensor1, tensor2, value, out, aten.addcdiv.out,
                 "addcdiv")


# ---- functional forms that have no structured wrapper -------------------------------------------------------------------
def _new_result(self, other) -> torch.Tensor:
    tensors = _tensors(self, other)
    device = check_same_device(*tensors)
    device = next((t.device for t in tensors if t.device.type == "mlu"), device)
    return torch.empty(_shape(self, other), dtype=torch.result_type(self, other), device=device)


@register("aten::floor_divide")
def floor_divide(self, other):
    """aten::floor_divide(self, other)."""
    return floor_divide_out(self, other, out=_new_result(self, other))


@register("aten::floor_divide_.Tensor")
def floor_divide_(self, other):
    """aten::floor_divide_.Tensor(self, other)."""
    check_castable(torch.result_type(self, other), self)
    return floor_divide_out(self, other, out=self)


@register("aten::remainder.Scalar_Tensor")
def remainder_scalar_tensor(self, other):
    """aten::remainder.Scalar_Tensor(self: Scalar, other)."""
    return remainder_tensor_out(self, other, out=_new_result(self, other))


@register("aten::remainder.Scalar_Tensor_out")
def remainder_scalar_tensor_out(self, other, *, out):
    """aten::remainder.Scalar_Tensor_out(self: Scalar, other, *, out)."""
    return remainder_tensor_out(self, other, out=out)


@register("aten::rsub.Tensor")
def rsub_tensor(self, other, *, alpha=1):
    """aten::rsub.Tensor(self, other, *, alpha): other - alpha * self."""
    return torch.sub(other, self, alpha=alpha)
