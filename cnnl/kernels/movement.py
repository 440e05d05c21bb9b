"""Data movement: strided copy, transpose, concat, split, strided slice, fill and select (where).

All of them move values without changing them (fill converts its scalar with the `cast` rules), work on any
strides including broadcast zero strides on inputs, and copy in parallel blocks.
"""
import numpy as np
from numba import njit
from numpy.lib.stride_tricks import as_strided

from .cast import cast_block
from .dtypes import ALL_DTYPES, BOOL, check_dtype, check_same_dtype
from .elementwise import run_elementwise
from . import parallel
from .parallel import detach_inputs, even_ranges, map_parallel, thread_count
from .staging import load

#: edge of the square tiles a transposing copy moves at a time, by element size (a source and a destination tile of
#: 64 to 256 KiB: they stay in L2), each moved as 8 x 8 blocks (see _copy_tiles)
TILES = {1: 256, 2: 256, 4: 256, 8: 128}
#: the unsigned type of each element size: a transposing copy moves bits, so one compiled kernel per size
_BITS = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
#: transposing copies smaller than this many elements are left to numpy (its strided copy is as fast there)
TILED_MIN_ELEMENTS = 1 << 10


def _copy_block(dst, src):
    np.copyto(dst, src)


@njit(nogil=True, cache=True)
def _copy_tiles(src, dst, tile):
    """dst[b, i, j] = src[b, i, j], walking square tiles of (i, j): src is contiguous along i, dst along j. Inside a
    tile the copy goes by 8 x 8 blocks, whose fixed loops LLVM turns into register transposes (a plain loop over
    the tile reads a new cache line, often in the same cache set, per element: 2.3x slower than torch's)."""
    batches, rows, columns = dst.shape
    for b in range(batches):
        source, target = src[b], dst[b]
        for i0 in range(0, rows, tile):
            i1 = min(i0 + tile, rows)
            whole_i = i0 + (i1 - i0) // 8 * 8
            for j0 in range(0, columns, tile):
                j1 = min(j0 + tile, columns)
                whole_j = j0 + (j1 - j0) // 8 * 8
                for i in range(i0, whole_i, 8):
                    for j in range(j0, whole_j, 8):
                        for jj in range(8):
                            for ii in range(8):
                                target[i + ii, j + jj] = source[i + ii, j + jj]
                for i in range(i0, whole_i):  # the tile's last columns, then its last rows
                    for j in range(whole_j, j1):
                        target[i, j] = source[i, j]
                for i in range(whole_i, i1):
                    for j in range(j0, j1):
                        target[i, j] = source[i, j]


def _merge_leading(src, dst):
    """(src, dst) with their leading axes (all but the last two) merged into one batch axis, or None when the
    strides do not allow it without a copy."""
    shape, src_strides, dst_strides = list(src.shape[:-2]), list(src.strides[:-2]), list(dst.strides[:-2])
    if not shape:
        return src[None], dst[None]
    n, s, d = shape[-1], src_strides[-1], dst_strides[-1]
    for axis in range(len(shape) - 2, -1, -1):
        if src_strides[axis] != s * n or dst_strides[axis] != d * n:
            return None
        n *= shape[axis]
    view_shape = (n,) + src.shape[-2:]
    return (as_strided(src, view_shape, (s,) + src.strides[-2:], writeable=False),
            as_strided(dst, view_shape, (d,) + dst.strides[-2:]))


def _transposing_copy(src, dst):
    """dst = src by tiles when dst's last axis is contiguous but src's is not and another axis of src is (a
    transpose); True when done, False to leave the copy to numpy."""
    size = dst.itemsize
    if dst.size < TILED_MIN_ELEMENTS or dst.ndim < 2 or size not in _BITS or dst.strides[-1] != size \
            or src.strides[-1] == size or src.shape != dst.shape:
        return False
    inner = [d for d in range(dst.ndim - 1) if src.strides[d] == size and dst.shape[d] > 1]
    if not inner:
        return False
    src, = detach_inputs(dst, src)
    bits = _BITS[size]
    src = np.moveaxis(src.view(bits), inner[0], -2)
    dst = np.moveaxis(dst.view(bits), inner[0], -2)
    merged = _merge_leading(src, dst)
    if merged is None:  # rare: loop over the leading index space, each a batch of one
        for index in np.ndindex(*src.shape[:-2]):
            _tile_copy_parallel(src[index][None], dst[index][None])
    else:
        _tile_copy_parallel(*merged)
    return True


def _tile_copy_parallel(src, dst):
    src = src.view()
    src.flags.writeable = False  # one numba specialisation per element size
    batches, rows, _ = dst.shape
    tile = TILES[dst.itemsize]
    threads = thread_count()
    if dst.size <= parallel.INLINE_ELEMENTS or threads == 1:
        _copy_tiles(src, dst, tile)
        return
    if batches >= threads:
        pieces = [(slice(a, b), slice(None)) for a, b in even_ranges(batches, threads)]
    else:
        tiles = even_ranges(-(-rows // tile), threads)
        pieces = [(slice(None), slice(a * tile, min(b * tile, rows))) for a, b in tiles]
    map_parallel(lambda piece: _copy_tiles(src[piece], dst[piece], tile), pieces)


def copy(src, dst):
    """dst = src (`cnnlCopy`): same dtype, any strides on both sides; src may broadcast to dst."""
    check_same_dtype(src=src, dst=dst)
    check_dtype("src", src, ALL_DTYPES)
    if _transposing_copy(src, dst):
        return
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
    inputs = detach_inputs(out, *inputs)  # an input overlapping out is copied before any piece is written
    if out.size <= parallel.INLINE_DIRECT_ELEMENTS:  # small: one numpy call on this thread
        np.concatenate(inputs, axis=axis, out=out)
        return
    for piece, index in zip(inputs, _axis_slices(out.ndim, axis, [p.shape[axis] for p in inputs])):
        copy(piece, out[index])


def split(x, axis, outputs):
    """Each of `outputs` receives its consecutive piece of x along `axis` (`cnnlSplit`)."""
    axis = _check_pieces(outputs, x, axis)
    for piece in outputs:  # an x overlapping an output is copied before any output is written
        x, = detach_inputs(piece, x)
    small = x.size <= parallel.INLINE_DIRECT_ELEMENTS  # small: plain numpy copies on this thread
    for piece, index in zip(outputs, _axis_slices(x.ndim, axis, [p.shape[axis] for p in outputs])):
        if small:
            np.copyto(piece, x[index])
        else:
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
    if source.ndim == 0 and source.dtype == out.dtype:
        scalar = source  # already an element of out (the op converted the caller's number)
    else:
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
