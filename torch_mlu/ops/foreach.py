"""The `_foreach_*` ops torch.optim's SGD, Adam and AdamW use, one cnnl command per list instead of one torch op
per tensor: add and mul (List and Scalar operands), lerp (Scalar weight), addcmul and addcdiv (Scalar and
ScalarList values), div (Scalar and ScalarList) and sqrt; in-place and out-of-place.

Each tensor gets exactly what its single-tensor op computes: the command runs that op's cnnl kernel on each tensor
in turn, its numbers converted as that op converts them. The native path takes lists of dense mlu tensors of one
floating dtype on one device, the tensors at one index of one shape, and Python numbers. The first call with a set
of descriptors runs the single-tensor ops (each through its public cnnl function, which validates every descriptor);
later calls queue one command over the whole lists (`_launch.enqueue`). Anything else runs the per-tensor loop
(the single-tensor mlu ops or the CPU fallback), as torch does for lists it cannot group.
"""
from __future__ import annotations

import torch

from cnnl import kernels
from cnnl.kernels import arithmetic
from cnnl.kernels.foreach import for_each

from . import _launch
from ._core import FLOATING, desc, handle, register
from .fill import cast_number, converted, host_number


def _native(*lists) -> bool:
    """True when the lists are equally long and non-empty, and every tensor is a dense mlu tensor of the first one's
    floating dtype and device, with the shape of the first list's tensor at its index."""
    first = lists[0]
    if not first or any(len(listed) != len(first) for listed in lists):
        return False
    device, dtype = first[0].device, first[0].dtype
    if device.type != "mlu" or dtype not in FLOATING:
        return False
    for index, tensor in enumerate(first):
        for listed in lists:
            t = listed[index]
            if (not isinstance(t, torch.Tensor) or t.device != device or t.dtype != dtype or t.shape != tensor.shape
                    or not t.is_contiguous()):
                return False
    return True


def _numbers(*values) -> bool:
    return all(type(v) in (int, float) for v in values)


def _apply(native: bool, key: tuple, name: str, inputs: list, inplace: bool, single, kernel, constants=None,
           flops: int = 1):
    """The foreach op over the tensor lists `inputs` (self first); returns None (in-place) or the results.

    single(i): the single-tensor op at index i (in place, or returning its result). Off the native path, and on the
    first native call with a set of descriptors (then remembered), the ops run one by one. Later calls queue one
    command `name` running kernel(input views at i..., constants[i] when given, output view) for every i."""
    self = inputs[0]
    if native:
        descriptors = [[desc(t) for t in listed] for listed in inputs]
        signature = ("foreach", key, self[0].dtype, *(tuple(d) for d in descriptors))
        if _launch.validated(signature):
            return _enqueue(name, inputs, descriptors, inplace, kernel, constants, flops)
    results = [single(i) for i in range(len(self))]
    if native:
        _launch.remember(signature)
    return None if inplace else results


def _enqueue(name: str, inputs: list, descriptors: list, inplace: bool, kernel, constants, flops: int):
    self = inputs[0]
    outs = self if inplace else [torch.empty_like(t) for t in self]
    read = 1 if inplace else 0  # in place, self is read through its output's view: one pin per tensor, not two
    entries = [(d, t.data_ptr(), "input") for listed, ds in zip(inputs[read:], descriptors[read:])
               for d, t in zip(ds, listed)]
    outputs = [(d, t.data_ptr(), "output") for d, t in zip(descriptors[0], outs)]
    count, arity = len(outs), len(inputs) - read
    extra = [] if constants is None else [constants]

    def run(*views):
        written = views[arity * count:]
        lists = [views[k * count:(k + 1) * count] for k in range(arity)]
        for_each(kernel, *([written] if inplace else []), *lists, *extra, written)

    _launch.enqueue(name, handle(outs[0]), entries, outputs, run, flops=flops * sum(t.numel() for t in outs),
                    dtype=descriptors[0][0].dtype, outputs_read=inplace)
    return None if inplace else outs


def _check_lengths(*lists) -> None:
    if any(len(listed) != len(lists[0]) for listed in lists):
        raise RuntimeError("Tensor lists must have the same number of tensors, got "
                           + " and ".join(str(len(listed)) for listed in lists))


# ---- add and mul ------------------------------------------------------------------------------------------------------
def _add_list(self, other, alpha, inplace):
    _check_lengths(self, other)

    def single(i):
        return self[i].add_(other[i], alpha=alpha) if inplace else torch.add(self[i], other[i], alpha=alpha)

    return _apply(_native(self, other) and _numbers(alpha), ("add", "list"), "cnnlOpTensor", [self, other], inplace,
                  single, lambda a, b, out: kernels.op_tensor("add", a, b, out, 1, alpha, 0))


def _mul_list(self, other, inplace):
    _check_lengths(self, other)

    def single(i):
        return self[i].mul_(other[i]) if inplace else torch.mul(self[i], other[i])

    return _apply(_native(self, other), ("mul", "list"), "cnnlOpTensor", [self, other], inplace, single,
                  lambda a, b, out: kernels.op_tensor("mul", a, b, out))


def _op_scalar(op: str, self, scalar, inplace):
    """self[i] op scalar (add or mul): the number converted as the single-tensor op's tensor-and-number path
    converts it (cast_number)."""
    def single(i):
        return getattr(self[i], op + "_")(scalar) if inplace else getattr(torch, op)(self[i], scalar)

    native = _native(self) and _numbers(scalar)
    operand = host_number(cast_number(scalar, self[0].dtype), self[0].dtype) if native else None
    return _apply(native, (op, "scalar"), "cnnlOpTensor", [self], inplace, single,
                  lambda a, out: kernels.op_tensor(op, a, operand, out))


@register("aten::_foreach_add_.List")
def foreach_add_list_(self, other, *, alpha=1):
    """aten::_foreach_add_.List(self, other, *, alpha): self[i] += alpha * other[i]."""
    return _add_list(self, other, alpha, True)


@register("aten::_foreach_add.List")
def foreach_add_list(self, other, *, alpha=1):
    """aten::_foreach_add.List(self, other, *, alpha) -> [self[i] + alpha * other[i]]."""
    return _add_list(self, other, alpha, False)


@register("aten::_foreach_mul_.List")
def foreach_mul_list_(self, other):
    """aten::_foreach_mul_.List(self, other): self[i] *= other[i]."""
    return _mul_list(self, other, True)


@register("aten::_foreach_mul.List")
def foreach_mul_list(self, other):
    """aten::_foreach_mul.List(self, other) -> [self[i] * other[i]]."""
    return _mul_list(self, other, False)


@register("aten::_foreach_add_.Scalar")
def foreach_add_scalar_(self, scalar):
    """aten::_foreach_add_.Scalar(self, scalar): self[i] += scalar."""
    return _op_scalar("add", self, scalar, True)


@register("aten::_foreach_add.Scalar")
def foreach_add_scalar(self, scalar):
    """aten::_foreach_add.Scalar(self, scalar) -> [self[i] + scalar]."""
    return _op_scalar("add", self, scalar, False)


@register("aten::_foreach_mul_.Scalar")
def foreach_mul_scalar_(self, scalar):
    """aten::_foreach_mul_.Scalar(self, scalar): self[i] *= scalar."""
    return _op_scalar("mul", self, scalar, True)


@register("aten::_foreach_mul.Scalar")
def foreach_mul_scalar(self, scalar):
    """aten::_foreach_mul.Scalar(self, scalar) -> [self[i] * scalar]."""
    return _op_scalar("mul", self, scalar, False)


# ---- div and sqrt -----------------------------------------------------------------------------------------------------
def _div(self, scalars: list, inplace):
    """self[i] / scalars[i]: each number converted as the single-tensor div converts it (cast_number)."""
    def single(i):
        return self[i].div_(scalars[i]) if inplace else torch.div(self[i], scalars[i])

    native = _native(self) and _numbers(*scalars)
    operands = [host_number(cast_number(s, self[0].dtype), self[0].dtype) for s in scalars] if native else None
    return _apply(native, ("div", "scalars"), "cnnlDiv_v2", [self], inplace, single,
                  lambda a, b, out: kernels.binary("div", a, b, out), operands)


def _scalar_list(self, scalars) -> list:
    if len(scalars) != len(self):
        raise RuntimeError(f"Tensor list must have same number of elements as scalar list, got {len(self)} and "
                           f"{len(scalars)}")
    return list(scalars)


@register("aten::_foreach_div_.Scalar")
def foreach_div_scalar_(self, scalar):
    """aten::_foreach_div_.Scalar(self, scalar): self[i] /= scalar."""
    return _div(self, [scalar] * len(self), True)


@register("aten::_foreach_div.Scalar")
def foreach_div_scalar(self, scalar):
    """aten::_foreach_div.Scalar(self, scalar) -> [self[i] / scalar]."""
    return _div(self, [scalar] * len(self), False)


@register("aten::_foreach_div_.ScalarList")
def foreach_div_scalar_list_(self, scalars):
    """aten::_foreach_div_.ScalarList(self, scalars): self[i] /= scalars[i] (Adam's bias correction)."""
    return _div(self, _scalar_list(self, scalars), True)


@register("aten::_foreach_div.ScalarList")
def foreach_div_scalar_list(self, scalars):
    """aten::_foreach_div.ScalarList(self, scalars) -> [self[i] / scalars[i]]."""
    return _div(self, _scalar_list(self, scalars), False)


def _sqrt(self, inplace):
    def single(i):
        return self[i].sqrt_() if inplace else torch.sqrt(self[i])

    return _apply(_native(self), ("sqrt",), "cnnlSqrt_v2", [self], inplace, single,
                  lambda a, out: kernels.unary("sqrt", a, out))


@register("aten::_foreach_sqrt_")
def foreach_sqrt_(self):
    """aten::_foreach_sqrt_(self): self[i] = sqrt(self[i])."""
    return _sqrt(self, True)


@register("aten::_foreach_sqrt")
def foreach_sqrt(self):
    """aten::_foreach_sqrt(self) -> [sqrt(self[i])] (Adam's denominators)."""
    return _sqrt(self, False)


# ---- lerp, addcmul, addcdiv -------------------------------------------------------------------------------------------
def _lerp(self, ends, weight, inplace):
    """self[i] + weight * (ends[i] - self[i]): the weight converted as the single-tensor lerp's one-element device
    weight is (fill_'s conversion)."""
    _check_lengths(self, ends)

    def single(i):
        return self[i].lerp_(ends[i], weight) if inplace else torch.lerp(self[i], ends[i], weight)

    native = _native(self, ends) and _numbers(weight)
    operand = host_number(converted(weight, self[0].dtype), self[0].dtype) if native else None
    return _apply(native, ("lerp",), "cnnlLerp", [self, ends], inplace, single,
                  lambda a, e, out: arithmetic.lerp(a, e, operand, out), flops=4)


@register("aten::_foreach_lerp_.Scalar")
def foreach_lerp_scalar_(self, tensors1, weight):
    """aten::_foreach_lerp_.Scalar(self, tensors1, weight): self[i] lerps toward tensors1[i] (Adam's first
    moment)."""
    return _lerp(self, tensors1, weight, True)


@register("aten::_foreach_lerp.Scalar")
def foreach_lerp_scalar(self, tensors1, weight):
    """aten::_foreach_lerp.Scalar(self, tensors1, weight) -> [lerp(self[i], tensors1[i], weight)]."""
    return _lerp(self, tensors1, weight, False)


def _addc(name: str, self, tensor1, tensor2, values: list, inplace):
    """self[i] + values[i] * tensor1[i] (* or /) tensor2[i] (addcmul / addcdiv): each value passed to the kernel
    as the single-tensor op passes its host value."""
    _check_lengths(self, tensor1, tensor2)
    method = getattr(torch.Tensor, name + "_")

    def single(i):
        if inplace:
            return method(self[i], tensor1[i], tensor2[i], value=values[i])
        return getattr(torch, name)(self[i], tensor1[i], tensor2[i], value=values[i])

    kernel = getattr(arithmetic, name)  # kernel(x, tensor1, tensor2, value, out)
    return _apply(_native(self, tensor1, tensor2) and _numbers(*values), (name,), f"cnnl{name.capitalize()}",
                  [self, tensor1, tensor2], inplace, single, kernel, values, flops=3)


def _register_addc(name: str) -> None:
    @register(f"aten::_foreach_{name}_.Scalar")
    def scalar_(self, tensor1, tensor2, value=1):
        return _addc(name, self, tensor1, tensor2, [value] * len(self), True)

    @register(f"aten::_foreach_{name}.Scalar")
    def scalar(self, tensor1, tensor2, value=1):
        return _addc(name, self, tensor1, tensor2, [value] * len(self), False)

    @register(f"aten::_foreach_{name}_.ScalarList")
    def scalar_list_(self, tensor1, tensor2, scalars):
        return _addc(name, self, tensor1, tensor2, _scalar_list(self, scalars), True)

    @register(f"aten::_foreach_{name}.ScalarList")
    def scalar_list(self, tensor1, tensor2, scalars):
        return _addc(name, self, tensor1, tensor2, _scalar_list(self, scalars), False)

    scalar_.__doc__ = f"aten::_foreach_{name}_.Scalar(self, tensor1, tensor2, value): {name}_ per index."
    scalar.__doc__ = f"aten::_foreach_{name}.Scalar(self, tensor1, tensor2, value) -> [{name} per index]."
    scalar_list_.__doc__ = f"aten::_foreach_{name}_.ScalarList(self, tensor1, tensor2, scalars): {name}_ per index."
    scalar_list.__doc__ = f"aten::_foreach_{name}.ScalarList(self, tensor1, tensor2, scalars) -> [{name} per index]."


_register_addc("addcmul")
_register_addc("addcdiv")
