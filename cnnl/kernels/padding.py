"""Padding: constant (`cnnlPad`, any rank, negative pads crop), reflection and replication along chosen axes
(`cnnlReflectionPad2d`, `cnnlReplicationPad2d`, torch's 'reflect' and 'replicate' modes, negative pads crop too).

A constant pad is one parallel strided copy of the kept part of the input into its place in the output plus
parallel fills of the borders. Reflection and replication map every output position of a padded axis to a source
position (torch's rule: source = position - before, reflected about the input's first and last element, or
clamped to them) and gather along those axes in blocks of the other axes, on both cores.
"""
import numpy as np

from .movement import copy
from .parallel import detach_inputs, run_blocked


def _kept(before, after, n_in, n_out):
    """(source slice, destination slice) of the input part that lands in the output along one axis."""
    start, lo = max(-before, 0), max(before, 0)
    length = max(0, min(n_in - start, n_out - lo))
    return slice(start, start + length), slice(lo, lo + length)


def constant_pad(x, pads, value, out):
    """out = x padded by `pads` ((before, after) per axis; negative values crop) with the 0-d `value` (out's
    dtype)."""
    if len(pads) != x.ndim or out.ndim != x.ndim:
        raise ValueError("one (before, after) pair per axis")
    for (before, after), n_in, n_out in zip(pads, x.shape, out.shape):
        if n_in + before + after != n_out:
            raise ValueError(f"output extent {n_out} != {n_in} + {before} + {after}")
    pieces = [_kept(b, a, n_in, n_out) for (b, a), n_in, n_out in zip(pads, x.shape, out.shape)]
    (x,) = detach_inputs(out, x)
    fill = np.asarray(value, out.dtype).reshape((1,) * out.ndim)
    whole = [slice(None)] * out.ndim
    for axis, (_, kept) in enumerate(pieces):  # borders, full extent on the other axes (corners twice)
        for border in (slice(0, kept.start), slice(kept.stop, out.shape[axis])):
            if border.stop > border.start:
                index = list(whole)
                index[axis] = border
                copy(fill, out[tuple(index)])
    if all(s.stop > s.start for s, _ in pieces):
        copy(x[tuple(s for s, _ in pieces)], out[tuple(d for _, d in pieces)])


def source_positions(mode, before, n_in, n_out):
    """int64 source index of each output position along an axis padded by `before` ('reflect' or 'replicate')."""
    source = np.arange(n_out, dtype=np.int64) - before
    if mode == "replicate":
        return np.clip(source, 0, n_in - 1)
    if n_in == 1:
        return np.zeros(n_out, np.int64)
    period = 2 * (n_in - 1)
    source = np.abs(source) % period  # pads are below n_in, so one reflection at each end is all there is
    return np.where(source >= n_in, period - source, source)


def _gather_block(maps, out, x):
    values = x
    for axis, positions in maps:
        values = np.take(values, positions, axis=axis)
    np.copyto(out, values)


def index_pad(mode, x, axes, pads, out):
    """out = x padded by reflection or replication along `axes` ((before, after) per axis in `pads`)."""
    if mode not in ("reflect", "replicate"):
        raise ValueError(f"unknown pad mode {mode!r}")
    maps = []
    for axis, (before, after) in zip(axes, pads):
        n_in, n_out = x.shape[axis], out.shape[axis]
        if n_in + before + after != n_out or n_in == 0 and n_out:
            raise ValueError(f"axis {axis}: output extent {n_out} does not fit {n_in} + {before} + {after}")
        if mode == "reflect" and (before >= n_in or after >= n_in):
            raise ValueError(f"axis {axis}: reflection pads must be below the input extent {n_in}")
        maps.append((axis, source_positions(mode, before, n_in, n_out)))
    (x,) = detach_inputs(out, x)
    run_blocked(lambda o, i: _gather_block(maps, o, i), out.shape, [out, x], whole_axes=tuple(axes))
