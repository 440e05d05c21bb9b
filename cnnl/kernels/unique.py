"""Unique elements or slices (`cnnlUnique_v2`, torch.unique): sorted ascending, or in the order of first
occurrence (forward) or its reverse.

Values are compared in the compute dtype (float32 for half/bfloat16, exact) with PyTorch's rules: NaNs are all
distinct and sort last, -0.0 equals 0.0 (the first occurrence is kept), slices along `dim` compare
lexicographically. The results are packed at the start of their buffers: the unique values (or slices, as a dense
tensor whose `dim` has the unique count), the counts; `number` receives the unique count.
"""
import numpy as np

from .dtypes import BOOL, compute_dtype
from .staging import load

SORTS = ("ascend", "forward", "reverse")


def _keys(x):
    """Values whose order and equality are x's, in a dtype numpy sorts natively."""
    if x.dtype == BOOL:
        return x.view(np.uint8)
    return load(x) if x.dtype != compute_dtype(x.dtype) else x


def unique(x, dim, sort, number, output, inverse=None, counts=None):
    """Unique values of x (dim None: flattened) or slices along `dim`. `output` and `counts` are dense buffers large
    enough for every element / slice (the results fill their start); `inverse` (x's shape, or [x.shape[dim]])
    receives each element's or slice's position in the result; `number` (1 element) the unique count."""
    if sort not in SORTS:
        raise ValueError(f"unknown unique order {sort!r}")
    keys = _keys(x)
    if x.size == 0:
        number[...] = 0
        return
    if dim is None:
        flat = keys.reshape(-1)
        _, first, where, tally = np.unique(flat, return_index=True, return_inverse=True, return_counts=True,
                                           equal_nan=False)
    else:
        _, first, where, tally = np.unique(keys, axis=dim, return_index=True, return_inverse=True,
                                           return_counts=True, equal_nan=False)
    where = where.reshape(-1)
    if sort != "ascend":  # renumber the sorted uniques by first occurrence (or its reverse)
        order = np.argsort(first, kind="stable")
        if sort == "reverse":
            order = order[::-1]
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        first, tally, where = first[order], tally[order], rank[where]
    n = first.size
    values = x.reshape(-1)[first] if dim is None else np.take(x, first, axis=dim)
    number[...] = n
    output.reshape(-1)[:values.size] = values.reshape(-1)
    if inverse is not None:
        np.copyto(inverse, where.reshape(inverse.shape), casting="unsafe")
    if counts is not None:
        np.copyto(counts.reshape(-1)[:n], tally, casting="unsafe")
