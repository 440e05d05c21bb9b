"""Complex numbers from polar coordinates (`cnnlPolar`): out = abs * (cos(angle) + i sin(angle)), written as the
real and imaginary parts of the complex output (two strided views); abs and angle broadcast to the output.
half computes in float32 and rounds once; blocks run on the kernel thread pool."""
from __future__ import annotations

import numpy as np

from .dtypes import compute_dtype
from .parallel import align_ndim, detach_inputs, run_blocked
from .staging import load, store


def _block(real, imag, radius, angle):
    dtype = compute_dtype(real.dtype)
    r, a = load(radius, dtype), load(angle, dtype)
    store(r * np.cos(a), real)
    store(r * np.sin(a), imag)


def polar(radius, angle, real, imag):
    """real, imag = radius * cos(angle), radius * sin(angle)."""
    if real.size == 0:
        return
    radius, angle = detach_inputs(real, radius, angle)
    radius, angle = detach_inputs(imag, radius, angle)
    run_blocked(_block, real.shape, [real, imag, align_ndim(radius, real.ndim), align_ndim(angle, real.ndim)])
