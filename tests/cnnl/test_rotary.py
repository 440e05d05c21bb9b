"""Rotary embedding through the API the way DIOPI calls it: the two halves of the head vectors as strided views of
one tensor (split or interleaved), cos/sin [T, 1, C/2], out of place and in place, conj - against float64 numpy."""
import numpy as np
import pytest

import cnnl

from .nn_helpers import BF16, F16, F32, F64, NUMPY, assert_near, blank, placed, raises_status, rounded, sync


def halves(tensor, interleaved, code):
    """(x1 desc, x1 ptr, x2 desc, x2 ptr): strided views of the two halves of the last axis of a device tensor."""
    n, t, b, c = tensor.dims
    item = NUMPY[code].itemsize
    strides = [t * b * c, b * c, c, 2 if interleaved else 1]
    views = []
    for part in range(2):
        desc = cnnl.createTensorDescriptor()
        cnnl.setTensorDescriptorEx(desc, cnnl.CNNL_LAYOUT_ARRAY, code, [n, t, b, c // 2], strides)
        views += [desc, tensor.ptr + (part if interleaved else part * c // 2) * item]
    return views


def reference(x, cos, sin, interleaved, conj):
    first, second = (x[..., 0::2], x[..., 1::2]) if interleaved else np.split(x, 2, axis=-1)
    c, s = cos[None], sin[None]
    if conj:
        y1, y2 = first * c + second * s, -first * s + second * c
    else:
        y1, y2 = first * c - second * s, first * s + second * c
    out = np.empty_like(x)
    if interleaved:
        out[..., 0::2], out[..., 1::2] = y1, y2
    else:
        out = np.concatenate([y1, y2], axis=-1)
    return out


def rotate(handle, x, cos, sin, code, interleaved=False, conj=False, in_place=False):
    xt = placed(x, code)
    yt = xt if in_place else blank(x.shape, code)
    ct, st_ = placed(cos, code), placed(sin, code)
    desc = cnnl.createRotaryEmbeddingDescriptor()
    cnnl.setRotaryEmbeddingDescriptor(desc, conj, cnnl.CNNL_SEQDATA_NTBC)
    x1d, x1, x2d, x2 = halves(xt, interleaved, code)
    y1d, y1, y2d, y2 = halves(yt, interleaved, code)
    cnnl.rotaryEmbedding(handle, desc, x1d, x1, x2d, x2, ct.desc, ct.ptr, st_.desc, st_.ptr, None, 0, y1d, y1, y2d,
                         y2)
    sync(handle)
    return yt.read()


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("conj", [False, True])
@pytest.mark.parametrize("in_place", [False, True])
def test_rotation(handle, interleaved, conj, in_place):
    rng = np.random.default_rng(interleaved * 4 + conj * 2 + in_place)
    x = rng.standard_normal((2, 5, 3, 8))
    angles = rng.uniform(-3, 3, (5, 1, 4))
    got = rotate(handle, x, np.cos(angles), np.sin(angles), F64, interleaved, conj, in_place)
    np.testing.assert_allclose(got, reference(x, np.cos(angles), np.sin(angles), interleaved, conj), atol=1e-14)


@pytest.mark.parametrize("code", [F32, F16, BF16])
def test_dtypes_and_inverse(handle, code):
    rng = np.random.default_rng(7)
    x = rounded(rng, (1, 6, 2, 16), code)
    angles = rng.uniform(-3, 3, (6, 1, 8))
    cos, sin = (np.asarray(f(angles), NUMPY[code]).astype(np.float64) for f in (np.cos, np.sin))
    got = rotate(handle, x, cos, sin, code)
    assert_near(got, reference(x, cos, sin, False, False), code, scale=4)
    back = rotate(handle, got.astype(np.float64), cos, sin, F64 if code == F32 else code, conj=True)
    assert_near(back, x, code, scale=8)  # the conjugate rotation undoes it


# runs ops on unwritten tensors: only their checks and empty results matter
@pytest.mark.mlusim_sanitize(exclude="initcheck")
def test_rejects_and_empty(handle):
    BAD, UNSUPPORTED = cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED
    desc = cnnl.createRotaryEmbeddingDescriptor()
    x, cos = blank((1, 4, 2, 8), F32), blank((4, 1, 8), F32)
    args = [handle, desc, x.desc, x.ptr, x.desc, x.ptr, cos.desc, cos.ptr, cos.desc, cos.ptr, None, 0, x.desc, x.ptr,
            x.desc, x.ptr]
    with raises_status(BAD, arg="desc"):
        cnnl.rotaryEmbedding(*args)
    with raises_status(BAD, arg="seq_layout"):
        cnnl.setRotaryEmbeddingDescriptor(desc, False, 99)
    cnnl.setRotaryEmbeddingDescriptor(desc, False, cnnl.CNNL_SEQDATA_NTBC)
    for position, value, arg, status in [(6, blank((5, 1, 8), F32).desc, "cos_desc", BAD),
                                         (4, blank((1, 4, 2, 8), F16).desc, "x2_desc", BAD),
                                         (12, blank((1, 4, 2, 4), F32).desc, "y1_desc", BAD),
                                         (2, blank((1, 4, 2, 8), cnnl.CNNL_DTYPE_INT32).desc, "x1_desc", UNSUPPORTED),
                                         (13, None, "y1", BAD)]:
        bad = list(args)
        bad[position] = value
        with raises_status(status, arg=arg):
            cnnl.rotaryEmbedding(*bad)
    empty = blank((0, 4, 2, 8), F32)
    cnnl.rotaryEmbedding(handle, desc, empty.desc, None, empty.desc, None, cos.desc, cos.ptr, cos.desc, cos.ptr,
                         None, 0, empty.desc, None, empty.desc, None)
    sync(handle)
