"""Shared driver for elementwise ops: broadcast checks, aliasing, block size, and the bool-result store."""
import numpy as np

from .cast import cast_block
from .dtypes import BOOL, compute_dtype
from .parallel import align_ndim, check_broadcast, detach_inputs, run_blocked


def stored_in_compute_dtype(*arrays):
    """True when every array is stored in its own compute dtype (no conversion needed to work on it)."""
    return all(a.dtype == compute_dtype(a.dtype) for a in arrays)


def run_elementwise(block_fn, out, inputs, staged):
    """Call `block_fn(out_block, *input_blocks)` over `out`, inputs broadcast against it.

    `staged` says the block function allocates temporaries (it converts dtypes or needs several passes), which asks
    for cache-sized blocks.
    """
    shape = out.shape
    if any(x.shape != shape for x in inputs):
        check_broadcast(shape, *(x.shape for x in inputs))
        inputs = [align_ndim(x, out.ndim) for x in inputs]
    inputs = detach_inputs(out, *inputs)
    if 1 in shape:
        operands = [_drop_unit_axes(a, shape) for a in [out] + inputs]
        shape = tuple(n for n in shape if n != 1)
    else:
        operands = [out] + inputs
    run_blocked(block_fn, shape, operands, staged=staged)


def _drop_unit_axes(array, shape):
    """`array` without the axes where `shape` has extent 1: they hold no extra elements, and fewer axes mean
    fewer, longer inner loops for numpy."""
    index = tuple(0 if n == 1 else slice(None) for n in shape)
    return array[index + (Ellipsis,)]


def store_bool_result(compute_into, out_block):
    """Run `compute_into(buffer)` for a bool result and store it into `out_block` (any dtype: 0 or 1)."""
    if out_block.dtype == BOOL:
        compute_into(out_block)
    else:
        result = np.empty(out_block.shape, BOOL)
        compute_into(result)
        cast_block(result, out_block)
