"""Softmax and log-softmax forward over the three dimension modes, backward, against float64 references;
gradients against finite differences; bad arguments."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cnnl

from .nn_helpers import F16, F32, F64, FLOATS, BF16, assert_near, blank, directional_check, placed, raises_status, \
    rounded, sync

ALGORITHMS = {"fast": cnnl.CNNL_SOFTMAX_FAST, "accurate": cnnl.CNNL_SOFTMAX_ACCURATE, "log": cnnl.CNNL_SOFTMAX_LOG}
MODES = {cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION: -1, cnnl.CNNL_SOFTMAX_MODE_MEDIUM_DIMENSION: -2,
         cnnl.CNNL_SOFTMAX_MODE_HIGH_DIMENSION: -3}


def reference(x, axis, log):
    shifted = x - x.max(axis=axis, keepdims=True)
    total = np.exp(shifted).sum(axis=axis, keepdims=True)
    return shifted - np.log(total) if log else np.exp(shifted) / total


def softmax(handle, x, code, algorithm, mode, alpha=None, beta=None, y0=None, v2=False):
    xt = placed(x, code)
    yt = placed(y0, code) if y0 is not None else blank(x.shape, code)
    if v2:
        cnnl.softmaxForward_v2(handle, algorithm, mode, cnnl.CNNL_COMPUTATION_HIGH_PRECISION, alpha, xt.desc, xt.ptr,
                               beta, yt.desc, yt.ptr)
    else:
        cnnl.softmaxForward(handle, algorithm, mode, alpha, xt.desc, xt.ptr, beta, yt.desc, yt.ptr)
    sync(handle)
    return yt.read()


def softmax_backward(handle, y, dy, code, algorithm, mode):
    yt, dyt, dxt = placed(y, code), placed(dy, code), blank(y.shape, code)
    cnnl.softmaxBackward(handle, algorithm, mode, None, yt.desc, yt.ptr, dyt.desc, dyt.ptr, None, dxt.desc, dxt.ptr)
    sync(handle)
    return dxt.read()


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_forward(handle, code, mode, name):
    x = rounded(np.random.default_rng(0), (3, 5, 7), code, -6, 6)
    log = name == "log"
    got = softmax(handle, x, code, ALGORITHMS[name], mode, v2=code == F32)
    assert_near(got, reference(x, MODES[mode], log), code, scale=8 if log else None)


def test_alpha_beta_and_large_inputs(handle):
    x = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]])
    y0 = np.ones(x.shape)
    got = softmax(handle, x, F32, cnnl.CNNL_SOFTMAX_ACCURATE, cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION, 2.0, 0.5, y0)
    assert_near(got, 2 * reference(x, -1, False) + 0.5, F32)


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("name", ["accurate", "log"])
def test_backward_is_the_gradient(handle, mode, name):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 4, 5))
    y = softmax(handle, x, F64, ALGORITHMS[name], mode)
    dy = rng.standard_normal(x.shape)
    dx = softmax_backward(handle, y, dy, F64, ALGORITHMS[name], mode)
    directional_check(lambda xx: np.sum(softmax(handle, xx, F64, ALGORITHMS[name], mode) * dy), x, dx, rng)


@pytest.mark.parametrize("code", [F32, F16, BF16])
@pytest.mark.parametrize("name", ["accurate", "log"])
def test_backward_dtypes(handle, code, name):
    rng = np.random.default_rng(2)
    log = name == "log"
    y = rounded(rng, (4, 9), code, -3, 0) if log else rounded(rng, (4, 9), code, 0, 1)
    dy = rounded(rng, (4, 9), code)
    want = dy - np.exp(y) * dy.sum(-1, keepdims=True) if log else y * (dy - (dy * y).sum(-1, keepdims=True))
    got = softmax_backward(handle, y, dy, code, ALGORITHMS[name], cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION)
    assert_near(got, want, code, scale=20)


@settings(max_examples=20)
@given(dims=st.lists(st.integers(1, 6), min_size=3, max_size=4), mode=st.sampled_from(sorted(MODES)),
       log=st.booleans(), seed=st.integers(0, 100))
def test_property(dims, mode, log, seed):
    handle = cnnl.create()
    x = np.random.default_rng(seed).normal(0, 4, dims)
    got = softmax(handle, x, F32, ALGORITHMS["log" if log else "accurate"], mode)
    assert_near(got, reference(x, MODES[mode], log), F32, scale=16)


def test_rejects(handle):
    x, y = blank((2, 3), F32), blank((2, 3), F32)
    low = cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="algorithm"):
        cnnl.softmaxForward(handle, 9, low, None, x.desc, x.ptr, None, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="mode"):
        cnnl.softmaxForward(handle, cnnl.CNNL_SOFTMAX_LOG, 7, None, x.desc, x.ptr, None, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="x_desc"):
        cnnl.softmaxForward(handle, cnnl.CNNL_SOFTMAX_LOG, cnnl.CNNL_SOFTMAX_MODE_HIGH_DIMENSION, None, x.desc,
                            x.ptr, None, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="y_desc"):
        cnnl.softmaxForward(handle, cnnl.CNNL_SOFTMAX_LOG, low, None, x.desc, x.ptr, None, blank((3, 2), F32).desc,
                            y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="y_desc"):
        cnnl.softmaxForward(handle, cnnl.CNNL_SOFTMAX_LOG, low, None, x.desc, x.ptr, None, blank((2, 3), F16).desc,
                            y.ptr)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="x_desc"):
        ints = blank((2, 3), cnnl.CNNL_DTYPE_INT32)
        cnnl.softmaxForward(handle, cnnl.CNNL_SOFTMAX_LOG, low, None, ints.desc, ints.ptr, None, ints.desc, ints.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="prefer"):
        cnnl.softmaxForward_v2(handle, cnnl.CNNL_SOFTMAX_LOG, low, 5, None, x.desc, x.ptr, None, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="diff_x_desc"):
        cnnl.softmaxBackward(handle, cnnl.CNNL_SOFTMAX_LOG, low, None, x.desc, x.ptr, y.desc, y.ptr, None,
                             blank((2, 4), F32).desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="y"):
        cnnl.softmaxForward(handle, cnnl.CNNL_SOFTMAX_LOG, low, None, x.desc, x.ptr, None, y.desc, None)
