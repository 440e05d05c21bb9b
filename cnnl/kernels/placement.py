"""Ops that put input elements at new places (or zero them): roll, flip, tile and the triangle masks
(`cnnlRoll`, `cnnlFlip`, `cnnlTile`, `cnnlTri`). Values move unchanged, on any strides, as parallel strided copies
(`movement.copy`) of views of the input: a flip is one copy of a reversed view, a roll along k axes is 2**k block
copies, a tile is one copy of the input broadcast into a view of the output split into (repeat, extent) axes.
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from .movement import copy, select


def _flat(array):
    """A 1-D view of `array` in row-major order, or None when its strides do not allow one."""
    view = array.view()
    try:
        view.shape = (-1,)
    except AttributeError:
        return None
    return view


def _roll_axes(x, shifts, axes, out):
    pieces = [()]
    for shift, axis in zip(shifts, axes):
        n = x.shape[axis]
        shift %= n
        split = [(slice(0, n - shift), slice(shift, n)), (slice(n - shift, n), slice(0, shift))]
        pieces = [piece + ((axis,) + part,) for piece in pieces for part in split if part[0].stop > part[0].start]
    for piece in pieces:
        source, target = [slice(None)] * x.ndim, [slice(None)] * x.ndim
        for axis, src, dst in piece:
            source[axis], target[axis] = src, dst
        copy(x[tuple(source)], out[tuple(target)])


def _roll_dense(x, shift, axis, out):
    """Roll dense x into dense out along one axis as one shifted copy of the flattened data plus a patch of the
    elements that wrapped into the wrong outer block: a row-by-row copy at an unaligned offset (a roll along the
    last axis) runs several times slower than one long copy. True when done this way."""
    flat_x, flat_out = _flat(x), _flat(out)
    if flat_x is None or flat_out is None:
        return False
    n = x.shape[axis]
    outer, inner = int(np.prod(x.shape[:axis])), int(np.prod(x.shape[axis + 1:]))
    shift %= n
    if shift == 0:
        copy(flat_x, flat_out)
        return True
    blocks_x, blocks_out = x.reshape(outer, n, inner), out.reshape(outer, n, inner)
    if shift <= n // 2:  # elements move right; the first `shift` slices of every outer block wrap
        copy(flat_x[:x.size - shift * inner], flat_out[shift * inner:])
        copy(blocks_x[:, n - shift:], blocks_out[:, :shift])
    else:  # elements move left by n - shift; the last slices wrap
        back = n - shift
        copy(flat_x[back * inner:], flat_out[:x.size - back * inner])
        copy(blocks_x[:, :back], blocks_out[:, n - back:])
    return True


def roll(x, shifts, axes, out):
    """out = torch.roll(x, shifts, axes); `axes` None rolls the flattened tensor by shifts[0]."""
    if x.size == 0:
        return
    if np.may_share_memory(x, out):  # even the identical view: elements move between blocks
        x = x.copy()
    if axes is not None:
        totals = {}
        for shift, axis in zip(shifts, axes):  # repeated axes add up, as in torch
            totals[axis] = totals.get(axis, 0) + shift
        if len(totals) == 1:
            (axis, shift), = totals.items()
            if _roll_dense(x, shift, axis, out):
                return
        _roll_axes(x, list(totals.values()), list(totals), out)
        return
    flat_out = _flat(out)
    flat_x = x.reshape(-1)
    if flat_out is not None:
        _roll_axes(flat_x, shifts[:1], [0], flat_out)
        return
    staged = np.empty(x.size, x.dtype)
    _roll_axes(flat_x, shifts[:1], [0], staged)
    copy(staged.reshape(out.shape), out)


def flip(x, axes, out):
    """out = x reversed along `axes`."""
    index = [slice(None)] * x.ndim
    for axis in axes:
        index[axis] = slice(None, None, -1)
    copy(x[tuple(index)], out)


def tile(x, out):
    """out = x repeated out.shape[i] // x.shape[i] times along each axis (same rank)."""
    if out.size == 0:
        return
    shape, strides, source = [], [], []
    for n_in, n_out, stride in zip(x.shape, out.shape, out.strides):
        shape += [n_out // n_in, n_in]
        strides += [stride * n_in, stride]
        source += [1, n_in]
    target = as_strided(out, shape, strides)
    copy(x.reshape(source), target)


def tri(x, diagonal, upper, out):
    """out = triu(x, diagonal) if upper else tril(x, diagonal), over the last two axes."""
    rows, columns = x.shape[-2:]
    below_or_on = np.tri(rows, columns, diagonal if not upper else diagonal - 1, dtype=bool)
    keep = below_or_on if not upper else ~below_or_on
    select(keep, x, np.zeros((), x.dtype), out)
