"""QR and polar through the API: Q R = A with orthonormal Q and upper-triangular R (reduced and complete, tall and
wide, batched, dtypes; the signs of LAPACK's Householder QR, as PyTorch), complex outputs of polar against numpy
with broadcasting, empty inputs and bad arguments."""
import numpy as np
import pytest

import cnnl

from .nn_helpers import BF16, F16, F32, F64, assert_near, blank, placed, raises_status, rounded, sync

CF, CH = cnnl.CNNL_DTYPE_COMPLEX_FLOAT, cnnl.CNNL_DTYPE_COMPLEX_HALF


def qr(handle, a, reduced, code=F64):
    *batch, m, n = a.shape
    k = min(m, n) if reduced else m
    at = placed(a, code)
    qt, rt = blank(tuple(batch) + (m, k), code), blank(tuple(batch) + (k, n), code)
    size = cnnl.getQRWorkspaceSize(handle, at.desc, reduced)
    ws = blank((size,), cnnl.CNNL_DTYPE_INT8).ptr if size else None
    cnnl.qR(handle, at.desc, at.ptr, qt.desc, qt.ptr, rt.desc, rt.ptr, ws, size, reduced)
    sync(handle)
    return qt.read(), rt.read()


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 3, 6, 2)])
@pytest.mark.parametrize("reduced", [True, False])
def test_qr(handle, shape, reduced):
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape)
    q, r = qr(handle, a, reduced)
    np.testing.assert_allclose(q @ r, a, atol=1e-12)
    eye = np.eye(q.shape[-1])
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(eye, q.shape[:-2] + eye.shape),
                               atol=1e-12)
    assert np.all(np.tril(r, -1) == 0)
    torch = pytest.importorskip("torch")
    want_q, want_r = torch.linalg.qr(torch.tensor(a), mode="reduced" if reduced else "complete")
    np.testing.assert_allclose(q, want_q.numpy(), atol=1e-12)
    np.testing.assert_allclose(r, want_r.numpy(), atol=1e-12)


@pytest.mark.parametrize("code", [F32, F16, BF16])
def test_qr_dtypes(handle, code):
    a = rounded(np.random.default_rng(1), (6, 4), code)
    q, r = qr(handle, a, True, code)
    assert_near(q.astype(np.float64) @ r, a, code, scale=8)


def test_qr_empty_and_rejects(handle):
    q, r = qr(handle, np.zeros((3, 0)), False)
    np.testing.assert_array_equal(q, np.eye(3))
    assert r.shape == (3, 0)
    a = blank((4, 3), F32)
    q, r = blank((4, 3), F32), blank((3, 3), F32)
    args = [handle, a.desc, a.ptr, q.desc, q.ptr, r.desc, r.ptr, blank((48,), cnnl.CNNL_DTYPE_INT8).ptr, 48, True]
    for position, value, arg, status in [(3, blank((4, 4), F32).desc, "q_desc", cnnl.CNNL_STATUS_BAD_PARAM),
                                         (5, blank((3, 3), F64).desc, "r_desc", cnnl.CNNL_STATUS_BAD_PARAM),
                                         (1, blank((4,), F32).desc, "a_desc", cnnl.CNNL_STATUS_BAD_PARAM),
                                         (8, 8, "workspace_size", cnnl.CNNL_STATUS_BAD_PARAM),
                                         (1, blank((4, 3), cnnl.CNNL_DTYPE_INT32).desc, "a_desc",
                                          cnnl.CNNL_STATUS_NOT_SUPPORTED)]:
        bad = list(args)
        bad[position] = value
        with raises_status(status, arg=arg):
            cnnl.qR(*bad)


def polar(handle, radius, angle, code, out_shape):
    rt, at = placed(radius, code), placed(angle, code)
    out = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(out, cnnl.CNNL_LAYOUT_ARRAY, CF if code == F32 else CH, list(out_shape))
    parts = blank(tuple(out_shape) + (2,), code)
    size = cnnl.getPolarWorkspaceSize(handle, rt.desc, at.desc, out)
    cnnl.polar(handle, rt.desc, rt.ptr, at.desc, at.ptr, out, parts.ptr, None, size)
    sync(handle)
    values = parts.read().astype(np.float64)
    return values[..., 0] + 1j * values[..., 1]


@pytest.mark.parametrize("code", [F32, F16])
def test_polar(handle, code):
    rng = np.random.default_rng(2)
    radius = rounded(rng, (3, 1, 4), code, 0, 3)
    angle = rounded(rng, (5, 4), code, -4, 4)
    got = polar(handle, radius, angle, code, (3, 5, 4))
    want = radius * np.exp(1j * angle)
    tolerance = 1e-6 if code == F32 else 4e-3
    np.testing.assert_allclose(got, want, atol=tolerance * 4)
    assert polar(handle, np.zeros((0,)), np.zeros((0,)), code, (0,)).shape == (0,)


def test_polar_rejects(handle):
    r, a = blank((4,), F32), blank((4,), F32)
    out = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(out, cnnl.CNNL_LAYOUT_ARRAY, CH, [4])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="out_desc"):
        cnnl.polar(handle, r.desc, r.ptr, a.desc, a.ptr, out, blank((8,), F32).ptr, None, 0)
    cnnl.setTensorDescriptor(out, cnnl.CNNL_LAYOUT_ARRAY, CF, [3])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="abs_desc"):
        cnnl.polar(handle, r.desc, r.ptr, a.desc, a.ptr, out, blank((8,), F32).ptr, None, 0)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="abs_desc"):
        d = blank((4,), F64)
        cnnl.polar(handle, d.desc, d.ptr, d.desc, d.ptr, out, blank((8,), F32).ptr, None, 0)
