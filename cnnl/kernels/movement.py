"""Data movement: strided copy, transpose, concat, split, strided slice, fill and select (where).

All of them move values without changing them (fill converts its scalar with the `cast` rules), work on any
strides including broadcast zero strides on inputs, and copy in parallel blocks.
"""
import functools

import numpy as np

from .cast import cast_block
from .dtypes import ALL_DTYPES, BOOL, check_dtype, check_same_dtype
from .elementwise import run_elementwise
from .staging import load


def _copy_block(dst, src):
    np.copyto(dst, src)


def copy(src, dst):
    """dst = src (`cnnlCopy`): same dtype, any strides on both sides; src may broadcast to dst."""
    check_same_dtype(src=src, dst=dst)
    check_dtype("src", src, ALL_DTYPES)
    run_elementwise(_copy_block, dst, [src], staged=False)


def transpose(x, perm, out):
    """out = x with its axes permuted: out.shape[i] == x.shape[perm[i]] (`cnnlTranspose_v2`)."""
    perm = tuple(int(p) for p in perm)
    if sorted(perm) != list(range(x.ndim)):
        raise ValueError(f"perm {perm} is not a permutation of {x.ndim} axes")
    permuted = x.transpose(perm)
    if permuted.shape != out.shape:
        raise ValueError(f"out shape {out.shape}, expected {permuted.shape}")
    copy(permuted, out)


def _axis_slices(ndim, axis, sizes):
    """Index tuples selecting consecutive pieces of the given sizes along `axis`."""
    start = 0
    for size in sizes:
        index = [slice(None)] * ndim
        index[axis] = slice(start, start + size)
        start += size
        yield tuple(index)


def _check_pieces(pieces, whole, axis):
    if not -whole.ndim <= axis < whole.ndim:
        raise ValueError(f"axis {axis} out of range for {whole.ndim} axes")
    axis %= whole.ndim
    for piece in pieces:
        check_same_dtype(piece=piece, whole=whole)
        if piece.ndim != whole.ndim or any(p != w for d, (p, w) in enumerate(zip(piece.shape, whole.shape))
                                           if d != axis):
            raise ValueError(f"piece shape {piece.shape} does not match {whole.shape} off axis {axis}")
    if sum(piece.shape[axis] for piece in pieces) != whole.shape[axis]:
        raise ValueError(f"pieces along axis {axis} do not add up to {whole.shape[axis]}")
    return axis


def concat(inputs, axis, out):
    """out = the inputs joined along `axis` (`cnnlConcat`)."""
    axis = _check_pieces(inputs, out, axis)
    for piece, index in zip(inputs, _axis_slices(out.ndim, axis, [p.shape[axis] for p in inputs])):
        copy(piece, out[index])


def split(x, axis, outputs):
    """Each of `outputs` receives its consecutive piece of x along `axis` (`cnnlSplit`)."""
    axis = _check_pieces(outputs, x, axis)
    for piece, index in zip(outputs, _axis_slices(x.ndim, axis, [p.shape[axis] for p in outputs])):
        copy(x[index], piece)


def strided_slice(x, begin, end, stride, out):
    """out = x[begin:end:stride] on every axis, Python slice rules (`cnnlStridedSlice`); negative strides allowed."""
    if not len(begin) == len(end) == len(stride) == x.ndim:
        raise ValueError("begin, end and stride need one entry per axis")
    if any(s == 0 for s in stride):
        raise ValueError("stride 0")
    view = x[tuple(slice(b, e, s) for b, e, s in zip(begin, end, stride))]
    if view.shape != out.shape:
        raise ValueError(f"out shape {out.shape}, expected {view.shape}")
    copy(view, out)


def fill(out, value):
    """Every element of out = value, converted to out's dtype by the `cast` rules (`cnnlFill_v3`)."""
    check_dtype("out", out, ALL_DTYPES)
    source = np.asarray(value)
    if source.ndim != 0 or source.dtype.kind not in "biuf":
        raise TypeError(f"fill value must be a real number, got {value!r}")
    scalar = np.empty((), out.dtype)
    cast_block(source.astype(np.float64) if source.dtype.kind == "f" else source, scalar)
    run_elementwise(_copy_block, out, [scalar], staged=False)


def _select_block(out, condition, a, b):
    truth = condition if condition.dtype == BOOL else load(condition) != 0
    np.copyto(out, np.where(truth, a, b))


def select(condition, a, b, out):
    """out = a where condition is nonzero, else b (`cnnlSelect` / where), all three broadcasting to out."""
    check_same_dtype(a=a, b=b, out=out)
    check_dtype("condition", condition, ALL_DTYPES)
    check_dtype("a", a, ALL_DTYPES)
    run_elementwise(_select_block, out, [condition, a, b], staged=True)
