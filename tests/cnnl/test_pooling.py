"""Pooling (max with indices, average with and without padding, ceil mode, dilation), its backward, and adaptive
average pooling against loop references; gradients against finite differences; bad arguments. 3-D pooling
(cnnlSetPoolingNdDescriptor_v2 through the same ops): max with indices d*H*W + h*W + w and both averages, NDHWC
and NCDHW, the backward by central differences and through indices, PyTorch where importable."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cnnl

from .nn_helpers import (BF16, F16, F32, F64, FLOATS, assert_near, blank, directional_check, placed, raises_status,
                         rounded, sync)

NHWC, NCHW = cnnl.CNNL_LAYOUT_NHWC, cnnl.CNNL_LAYOUT_NCHW
NDHWC, NCDHW = cnnl.CNNL_LAYOUT_NDHWC, cnnl.CNNL_LAYOUT_NCDHW
MAX = cnnl.CNNL_POOLING_MAX
AVG_IN, AVG_EX = cnnl.CNNL_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, cnnl.CNNL_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING


def extent(n, k, before, after, s, d, ceil_mode):
    span = n + before + after - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= n + before:
        out -= 1
    return out


def reference(x, mode, kernel, pads, strides, dilations, ceil_mode):
    """Loops over output positions; x is (N, H, W, C) float64. Returns (y, flat argmax indices)."""
    n, h, w, c = x.shape
    outs = [extent(size, k, b, a, s, d, ceil_mode) for size, k, (b, a), s, d in
            zip((h, w), kernel, pads, strides, dilations)]
    y, where = np.zeros((n, *outs, c)), np.zeros((n, *outs, c), np.int64)
    for i, j in itertools.product(range(outs[0]), range(outs[1])):
        rows = [i * strides[0] - pads[0][0] + a * dilations[0] for a in range(kernel[0])]
        cols = [j * strides[1] - pads[1][0] + b * dilations[1] for b in range(kernel[1])]
        padded_rows = [r for r in rows if -pads[0][0] <= r < h + pads[0][1]]
        padded_cols = [q for q in cols if -pads[1][0] <= q < w + pads[1][1]]
        inside = [(r, q) for r in rows for q in cols if 0 <= r < h and 0 <= q < w]
        values = np.stack([x[:, r, q, :] for r, q in inside])
        if mode == MAX:
            best = np.argmax(values, axis=0)
            y[:, i, j, :] = np.max(values, axis=0)
            flat = np.array([r * w + q for r, q in inside])
            where[:, i, j, :] = flat[best]
        else:
            count = len(padded_rows) * len(padded_cols) if mode == AVG_IN else len(inside)
            y[:, i, j, :] = values.sum(axis=0) / count
    return y, where


def pool_descriptor(mode, kernel, pads, strides, dilations, ceil_mode, nan=cnnl.CNNL_PROPAGATE_NAN):
    desc = cnnl.createPoolingDescriptor()
    cnnl.setPooling2dDescriptor_v2(desc, mode, nan, kernel[0], kernel[1], pads[0][0], pads[0][1], pads[1][0],
                                   pads[1][1], strides[0], strides[1], dilations[0], dilations[1], ceil_mode)
    return desc


def layout_of(array, layout):
    """Channel-last `array` in `layout` (NCHW, NCDHW: channels moved to axis 1)."""
    return np.moveaxis(array, -1, 1) if layout in (NCHW, NCDHW) else array


def back(array, layout):
    return np.moveaxis(array, 1, -1) if layout in (NCHW, NCDHW) else array


def forward(handle, x, code, layout, geometry, with_index=False, index_code=cnnl.CNNL_DTYPE_INT32):
    mode, kernel, pads, strides, dilations, ceil_mode = geometry
    outs = [extent(size, k, b, a, s, d, ceil_mode) for size, k, (b, a), s, d in
            zip(x.shape[1:3], kernel, pads, strides, dilations)]
    y_shape = (x.shape[0], *outs, x.shape[3])
    xt = placed(layout_of(x, layout), code, layout)
    yt = blank(layout_of(np.empty(y_shape), layout).shape, code, layout)
    desc = pool_descriptor(*geometry)
    if with_index:
        it = blank(yt.dims, index_code, layout)
        size = cnnl.getPoolingWithIndexWorkspaceSize(handle, xt.desc, yt.desc)
        cnnl.poolingForwardWithIndex(handle, desc, None, xt.desc, xt.ptr, None, yt.desc, yt.ptr, it.desc, it.ptr,
                                     None, size)
        sync(handle)
        return back(yt.read(), layout), back(it.read(), layout)
    size = cnnl.getPoolingWorkspaceSize(handle, mode, outs[1], outs[0])
    cnnl.poolingForward(handle, desc, None, xt.desc, xt.ptr, None, yt.desc, yt.ptr, None, size)
    sync(handle)
    return back(yt.read(), layout)


def backward(handle, x, dy, code, layout, geometry, y_tensor=None):
    xt = placed(layout_of(x, layout), code, layout)
    dyt = placed(layout_of(dy, layout), code, layout)
    dxt = blank(xt.dims, code, layout)
    desc = pool_descriptor(*geometry)
    y_desc, y_ptr = (y_tensor.desc, y_tensor.ptr) if y_tensor is not None else (None, None)
    cnnl.poolingBackward(handle, desc, None, y_desc, y_ptr, dyt.desc, dyt.ptr, xt.desc, xt.ptr, None, dxt.desc,
                         dxt.ptr)
    sync(handle)
    return back(dxt.read(), layout)


GEOMETRIES = {  # mode, kernel, pads, strides, dilations, ceil
    "max_3x3_s2_p1": (MAX, (3, 3), ((1, 1), (1, 1)), (2, 2), (1, 1), False),
    "max_ceil": (MAX, (2, 3), ((0, 0), (1, 1)), (2, 2), (1, 1), True),
    "max_dilated": (MAX, (2, 2), ((1, 1), (0, 0)), (1, 2), (2, 2), False),
    "avg_include": (AVG_IN, (3, 3), ((1, 1), (1, 1)), (2, 2), (1, 1), False),
    "avg_exclude": (AVG_EX, (3, 3), ((1, 1), (1, 1)), (2, 2), (1, 1), False),
    "avg_include_ceil": (AVG_IN, (3, 2), ((1, 1), (0, 1)), (2, 2), (1, 1), True),
    "avg_exclude_ceil": (AVG_EX, (2, 2), ((1, 0), (1, 0)), (3, 2), (1, 1), True),
}


def distinct_values(rng, shape, code):
    """Values far apart in every data type, so that the maximum is unique."""
    values = rng.permutation(np.prod(shape)).reshape(shape) / 8.0 - 4.0
    return values.astype(np.float64) if code != BF16 else np.round(values)


@pytest.mark.parametrize("name", sorted(GEOMETRIES))
@pytest.mark.parametrize("layout", [NHWC, NCHW])
def test_forward_matches_reference(handle, name, layout):
    geometry = GEOMETRIES[name]
    rng = np.random.default_rng(0)
    x = distinct_values(rng, (2, 7, 8, 3), F32)
    want, where = reference(x, *geometry)
    assert_near(forward(handle, x, F32, layout, geometry), want, F32)
    if geometry[0] == MAX:
        values, indices = forward(handle, x, F32, layout, geometry, with_index=True)
        assert_near(values, want, F32)
        np.testing.assert_array_equal(indices, where)


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("name", ["max_3x3_s2_p1", "avg_exclude"])
def test_dtypes(handle, code, name):
    geometry = GEOMETRIES[name]
    x = distinct_values(np.random.default_rng(1), (1, 6, 6, 4), code)
    x = rounded(np.random.default_rng(1), x.shape, code) if name.startswith("avg") else x
    want, where = reference(x, *geometry)
    assert_near(forward(handle, x, code, NHWC, geometry), want, code)
    if geometry[0] == MAX:
        index_code = cnnl.CNNL_DTYPE_INT16 if code == F16 else cnnl.CNNL_DTYPE_INT64
        np.testing.assert_array_equal(forward(handle, x, code, NHWC, geometry, True, index_code)[1], where)


def test_nan_propagation(handle):
    x = np.arange(16, dtype=np.float64).reshape(1, 4, 4, 1)
    x[0, 0, 0, 0] = np.nan
    geometry = (MAX, (2, 2), ((0, 0), (0, 0)), (2, 2), (1, 1), False)
    assert np.isnan(forward(handle, x, F32, NHWC, geometry)[0, 0, 0, 0])
    desc = pool_descriptor(*geometry, nan=cnnl.CNNL_NOT_PROPAGATE_NAN)
    xt, yt = placed(x, F32, NHWC), blank((1, 2, 2, 1), F32, NHWC)
    cnnl.poolingForward(handle, desc, None, xt.desc, xt.ptr, None, yt.desc, yt.ptr, None, 0)
    sync(handle)
    assert yt.read()[0, 0, 0, 0] == 5.0


@pytest.mark.parametrize("name", sorted(GEOMETRIES))
def test_backward_is_the_gradient(handle, name):
    geometry = GEOMETRIES[name]
    rng = np.random.default_rng(2)
    x = distinct_values(rng, (2, 7, 8, 3), F64)
    y = forward(handle, x, F64, NHWC, geometry)
    dy = rng.standard_normal(y.shape)
    if geometry[0] == MAX:
        _, indices = forward(handle, x, F64, NHWC, geometry, with_index=True)
        from_indices = backward(handle, x, dy, F64, NHWC, geometry, placed(indices, cnnl.CNNL_DTYPE_INT32, NHWC))
        from_values = backward(handle, x, dy, F64, NHWC, geometry, placed(y, F64, NHWC))
        np.testing.assert_allclose(from_indices, from_values)
        dx = from_values
    else:
        dx = backward(handle, x, dy, F64, NHWC, geometry)
    # small steps keep the maxima where they are
    directional_check(lambda xx: np.sum(forward(handle, xx, F64, NHWC, geometry) * dy), x, dx, rng, step=1e-7)


@pytest.mark.parametrize("code", [F32, F16, BF16])
def test_backward_dtypes_nchw(handle, code):
    geometry = GEOMETRIES["avg_include"]
    rng = np.random.default_rng(3)
    x = rounded(rng, (2, 5, 6, 3), code)
    dy = rounded(rng, reference(x, *geometry)[0].shape, code)
    want = backward(handle, x, dy, F64, NHWC, geometry)
    assert_near(backward(handle, x, dy, code, NCHW, geometry), want, code)


def test_nan_rules_in_padded_windows(handle):
    """All-NaN windows give NaN under either rule: the index of the last NaN with PROPAGATE_NAN (every NaN wins, as
    in PyTorch's CPU kernels), of the first without; a NaN among numbers wins only with PROPAGATE_NAN; padding never
    wins (a window of -inf gives the index of its first input position)."""
    x = np.array([[np.nan, np.nan, 1.0], [np.nan, np.nan, -np.inf], [2.0, np.nan, -np.inf]]).reshape(1, 3, 3, 1)
    geometry = (MAX, (2, 2), ((1, 0), (1, 0)), (2, 2), (1, 1), False)
    for layout in (NHWC, NCHW):
        values, indices = forward(handle, x, F32, layout, geometry, with_index=True)
        np.testing.assert_array_equal(values.ravel(), [np.nan, np.nan, np.nan, np.nan])
        np.testing.assert_array_equal(indices.ravel(), [0, 1, 3, 7])
        for nan, want, where in [(cnnl.CNNL_NOT_PROPAGATE_NAN, [np.nan, 1.0, 2.0, -np.inf], [0, 2, 6, 5])]:
            desc = pool_descriptor(*geometry, nan=nan)
            xt, yt = placed(layout_of(x, layout), F32, layout), blank(layout_of(np.empty((1, 2, 2, 1)), layout).shape,
                                                                         F32, layout)
            it = blank(yt.dims, cnnl.CNNL_DTYPE_INT64, layout)
            cnnl.poolingForwardWithIndex(handle, desc, None, xt.desc, xt.ptr, None, yt.desc, yt.ptr, it.desc, it.ptr,
                                         None, 0)
            sync(handle)
            np.testing.assert_array_equal(back(yt.read(), layout).ravel(), want)
            np.testing.assert_array_equal(back(it.read(), layout).ravel(), where)


@pytest.mark.parametrize("code", [F32, F16, BF16])
@pytest.mark.parametrize("name", ["max_dilated", "avg_exclude_ceil", "max_ceil"])
def test_alpha_beta_and_layouts(handle, code, name):
    """y = alpha * pool(x) + beta * y and dx = alpha * grad + beta * dx agree between NHWC and NCHW."""
    geometry = GEOMETRIES[name]
    rng = np.random.default_rng(6)
    x = distinct_values(rng, (2, 7, 9, 5), code) if geometry[0] == MAX else rounded(rng, (2, 7, 9, 5), code)
    want, where = reference(x, *geometry)
    y0 = rounded(rng, want.shape, code)
    dy = rounded(rng, want.shape, code)
    dx0 = rounded(rng, x.shape, code)
    for layout in (NHWC, NCHW):
        desc = pool_descriptor(*geometry)
        xt, yt = placed(layout_of(x, layout), code, layout), placed(layout_of(y0, layout), code, layout)
        cnnl.poolingForward(handle, desc, 0.5, xt.desc, xt.ptr, -2.0, yt.desc, yt.ptr, None, 0)
        sync(handle)
        assert_near(back(yt.read(), layout), 0.5 * want - 2.0 * y0, code,
                    scale=np.maximum(1.0, 0.5 * np.abs(want) + 2.0 * np.abs(y0)))
        dyt, dxt = placed(layout_of(dy, layout), code, layout), placed(layout_of(dx0, layout), code, layout)
        if geometry[0] == MAX:
            it = placed(layout_of(where, layout), cnnl.CNNL_DTYPE_INT32, layout)
            cnnl.poolingBackward(handle, desc, 3.0, it.desc, it.ptr, dyt.desc, dyt.ptr, xt.desc, xt.ptr, 0.25,
                                 dxt.desc, dxt.ptr)
            grad = np.zeros(x.shape)
            n, _, w, c = x.shape
            for index in np.ndindex(*where.shape):
                flat = where[index]
                grad[index[0], flat // w, flat % w, index[3]] += dy[index]
        else:
            cnnl.poolingBackward(handle, desc, 3.0, None, None, dyt.desc, dyt.ptr, None, None, 0.25, dxt.desc,
                                 dxt.ptr)
            grad = backward(handle, x, dy, F64, NHWC, geometry)
        sync(handle)
        assert_near(back(dxt.read(), layout), 3.0 * grad + 0.25 * dx0, code,
                    scale=np.maximum(1.0, 3.0 * np.abs(grad) + 0.25 * np.abs(dx0)))


@pytest.mark.parametrize("layout", [NHWC, NCHW])
def test_adaptive_backward_layouts(handle, layout):
    rng = np.random.default_rng(7)
    dy = rounded(rng, (2, 3, 4, 5), F16)
    for code in (F64, F16):
        dyt, dxt = placed(layout_of(dy, layout), code, layout), blank(layout_of(np.empty((2, 7, 9, 5)), layout).shape,
                                                                         code, layout)
        cnnl.adaptivePoolingBackward(handle, dyt.desc, dyt.ptr, None, None, AVG_IN, dxt.desc, dxt.ptr)
        sync(handle)
        got = back(dxt.read(), layout)
        if code == F64:
            want = got
        else:
            assert_near(got, want, F16)


@settings(max_examples=20)
@given(data=st.data())
def test_pooling_property(data):
    handle = cnnl.create()
    mode = data.draw(st.sampled_from([MAX, AVG_IN, AVG_EX]))
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(2))
    dilations = (1, 1) if mode != MAX else tuple(data.draw(st.integers(1, 2)) for _ in range(2))
    pads = tuple((data.draw(st.integers(0, k // 2)), data.draw(st.integers(0, k // 2))) for k in kernel)
    strides = tuple(data.draw(st.integers(1, 3)) for _ in range(2))
    ceil_mode = data.draw(st.booleans())
    spatial = tuple(data.draw(st.integers(d * (k - 1) + 1, 7)) for k, d in zip(kernel, dilations))
    geometry = (mode, kernel, pads, strides, dilations, ceil_mode)
    x = distinct_values(np.random.default_rng(data.draw(st.integers(0, 99))), (1, *spatial, 2), F32)
    assert_near(forward(handle, x, F32, data.draw(st.sampled_from([NHWC, NCHW])), geometry),
                reference(x, *geometry)[0], F32)


# ---- adaptive ----------------------------------------------------------------------------------------------------

def adaptive_reference(x, out_hw):
    n, h, w, c = x.shape
    y = np.zeros((n, *out_hw, c))
    for i, j in itertools.product(range(out_hw[0]), range(out_hw[1])):
        r0, r1 = (i * h) // out_hw[0], -((-(i + 1) * h) // out_hw[0])
        c0, c1 = (j * w) // out_hw[1], -((-(j + 1) * w) // out_hw[1])
        y[:, i, j, :] = x[:, r0:r1, c0:c1, :].mean(axis=(1, 2))
    return y


def adaptive(handle, x, out_hw, code, layout=NHWC):
    xt = placed(layout_of(x, layout), code, layout)
    yt = blank(layout_of(np.empty((x.shape[0], *out_hw, x.shape[3])), layout).shape, code, layout)
    size = cnnl.getAdaptivePoolingForwardWorkspaceSize(handle, xt.desc, AVG_IN, yt.desc)
    cnnl.adaptivePoolingForward_v2(handle, xt.desc, xt.ptr, AVG_IN, None, size, yt.desc, yt.ptr, None, None)
    sync(handle)
    return back(yt.read(), layout)


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("out_hw", [(1, 1), (3, 2), (5, 7)])
def test_adaptive_forward(handle, code, out_hw):
    x = rounded(np.random.default_rng(4), (2, 5, 7, 3), code)
    assert_near(adaptive(handle, x, out_hw, code, NCHW if code == F32 else NHWC), adaptive_reference(x, out_hw),
                code)


def test_adaptive_backward_is_the_gradient(handle):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 5, 7, 3))
    dy = rng.standard_normal((2, 3, 4, 3))
    dyt, dxt = placed(dy, F64, NHWC), blank(x.shape, F64, NHWC)
    cnnl.adaptivePoolingBackward(handle, dyt.desc, dyt.ptr, None, None, AVG_IN, dxt.desc, dxt.ptr)
    sync(handle)
    directional_check(lambda xx: np.sum(adaptive(handle, xx, (3, 4), F64) * dy), x, dxt.read(), rng)


def adaptive_max_reference(x, out_hw):
    """(values, flat argmax h * W + w, first maximum winning) of adaptive max pooling of x (N, H, W, C)."""
    n, h, w, c = x.shape
    y, where = np.zeros((n, *out_hw, c)), np.zeros((n, *out_hw, c), np.int64)
    for i, j in itertools.product(range(out_hw[0]), range(out_hw[1])):
        r0, r1 = (i * h) // out_hw[0], -((-(i + 1) * h) // out_hw[0])
        c0, c1 = (j * w) // out_hw[1], -((-(j + 1) * w) // out_hw[1])
        window = x[:, r0:r1, c0:c1, :].reshape(n, -1, c)
        best = np.argmax(window, axis=1)
        y[:, i, j, :] = window.max(axis=1)
        rows, cols = np.divmod(best, c1 - c0)
        where[:, i, j, :] = (rows + r0) * w + cols + c0
    return y, where


@pytest.mark.parametrize("code, index_code", [(F32, cnnl.CNNL_DTYPE_INT32), (F16, cnnl.CNNL_DTYPE_INT16),
                                              (F64, cnnl.CNNL_DTYPE_INT64), (BF16, cnnl.CNNL_DTYPE_INT32)])
@pytest.mark.parametrize("out_hw", [(1, 1), (3, 2), (5, 7), (2, 4)])
@pytest.mark.parametrize("layout", [NHWC, NCHW])
def test_adaptive_max_forward_and_backward(handle, code, index_code, out_hw, layout):
    rng = np.random.default_rng(11)
    x = distinct_values(rng, (2, 5, 7, 3), code)
    want, where = adaptive_max_reference(x, out_hw)
    xt = placed(layout_of(x, layout), code, layout)
    shape = layout_of(np.empty((2, *out_hw, 3)), layout).shape
    yt, it = blank(shape, code, layout), blank(shape, index_code, layout)
    cnnl.adaptivePoolingForward(handle, xt.desc, xt.ptr, MAX, yt.desc, yt.ptr, it.desc, it.ptr)
    sync(handle)
    assert_near(back(yt.read(), layout), want, code)
    assert np.array_equal(back(it.read(), layout), where)
    dy = rounded(rng, (2, *out_hw, 3), code)
    dyt, dxt = placed(layout_of(dy, layout), code, layout), blank(layout_of(x, layout).shape, code, layout)
    cnnl.adaptivePoolingBackward(handle, dyt.desc, dyt.ptr, it.desc, it.ptr, MAX, dxt.desc, dxt.ptr)
    sync(handle)
    expected = np.zeros((2, 5 * 7, 3))
    for b, k in itertools.product(range(2), range(3)):
        np.add.at(expected[b, :, k], where[b, ..., k].ravel(), dy[b, ..., k].ravel())
    assert_near(back(dxt.read(), layout), expected.reshape(x.shape), code)


def test_adaptive_max_propagates_nan(handle):
    x = np.arange(2 * 4 * 4, dtype=np.float64).reshape(1, 4, 4, 2)
    x[0, 1, 0, 0] = np.nan
    xt, yt, it = placed(x, F32, NHWC), blank((1, 2, 2, 2), F32, NHWC), blank((1, 2, 2, 2), cnnl.CNNL_DTYPE_INT64,
                                                                              NHWC)
    cnnl.adaptivePoolingForward(handle, xt.desc, xt.ptr, MAX, yt.desc, yt.ptr, it.desc, it.ptr)
    sync(handle)
    assert np.isnan(yt.read()[0, 0, 0, 0]) and it.read()[0, 0, 0, 0] == 4
    assert yt.read()[0, 1, 1, 1] == x[0, 3, 3, 1] and it.read()[0, 1, 1, 1] == 15


# ---- bad arguments -----------------------------------------------------------------------------------------------

def test_descriptor_rejects():
    desc = cnnl.createPoolingDescriptor()
    args = [MAX, cnnl.CNNL_PROPAGATE_NAN, 3, 3, 1, 1, 1, 1, 2, 2, 1, 1, False]
    for position, value, arg, status in [(0, 9, "mode", cnnl.CNNL_STATUS_BAD_PARAM),
                                         (1, 4, "maxpooling_nan_opt", cnnl.CNNL_STATUS_BAD_PARAM),
                                         (2, 0, "window_height", cnnl.CNNL_STATUS_BAD_PARAM),
                                         (4, -1, "top_padding", cnnl.CNNL_STATUS_BAD_PARAM),
                                         (5, 2, "bottom_padding", cnnl.CNNL_STATUS_BAD_PARAM),
                                         (9, 0, "horizon_stride", cnnl.CNNL_STATUS_BAD_PARAM),
                                         (10, 0, "dilation_h", cnnl.CNNL_STATUS_BAD_PARAM)]:
        bad = list(args)
        bad[position] = value
        with raises_status(status, arg=arg):
            cnnl.setPooling2dDescriptor_v2(desc, *bad)
    cnnl.setPooling2dDescriptor(desc, *args[:10])
    assert desc.is_set


def test_forward_rejects(handle):
    desc = pool_descriptor(*GEOMETRIES["max_3x3_s2_p1"])
    x, y = blank((1, 6, 6, 2), F32, NHWC), blank((1, 3, 3, 2), F32, NHWC)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="y_desc"):
        cnnl.poolingForward(handle, desc, None, x.desc, x.ptr, None, blank((1, 4, 3, 2), F32, NHWC).desc, y.ptr,
                            None, 0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="y_desc"):
        cnnl.poolingForward(handle, desc, None, x.desc, x.ptr, None, blank((1, 3, 3, 2), F32, NCHW).desc, y.ptr,
                            None, 0)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="x_desc"):
        cnnl.poolingForward(handle, desc, None, blank((1, 6, 6, 2), cnnl.CNNL_DTYPE_INT32, NHWC).desc, x.ptr, None,
                            blank((1, 3, 3, 2), cnnl.CNNL_DTYPE_INT32, NHWC).desc, y.ptr, None, 0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="pooling_desc"):
        cnnl.poolingForward(handle, cnnl.createPoolingDescriptor(), None, x.desc, x.ptr, None, y.desc, y.ptr, None,
                            0)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="index_desc"):
        cnnl.poolingForwardWithIndex(handle, desc, None, x.desc, x.ptr, None, y.desc, y.ptr,
                                     blank((1, 3, 3, 2), F32, NHWC).desc, y.ptr, None, 0)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="pooling_desc"):
        cnnl.poolingForwardWithIndex(handle, pool_descriptor(*GEOMETRIES["avg_include"]), None, x.desc, x.ptr, None,
                                     y.desc, y.ptr, blank((1, 3, 3, 2), cnnl.CNNL_DTYPE_INT32, NHWC).desc, y.ptr,
                                     None, 0)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="extra_device_input"):
        cnnl.poolingForward_v2(handle, desc, None, x.desc, x.ptr, None, x.ptr, y.desc, y.ptr, None, 0)
    big = blank((1, 200, 200, 1), F32, NHWC)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="index_desc"):
        cnnl.poolingForwardWithIndex(handle, desc, None, big.desc, big.ptr, None, blank((1, 100, 100, 1), F32,
                                     NHWC).desc, big.ptr, blank((1, 100, 100, 1), cnnl.CNNL_DTYPE_INT16, NHWC).desc,
                                     big.ptr, None, 0)


def test_adaptive_rejects(handle):
    x, y = blank((1, 6, 6, 2), F32, NHWC), blank((1, 3, 3, 2), F32, NHWC)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="mode"):
        cnnl.adaptivePoolingForward(handle, x.desc, x.ptr, 7, y.desc, y.ptr, None, None)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="index_desc"):  # MAX writes indices: it needs them
        cnnl.adaptivePoolingForward(handle, x.desc, x.ptr, MAX, y.desc, y.ptr, None, None)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="index_desc"):
        cnnl.adaptivePoolingForward(handle, x.desc, x.ptr, MAX, y.desc, y.ptr, y.desc, y.ptr)  # float indices
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="index_desc"):
        cnnl.adaptivePoolingBackward(handle, y.desc, y.ptr, blank((1, 3, 2, 2), cnnl.CNNL_DTYPE_INT32, NHWC).desc, y.ptr, MAX, x.desc,
                                     x.ptr)
    big, small = blank((1, 200, 200, 1), F32, NHWC), blank((1, 2, 2, 1), F32, NHWC)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="index_desc"):  # 40000 positions do not fit INT16
        cnnl.adaptivePoolingForward(handle, big.desc, big.ptr, MAX, small.desc, small.ptr,
                                    blank((1, 2, 2, 1), cnnl.CNNL_DTYPE_INT16, NHWC).desc, small.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.adaptivePoolingForward(handle, x.desc, x.ptr, AVG_IN, blank((1, 3, 3, 3), F32, NHWC).desc, y.ptr,
                                    None, None)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="index_desc"):
        cnnl.adaptivePoolingForward(handle, x.desc, x.ptr, AVG_IN, y.desc, y.ptr, y.desc, y.ptr)


def test_backward_rejects(handle):
    desc = pool_descriptor(*GEOMETRIES["max_3x3_s2_p1"])
    x, y = blank((1, 6, 6, 2), F32, NHWC), blank((1, 3, 3, 2), F32, NHWC)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="y_desc"):
        cnnl.poolingBackward(handle, desc, None, blank((1, 2, 3, 2), cnnl.CNNL_DTYPE_INT32, NHWC).desc, y.ptr,
                             y.desc, y.ptr, x.desc, x.ptr, None, x.desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="diff_y_desc"):
        cnnl.poolingBackward(handle, desc, None, y.desc, y.ptr, blank((1, 2, 3, 2), F32, NHWC).desc, y.ptr, x.desc,
                             x.ptr, None, x.desc, x.ptr)


# ---- 3-D pooling: cnnlSetPoolingNdDescriptor_v2 ---------------------------------------------------------------------

def reference_3d(x, mode, kernel, pads, strides, dilations, ceil_mode):
    """Loops over output positions of x (N, D, H, W, C), symmetric `pads`: (y, flat argmax indices)."""
    spatial = x.shape[1:4]
    outs = [extent(n, k, p, p, s, d, ceil_mode) for n, k, p, s, d in zip(spatial, kernel, pads, strides, dilations)]
    y, where = np.zeros((x.shape[0], *outs, x.shape[4])), np.zeros((x.shape[0], *outs, x.shape[4]), np.int64)
    for position in itertools.product(*map(range, outs)):
        taps = [[o * s - p + k * d for k in range(kk)] for o, s, p, d, kk in zip(position, strides, pads, dilations,
                                                                                 kernel)]
        inside = [t for t in itertools.product(*taps) if all(0 <= v < n for v, n in zip(t, spatial))]
        padded = [t for t in itertools.product(*taps) if all(-p <= v < n + p for v, n, p in zip(t, spatial, pads))]
        values = np.stack([x[(slice(None),) + t] for t in inside])
        index = (slice(None),) + position
        if mode == MAX:
            best = values.argmax(axis=0)
            y[index] = values.max(axis=0)
            flat = np.array([(a * spatial[1] + b) * spatial[2] + c for a, b, c in inside])
            where[index] = flat[best]
        else:
            y[index] = values.sum(axis=0) / (len(padded) if mode == AVG_IN else len(inside))
    return y, where


def descriptor_3d(mode, kernel, pads, strides, dilations, ceil_mode):
    desc = cnnl.createPoolingDescriptor()
    cnnl.setPoolingNdDescriptor_v2(desc, mode, cnnl.CNNL_PROPAGATE_NAN, 5, list(kernel), list(pads), list(strides),
                                   list(dilations), ceil_mode)
    return desc


GEOMETRIES_3D = [((2, 2, 2), (0, 0, 0), (2, 2, 2), (1, 1, 1), False),
                 ((3, 2, 3), (1, 1, 1), (2, 1, 2), (1, 1, 1), True),
                 ((2, 3, 2), (1, 0, 1), (1, 2, 1), (2, 1, 1), False)]


@pytest.mark.parametrize("geometry", GEOMETRIES_3D)
@pytest.mark.parametrize("mode", [MAX, AVG_IN, AVG_EX])
@pytest.mark.parametrize("layout", [NDHWC, NCDHW])
def test_3d_forward_and_backward(handle, geometry, mode, layout):
    rng = np.random.default_rng(len(str(geometry)) + mode)
    x = rng.permutation(2 * 5 * 6 * 7 * 3).reshape(2, 5, 6, 7, 3).astype(np.float64) / 10  # distinct values
    want, where = reference_3d(x, mode, *geometry)
    desc = descriptor_3d(mode, *geometry)
    xt, yt = placed(layout_of(x, layout), F64, layout), blank(layout_of(want, layout).shape, F64, layout)
    if mode == MAX:
        it = blank(yt.dims, cnnl.CNNL_DTYPE_INT64, layout)
        size = cnnl.getPoolingWithIndexWorkspaceSize(handle, xt.desc, yt.desc)
        cnnl.poolingForwardWithIndex(handle, desc, None, xt.desc, xt.ptr, None, yt.desc, yt.ptr, it.desc, it.ptr,
                                     None, size)
    else:
        cnnl.poolingForward(handle, desc, None, xt.desc, xt.ptr, None, yt.desc, yt.ptr, None, 0)
    sync(handle)
    np.testing.assert_allclose(back(yt.read(), layout), want, rtol=1e-12)
    if mode == MAX:
        np.testing.assert_array_equal(back(it.read(), layout), where)
    dy = rng.standard_normal(want.shape)
    dyt, dxt = placed(layout_of(dy, layout), F64, layout), blank(xt.dims, F64, layout)
    y_arg = it if mode == MAX else None
    cnnl.poolingBackward(handle, desc, None, None if y_arg is None else y_arg.desc, None if y_arg is None else
                         y_arg.ptr, dyt.desc, dyt.ptr, None, None, None, dxt.desc, dxt.ptr)
    sync(handle)
    directional_check(lambda v: np.sum(reference_3d(v, mode, *geometry)[0] * dy), x, back(dxt.read(), layout),
                      rng)


def test_3d_matches_torch_and_half(handle):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rounded(rng, (1, 2, 6, 5, 7), F16)  # NCDHW
    for mode, fn in ((MAX, torch.nn.functional.max_pool3d), (AVG_IN, torch.nn.functional.avg_pool3d)):
        kwargs = dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), padding=(1, 1, 1), ceil_mode=True)
        want = fn(torch.tensor(x), **kwargs).numpy()
        xt, yt = placed(x, F16, NCDHW), blank(want.shape, F16, NCDHW)
        desc = descriptor_3d(mode, (3, 2, 3), (1, 1, 1), (2, 1, 2), (1, 1, 1), True)
        cnnl.poolingForward(handle, desc, None, xt.desc, xt.ptr, None, yt.desc, yt.ptr, None, 0)
        sync(handle)
        assert_near(yt.read(), want, F16)


# runs ops on unwritten tensors: only their checks and empty results matter
@pytest.mark.mlusim_sanitize(exclude="initcheck")
def test_3d_rejects(handle):
    BAD, UNSUPPORTED = cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED
    desc = cnnl.createPoolingDescriptor()
    with raises_status(BAD, arg="nbDims"):
        cnnl.setPoolingNdDescriptor_v2(desc, MAX, 0, 6, [2] * 4, [0] * 4, [1] * 4, [1] * 4, False)
    with raises_status(BAD, arg="window"):
        cnnl.setPoolingNdDescriptor_v2(desc, MAX, 0, 5, [2, 2], [0] * 3, [1] * 3, [1] * 3, False)
    with raises_status(BAD, arg="padding"):
        cnnl.setPoolingNdDescriptor_v2(desc, MAX, 0, 5, [2] * 3, [2] * 3, [1] * 3, [1] * 3, False)
    cnnl.setPoolingNdDescriptor_v2(desc, MAX, 0, 5, [2] * 3, [0, 1, 0, 1, 0, 0], [1] * 3, [1] * 3, False)
    x, y = blank((1, 4, 4, 4, 2), F32, NDHWC), blank((1, 4, 4, 3, 2), F32, NDHWC)
    cnnl.poolingForward(handle, desc, None, x.desc, x.ptr, None, y.desc, y.ptr, None, 0)
    sync(handle)
    four_d = blank((1, 4, 4, 2), F32, cnnl.CNNL_LAYOUT_NHWC)
    with raises_status(BAD, arg="x_desc"):  # a 3-D descriptor with 4-D tensors
        cnnl.poolingForward(handle, desc, None, four_d.desc, four_d.ptr, None, four_d.desc, four_d.ptr, None, 0)
    with raises_status(BAD, arg="y_desc"):
        cnnl.poolingForward(handle, desc, None, x.desc, x.ptr, None, x.desc, x.ptr, None, 0)
    with raises_status(UNSUPPORTED, arg="input_desc"):
        cnnl.adaptivePoolingForward(handle, x.desc, x.ptr, AVG_IN, y.desc, y.ptr, None, None)
