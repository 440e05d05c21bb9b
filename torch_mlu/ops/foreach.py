"""The `_foreach_*` ops torch.optim's SGD, Adam and AdamW use, one cnnl call (one command) per list instead of one
torch op per tensor: add and mul (List and Scalar operands), lerp (Scalar weight), addcmul and addcdiv (Scalar and
ScalarList values), div (Scalar and ScalarList) and sqrt; in-place and out-of-place; over cnnlForeachBinaryOp,
cnnlForeachLerp, cnnlForeachPointwiseOp and cnnlForeachUnaryOp_v2.

Each tensor gets exactly what its single-tensor op computes: cnnl runs that op's kernel on each tensor in turn, and
the numbers are converted here as that op converts them. The native path takes lists of dense mlu tensors of one
floating dtype on one device, the tensors at one index of one shape, and Python numbers. Anything else runs the
per-tensor loop (the single-tensor mlu ops or the CPU fallback), as torch does for lists it cannot group.
"""
from __future__ import annotations

import torch

import cnnl

from ._core import FLOATING, desc, desc_for, handle, register
from .binary import ADD, MUL, number_operand
from .fill import cast_number, converted


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


def _lists(*lists) -> tuple:
    """(descriptors, pointers) of each tensor list, flattened in order: d0, p0, d1, p1, ..."""
    flat = []
    for listed in lists:
        flat += [[desc(t) for t in listed], [t.data_ptr() for t in listed]]
    return tuple(flat)


def _outputs(self: list, inplace: bool) -> list:
    return self if inplace else [torch.empty_like(t) for t in self]


def _scalar_desc(dtype: torch.dtype):
    """The descriptor naming the data type of a binary op's host scalars."""
    return desc_for((), (), dtype)


def _check_lengths(*lists) -> None:
    if any(len(listed) != len(lists[0]) for listed in lists):
        raise RuntimeError("Tensor lists must have the same number of tensors, got "
                           + " and ".join(str(len(listed)) for listed in lists))


# ---- add and mul ------------------------------------------------------------------------------------------------------
def _binary(op_mode, self, operands, alpha, inplace, scalar=None, scalars=None, scalar_dtype=None):
    """cnnlForeachBinaryOp over self and `operands` (a tensor list), or one number `scalar`, or `scalars` (numbers of
    `scalar_dtype`, by default self's)."""
    outs = _outputs(self, inplace)
    descs, pointers = _lists(self)
    out_descs, out_pointers = _lists(outs)
    if operands is not None:
        mode, other_descs, other_pointers = cnnl.FOREACH_BINARY_TENSOR_LIST, *_lists(operands)
        scalar_desc, value = None, None
    else:
        mode = cnnl.FOREACH_BINARY_SCALAR if scalars is None else cnnl.FOREACH_BINARY_SCALAR_LIST
        other_descs, other_pointers = None, None
        scalar_desc = _scalar_desc(scalar_dtype or self[0].dtype)
        value = scalar if scalars is None else scalars
    cnnl.foreachBinaryOp(handle(outs[0]), op_mode, mode, descs, pointers, other_descs, other_pointers, scalar_desc,
                         value, alpha if operands is not None else None, None, 0, out_descs, out_pointers)
    return None if inplace else outs


def _add_list(self, other, alpha, inplace):
    _check_lengths(self, other)
    if _native(self, other) and _numbers(alpha):
        return _binary(cnnl.CNNL_FOREACH_ADD, self, other, alpha, inplace)
    results = [self[i].add_(other[i], alpha=alpha) if inplace else torch.add(self[i], other[i], alpha=alpha)
               for i in range(len(self))]
    return None if inplace else results


def _mul_list(self, other, inplace):
    _check_lengths(self, other)
    if _native(self, other):
        return _binary(cnnl.CNNL_FOREACH_MUL, self, other, 1, inplace)
    results = [self[i].mul_(other[i]) if inplace else torch.mul(self[i], other[i]) for i in range(len(self))]
    return None if inplace else results


def _op_scalar(op: str, self, scalar, inplace):
    """self[i] op scalar (add or mul): the number converted as the single-tensor op's tensor-and-number path
    converts it (`binary.number_operand`)."""
    if _native(self) and _numbers(scalar):
        mode, binary_op = (cnnl.CNNL_FOREACH_ADD, ADD) if op == "add" else (cnnl.CNNL_FOREACH_MUL, MUL)
        number, dtype = number_operand(binary_op, scalar, self[0].dtype)
        return _binary(mode, self, None, 1, inplace, scalar=number, scalar_dtype=dtype)
    results = [getattr(self[i], op + "_")(scalar) if inplace else getattr(torch, op)(self[i], scalar)
               for i in range(len(self))]
    return None if inplace else results


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
    if _native(self) and _numbers(*scalars):
        dtype = self[0].dtype
        return _binary(cnnl.CNNL_FOREACH_DIV, self, None, 1, inplace, scalars=[cast_number(s, dtype) for s in scalars])
    results = [self[i].div_(scalars[i]) if inplace else torch.div(self[i], scalars[i]) for i in range(len(self))]
    return None if inplace else results


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
    if _native(self):
        outs = _outputs(self, inplace)
        descs, pointers = _lists(self)
        out_descs, out_pointers = _lists(outs)
        cnnl.foreachUnaryOp_v2(handle(outs[0]), cnnl.CNNL_FOREACH_SQRT, cnnl.CNNL_COMPUTATION_HIGH_PRECISION, descs,
                               pointers, None, 0, out_descs, out_pointers)
        return None if inplace else outs
    results = [self[i].sqrt_() if inplace else torch.sqrt(self[i]) for i in range(len(self))]
    return None if inplace else results


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
    if _native(self, ends) and _numbers(weight):
        outs = _outputs(self, inplace)
        descs, pointers, end_descs, end_pointers = _lists(self, ends)
        out_descs, out_pointers = _lists(outs)
        cnnl.foreachLerp(handle(outs[0]), cnnl.FOREACH_LERP_SCALAR, descs, pointers, end_descs, end_pointers, None,
                         converted(weight, self[0].dtype), None, 0, out_descs, out_pointers)
        return None if inplace else outs
    results = [self[i].lerp_(ends[i], weight) if inplace else torch.lerp(self[i], ends[i], weight)
               for i in range(len(self))]
    return None if inplace else results


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
    """self[i] + values[i] * tensor1[i] (* or /) tensor2[i] (addcmul / addcdiv): each value passed to cnnl as the
    single-tensor op passes its host value."""
    _check_lengths(self, tensor1, tensor2)
    if _native(self, tensor1, tensor2) and _numbers(*values):
        outs = _outputs(self, inplace)
        lists = _lists(self, tensor1, tensor2)
        out_descs, out_pointers = _lists(outs)
        mode = cnnl.CNNL_FOREACH_ADDCMUL if name == "addcmul" else cnnl.CNNL_FOREACH_ADDCDIV
        cnnl.foreachPointwiseOp(handle(outs[0]), mode, cnnl.FOREACH_POINTWISE_SCALAR_LIST, *lists, values, out_descs,
                                out_pointers)
        return None if inplace else outs
    method = getattr(torch.Tensor, name + "_")
    if inplace:
        for i in range(len(self)):
            method(self[i], tensor1[i], tensor2[i], value=values[i])
        return None
    return [getattr(torch, name)(self[i], tensor1[i], tensor2[i], value=values[i]) for i in range(len(self))]


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
