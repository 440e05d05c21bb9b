"""index_select and embedding forward (cnnl/kernels/indexing.py): exact against numpy's take, on one thread and cut
into runs of positions over the host threads, into contiguous and strided outputs; out-of-range positions raise."""
import contextlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cnnl.kernels import indexing

from .references import to_f64
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
