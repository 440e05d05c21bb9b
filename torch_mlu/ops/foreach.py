"""The `_foreach_*` ops torch.optim's SGD uses (`_foreach_add_`, `_foreach_mul_`, `_foreach_add`, `_foreach_mul`
with Scalar and List operands): one cnnl command per list instead of one torch op per tensor.

Each tensor gets exactly what its single-tensor op (add_/mul_, cnnlOpTensor) computes. The native path takes lists
of dense mlu tensors on one device, with per-index operands of the same shape and floating dtype; the first call
with a set of descriptors goes through the public cnnlOpTensor per tensor (which validates them), later ones
queue one command over the whole list (`_launch.enqueue`). Anything else runs torch's per-tensor loop (the ops'
own single-tensor kernels or the CPU fallback), as torch does for lists it cannot group.
"""
from __future__ import annotations

import numpy as np
import torch

import cnnl
from cnnl.dtypes import numpy_dtype
from cnnl.kernels.foreach import foreach_op_tensor

from . import _launch
from ._core import FLOATING, aten, desc, handle, register, workspace
from .binary import ADD, MUL, _op_descriptor
from .fill import cast_number, device_number

_NAMES = {ADD: "add", MUL: "mul"}


def _native(tensors: list, others: list | None) -> bool:
    """True when every tensor is a dense mlu tensor of one floating dtype on one device, and each `others` entry
    matches its tensor's shape (and is dense, same dtype and device)."""
    if not tensors:
        return False
    first = tensors[0]
    device, dtype = first.device, first.dtype
    if device.type != "mlu" or dtype not in FLOATING:
        return False
    for index, tensor in enumerate(tensors):
        if tensor.device != device or tensor.dtype != dtype or not tensor.is_contiguous():
            return False
        if others is not None:
            other = others[index]
            if (not isinstance(other, torch.Tensor) or other.device != device or other.dtype != dtype
                    or other.shape != tensor.shape or not other.is_contiguous()):
                return False
    return True


def _apply(op, tensors: list, others: list, outs: list, alpha) -> None:
    """outs[i] = tensors[i] op alpha * others[i]: one command once the descriptors were validated, else the public
    cnnlOpTensor per tensor."""
    h = handle(outs[0])
    descriptors = [desc(t) for t in outs]
    other_descs = [desc(o) for o in others]
    signature = ("foreach", op, outs[0].dtype, tuple(descriptors), tuple(other_descs))
    if _launch.validated(signature):
        count = len(outs)
        inputs = [(d, t.data_ptr(), "a") for d, t in zip(descriptors, tensors)]
        inputs += [(d, o.data_ptr(), "b") for d, o in zip(other_descs, others)]
        name = _NAMES[op]
        _enqueue(h, descriptors, inputs, outs,
                 lambda views: foreach_op_tensor(name, views[:count], views[count:2 * count], views[2 * count:], 1,
                                                 alpha))
        return
    _public(op, tensors, others, outs, descriptors, other_descs, alpha)
    _launch.remember(signature)


def _apply_number(op, tensors: list, number, outs: list) -> None:
    """outs[i] = tensors[i] op number (a number already in the tensors' dtype): once the descriptors were validated,
    one command reading the number as a 0-d host operand (no device scalar, no fill); else the public
    cnnlOpTensor per tensor with a one-element device operand."""
    h = handle(outs[0])
    descriptors = [desc(t) for t in outs]
    signature = ("foreach number", op, outs[0].dtype, tuple(descriptors))
    if _launch.validated(signature):
        count, name = len(outs), _NAMES[op]
        operands = [np.array(number, numpy_dtype(descriptors[0].dtype))] * count
        _enqueue(h, descriptors, [(d, t.data_ptr(), "a") for d, t in zip(descriptors, tensors)], outs,
                 lambda views: foreach_op_tensor(name, views[:count], operands, views[count:]))
        return
    operand = device_number(number, outs[0].dtype, outs[0].device)
    _public(op, tensors, [operand] * len(outs), outs, descriptors, [desc(operand)] * len(outs), 1)
    _launch.remember(signature)


def _enqueue(h, descriptors, inputs, outs, kernel) -> None:
    """Queue one cnnlOpTensor command over the lists: kernel(views) gets the input views, then the outputs'."""
    outputs = [(d, t.data_ptr(), "c") for d, t in zip(descriptors, outs)]
    _launch.enqueue("cnnlOpTensor", h, inputs, outputs, lambda *views: kernel(views),
                    flops=sum(t.numel() for t in outs), dtype=descriptors[0].dtype)


def _public(op, tensors, others, outs, descriptors, other_descs, alpha) -> None:
    """The public cnnlOpTensor per tensor (which validates every descriptor)."""
    h = handle(outs[0])
    op_desc = _op_descriptor(op, outs[0].dtype)
    for t, o, out, d, od in zip(tensors, others, outs, descriptors, other_descs):
        size = cnnl.getOpTensorWorkspaceSize(h, d, od, d)
        ws, _keep = workspace(size, out.device)
        cnnl.opTensor(h, op_desc, 1, d, t.data_ptr(), alpha, od, o.data_ptr(), ws, size, 0, d, out.data_ptr())


def _list_op(op, per_tensor, self: list, other: list, alpha, inplace: bool):
    if len(self) != len(other):
        raise RuntimeError(f"Tensor lists must have the same number of tensors, got {len(self)} and {len(other)}")
    if not _native(self, other) or (alpha != 1 and op == MUL):
        results = [per_tensor(t, o) for t, o in zip(self, other)]
        return None if inplace else results
    outs = self if inplace else [torch.empty_like(t) for t in self]
    _apply(op, self, other, outs, alpha)
    return None if inplace else outs


def _scalar_op(op, per_tensor, self: list, scalar, inplace: bool):
    if not _native(self, None) or isinstance(scalar, (complex, bool)) or not isinstance(scalar, (int, float)):
        results = [per_tensor(t) for t in self]
        return None if inplace else results
    outs = self if inplace else [torch.empty_like(t) for t in self]
    _apply_number(op, self, cast_number(scalar, self[0].dtype), outs)
    return None if inplace else outs


@register("aten::_foreach_add_.List")
def foreach_add_list_(self, other, *, alpha=1):
    return _list_op(ADD, lambda t, o: t.add_(o, alpha=alpha), self, other, alpha, True)


@register("aten::_foreach_add.List")
def foreach_add_list(self, other, *, alpha=1):
    return _list_op(ADD, lambda t, o: aten.add.Tensor(t, o, alpha=alpha), self, other, alpha, False)


@register("aten::_foreach_mul_.List")
def foreach_mul_list_(self, other):
    return _list_op(MUL, lambda t, o: t.mul_(o), self, other, 1, True)


@register("aten::_foreach_mul.List")
def foreach_mul_list(self, other):
    return _list_op(MUL, lambda t, o: aten.mul.Tensor(t, o), self, other, 1, False)


@register("aten::_foreach_add_.Scalar")
def foreach_add_scalar_(self, scalar):
    return _scalar_op(ADD, lambda t: t.add_(scalar), self, scalar, True)


@register("aten::_foreach_add.Scalar")
def foreach_add_scalar(self, scalar):
    return _scalar_op(ADD, lambda t: aten.add.Scalar(t, scalar), self, scalar, False)


@register("aten::_foreach_mul_.Scalar")
def foreach_mul_scalar_(self, scalar):
    return _scalar_op(MUL, lambda t: t.mul_(scalar), self, scalar, True)


@register("aten::_foreach_mul.Scalar")
def foreach_mul_scalar(self, scalar):
    return _scalar_op(MUL, lambda t: aten.mul.Scalar(t, scalar), self, scalar, False)
