"""Standard deviation, variance and mean over a set of axes (`cnnlStdVarMean`, torch.std / var / std_mean /
var_mean with correction 0 or 1).

Two passes in float64 for every floating type (the mean, then the sum of squared deviations), rounded once into
each output (as torch, which accumulates these in double; the mean of elements holding an infinity is NaN unless the
infinity is the only one and comes last, as torch's running mean gives); blocks of output positions run on both cores. N - correction <= 0 gives NaN (0/0) or inf, as PyTorch;
an empty reduction gives NaN everywhere.
"""
import numpy as np

from .parallel import run_blocked
from .staging import load, store


def _block(axes, correction, count, std, var, mean, x):
    values = load(x).astype(np.float64, copy=False)
    with np.errstate(all="ignore"):
        average = values.mean(axis=axes, keepdims=True)
        infinite = np.isinf(average)
        if infinite.any():
            average[infinite & ~_lone_last_infinity(values, axes)] = np.nan
        spread = np.square(values - average).sum(axis=axes, keepdims=True) / (count - correction)
        if mean is not None:
            store(average, mean)
        if var is not None:
            store(spread, var)
        if std is not None:
            store(np.sqrt(spread), std)


def _lone_last_infinity(values, axes):
    """Keepdims mask: the only infinity of the reduced elements is their last (C order over `axes`). torch's
    var/std/mean run Welford's update over the elements in that order: an infinity followed by any element gives
    inf - inf, so the mean is NaN, except where the infinity comes last, which leaves it +-inf."""
    moved = np.moveaxis(values, axes, tuple(range(values.ndim - len(axes), values.ndim)))
    rows = moved.reshape(moved.shape[:values.ndim - len(axes)] + (-1,))
    lone = (np.isinf(rows).sum(axis=-1) == 1) & np.isinf(rows[..., -1])
    shape = tuple(1 if d in axes else n for d, n in enumerate(values.shape))
    return lone.reshape(shape)


def std_var_mean(x, axes, correction, std=None, var=None, mean=None):
    """Write std, var and/or mean (keepdims-shaped arrays, or None) of x over `axes`."""
    outputs = [a for a in (std, var, mean) if a is not None]
    if not outputs:
        raise ValueError("std_var_mean needs an output")
    count = int(np.prod([x.shape[a] for a in axes]))
    if count == 0:
        for out in outputs:
            out[...] = np.nan
        return
    slots = [std is not None, var is not None, mean is not None]

    def block(*blocks):
        it = iter(blocks[:-1])
        picked = [next(it) if present else None for present in slots]
        _block(tuple(axes), correction, count, *picked, blocks[-1])

    run_blocked(block, x.shape, outputs + [x], whole_axes=tuple(axes))
