"""Split an op's index space into blocks and run them on a small pool of host threads.

Every kernel in this package is a *block function*: a call that does one op on numpy views of one block of its
operands, using numpy ufuncs (which release the GIL) and a few `nogil` numba kernels. `run_blocked` cuts the
index space along the outer axes so that each block is either large (ops that write straight into the output) or
about `STAGED_BLOCK` elements (ops that need temporaries, which then stay in the core's L2 cache), and hands each
thread one contiguous run of blocks (`mlusim.host.parallel.map_parallel`). This gives both host cores to every large op without compiling a separate
parallel kernel per op and dtype, which keeps numba compile time (paid by every cold test run) small.
"""
import math

import numpy as np

from mlusim.host.parallel import INLINE_DIRECT_ELEMENTS, INLINE_ELEMENTS, even_ranges, map_parallel, thread_count
from mlusim.host.parallel import run_inline as _run_inline

#: elements per block for ops that stage data through temporaries (64K floats = 256 KiB, fits in L2)
STAGED_BLOCK = 1 << 16


def align_ndim(array, ndim):
    """View `array` with leading size-1 axes added up to `ndim` axes (numpy broadcasting alignment)."""
    array = np.asarray(array)
    if array.ndim > ndim:
        raise ValueError(f"operand of shape {array.shape} has more axes than the output ({ndim})")
    return array.reshape((1,) * (ndim - array.ndim) + array.shape)


def check_broadcast(out_shape, *shapes):
    """Raise ValueError unless every shape broadcasts to exactly `out_shape`."""
    try:
        result = np.broadcast_shapes(out_shape, *shapes)
    except ValueError as exc:
        raise ValueError(f"shapes {shapes} do not broadcast to output shape {out_shape}") from exc
    if tuple(result) != tuple(out_shape):
        raise ValueError(f"shapes {shapes} broadcast to {tuple(result)}, not to output shape {tuple(out_shape)}")


def detach_inputs(out, *inputs):
    """Copy any input that overlaps `out` other than as the identical view, so blocked writes cannot corrupt it."""
    result = []
    for array in inputs:
        if array is not None and not apart_or_same(out, array):
            array = array.copy()
        result.append(array)
    return result


def same_view(a, b):
    """True when a and b are the same view of the same memory (identical data pointer, shape, strides, dtype)."""
    return (a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])



def map_flat_ranges(fn, count, *arrays):
    """[fn(*pieces)] over range(count) cut into one contiguous range per host thread (map_parallel), a piece being
    each flat array's range (a 0-d array is passed whole): for kernels whose work is one GIL-releasing call per
    range (a ufunc on flat views), which run_blocked's generic blocks would wrap in more Python (and more
    hand-overs of the GIL between the threads)."""
    return map_parallel(lambda bounds: fn(*(a[bounds[0]:bounds[1]] if a.ndim else a for a in arrays)),
                        even_ranges(count, thread_count()))


def apart_or_same(out, *inputs) -> bool:
    """True when each input is either apart from `out` or the very view of it: an elementwise pass on one thread
    may then write `out` while reading them. (The bounds test goes first: it is ten times cheaper than reading
    a view's data pointer, and apart is the common case.)"""
    for x in inputs:
        if np.may_share_memory(x, out) and not same_view(x, out):
            return False
    return True


def block_slices(shape, whole_axes=(), block_elements=STAGED_BLOCK):
    """Tuples of slices cutting `shape` into blocks of about `block_elements`, never cutting `whole_axes`."""
    ndim = len(shape)
    whole = {axis % ndim for axis in whole_axes} if ndim else set()
    split_axes = [d for d in range(ndim) if d not in whole]
    inner = math.prod(shape[d] for d in whole)
    cut_axis = None
    for d in reversed(split_axes):
        if inner * shape[d] > block_elements:
            cut_axis = d
            break
        inner *= shape[d]
    full = [slice(None)] * ndim
    if cut_axis is None:
        return [tuple(full)]
    step = max(1, block_elements // inner)
    outer_axes = [d for d in split_axes if d < cut_axis]
    blocks = []
    for index in np.ndindex(*[shape[d] for d in outer_axes]):
        base = list(full)
        for d, i in zip(outer_axes, index):
            base[d] = slice(i, i + 1)
        for start in range(0, shape[cut_axis], step):
            base[cut_axis] = slice(start, min(start + step, shape[cut_axis]))
            blocks.append(tuple(base))
    return blocks


def _slice_operand(operand, block):
    # a size-1 axis of an operand is broadcast against the block, so it is not cut
    # (the trailing Ellipsis keeps a 0-d operand an array rather than a numpy scalar)
    return operand[tuple(s if n != 1 else slice(None) for s, n in zip(block, operand.shape)) + (Ellipsis,)]


def run_blocked(block_fn, shape, operands, whole_axes=(), staged=True):
    """Call `block_fn(*operand_blocks)` for blocks covering `shape`, spread over the thread pool.

    Each operand has `len(shape)` axes, each either equal to `shape`'s or 1 (broadcast; use `align_ndim`); on
    `whole_axes` an operand may have any extent, since those axes are passed whole.
    `whole_axes` are never cut (reduction or scan axes). `staged` asks for cache-sized blocks because the block
    function allocates temporaries; otherwise blocks are large (a few per thread), or, when every operand is dense
    and of the whole shape and no axis is whole, one flat range per thread. Calls made from inside a block
    function run inline, so block functions may use other blocked ops.
    """
    shape = tuple(shape)
    for operand in operands:
        if operand.ndim != len(shape):
            raise ValueError(f"operand with {operand.ndim} axes for a {len(shape)}-axis index space")
    total = math.prod(shape)
    if total == 0:
        return
    if total <= (INLINE_ELEMENTS if staged else INLINE_DIRECT_ELEMENTS):  # one block on this thread, no pool
        _run_inline(block_fn, operands)
        return
    if not staged and not whole_axes and all(op.shape == shape and op.flags.c_contiguous for op in operands):
        # streaming, every operand dense and whole: one range of the flat operands per host thread; the blocks'
        # Python and GIL hand-overs cost more than their balance gains (docs/cnnl_elementwise.md)
        map_flat_ranges(block_fn, total, *(op.reshape(-1) for op in operands))
        return
    threads = thread_count()
    if staged:
        block_elements = STAGED_BLOCK
    else:
        block_elements = max(STAGED_BLOCK, -(-total // (4 * threads)))
    blocks = block_slices(shape, whole_axes, block_elements)
    map_parallel(lambda block: block_fn(*(_slice_operand(op, block) for op in operands)), blocks)
