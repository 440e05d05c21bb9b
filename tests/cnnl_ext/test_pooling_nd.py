"""3-D pooling with cnnlSetPoolingNdDescriptor_v2 through the pooling ops: max (with indices d*H*W + h*W + w) and
both averages against loop references, ceil mode, dilation, padding, NDHWC and NCDHW, the backward by central
differences and through indices, PyTorch where importable, and bad arguments."""
import itertools

import numpy as np
import pytest

import cnnl

from ..cnnl_nn.nn_helpers import F16, F32, F64, assert_near, blank, directional_check, placed, raises_status, \
    rounded, sync

NDHWC, NCDHW = cnnl.CNNL_LAYOUT_NDHWC, cnnl.CNNL_LAYOUT_NCDHW
MAX = cnnl.CNNL_POOLING_MAX
AVG_IN, AVG_EX = cnnl.CNNL_POOLING_AVERAGE_COUNT_INCLUDE_PADDING, cnnl.CNNL_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING


def extent(n, k, pad, s, d, ceil_mode):
    span = n + 2 * pad - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= n + pad:
        out -= 1
    return out


def reference(x, mode, kernel, pads, strides, dilations, ceil_mode):
    """Loops over output positions of x (N, D, H, W, C): (y, flat argmax indices)."""
    spatial = x.shape[1:4]
    outs = [extent(n, k, p, s, d, ceil_mode) for n, k, p, s, d in zip(spatial, kernel, pads, strides, dilations)]
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


def descriptor(mode, kernel, pads, strides, dilations, ceil_mode):
    desc = cnnl.createPoolingDescriptor()
    cnnl.setPoolingNdDescriptor_v2(desc, mode, cnnl.CNNL_PROPAGATE_NAN, 5, list(kernel), list(pads), list(strides),
                                   list(dilations), ceil_mode)
    return desc


def to_layout(values, layout):
    return values.transpose(0, 4, 1, 2, 3) if layout == NCDHW else values


def from_layout(values, layout):
    return values.transpose(0, 2, 3, 4, 1) if layout == NCDHW else values


GEOMETRIES = [((2, 2, 2), (0, 0, 0), (2, 2, 2), (1, 1, 1), False), ((3, 2, 3), (1, 1, 1), (2, 1, 2), (1, 1, 1), True),
              ((2, 3, 2), (1, 0, 1), (1, 2, 1), (2, 1, 1), False)]


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("mode", [MAX, AVG_IN, AVG_EX])
@pytest.mark.parametrize("layout", [NDHWC, NCDHW])
def test_forward_and_backward(handle, geometry, mode, layout):
    rng = np.random.default_rng(len(str(geometry)) + mode)
    x = rng.permutation(2 * 5 * 6 * 7 * 3).reshape(2, 5, 6, 7, 3).astype(np.float64) / 10  # distinct values
    want, where = reference(x, mode, *geometry)
    desc = descriptor(mode, *geometry)
    xt, yt = placed(to_layout(x, layout), F64, layout), blank(to_layout(want, layout).shape, F64, layout)
    if mode == MAX:
        it = blank(yt.dims, cnnl.CNNL_DTYPE_INT64, layout)
        size = cnnl.getPoolingWithIndexWorkspaceSize(handle, xt.desc, yt.desc)
        cnnl.poolingForwardWithIndex(handle, desc, None, xt.desc, xt.ptr, None, yt.desc, yt.ptr, it.desc, it.ptr,
                                     None, size)
    else:
        cnnl.poolingForward(handle, desc, None, xt.desc, xt.ptr, None, yt.desc, yt.ptr, None, 0)
    sync(handle)
    np.testing.assert_allclose(from_layout(yt.read(), layout), want, rtol=1e-12)
    if mode == MAX:
        np.testing.assert_array_equal(from_layout(it.read(), layout), where)
    dy = rng.standard_normal(want.shape)
    dyt, dxt = placed(to_layout(dy, layout), F64, layout), blank(xt.dims, F64, layout)
    y_arg = it if mode == MAX else None
    cnnl.poolingBackward(handle, desc, None, None if y_arg is None else y_arg.desc, None if y_arg is None else
                         y_arg.ptr, dyt.desc, dyt.ptr, None, None, None, dxt.desc, dxt.ptr)
    sync(handle)
    directional_check(lambda v: np.sum(reference(v, mode, *geometry)[0] * dy), x, from_layout(dxt.read(), layout),
                      rng)


def test_matches_torch_and_half(handle):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rounded(rng, (1, 2, 6, 5, 7), F16)  # NCDHW
    for mode, fn in ((MAX, torch.nn.functional.max_pool3d), (AVG_IN, torch.nn.functional.avg_pool3d)):
        kwargs = dict(kernel_size=(3, 2, 3), stride=(2, 1, 2), padding=(1, 1, 1), ceil_mode=True)
        want = fn(torch.tensor(x), **kwargs).numpy()
        xt, yt = placed(x, F16, NCDHW), blank(want.shape, F16, NCDHW)
        desc = descriptor(mode, (3, 2, 3), (1, 1, 1), (2, 1, 2), (1, 1, 1), True)
        cnnl.poolingForward(handle, desc, None, xt.desc, xt.ptr, None, yt.desc, yt.ptr, None, 0)
        sync(handle)
        assert_near(yt.read(), want, F16)


# runs ops on unwritten tensors: only their checks and empty results matter
@pytest.mark.mlusim_sanitize(exclude="initcheck")
def test_rejects(handle):
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
