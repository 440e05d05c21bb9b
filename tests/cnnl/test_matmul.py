"""cnnlMatMul, cnnlMatMul_v2 (+ descriptor, algorithm, heuristic), cnnlBatchMatMulBCast and its _v2 form."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cnnl
import cnrt

from .tolerances import assert_close
from .helpers import NUMERIC, NUMPY, as_float64, empty, random_values, raises_status, strided_layouts, sync, tensor

MATRIX_TYPES = NUMERIC


def product_bound(a, b, trans_a, trans_b):
    """|op(a)| @ |op(b)|: the size of the terms each output sums."""
    left = np.abs(as_float64(a)).swapaxes(-1, -2) if trans_a else np.abs(as_float64(a))
    right = np.abs(as_float64(b)).swapaxes(-1, -2) if trans_b else np.abs(as_float64(b))
    return left @ right


def operand(rng, dims, code, transposed):
    values = random_values(rng, dims, code)
    return values.swapaxes(-1, -2).copy() if transposed else values


@pytest.mark.parametrize("code", MATRIX_TYPES)
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul(handle, code, trans_a, trans_b):
    rng = np.random.default_rng(code)
    m, k, n = 5, 7, 3
    a_values, b_values = operand(rng, (m, k), code, trans_a), operand(rng, (k, n), code, trans_b)
    c0 = random_values(rng, (m, n), code)
    a, b, c = tensor(a_values, code), tensor(b_values, code), tensor(c0, code)
    integer = NUMPY[code].kind in "iu"
    alpha, beta = (1, 1) if integer else (1.5, 0.5)
    cnnl.matMul(handle, trans_a, trans_b, alpha, a.desc, a.ptr, b.desc, b.ptr, beta, c.desc, c.ptr)
    sync(handle)
    left = a_values.T if trans_a else a_values
    right = b_values.T if trans_b else b_values
    if integer:  # exact products, saturated into the output type
        info = np.iinfo(NUMPY[code])
        want = np.clip(left.astype(np.int64) @ right.astype(np.int64) + c0, info.min, info.max)
        np.testing.assert_array_equal(c.read(), want)
    else:
        want = alpha * (as_float64(left) @ as_float64(right)) + beta * as_float64(c0)
        scale = alpha * product_bound(a_values, b_values, trans_a, trans_b) + np.abs(beta * as_float64(c0))
        assert_close(c.read(), want, NUMPY[code], scale=scale, ulps=2 * k)


def matmul_v2(handle, a, b, c, d, alpha=1.0, beta=0.0, trans_a=False, trans_b=False):
    desc = cnnl.matMulDescCreate()
    cnnl.setMatMulDescAttr(desc, cnnl.CNNL_MATMUL_DESC_TRANSA, int(trans_a))
    cnnl.setMatMulDescAttr(desc, cnnl.CNNL_MATMUL_DESC_TRANSB, int(trans_b))
    cnnl.setMatMulDescAttr(desc, cnnl.CNNL_MATMUL_DESC_COMPUTE_TYPE, cnnl.CNNL_DTYPE_FLOAT)
    cnnl.setMatMulDescAttr(desc, cnnl.CNNL_MATMUL_ALLOW_TF32, 0)
    cnnl.setMatMulDescAttr(desc, cnnl.CNNL_MATMUL_USE_BETA, int(beta != 0))
    algo = cnnl.matMulAlgoCreate()
    result = cnnl.createMatMulHeuristicResult()
    assert cnnl.getMatMulAlgoHeuristic(handle, desc, a.desc, b.desc, c.desc, d.desc, None, 1, [result]) == 1
    ws = cnnl.getMatMulHeuristicResult(result, algo)
    cnnl.matMul_v2(handle, desc, algo, alpha, a.desc, a.ptr, b.desc, b.ptr, beta, c.desc, c.ptr,
                   cnrt.malloc(ws) if ws else None, ws, d.desc, d.ptr)
    sync(handle)
    for destroy, obj in ((cnnl.matMulDescDestroy, desc), (cnnl.matMulAlgoDestroy, algo),
                         (cnnl.destroyMatMulHeuristicResult, result)):
        destroy(obj)
    return ws


@pytest.mark.parametrize("code,out_code", [(cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_FLOAT),
                                           (cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_HALF),
                                           (cnnl.CNNL_DTYPE_BFLOAT16, cnnl.CNNL_DTYPE_FLOAT),
                                           (cnnl.CNNL_DTYPE_INT8, cnnl.CNNL_DTYPE_FLOAT)])
def test_matmul_v2_with_separate_c_and_d(handle, code, out_code):
    rng = np.random.default_rng(11)
    a_values, b_values = random_values(rng, (6, 4), code), random_values(rng, (6, 3), code)
    c0 = random_values(rng, (4, 3), out_code)
    a, b, c, d = tensor(a_values, code), tensor(b_values, code), tensor(c0, out_code), empty([4, 3], out_code)
    ws = matmul_v2(handle, a, b, c, d, alpha=2.0, beta=-1.0, trans_a=True)
    assert ws == (4 * 3 * 4 if code in (cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_BFLOAT16) else 0)
    want = 2.0 * as_float64(a_values).T @ as_float64(b_values) - as_float64(c0)
    scale = 2.0 * product_bound(a_values, b_values, True, False) + np.abs(as_float64(c0))
    assert_close(d.read(), want, NUMPY[out_code], scale=scale, ulps=16)
    np.testing.assert_array_equal(c.read(), c0)


@st.composite
def batch_problems(draw):
    batch_ndim = draw(st.integers(0, 2))
    batch = [draw(st.integers(1, 3)) for _ in range(batch_ndim)]
    a_batch = [n if draw(st.booleans()) else 1 for n in batch]
    b_batch = [n if draw(st.booleans()) else 1 for n in batch][draw(st.integers(0, batch_ndim)):]
    m, k, n = (draw(st.integers(1, 6)) for _ in range(3))
    return (a_batch, b_batch, m, k, n, draw(st.booleans()), draw(st.booleans()),
            draw(st.sampled_from([cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_HALF])),
            draw(st.sampled_from(["dense", "padded", "transposed"])), draw(st.integers(0, 1000)))


@settings(max_examples=30, deadline=None)
@given(batch_problems())
def test_batch_matmul_broadcasts_batch_dims(problem):
    a_batch, b_batch, m, k, n, trans_a, trans_b, code, layout, seed = problem
    handle = cnnl.create()
    rng = np.random.default_rng(seed)
    a_dims = a_batch + ([k, m] if trans_a else [m, k])
    b_dims = b_batch + ([n, k] if trans_b else [k, n])
    a_values, b_values = random_values(rng, a_dims, code), random_values(rng, b_dims, code)
    left = np.swapaxes(as_float64(a_values), -1, -2) if trans_a else as_float64(a_values)
    right = np.swapaxes(as_float64(b_values), -1, -2) if trans_b else as_float64(b_values)
    want = left @ right
    a = tensor(a_values, code, strided_layouts(a_dims, rng)[layout])
    b = tensor(b_values, code)
    c = empty(list(want.shape), code)
    ws = cnnl.getBatchMatMulBCastWorkspaceSize(handle, a.desc, b.desc, c.desc)
    cnnl.batchMatMulBCast(handle, trans_a, trans_b, a.desc, a.ptr, b.desc, b.ptr, cnrt.malloc(ws) if ws else None,
                          ws, c.desc, c.ptr)
    sync(handle)
    scale = product_bound(a_values, b_values, trans_a, trans_b)
    assert_close(c.read(), want, NUMPY[code], scale=scale, ulps=2 * k)


def test_batch_matmul_v2_with_heuristic(handle):
    rng = np.random.default_rng(12)
    a_values = random_values(rng, (2, 1, 3, 4), cnnl.CNNL_DTYPE_BFLOAT16)
    b_values = random_values(rng, (3, 4, 5), cnnl.CNNL_DTYPE_BFLOAT16)
    c0 = random_values(rng, (2, 3, 3, 5), cnnl.CNNL_DTYPE_BFLOAT16)
    a, b = tensor(a_values, cnnl.CNNL_DTYPE_BFLOAT16), tensor(b_values, cnnl.CNNL_DTYPE_BFLOAT16)
    c = tensor(c0, cnnl.CNNL_DTYPE_BFLOAT16)
    desc, algo, result = cnnl.matMulDescCreate(), cnnl.matMulAlgoCreate(), cnnl.createMatMulHeuristicResult()
    assert cnnl.getBatchMatMulAlgoHeuristic(handle, desc, a.desc, b.desc, c.desc, None, 1, result) == 1
    ws = cnnl.getBatchMatMulHeuristicResult(result, algo)
    assert ws == 2 * 3 * 3 * 5 * 4
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="workspace_size"):
        cnnl.batchMatMulBCast_v2(handle, desc, algo, 1.0, a.desc, a.ptr, b.desc, b.ptr, 1.0, c.desc, c.ptr, None, 0)
    cnnl.batchMatMulBCast_v2(handle, desc, algo, 1.0, a.desc, a.ptr, b.desc, b.ptr, 1.0, c.desc, c.ptr,
                             cnrt.malloc(ws), ws)
    sync(handle)
    want = as_float64(a_values) @ as_float64(b_values) + as_float64(c0)
    scale = product_bound(a_values, b_values, False, False) + np.abs(as_float64(c0))
    assert_close(c.read(), want, NUMPY[cnnl.CNNL_DTYPE_BFLOAT16], scale=scale, ulps=16)


def test_matmul_descriptor_attributes():
    desc = cnnl.matMulDescCreate()
    cnnl.setMatMulDescAttr(desc, cnnl.CNNL_MATMUL_DESC_TRANSB, 1)
    assert cnnl.getMatMulDescAttr(desc, cnnl.CNNL_MATMUL_DESC_TRANSB) == 1
    assert cnnl.getMatMulDescAttr(desc, cnnl.CNNL_MATMUL_DESC_TRANSA) == 0
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="attr"):
        cnnl.setMatMulDescAttr(desc, cnnl.CNNL_MATMUL_DESC_EPILOGUE, 1)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="buf"):
        cnnl.setMatMulDescAttr(desc, cnnl.CNNL_MATMUL_DESC_POINTER_MODE, cnnl.CNNL_POINTER_MODE_DEVICE)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="buf"):
        cnnl.setMatMulDescAttr(desc, cnnl.CNNL_MATMUL_DESC_COMPUTE_TYPE, 77)
    cnnl.matMulDescDestroy(desc)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="matmul_desc"):
        cnnl.setMatMulDescAttr(desc, cnnl.CNNL_MATMUL_DESC_TRANSA, 1)


def test_matmul_bad_arguments(handle):
    a, b, c = empty([2, 3]), empty([4, 5]), empty([2, 5])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="b_desc"):
        cnnl.matMul(handle, False, False, 1.0, a.desc, a.ptr, b.desc, b.ptr, 0.0, c.desc, c.ptr)
    b = empty([3, 4])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="c_desc"):
        cnnl.matMul(handle, False, False, 1.0, a.desc, a.ptr, b.desc, b.ptr, 0.0, c.desc, c.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="c_desc"):
        wrong = empty([2, 4], cnnl.CNNL_DTYPE_INT32)
        cnnl.matMul(handle, False, False, 1.0, a.desc, a.ptr, b.desc, b.ptr, 0.0, wrong.desc, wrong.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="a_desc"):
        batched = empty([2, 2, 3])
        cnnl.matMul(handle, False, False, 1.0, batched.desc, batched.ptr, b.desc, b.ptr, 0.0, c.desc, c.ptr)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="a_desc"):
        flags = empty([2, 3], cnnl.CNNL_DTYPE_BOOL)
        cnnl.matMul(handle, False, False, 1.0, flags.desc, flags.ptr, flags.desc, flags.ptr, 0.0, c.desc, c.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="b_desc"):
        cnnl.batchMatMulBCast(handle, False, False, empty([2, 2, 3]).desc, a.ptr, empty([3, 3, 4]).desc, b.ptr,
                              None, 0, empty([3, 2, 4]).desc, c.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="algo"):
        cnnl.matMul_v2(handle, cnnl.matMulDescCreate(), None, 1.0, a.desc, a.ptr, b.desc, b.ptr, 0.0, c.desc, c.ptr,
                       None, 0, c.desc, c.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="result"):
        cnnl.getMatMulHeuristicResult(cnnl.createMatMulHeuristicResult(), cnnl.matMulAlgoCreate())
