"""copy, transpose, concat, split, strided slice, fill and select: exact against numpy indexing."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cnnl.kernels import concat, copy, fill, select, split, strided_slice, transpose

from ..references import to_f64
from .strategies import ALL, FLOATS, SETTINGS, broadcast_operands, operands, outputs, shapes


def assert_same(got, want):
    np.testing.assert_array_equal(to_f64(got), to_f64(np.broadcast_to(want, got.shape)))


@given(dtype=st.sampled_from(ALL), shape=shapes(), data=st.data())
@SETTINGS
def test_copy_any_strides_and_broadcast(dtype, shape, data):
    src = data.draw(broadcast_operands(shape, dtype))
    dst = data.draw(outputs(shape, dtype))
    copy(src, dst)
    assert_same(dst, src)


@given(dtype=st.sampled_from(ALL), shape=shapes(min_dims=1), data=st.data())
@SETTINGS
def test_transpose(dtype, shape, data):
    perm = data.draw(st.permutations(range(len(shape))))
    x = data.draw(operands(shape, dtype))
    out = data.draw(outputs(tuple(shape[p] for p in perm), dtype))
    transpose(x, perm, out)
    assert_same(out, np.transpose(x, perm))


@given(dtype=st.sampled_from(ALL), shape=shapes(min_dims=1), pieces=st.integers(1, 4), data=st.data())
@SETTINGS
def test_concat_and_split(dtype, shape, pieces, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    sizes = [data.draw(st.integers(1, 3)) for _ in range(pieces)]
    parts = [data.draw(operands(shape[:axis] + (n,) + shape[axis + 1:], dtype)) for n in sizes]
    whole_shape = shape[:axis] + (sum(sizes),) + shape[axis + 1:]
    out = data.draw(outputs(whole_shape, dtype))
    concat(parts, axis, out)
    assert_same(out, np.concatenate(parts, axis))
    back = [data.draw(outputs(p.shape, dtype)) for p in parts]
    split(out, axis, back)
    for got, want in zip(back, parts):
        assert_same(got, want)


@given(dtype=st.sampled_from(ALL), shape=shapes(min_dims=1), data=st.data())
@SETTINGS
def test_strided_slice(dtype, shape, data):
    begin = [data.draw(st.integers(-n, n)) for n in shape]
    end = [data.draw(st.integers(-n - 1, n + 1)) for n in shape]
    stride = [data.draw(st.sampled_from([1, 2, 3, -1, -2])) for _ in shape]
    x = data.draw(operands(shape, dtype))
    want = x[tuple(slice(b, e, s) for b, e, s in zip(begin, end, stride))]
    out = data.draw(outputs(want.shape, dtype))
    strided_slice(x, begin, end, stride, out)
    assert_same(out, want)


@given(dtype=st.sampled_from(ALL), shape=shapes(), value=st.sampled_from([0, 1, -3, 2.5, 1e6, -1e30]),
       data=st.data())
@SETTINGS
def test_fill_converts_with_cast_rules(dtype, shape, value, data):
    out = data.draw(outputs(shape, dtype))
    fill(out, value)
    if dtype == np.bool_:
        expected = float(value != 0)
    elif dtype.kind in "iu":
        info = np.iinfo(dtype)
        expected = float(min(max(int(value), int(info.min)), int(info.max)))
    else:
        expected = float(np.array(value, np.float64).astype(dtype).astype(np.float64))
    assert (to_f64(out) == expected).all()


@given(dtype=st.sampled_from(ALL), cond_dtype=st.sampled_from(ALL), shape=shapes(), data=st.data())
@SETTINGS
def test_select(dtype, cond_dtype, shape, data):
    condition = data.draw(broadcast_operands(shape, cond_dtype, -1.0, 1.0))
    if cond_dtype in FLOATS:
        condition = np.where(to_f64(condition) > 0, condition, 0).astype(cond_dtype)
    a = data.draw(broadcast_operands(shape, dtype))
    b = data.draw(broadcast_operands(shape, dtype))
    out = data.draw(outputs(shape, dtype))
    select(condition, a, b, out)
    assert_same(out, np.where(to_f64(condition) != 0, to_f64(a), to_f64(b)))


def test_large_transpose_and_in_place_alias():
    x = np.arange(700 * 500, dtype=np.float32).reshape(700, 500)
    out = np.empty((500, 700), np.float32)
    transpose(x, (1, 0), out)
    assert np.array_equal(out, x.T)
    square = np.arange(400 * 400, dtype=np.int32).reshape(400, 400)
    expected = square.T.copy()
    copy(square.T, square)  # overlapping, differently strided: must behave as if read before written
    assert np.array_equal(square, expected)


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 517, 263), (2, 256, 264), (1, 9, 1031)])
def test_tiled_transposes_cover_every_tile_edge(dtype, shape):
    """Transposing copies in 8 x 8 blocks inside tiles: shapes whose sides are not multiples of 8 or of a tile."""
    x = np.arange(np.prod(shape)).astype(dtype).reshape(shape)
    for perm in ((0, 2, 1), (2, 1, 0), (1, 2, 0)):
        out = np.empty(tuple(shape[p] for p in perm), dtype)
        transpose(x, perm, out)
        assert np.array_equal(out.view(np.uint8), np.ascontiguousarray(np.transpose(x, perm)).view(np.uint8))


def test_bad_arguments_raise():
    with pytest.raises(ValueError):
        transpose(np.zeros((2, 3)), (0, 0), np.zeros((2, 3)))
    with pytest.raises(TypeError):
        copy(np.zeros(3, np.float32), np.zeros(3, np.float64))
    with pytest.raises(ValueError):
        concat([np.zeros((2, 2))], 0, np.zeros((3, 2)))
