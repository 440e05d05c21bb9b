"""Sampling from the counter-based stream of `cnnl.kernels.random`: discrete uniform integers
(`cnnlRandGenerateDescreteUniform`) and multinomial draws (`cnnlRandGenerateMultinomial_v2`).

Both consume uniforms u in [0, 1) of the stream (seed, offset) in order and return the offset after the call.
Discrete uniform: floor(low + u * (high - low)), at most high - 1. Multinomial over the non-negative weights of each
row (row r uses the r-th run of numbers): with replacement, sample s of row r is the first class whose cumulative
weight exceeds u * total (numbers r * S + s); without replacement, the S classes with the largest
w / -log(1 - u) (an exponential race, the rule of PyTorch's CPU sampler; numbers r * C + c), in decreasing order of
that key. Rows of logits are softmax-normalised first. A row with a negative, NaN or infinite weight, no positive
weight, or fewer positive weights than samples without replacement is a ValueError.
"""
from __future__ import annotations

import numpy as np

from . import random as R
from .staging import store


def discrete_uniform(seed, offset, out, low, high):
    """Fill out (1-D) with integers in [low, high) (stored in out's type); returns the next offset."""
    values = np.empty(out.size, np.float64)
    next_offset = R.uniform(seed, offset, values, 0.0, 1.0)
    np.floor(low + values * (high - low), out=values)
    np.minimum(values, high - 1, out=values)
    store(values.reshape(out.shape), out)
    return next_offset


def _probabilities(x, logits):
    weights = np.array(x, np.float64, ndmin=2)
    if logits:
        weights = np.exp(weights - weights.max(axis=1, keepdims=True))
    bad = ~np.isfinite(weights) | (weights < 0)
    if bad.any():
        raise ValueError("multinomial weights must be finite and non-negative")
    if (weights.sum(axis=1) <= 0).any():
        raise ValueError("a multinomial row has no positive weight (sum of probabilities <= 0)")
    return weights


def multinomial_numbers(rows, classes, samples, replacement):
    """How many uniforms one call consumes."""
    return rows * (samples if replacement else classes)


def multinomial(seed, offset, x, out, replacement, logits=False):
    """out (rows, samples) or (samples,) = class indices drawn from the rows of x; returns the next offset."""
    weights = _probabilities(x, logits)
    rows, classes = weights.shape
    samples = out.shape[-1]
    draws = np.empty(multinomial_numbers(rows, classes, samples, replacement), np.float64)
    next_offset = R.uniform(seed, offset, draws, 0.0, 1.0) if draws.size else offset
    result = np.empty((rows, samples), np.int64)
    if replacement:
        cumulative = np.cumsum(weights, axis=1)
        last = classes - 1 - np.argmax(weights[:, ::-1] > 0, axis=1)  # the last class with weight
        targets = draws.reshape(rows, samples) * cumulative[:, -1:]
        for r in range(rows):
            result[r] = np.minimum(np.searchsorted(cumulative[r], targets[r], side="right"), last[r])
    else:
        if (np.count_nonzero(weights, axis=1) < samples).any():
            raise ValueError(f"cannot draw {samples} samples without replacement from rows with fewer positive "
                             f"weights")
        with np.errstate(divide="ignore", invalid="ignore"):
            keys = np.where(weights > 0, weights / -np.log1p(-draws.reshape(rows, classes)), -np.inf)
        order = np.argsort(-keys, axis=1, kind="stable")
        result[...] = order[:, :samples]
    store(result.reshape(out.shape), out)
    return next_offset
