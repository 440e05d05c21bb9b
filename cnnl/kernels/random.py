"""Counter-based random numbers: uniform, normal and dropout masks (`cnnlRandGenerate*`, `cnnlFusedDropout_v2`).

A stream is (seed, offset): the raw 64-bit numbers are Philox4x64-10 outputs for key `seed` starting at counter
`offset` (numpy's Philox bit generator, advanced to the offset), so any call is reproduced exactly from its seed
and offset, independent of earlier calls. Each call consumes a whole number of counter steps (4 raw numbers per
step) and returns the offset after it. Uniform: the top 53 bits of a raw number scaled into [0, 1), then into
[low, high). Normal: Box-Muller on pairs of uniforms. Dropout keeps an element where its uniform is >= p and
scales the kept values by 1 / (1 - p).
"""
import numpy as np

from .dtypes import compute_dtype
from .staging import store

RAW_PER_STEP = 4
_UNIT = 2.0 ** -53


def _raw(seed, offset, count):
    generator = np.random.Philox(key=int(seed) & (2 ** 128 - 1))
    generator.advance(int(offset))
    return generator.random_raw(count) if count else np.empty(0, np.uint64)


def steps(count, normal=False):
    """Counter steps a call drawing `count` numbers consumes (normal numbers come in pairs)."""
    raw = 2 * -(-count // 2) if normal else count
    return -(-raw // RAW_PER_STEP)


def _unit_uniform(bits):
    return (bits >> np.uint64(11)).astype(np.float64) * _UNIT


def uniform(seed, offset, out, low, high):
    """Fill out (1-D) with uniforms in [low, high); returns the next offset."""
    values = _unit_uniform(_raw(seed, offset, out.size))
    store(low + values * (high - low), out)
    return offset + steps(out.size)


def normal(seed, offset, out, mean, std):
    """Fill out (1-D) with normal(mean, std) samples; returns the next offset."""
    pairs = -(-out.size // 2)
    u = _unit_uniform(_raw(seed, offset, 2 * pairs)).reshape(pairs, 2)
    radius = np.sqrt(-2.0 * np.log1p(-u[:, 0]))  # 1 - u lies in (0, 1], so the log is finite
    angle = 2.0 * np.pi * u[:, 1]
    samples = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1).reshape(-1)[:out.size]
    store(mean + std * samples, out)
    return offset + steps(out.size, normal=True)


def dropout(seed, offset, x, p, mask, y):
    """mask = (uniform >= p), y = x * mask / (1 - p) (p = 1: all zero); returns the next offset."""
    keep = _unit_uniform(_raw(seed, offset, x.size)).reshape(x.shape) >= p
    dtype = compute_dtype(x.dtype)
    scale = dtype.type(0 if p >= 1 else 1 / (1 - p))
    values = np.where(keep, x.astype(dtype, copy=False) * scale, dtype.type(0))
    store(values, y)
    store(keep, mask)
    return offset + steps(x.size)
