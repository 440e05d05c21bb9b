"""Pairwise p-norm distances and their gradient (`cnnlCdistForward`, `cnnlCdistBackward`), PyTorch's cdist:

    out[b, i, j] = (sum_k |x1[b, i, k] - x2[b, j, k]|^p)^(1/p)    (p = 0: count of nonzero differences;
                                                                     p = inf: largest |difference|)
    grad_x1[b, i] = sum_j g[b, i, j] * f(x1_i - x2_j, out_ij) with f = 0 (p = 0), sign(d) (p = 1),
                    d |d|^(p-2) / out^(p-1) (other p; 0 where out is 0), sign(d) [|d| = out] (p = inf).

p = 2 runs on the host BLAS (|a|^2 + |b|^2 - 2 a.b, clamped at 0, then the square root; the gradient as two
products), every other p in a nogil numba kernel over rows of x1, both spread over the kernel thread pool per batch
item. Computation in float32 (float64 for double), one rounding into the output.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from mlusim.host import blas as blas_threads
from .dtypes import compute_dtype
from .parallel import map_parallel, thread_count
from .staging import load, readonly_contiguous, store

_ZERO, _ONE, _INF, _GENERAL = 0, 1, 2, 3


def _kind(p):
    if p == 0:
        return _ZERO
    if p == 1:
        return _ONE
    if math.isinf(p):
        return _INF
    return _GENERAL


@njit(nogil=True, cache=True)
def _distances(a, b, kind, p, out):
    rows, cols, depth = a.shape[0], b.shape[0], a.shape[1]
    for i in range(rows):
        for j in range(cols):
            acc = a[i, 0] - a[i, 0]
            for k in range(depth):
                d = abs(a[i, k] - b[j, k])
                if kind == _ZERO:
                    acc += 1.0 if d != 0 else 0.0
                elif kind == _ONE:
                    acc += d
                elif kind == _INF:
                    acc = max(acc, d)
                else:
                    acc += d ** p
            out[i, j] = acc ** (1.0 / p) if kind == _GENERAL else acc


@njit(nogil=True, cache=True)
def _gradient(a, b, dist, grad, kind, p, out):
    rows, cols, depth = a.shape[0], b.shape[0], a.shape[1]
    for i in range(rows):
        for k in range(depth):
            out[i, k] = 0.0
        for j in range(cols):
            g, r = grad[i, j], dist[i, j]
            if kind == _ZERO or r == 0:
                continue
            for k in range(depth):
                d = a[i, k] - b[j, k]
                if d == 0:
                    continue
                s = 1.0 if d > 0 else -1.0
                if kind == _ONE:
                    out[i, k] += g * s
                elif kind == _INF:
                    out[i, k] += g * s if abs(d) == r else 0.0
                else:
                    out[i, k] += g * s * abs(d) ** (p - 1) / r ** (p - 1)


def _row_blocks(rows):
    step = max(1, -(-rows // (2 * thread_count())))
    return [slice(start, min(start + step, rows)) for start in range(0, rows, step)]


def cdist(x1, x2, p, out):
    """out (B, R1, R2) = the p-norm distances between the rows of x1 (B, R1, M) and x2 (B, R2, M)."""
    if out.size == 0:
        return
    dtype = compute_dtype(x1.dtype)
    result = np.empty(out.shape, dtype)
    if x1.shape[2] == 0:
        result[...] = 0
        store(result, out)
        return
    kind = _kind(p)
    items = [(n, rows) for n in range(x1.shape[0]) for rows in _row_blocks(x1.shape[1])]
    a_all, b_all = load(x1, dtype), load(x2, dtype)

    def run(item):
        n, rows = item
        a, b = readonly_contiguous(a_all[n, rows]), readonly_contiguous(b_all[n])
        if p == 2:
            with blas_threads.single_threaded_blas():
                squared = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2 * (a @ b.T)
            np.sqrt(np.maximum(squared, 0, out=squared), out=result[n, rows])
        else:
            block = np.empty((a.shape[0], b.shape[0]), dtype)
            _distances(a, b, kind, float(p), block)
            result[n, rows] = block

    map_parallel(run, items)
    store(result, out)


def cdist_backward(x1, x2, dist, grad, p, out):
    """out (B, R1, M) = the gradient of cdist with respect to x1, from the distances `dist` and their gradient."""
    if out.size == 0:
        return
    dtype = compute_dtype(x1.dtype)
    result = np.zeros(out.shape, dtype)
    kind = _kind(p)
    items = [(n, rows) for n in range(x1.shape[0]) for rows in _row_blocks(x1.shape[1])]
    a_all, b_all, r_all, g_all = (load(v, dtype) for v in (x1, x2, dist, grad))

    def run(item):
        n, rows = item
        a, b = readonly_contiguous(a_all[n, rows]), readonly_contiguous(b_all[n])
        r, g = readonly_contiguous(r_all[n, rows]), readonly_contiguous(g_all[n, rows])
        if p == 2:
            with np.errstate(divide="ignore", invalid="ignore"):
                weights = np.where(r == 0, 0, g / r)
            with blas_threads.single_threaded_blas():
                result[n, rows] = a * weights.sum(1)[:, None] - weights @ b
        elif kind != _ZERO and b.shape[0]:
            block = np.empty(a.shape, dtype)
            _gradient(a, b, r, g, kind, float(p), block)
            result[n, rows] = block

    map_parallel(run, items)
    store(result, out)
