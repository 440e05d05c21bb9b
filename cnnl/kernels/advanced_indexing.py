"""Advanced indexing (`cnnlAdvancedIndex`, x[indices] with numpy/PyTorch rules), index fill, and the masked
scatter and scale modes of `cnnlMasked_v4` (masked fill and select are `indexing.masked_fill/masked_select`; index
add is `indexing.index_put` with accumulation).

Integer indices are checked when the op runs (the device holds them): out of range fails the op. Advanced
indexing and index fill accept negative indices counted from the end (as PyTorch); a bool/uint8 mask selects the
positions where it is nonzero, so the result's length is only known then: results are packed at the start of the
output and the real dims go to the optional `dims` / `ndim` outputs.
"""
import numpy as np

from .indexing import index_put
from .staging import load, store


def _wrapped(index, extent, what="index"):
    values = np.asarray(index, np.int64)
    if values.size and (values.min() < -extent or values.max() >= extent):
        bad = values[(values < -extent) | (values >= extent)][0]
        raise IndexError(f"{what} {int(bad)} is out of range for an axis of {extent}")
    return np.where(values < 0, values + extent, values)


def advanced_index(x, indices, out, dims=None, ndim=None):
    """out.flat[:n] = x[key].flat, key built from `indices` (one entry per leading axis: None = the whole axis, an
    integer array, or a bool/uint8 mask spanning mask.ndim axes). dims (int64) and ndim (int32) receive the
    result's shape when given."""
    key, axis = [], 0
    for index in indices:
        if index is None:
            key.append(slice(None))
            axis += 1
        elif index.dtype.kind == "b" or index.dtype == np.uint8:
            key.append(np.asarray(index) != 0)
            axis += index.ndim
        else:
            key.append(_wrapped(index, x.shape[axis]))
            axis += 1
    result = x[tuple(key)]
    out.reshape(-1)[:result.size] = result.reshape(-1)
    if dims is not None:
        dims.reshape(-1)[:result.ndim] = result.shape
    if ndim is not None:
        ndim[...] = result.ndim


def index_fill(x, axis, index, value, out):
    """out = x with every slice at `index` along `axis` set to the 0-d `value` (out's dtype)."""
    key = [None] * axis + [_wrapped(index, x.shape[axis])]
    index_put(x, key, np.asarray(value).reshape(()), False, out)


def masked_scatter(x, mask, source, out, count=None):
    """out = x with the positions where mask (broadcast to x) is nonzero taking source's elements in row-major
    order (torch.masked_scatter); `count` (1 element, optional) receives their number."""
    chosen = np.broadcast_to(mask, x.shape) != 0
    n = int(chosen.sum())
    values = source.reshape(-1)
    if values.size < n:
        raise ValueError(f"the mask selects {n} elements but the source holds {values.size}")
    result = np.array(x, copy=True)
    result[chosen] = values[:n]
    np.copyto(out, result)
    if count is not None:
        count[...] = n


def masked_scale(x, mask, scale, out):
    """out = x * mask * scale, computed in x's compute dtype (the dropout-style masked scale)."""
    values = load(x)
    factor = load(np.broadcast_to(mask, x.shape), values.dtype) if mask.dtype != np.bool_ else \
        np.broadcast_to(mask, x.shape)
    with np.errstate(all="ignore"):
        store((values * factor * values.dtype.type(scale)).astype(values.dtype, copy=False), out)
