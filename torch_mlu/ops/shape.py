"""Joining tensors: cat (cnnlConcat; stack, hstack, vstack... are torch compositions of it), with torch's type
promotion across the inputs and its legacy rule that 1-D empty tensors are skipped."""
from __future__ import annotations

import functools

import torch

import cnnl

from ._core import TORCH_TO_CNNL, aten, check_same_device, desc, fallback, handle, register, workspace
from ._iter import Destination, check_castable


def _skipped(tensor: torch.Tensor) -> bool:
    return tensor.dim() == 1 and tensor.numel() == 0


@register("aten::cat.out")
def cat_out(tensors, dim=0, *, out):
    """aten::cat.out(tensors, dim, *, out)."""
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    check_same_device(*tensors, out)
    for position, tensor in enumerate(tensors):
        if tensor.dim() == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {position}) cannot be concatenated")
    dtype = functools.reduce(torch.promote_types, (t.dtype for t in tensors))
    if out.device.type != "mlu" or dtype not in TORCH_TO_CNNL or out.dtype not in TORCH_TO_CNNL:
        return fallback(aten.cat.out, tensors, dim, out=out)
    check_castable(dtype, out)
    kept = [t for t in tensors if not _skipped(t)]
    if not kept:
        target = Destination(out, (0,), out.dtype, tensors)
        return target.finish()
    reference = kept[0]
    rank = reference.dim()
    if not -rank <= dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")
    axis = dim % rank
    shape = list(reference.shape)
    total = 0
    for position, tensor in enumerate(tensors):
        if _skipped(tensor):
            continue
        if tensor.dim() != rank:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {rank} and {tensor.dim()}")
        for d in range(rank):
            if d != axis and tensor.shape[d] != shape[d]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {axis}. Expected size "
                                   f"{shape[d]} but got size {tensor.shape[d]} for tensor number {position} in the "
                                   f"list.")
        total += tensor.shape[axis]
    shape[axis] = total
    target = Destination(out, shape, out.dtype, tensors)
    result = target.target
    pieces = [t if t.dtype == result.dtype else t.to(result.dtype) for t in kept if t.shape[axis] > 0]
    if result.numel() and pieces:
        h = handle(result)
        size = cnnl.getConcatWorkspaceSize(h, len(pieces))
        ws, _keep = workspace(size, result.device)
        cnnl.concat(h, axis, [desc(p) for p in pieces], [p.data_ptr() for p in pieces], ws, size, desc(result),
                    result.data_ptr())
    return target.finish()
