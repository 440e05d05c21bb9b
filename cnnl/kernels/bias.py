"""The bias gradient (`cnnlBiasAddBackward_v2`): the sum over every axis but one, per index of that axis.

The kept axis goes last and the rest merge into rows; chunks of rows are loaded in the compute dtype, summed down
the rows in float64 (integers in int64) on both cores, and the chunk sums added and rounded once into the output.
"""
import numpy as np

from .dtypes import is_int
from .parallel import STAGED_BLOCK, map_parallel
from .staging import load, store


def bias_gradient(dy, axis, out):
    """out (one element per index of `axis`, any dims) = dy summed over all other axes."""
    channels = dy.shape[axis]
    accumulator = np.int64 if is_int(dy.dtype) else np.float64
    rows = np.moveaxis(dy, axis, -1).reshape(-1, channels)
    if rows.shape[0] == 0:
        np.copyto(out, 0)
        return
    step = max(1, STAGED_BLOCK // max(channels, 1))

    def chunk(start):
        return load(rows[start:start + step]).sum(axis=0, dtype=accumulator)

    total = np.sum(map_parallel(chunk, range(0, rows.shape[0], step)), axis=0, dtype=accumulator)
    if is_int(dy.dtype):
        np.copyto(out, total.reshape(out.shape), casting="unsafe")  # integers wrap
    else:
        store(total.reshape(out.shape), out)
