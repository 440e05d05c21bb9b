"""Move a block between its storage dtype and its compute dtype (see `dtypes.compute_dtype`)."""
import numpy as np

from .cast import cast_block
from .dtypes import compute_dtype


def load(block, dtype=None):
    """`block`'s values in `dtype` (default: its compute dtype); the block itself when no conversion is needed."""
    target = compute_dtype(block.dtype) if dtype is None else np.dtype(dtype)
    if block.dtype == target:
        return block
    values = np.empty(block.shape, target)
    cast_block(block, values)
    return values


def store(values, out_block):
    """Round computed `values` once into `out_block` (its storage dtype); a no-op when they are the same array."""
    if values is not out_block:
        cast_block(values, out_block)


def blend_store(result, out_block, alpha=1.0, beta=0.0, bias=None):
    """out = alpha * result + beta * out (+ `bias` over the last axis), rounded once into `out_block`'s storage:
    the epilogue of the ops that take CNNL's alpha and beta. `result` is a compute-dtype scratch (it is
    overwritten) or `out_block` itself."""
    if alpha != 1:
        result *= result.dtype.type(alpha)
    if beta != 0:
        result += load(out_block, result.dtype) * result.dtype.type(beta)
    if bias is not None:
        result += load(bias, result.dtype).reshape(-1)
    store(result, out_block)


def compute_buffer(out_block, read_after_first_write=()):
    """Where to compute a result for `out_block`: the block itself when it is stored in its compute dtype and none
    of `read_after_first_write` (operands a multi-pass computation still reads once it has written its buffer)
    shares memory with it: an in-place call (out the very view of an input) must not overwrite that input early."""
    target = compute_dtype(out_block.dtype)
    if out_block.dtype != target or any(np.may_share_memory(out_block, a) for a in read_after_first_write):
        return np.empty(out_block.shape, target)
    return out_block


def readonly_contiguous(values):
    """A read-only C-contiguous view (or copy) of `values`: the one array type a numba kernel input compiles for,
    whether the caller's array was writable, contiguous or neither."""
    view = np.ascontiguousarray(values).view()
    view.flags.writeable = False
    return view
