"""cdist forward and backward through the API against float64 numpy (every p: 0, 1, 2, 0.5, 3, inf) and central
differences, 2-D and batched inputs, dtypes, empty inputs and bad arguments."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cnnl

from .nn_helpers import BF16, F16, F32, F64, assert_near, blank, directional_check, placed, raises_status, \
    rounded, sync

NORMS = [0.0, 1.0, 2.0, 0.5, 3.0, np.inf]


def reference(a, b, p):
    diff = np.abs(a[..., :, None, :] - b[..., None, :, :])
    if p == 0:
        return (diff != 0).sum(-1).astype(float)
    if np.isinf(p):
        return diff.max(-1, initial=0)
    return (diff ** p).sum(-1) ** (1 / p)


def cdist(handle, a, b, p, code=F64):
    at, bt = placed(a, code), placed(b, code)
    yt = blank(a.shape[:-1] + (b.shape[-2],), code)
    cnnl.cdistForward(handle, at.desc, at.ptr, bt.desc, bt.ptr, p, yt.desc, yt.ptr)
    sync(handle)
    return yt.read()


def cdist_backward(handle, a, b, dist, grad, p, code=F64):
    ts = [placed(v, code) for v in (a, b, dist, grad)]
    out = blank(a.shape, code)
    cnnl.cdistBackward(handle, ts[0].desc, ts[0].ptr, ts[1].desc, ts[1].ptr, ts[2].desc, ts[2].ptr, ts[3].desc,
                       ts[3].ptr, p, out.desc, out.ptr)
    sync(handle)
    return out.read()


@pytest.mark.parametrize("p", NORMS)
def test_forward_and_backward(handle, p):
    rng = np.random.default_rng(int(min(p, 9) * 10))
    a, b = rng.standard_normal((2, 5, 4)), rng.standard_normal((2, 3, 4))
    a[0, 1] = b[0, 2]  # a zero distance: no gradient there
    dist = cdist(handle, a, b, p)
    np.testing.assert_allclose(dist, reference(a, b, p), rtol=1e-10, atol=1e-12)
    grad = rng.standard_normal(dist.shape)
    dx = cdist_backward(handle, a, b, dist, grad, p)
    assert np.all(np.isfinite(dx))
    if p == 0:
        assert np.all(dx == 0)
    else:
        directional_check(lambda x: np.sum(reference(x, b, p) * grad), a, dx, rng, rtol=1e-5)


def test_matches_torch_gradient_at_ties(handle):
    torch = pytest.importorskip("torch")
    a = torch.tensor([[[0.0, 1.0], [2.0, 2.0]]], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([[[0.0, 3.0], [1.0, 1.0]]], dtype=torch.float64)
    for p in NORMS:
        a.grad = None
        dist = torch.cdist(a, b, p=p)
        grad = torch.ones_like(dist)
        dist.backward(grad)
        got = cdist_backward(handle, a.detach().numpy(), b.numpy(), dist.detach().numpy(), grad.numpy(), p)
        np.testing.assert_allclose(got, a.grad.numpy(), atol=1e-12)


@pytest.mark.parametrize("code", [F32, F16, BF16])
def test_dtypes_and_2d(handle, code):
    rng = np.random.default_rng(1)
    a, b = rounded(rng, (40, 16), code), rounded(rng, (30, 16), code)
    for p in (1.0, 2.0):
        assert_near(cdist(handle, a, b, p, code), reference(a, b, p), code, scale=16)


def test_empty_and_rejects(handle):
    assert cdist(handle, np.zeros((2, 0, 3)), np.zeros((2, 4, 3)), 2.0).shape == (2, 0, 4)
    np.testing.assert_array_equal(cdist(handle, np.zeros((1, 2, 0)), np.zeros((1, 3, 0)), 2.0), np.zeros((1, 2, 3)))
    a, b, y = blank((2, 3, 4), F32), blank((2, 5, 4), F32), blank((2, 3, 5), F32)
    BAD, UNSUPPORTED = cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED
    args = [handle, a.desc, a.ptr, b.desc, b.ptr, 2.0, y.desc, y.ptr]
    for position, value, arg, status in [(5, -1.0, "p", BAD), (5, "two", "p", BAD),
                                         (3, blank((3, 5, 4), F32).desc, "x2_desc", BAD),
                                         (3, blank((2, 5, 3), F32).desc, "x2_desc", BAD),
                                         (6, blank((2, 3, 4), F32).desc, "y_desc", BAD),
                                         (6, blank((2, 3, 5), F16).desc, "y_desc", BAD),
                                         (1, blank((2, 3, 4), cnnl.CNNL_DTYPE_INT32).desc, "x1_desc", UNSUPPORTED),
                                         (7, None, "y", BAD)]:
        bad = list(args)
        bad[position] = value
        with raises_status(status, arg=arg):
            cnnl.cdistForward(*bad)


@settings(max_examples=15)
@given(st.integers(1, 3), st.integers(0, 6), st.integers(0, 6), st.integers(1, 5),
       st.sampled_from([0.0, 1.0, 2.0, 1.5, np.inf]), st.integers(0, 2**31))
def test_property(batch, first, second, depth, p, seed):
    handle = cnnl.create()
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((batch, first, depth)), rng.standard_normal((batch, second, depth))
    np.testing.assert_allclose(cdist(handle, a, b, p), reference(a, b, p), rtol=1e-9, atol=1e-9)
