"""Hypothesis strategies: dtypes, shapes, values, memory layouts (strided, transposed, reversed) and broadcasting."""
import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from ..tolerances import BF16, F16, F32, F64

FLOATS = [F16, BF16, F32, F64]
INTS = [np.dtype(t) for t in (np.int8, np.int16, np.int32, np.int64, np.uint8)]
NUMERIC = FLOATS + INTS
ALL = NUMERIC + [np.dtype(np.bool_)]

#: hypothesis settings for every property test here: modest example counts keep the suite fast
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])

LAYOUTS = ("contiguous", "strided", "transposed", "reversed")


def random_values(rng, shape, dtype, low=-10.0, high=10.0):
    """Random values of `dtype`: floats uniform in [low, high), integers over the whole range, bools 50/50."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(int(info.min), int(info.max), size=shape, dtype=dtype, endpoint=True)
    return rng.uniform(low, high, size=shape).astype(dtype)


def poison(shape, dtype, rng):
    """Output contents a kernel must overwrite: NaN for floats, random bits otherwise."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f" or dtype in (F16, BF16):
        return np.full(shape, np.nan, dtype)
    return random_values(rng, shape, dtype)


def place(values, layout, rng):
    """A view with `values`' shape and contents in the given memory layout (a fresh array underneath)."""
    shape = values.shape
    if layout == "contiguous" or values.ndim == 0:
        view = np.empty(shape, values.dtype)
    elif layout == "strided":
        steps = tuple(int(s) for s in rng.integers(1, 3, size=len(shape)))
        base = np.empty(tuple(n * s for n, s in zip(shape, steps)), values.dtype)
        view = base[tuple(slice(None, None, s) for s in steps)]
    elif layout == "transposed":
        perm = rng.permutation(len(shape))
        base = np.empty(tuple(shape[p] for p in perm), values.dtype)
        view = base.transpose(np.argsort(perm))
    else:
        axis = int(rng.integers(len(shape)))
        view = np.flip(np.empty(shape, values.dtype), axis)
    view[...] = values
    return view


@st.composite
def shapes(draw, min_dims=0, max_dims=4, max_side=6):
    """Array shapes with small sides."""
    return tuple(draw(st.lists(st.integers(1, max_side), min_size=min_dims, max_size=max_dims)))


@st.composite
def rngs(draw):
    """A numpy Generator seeded by hypothesis (values come from it; hypothesis shrinks the seed)."""
    return np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))


@st.composite
def operands(draw, shape, dtype, low=-10.0, high=10.0, rng=None):
    """An input array of `shape` and `dtype` in a drawn memory layout."""
    rng = rng if rng is not None else draw(rngs())
    return place(random_values(rng, shape, dtype, low, high), draw(st.sampled_from(LAYOUTS)), rng)


@st.composite
def outputs(draw, shape, dtype):
    """An output array of `shape` and `dtype` in a drawn memory layout, filled with poison."""
    rng = draw(rngs())
    return place(poison(shape, dtype, rng), draw(st.sampled_from(LAYOUTS)), rng)


@st.composite
def broadcast_operands(draw, out_shape, dtype, low=-10.0, high=10.0):
    """An input that broadcasts to `out_shape`: axes dropped or kept at 1, possibly with explicit zero strides."""
    keep = draw(st.lists(st.booleans(), min_size=len(out_shape), max_size=len(out_shape)))
    shape = tuple(n if k else 1 for n, k in zip(out_shape, keep))
    dropped = draw(st.integers(0, len(shape)))
    shape = shape[dropped:] if all(n == 1 for n in shape[:dropped]) else shape
    array = draw(operands(shape, dtype, low, high))
    if draw(st.booleans()):
        array = np.broadcast_to(array, out_shape)  # zero strides, read-only
    return array
