"""index_select and embedding forward and backward (cnnl/kernels/indexing.py): exact against numpy's take and an
in-order sum of the gradient rows, on one thread and cut over the host threads, into contiguous and strided outputs;
out-of-range positions raise."""
import contextlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cnnl.kernels import indexing

from ..references import to_f64
from .strategies import ALL, SETTINGS, operands, outputs, shapes


SPLIT = pytest.mark.parametrize("split", [False, True], ids=["inline", "split"])


@contextlib.contextmanager
def threads(split):
    """Each take on one thread, or (split) every take but an empty one cut over the host threads."""
    with pytest.MonkeyPatch.context() as patch:
        if split:
            patch.setattr(indexing, "INLINE_DIRECT_ELEMENTS", 0)
        yield


@SPLIT
@given(dtype=st.sampled_from(ALL), shape=shapes(min_dims=1), data=st.data())
@SETTINGS
def test_index_select_matches_take(split, dtype, shape, data):
    dim = data.draw(st.integers(0, len(shape) - 1))
    if data.draw(st.booleans()):  # leading axes of 1: the split path
        shape = (1,) * dim + tuple(shape[dim:])
    x = data.draw(operands(shape, dtype))
    count = data.draw(st.integers(0, 7))
    index = np.array(data.draw(st.lists(st.integers(0, max(0, shape[dim] - 1)), min_size=count, max_size=count)),
                     np.int64)
    if shape[dim] == 0:
        index = index[:0]
    out_shape = tuple(shape[:dim]) + (index.size,) + tuple(shape[dim + 1:])
    out = data.draw(outputs(out_shape, dtype))
    with threads(split):
        indexing.index_select(x, dim, index, out)
    np.testing.assert_array_equal(to_f64(out), to_f64(np.take(x, index, axis=dim)))


@SPLIT
@pytest.mark.parametrize("index_shape", [(9,), (3, 4), ()])
def test_embedding_forward_rows(split, index_shape):
    rng = np.random.default_rng(3)
    weight = rng.standard_normal((11, 5)).astype(np.float32)
    rows = rng.integers(0, 11, index_shape)
    out = np.full(index_shape + (5,), np.nan, np.float32)
    strided = np.full((5,) + index_shape, np.nan, np.float32)
    view = np.moveaxis(strided, 0, -1)
    with threads(split):
        indexing.embedding_forward(weight, rows, out)
        indexing.embedding_forward(weight, rows, view)
    np.testing.assert_array_equal(out, weight[rows])
    np.testing.assert_array_equal(view, weight[rows])


@SPLIT
@pytest.mark.parametrize("bad", [-1, 6])
def test_positions_out_of_range_raise_and_leave_out_alone(split, bad):
    x = np.arange(12.0, dtype=np.float32).reshape(1, 6, 2)
    out = np.zeros((1, 3, 2), np.float32)
    with threads(split), pytest.raises(IndexError, match=f"index {bad} is out of range for an axis of 6"):
        indexing.index_select(x, 1, np.array([0, bad, 2]), out)
    assert not out.any()


def _in_order_sums(rows, grads, padding_idx, scale, table_rows):
    """The embedding gradient, each table row summed in index order in the gradient's dtype."""
    result = np.zeros((table_rows,) + grads.shape[1:], grads.dtype)
    counts = np.bincount(rows, minlength=table_rows).astype(grads.dtype)
    for row, gradient in zip(rows, grads):
        if row != padding_idx:
            result[row] += gradient / counts[row] if scale else gradient
    return result


@SPLIT
@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("padding_idx", [-1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_embedding_backward_sums_rows_in_index_order(split, scale, padding_idx, dtype):
    rng = np.random.default_rng(7)
    rows = rng.integers(0, 6, (4, 5))  # duplicates on purpose
    grads = rng.standard_normal((4, 5, 3)).astype(dtype)
    out = np.full((6, 3), np.nan, dtype)
    with threads(split):
        indexing.embedding_backward(rows, grads, padding_idx, scale, out)
    np.testing.assert_array_equal(out, _in_order_sums(rows.reshape(-1), grads.reshape(-1, 3), padding_idx, scale, 6))


@SPLIT
def test_embedding_backward_into_half_and_strided_tables(split):
    rng = np.random.default_rng(8)
    rows = rng.integers(0, 7, 9)
    grads = rng.standard_normal((9, 4)).astype(np.float16)
    want = _in_order_sums(rows, grads.astype(np.float32), -1, False, 7)
    half = np.full((7, 4), np.nan, np.float16)
    strided = np.moveaxis(np.full((4, 7), np.nan, np.float32), 0, 1)
    with threads(split):
        indexing.embedding_backward(rows, grads, -1, False, half)
        indexing.embedding_backward(rows, grads.astype(np.float32), -1, False, strided)
    np.testing.assert_array_equal(half, want.astype(np.float16))
    np.testing.assert_array_equal(strided, want)


@SPLIT
def test_embedding_backward_of_no_indices_zeroes_the_table(split):
    out = np.full((5, 2), np.nan, np.float32)
    with threads(split):
        indexing.embedding_backward(np.zeros(0, np.int64), np.zeros((0, 2), np.float32), -1, True, out)
    assert not out.any()
