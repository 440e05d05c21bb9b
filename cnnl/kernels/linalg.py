"""QR decomposition (`cnnlQR`): A = Q R for a batch of (m, n) matrices, Householder QR on the host LAPACK (the
factorisation PyTorch's CPU linalg.qr uses, so signs agree: R's diagonal may be negative). Reduced: Q (m, k),
R (k, n) with k = min(m, n); complete: Q (m, m), R (m, n). half/bfloat16 factor in float32 and round once."""
from __future__ import annotations

import numpy as np

from .dtypes import compute_dtype
from .staging import load, store


def qr(a, q, r, reduced=True):
    """q, r = the QR decomposition of every matrix of a (..., m, n)."""
    if q.size == 0 and r.size == 0:
        return
    dtype = compute_dtype(a.dtype)
    values = np.array(load(a, dtype), dtype)
    factors = np.linalg.qr(values, mode="reduced" if reduced else "complete")
    store(factors.Q.astype(dtype, copy=False), q)
    store(factors.R.astype(dtype, copy=False), r)
