"""Rotary position embedding (`cnnlRotaryEmbedding`): the two halves x1, x2 of each head vector rotated by the
angles whose cosine and sine are given:

    y1 = x1 * cos - x2 * sin,  y2 = x1 * sin + x2 * cos      (conj: y1 = x1 cos + x2 sin, y2 = -x1 sin + x2 cos)

cos and sin broadcast against x (numpy rules). The halves may be interleaved views of one buffer and the outputs
may alias the inputs (in place): inputs that overlap an output other than as the same view are copied first.
half/bfloat16 compute in float32 and round once; blocks run on the kernel thread pool.
"""
import functools

from .dtypes import compute_dtype
from .parallel import align_ndim, detach_inputs, run_blocked
from .staging import load, store


def _rotate_block(conj, y1, y2, x1, x2, cos, sin):
    dtype = compute_dtype(x1.dtype)
    a, b = load(x1, dtype), load(x2, dtype)
    c, s = load(cos, dtype), load(sin, dtype)
    if conj:
        first, second = a * c + b * s, b * c - a * s
    else:
        first, second = a * c - b * s, a * s + b * c
    store(first, y1)
    store(second, y2)


def rotary_embedding(x1, x2, cos, sin, y1, y2, conj=False):
    """y1, y2 = the rotation of (x1, x2) by (cos, sin) (see the module doc)."""
    if y1.size == 0:
        return
    x1, x2 = detach_inputs(y1, x1, x2)
    x1, x2 = detach_inputs(y2, x1, x2)
    cos, sin = align_ndim(cos, y1.ndim), align_ndim(sin, y1.ndim)
    run_blocked(functools.partial(_rotate_block, bool(conj)), y1.shape, [y1, y2, x1, x2, cos, sin])
