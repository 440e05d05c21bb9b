"""The zero-copy reduction kernel (cncl/linereduce.py) against numpy: every dtype and op, ordinary and streaming
stores, any alignment of the buffers and of the range, in place, and nothing written outside the range."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cncl import linereduce

DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float32, np.float64]
OPS = {linereduce.SUM: np.add, linereduce.PROD: np.multiply, linereduce.MAX: np.maximum,
       linereduce.MIN: np.minimum}
SENTINEL = 77


def _values(rng, dtype, size):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        values = rng.standard_normal(size).astype(dtype) * 4
        values[rng.random(size) < 0.02] = np.nan
        values[rng.random(size) < 0.02] = -0.0
        return values
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)


def _buffer(size, dtype, shift):
    """A size-element array starting `shift` elements after a 64-byte boundary, with sentinel neighbours."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.full(size * itemsize + 256, SENTINEL, np.uint8)
    start = (-raw.ctypes.data) % 64 + 64 + shift * itemsize
    return raw, raw[start:start + size * itemsize].view(dtype)


def _reference(inputs, op, start, stop):
    with np.errstate(all="ignore"):
        result = inputs[0][start:stop].copy()
        for other in inputs[1:]:
            result = OPS[op](result, other[start:stop])
    return result


def _check(dtype, op, n_inputs, n_outputs, size, start, stop, shifts, streaming, in_place, seed):
    rng = np.random.default_rng(seed)
    inputs = [_buffer(size, dtype, shifts[k % len(shifts)])[1] for k in range(n_inputs)]
    for array in inputs:
        array[:] = _values(rng, dtype, size)
    outputs_raw = [_buffer(size, dtype, shifts[0]) for _ in range(n_outputs)]
    outputs = [array for _, array in outputs_raw]
    if in_place:  # output 0 is input 0's memory, as in an in-place allReduce
        outputs[0] = inputs[0]
    before = [out.copy() for out in outputs]
    want = _reference([array.copy() for array in inputs], op, start, stop)
    streaming = streaming and linereduce.streamable(tuple(outputs))
    linereduce.reduce_range(tuple(inputs), tuple(outputs), op, start, stop, streaming)
    for out, old in zip(outputs, before):
        np.testing.assert_array_equal(out[start:stop], want)
        np.testing.assert_array_equal(out[:start], old[:start])
        np.testing.assert_array_equal(out[stop:], old[stop:])
    for raw, out in outputs_raw:  # nothing written around the arrays
        outside = np.ones(raw.size, bool)
        offset = out.ctypes.data - raw.ctypes.data
        outside[offset:offset + out.nbytes] = False
        assert (raw[outside] == SENTINEL).all()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("op", list(OPS), ids=["sum", "prod", "max", "min"])
@pytest.mark.parametrize("streaming", [False, True], ids=["cached", "streaming"])
def test_every_dtype_and_op(dtype, op, streaming):
    _check(dtype, op, 2, 2, 1000, 0, 1000, [0], streaming, False, seed=op)


def test_streamable_needs_the_same_line_phase():
    _, first = _buffer(100, np.float32, 0)
    _, same = _buffer(100, np.float32, 0)
    _, shifted = _buffer(100, np.float32, 1)
    assert linereduce.streamable((first, same))
    assert not linereduce.streamable((first, shifted))
    raw = np.zeros(512, np.uint8)
    odd = raw[(-raw.ctypes.data) % 64 + 1:][:400].view(np.float32)  # not on an element boundary of any line
    assert not linereduce.streamable((odd,))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), streaming=st.booleans(), in_place=st.booleans(), op=st.sampled_from(list(OPS)),
       shape=st.sampled_from([(1, 1), (2, 2), (3, 3), (4, 1), (2, 3)]))
def test_any_range_alignment_and_rank_count(data, streaming, in_place, op, shape):
    n_inputs, n_outputs = shape
    size = data.draw(st.integers(1, 700), label="size")
    start = data.draw(st.integers(0, size), label="start")
    stop = data.draw(st.integers(start, size), label="stop")
    shifts = data.draw(st.lists(st.integers(0, 15), min_size=1, max_size=3), label="shifts")
    _check(np.float32, op, n_inputs, n_outputs, size, start, stop, shifts, streaming, in_place,
           seed=data.draw(st.integers(0, 2**31), label="seed"))


def test_integer_sums_and_products_wrap():
    a = np.array([100] * 64, np.int8)
    b = np.array([100] * 64, np.int8)
    out = np.zeros(64, np.int8)
    linereduce.reduce_range((a, b), (out,), linereduce.SUM, 0, 64, False)
    assert (out == np.int8(-56)).all()
    big = np.full(64, 2**63 + 5, np.uint64)
    result = np.zeros(64, np.uint64)
    linereduce.reduce_range((big, big), (result,), linereduce.PROD, 0, 64, False)
    assert (result == np.multiply(big, big)).all()


def test_an_unknown_op_is_refused():
    a = np.ones(64, np.float32)
    with pytest.raises(ValueError, match="op must be"):
        linereduce.reduce_range((a, a), (np.zeros(64, np.float32),), 7, 0, 64, False)


def test_strided_arrays_are_refused():
    """The kernel addresses lines of contiguous memory: a strided view must not compile into wrong results."""
    from numba.core.errors import TypingError

    a = np.ones(128, np.float32)
    with pytest.raises(TypingError):
        linereduce.reduce_range((a[::2], a[::2]), (np.zeros(64, np.float32),), linereduce.SUM, 0, 64, False)
