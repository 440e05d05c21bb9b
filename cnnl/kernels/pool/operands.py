"""The operands of a pooling kernel: inputs as read-only flat arrays in the compute dtype, outputs as writable flat
arrays laid out as their view (the view's own memory when it can be), and the blocks of work the cores share."""
import numpy as np

from ..cast import cast
from ..parallel import even_ranges, map_parallel, thread_count

#: pooling problems of at most this many elements run in one block on the calling thread: each block costs a thread
#: the GIL, and a thread that finds it taken waits to be woken, more than a second core saves below this size
#: (docs/cnnl_pooling.md)
INLINE_ELEMENTS = 1 << 19


def flat_memory(view):
    """(1-D view of view's memory, element strides) when that memory is dense in some order of the axes, else
    None."""
    if view.size == 0:
        return None
    order = sorted(range(view.ndim), key=lambda axis: -view.strides[axis] if view.shape[axis] > 1 else 0)
    dense = view.transpose(order)
    if not dense.flags.c_contiguous:
        return None
    strides = tuple(s // view.itemsize if n > 1 else 0 for s, n in zip(view.strides, view.shape))
    return dense.reshape(-1), strides


def source_operand(view, dtype, avoid=(), force=False):
    """(read-only flat array in `dtype`, element strides) of an input view, copied when it overlaps `avoid`;
    `force`: a C-contiguous copy."""
    found = None if force else flat_memory(view)
    if found is None or any(np.may_share_memory(view, other) for other in avoid if other is not None):
        view = np.ascontiguousarray(view) if found is None else view.copy(order="K")
        found = flat_memory(view)
    flat, strides = found
    if flat.dtype != dtype:
        converted = np.empty(flat.shape, dtype)
        cast(flat, converted)
        flat = converted
    flat = flat.view()
    flat.flags.writeable = False
    return flat, strides


class Target:
    """A writable flat array in `dtype` laid out as output view `view` (the view's own memory when it can be),
    holding the view's values when `read`; `finish()` stores it into the view. `force`: C-contiguous staging."""

    def __init__(self, view, dtype, read, force=False):
        self.view = view
        found = None if force else flat_memory(view)
        if found is not None and view.dtype == dtype:
            self.flat, self.strides = found
            self.staged = None
            return
        if found is None:
            staged = np.empty(view.shape, dtype)
            self.staged, self.strides = staged, tuple(s // staged.itemsize for s in staged.strides)
            self.flat = staged.reshape(-1)
            if read:
                cast(view, staged)
        else:
            memory, self.strides = found
            self.flat = np.empty(memory.shape, dtype)
            self.staged = memory
            if read:
                cast(memory, self.flat)

    def finish(self):
        if self.staged is None:
            return
        if self.staged.ndim == 1:
            cast(self.flat, self.staged)
        else:
            cast(self.staged, self.view)


def blocks(units, elements):
    """(lo, hi) unit ranges: one when the problem is small, else a few per thread."""
    if elements <= INLINE_ELEMENTS or units <= 1:
        return [(0, units)]
    return even_ranges(units, 4 * thread_count())


def run_blocks(fn, ranges):
    """[fn(lo, hi) for each range]: on the calling thread for one range, else shared over the cores."""
    if len(ranges) == 1:
        return [fn(*ranges[0])]
    return map_parallel(lambda block: fn(*block), ranges)


def layout_of(strides, shape):
    """"channels" (C innermost, C > 1), "width" (W innermost) or None, from element strides (N, H, W, C)."""
    if shape[3] > 1 and strides[3] == 1:
        return "channels"
    if shape[3] == 1 or strides[2] == 1 or shape[2] == 1:
        return "width" if strides[2] == 1 or shape[2] == 1 else None
    return None


def as_rows(flat, strides, shape, layout):
    """flat as a 2-D array of rows (channel vectors or width rows) and the (N, H, W, C) strides in rows."""
    width = shape[3] if layout == "channels" else shape[2]
    inner = 3 if layout == "channels" else 2
    return flat.reshape(-1, width), tuple(0 if axis == inner else s // width for axis, s in enumerate(strides))
