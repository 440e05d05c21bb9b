"""Index select, gather, scatter (and add), embedding forward/backward, masked fill/select, index put, num true and
nonzero against numpy; out-of-range indices fail the queued op; bad arguments."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cnnl

from .nn_helpers import BF16, F16, F32, F64, NUMPY, as_float64, assert_near, blank, placed, raises_status, sync

INT32, INT64, BOOL, UINT8 = cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_INT64, cnnl.CNNL_DTYPE_BOOL, cnnl.CNNL_DTYPE_UINT8
DATA_TYPES = [F32, F16, BF16, F64, INT32, cnnl.CNNL_DTYPE_INT8]


def values(rng, shape, code):
    return rng.integers(-20, 20, size=shape).astype(NUMPY[code])


@pytest.mark.parametrize("code", DATA_TYPES)
@pytest.mark.parametrize("index_code", [INT32, INT64])
def test_index_select(handle, code, index_code):
    rng = np.random.default_rng(0)
    x, index = values(rng, (3, 5, 2), code), np.array([4, 0, 0, 2])
    xt, it, yt = placed(x, code), placed(index, index_code), blank((3, 4, 2), code)
    cnnl.indexSelect(handle, 1, xt.desc, xt.ptr, it.desc, it.ptr, yt.desc, yt.ptr)
    sync(handle)
    np.testing.assert_array_equal(yt.read(), np.take(x, index, axis=1))


@settings(max_examples=20)
@given(dims=st.lists(st.integers(1, 4), min_size=1, max_size=3), seed=st.integers(0, 99), data=st.data())
def test_gather_property(dims, seed, data):
    handle = cnnl.create()
    rng = np.random.default_rng(seed)
    dim = data.draw(st.integers(0, len(dims) - 1))
    index_dims = [data.draw(st.integers(1, 5)) if d == dim else data.draw(st.integers(1, n)) for d, n in
                  enumerate(dims)]
    x = values(rng, dims, F32)
    index = rng.integers(0, dims[dim], size=index_dims)
    xt, it, yt = placed(x, F32), placed(index, INT64), blank(index_dims, F32)
    cnnl.gather(handle, dim, xt.desc, xt.ptr, it.desc, it.ptr, yt.desc, yt.ptr)
    sync(handle)
    window = tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(index_dims))
    np.testing.assert_array_equal(yt.read(), np.take_along_axis(x[window], index, axis=dim))


def scatter_reference(x, dim, index, src, add):
    out = x.astype(np.float64).copy()
    for position in np.ndindex(*index.shape):
        target = list(position)
        target[dim] = index[position]
        if add:
            out[tuple(target)] += src[position]
        else:
            out[tuple(target)] = src[position]
    return out


@pytest.mark.parametrize("code", [F32, F16, BF16, INT32])
@pytest.mark.parametrize("add", [False, True])
def test_scatter(handle, code, add):
    rng = np.random.default_rng(1)
    x, src = values(rng, (4, 3), code), values(rng, (3, 3), code)
    # duplicates only where adding, where every order gives the same sum
    index = rng.integers(0, 4, size=(2, 3)) if add else np.array([[3, 0, 1], [1, 2, 0]])
    xt, it, st_, ot = placed(x, code), placed(index, INT64), placed(src, code), blank((4, 3), code)
    mode = cnnl.CNNL_SCATTER_ADD if add else cnnl.CNNL_SCATTER
    cnnl.scatter(handle, 0, xt.desc, xt.ptr, it.desc, it.ptr, st_.desc, st_.ptr, ot.desc, ot.ptr, mode)
    sync(handle)
    np.testing.assert_array_equal(as_float64(ot.read()), scatter_reference(as_float64(x), 0, index,
                                                                           as_float64(src), add))


def test_embedding_forward_and_backward(handle):
    rng = np.random.default_rng(2)
    table, indices = rng.standard_normal((6, 3)), np.array([[1, 5, 1], [0, 1, 2]])
    wt, it, ot = placed(table, F32), placed(indices, INT32), blank((2, 3, 3), F32)
    cnnl.embeddingForward_v2(handle, wt.desc, wt.ptr, it.desc, it.ptr, -1, None, None, ot.desc, ot.ptr)
    grad = rng.standard_normal((2, 3, 3))
    gt, dt = placed(grad, F32), blank((6, 3), F32)
    size = cnnl.getEmbeddingBackwardWorkspaceSize(handle, gt.desc, dt.desc, True)
    cnnl.embeddingBackward(handle, 2, True, it.desc, it.ptr, gt.desc, gt.ptr, None, size, dt.desc, dt.ptr)
    sync(handle)
    assert_near(ot.read(), table[indices], F32)
    want = np.zeros((6, 3))
    counts = np.bincount(indices.ravel(), minlength=6)
    for row, g in zip(indices.ravel(), grad.reshape(-1, 3)):
        if row != 2:
            want[row] += g / counts[row]
    assert_near(dt.read(), want, F32)


@pytest.mark.parametrize("code", [F32, F16, INT32, BOOL])
def test_masked_fill_broadcasts_the_mask(handle, code):
    rng = np.random.default_rng(3)
    x = values(rng, (3, 4), code)
    mask = np.array([True, False, True, False])
    xt, mt, vt, ot = placed(x, code), placed(mask, BOOL), placed(np.array([7]), code), blank((3, 4), code)
    size = cnnl.getMaskedWorkspaceSize(handle, cnnl.CNNL_MASKED_FILL, xt.desc, mt.desc, vt.desc, ot.desc)
    cnnl.masked_v3(handle, cnnl.CNNL_MASKED_FILL, xt.desc, xt.ptr, mt.desc, mt.ptr, vt.desc, vt.ptr, None, size,
                   ot.desc, ot.ptr, None)
    sync(handle)
    np.testing.assert_array_equal(ot.read(), np.where(mask, np.array(7).astype(NUMPY[code]), x))


def test_masked_select(handle):
    x = np.arange(12.0).reshape(3, 4)
    mask = (x % 3 == 0).astype(np.uint8)
    xt, mt, ot, count = placed(x, F32), placed(mask, UINT8), blank((12,), F32), blank((1,), INT32)
    cnnl.masked_v3(handle, cnnl.CNNL_MASKED_SELECT, xt.desc, xt.ptr, mt.desc, mt.ptr, None, None, None, 0, ot.desc,
                   ot.ptr, count.ptr)
    sync(handle)
    assert count.read()[0] == 4
    np.testing.assert_array_equal(ot.read()[:4], [0, 3, 6, 9])


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(handle, accumulate):
    x = np.zeros((4, 3))
    rows, cols = np.array([0, 2, 2]), np.array([1, 0, 0]) if accumulate else np.array([1, 0, 2])
    value = np.array([1.0, 2.0, 3.0])
    xt, rt, ct, vt, ot = placed(x, F32), placed(rows, INT64), placed(cols, INT32), placed(value, F32), blank((4, 3),
                                                                                                          F32)
    size = cnnl.getIndexPutWorkspaceSize(handle, xt.desc, [rt.desc, ct.desc], vt.desc, accumulate)
    cnnl.indexPut(handle, xt.desc, xt.ptr, [rt.desc, ct.desc], [rt.ptr, ct.ptr], vt.desc, vt.ptr, None, size,
                  accumulate, False, ot.desc, ot.ptr)
    sync(handle)
    want = x.copy()
    if accumulate:
        np.add.at(want, (rows, cols), value)
    else:
        want[rows, cols] = value
    assert_near(ot.read(), want, F32)


def test_index_put_whole_axis_and_broadcast_value(handle):
    x = np.arange(12.0).reshape(3, 4)
    cols = np.array([3, 1])
    xt, ct, vt = placed(x, F32), placed(cols, INT64), placed(np.array([-1.0]), F32)
    cnnl.indexPut(handle, xt.desc, xt.ptr, [None, ct.desc], [None, ct.ptr], vt.desc, vt.ptr, None, 0, False, True,
                  xt.desc, xt.ptr)
    sync(handle)
    want = x.copy()
    want[:, cols] = -1
    assert_near(xt.read(), want, F32)


@pytest.mark.parametrize("as_tuple", [False, True])
@pytest.mark.parametrize("code", [F32, INT32, BOOL])
def test_nonzero(handle, code, as_tuple):
    x = (np.random.default_rng(4).random((3, 4, 2)) < 0.4).astype(NUMPY[code])
    xt, nt = placed(x, code), blank((1,), INT32)
    cnnl.numTrue_v2(handle, xt.desc, xt.ptr, nt.desc, nt.ptr)
    sync(handle)
    count = int(nt.read()[0])
    assert count == np.count_nonzero(x)
    yt = blank((3, count) if as_tuple else (count, 3), INT64)
    size = cnnl.getWhereWorkspaceSize(handle, nt.desc)
    cnnl.where_v2(handle, xt.desc, xt.ptr, nt.desc, nt.ptr, as_tuple, None, size, yt.desc, yt.ptr)
    sync(handle)
    want = np.argwhere(x)
    np.testing.assert_array_equal(yt.read(), want.T if as_tuple else want)


def test_out_of_range_indices_fail_at_sync(handle):
    x, it, yt = placed(np.zeros((3, 2)), F32), placed(np.array([0, 3]), INT32), blank((2, 2), F32)
    cnnl.indexSelect(handle, 0, x.desc, x.ptr, it.desc, it.ptr, yt.desc, yt.ptr)
    with pytest.raises(Exception, match="out of range"):
        sync(handle)
    neg = placed(np.array([[-1, 0]]), INT64)
    cnnl.gather(handle, 0, x.desc, x.ptr, neg.desc, neg.ptr, blank((1, 2), F32).desc, yt.ptr)
    with pytest.raises(Exception, match="out of range"):
        sync(handle)


def test_rejects(handle):
    x, i, y = blank((3, 4), F32), blank((2,), INT32), blank((3, 2), F32)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="dim"):
        cnnl.indexSelect(handle, 2, x.desc, x.ptr, i.desc, i.ptr, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="y_desc"):
        cnnl.indexSelect(handle, 0, x.desc, x.ptr, i.desc, i.ptr, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="index_desc"):
        cnnl.indexSelect(handle, 1, x.desc, x.ptr, blank((2,), F32).desc, i.ptr, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="index_desc"):
        cnnl.gather(handle, 1, x.desc, x.ptr, blank((4, 2), INT32).desc, i.ptr, blank((4, 2), F32).desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="mode"):
        cnnl.scatter(handle, 0, x.desc, x.ptr, blank((1, 4), INT32).desc, i.ptr, x.desc, x.ptr, x.desc, x.ptr, 5)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="input_desc"):
        b = blank((3, 4), BOOL)
        cnnl.scatter(handle, 0, b.desc, b.ptr, blank((1, 4), INT32).desc, i.ptr, b.desc, b.ptr, b.desc, b.ptr,
                     cnnl.CNNL_SCATTER_ADD)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="src_desc"):
        cnnl.scatter(handle, 0, x.desc, x.ptr, blank((2, 4), INT32).desc, i.ptr, blank((1, 4), F32).desc, x.ptr,
                     x.desc, x.ptr, cnnl.CNNL_SCATTER)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="padding_idx"):
        cnnl.embeddingForward_v2(handle, x.desc, x.ptr, i.desc, i.ptr, 3, None, None, blank((2, 4), F32).desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="max_norm"):
        cnnl.embeddingForward_v2(handle, x.desc, x.ptr, i.desc, i.ptr, -1, 1.0, 2.0, blank((2, 4), F32).desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.embeddingForward_v2(handle, x.desc, x.ptr, i.desc, i.ptr, -1, None, None, blank((2, 3), F32).desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="masked_op"):
        cnnl.masked_v3(handle, cnnl.CNNL_MASKED_SCATTER, x.desc, x.ptr, x.desc, x.ptr, None, None, None, 0, x.desc,
                       x.ptr, None)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="mask_desc"):
        cnnl.masked_v3(handle, cnnl.CNNL_MASKED_FILL, x.desc, x.ptr, blank((3,), BOOL).desc, x.ptr, blank((1,),
                       F32).desc, x.ptr, None, 0, x.desc, x.ptr, None)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="value_desc"):
        cnnl.masked_v3(handle, cnnl.CNNL_MASKED_FILL, x.desc, x.ptr, blank((4,), BOOL).desc, x.ptr, blank((2,),
                       F32).desc, x.ptr, None, 0, x.desc, x.ptr, None)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="indices_descs"):
        cnnl.indexPut(handle, x.desc, x.ptr, [None, None], [None, None], x.desc, x.ptr, None, 0, False, False, x.desc,
                      x.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="indices"):
        cnnl.indexPut(handle, x.desc, x.ptr, [i.desc], [], x.desc, x.ptr, None, 0, False, False, x.desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="num_true_desc"):
        cnnl.numTrue_v2(handle, x.desc, x.ptr, blank((2,), INT32).desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="y_desc"):
        cnnl.where_v2(handle, x.desc, x.ptr, blank((1,), INT32).desc, x.ptr, False, None, 0, blank((4, 3),
                      INT32).desc, x.ptr)


def test_more_rejects(handle):
    table, idx, grad = blank((5, 3), F32), blank((2,), INT32), blank((2, 3), F32)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="output_desc"):
        ints = blank((5, 3), INT32)
        cnnl.embeddingBackward(handle, -1, False, idx.desc, idx.ptr, blank((2, 3), INT32).desc, grad.ptr, None, 0,
                               ints.desc, ints.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="diff_desc"):
        cnnl.embeddingBackward(handle, -1, False, idx.desc, idx.ptr, blank((2, 4), F32).desc, grad.ptr, None, 0,
                               table.desc, table.ptr)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="input_desc"):
        b, bi = blank((5, 3), BOOL), blank((2,), INT64)
        cnnl.indexPut(handle, b.desc, b.ptr, [bi.desc], [bi.ptr], b.desc, b.ptr, None, 0, True, False, b.desc, b.ptr)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg=r"indices_descs\[0\]"):
        cnnl.indexPut(handle, table.desc, table.ptr, [grad.desc], [grad.ptr], table.desc, table.ptr, None, 0, False,
                      False, table.desc, table.ptr)


def test_nonzero_count_mismatch_fails_at_sync(handle):
    x, count = placed(np.array([1.0, 0.0, 2.0]), F32), placed(np.array([1]), INT32)
    y = blank((1, 1), INT32)
    cnnl.where_v2(handle, x.desc, x.ptr, count.desc, count.ptr, False, None, 0, y.desc, y.ptr)
    with pytest.raises(Exception, match="num_true says 1"):
        sync(handle)
