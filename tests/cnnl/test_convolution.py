"""Convolution forward, backward data and backward filter against a direct-summation float64 reference, in NHWC,
NCHW (and HWCN filters), 2-D and 3-D, groups and depthwise; gradients against finite differences; bad arguments."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cnnl

from .nn_helpers import (F16, F32, F64, FLOATS, BF16, assert_near, blank, directional_check, placed, raises_status,
                         rounded, sync)

NHWC, NCHW, HWCN = cnnl.CNNL_LAYOUT_NHWC, cnnl.CNNL_LAYOUT_NCHW, cnnl.CNNL_LAYOUT_HWCN
NDHWC, NCDHW = cnnl.CNNL_LAYOUT_NDHWC, cnnl.CNNL_LAYOUT_NCDHW
CHANNEL_FIRST = (NCHW, NCDHW)


def to_layout(array, layout):
    """A channel-last (N, *S, C) array in the dims order of `layout`."""
    if layout in CHANNEL_FIRST:
        return np.moveaxis(array, -1, 1)
    if layout == HWCN:
        return np.moveaxis(array, 0, -1)
    return array


def from_layout(array, layout):
    if layout in CHANNEL_FIRST:
        return np.moveaxis(array, 1, -1)
    if layout == HWCN:
        return np.moveaxis(array, -1, 0)
    return array


def extent(n, before, after, k, s, d):
    return (n + before + after - d * (k - 1) - 1) // s + 1


def reference(x, w, pads, strides, dilations, groups):
    """Direct summation: y[n, o.., co] = sum over kernel positions and the group's channels."""
    spatial = x.shape[1:-1]
    padded = np.pad(x, [(0, 0)] + list(pads) + [(0, 0)])
    out_spatial = [extent(n, b, a, k, s, d) for n, (b, a), k, s, d in zip(spatial, pads, w.shape[1:-1], strides,
                                                                         dilations)]
    per_group, out_per_group = w.shape[-1], w.shape[0] // groups
    y = np.zeros((x.shape[0], *out_spatial, w.shape[0]))
    for co in range(w.shape[0]):
        g = co // out_per_group
        for position in itertools.product(*[range(k) for k in w.shape[1:-1]]):
            window = tuple(slice(p * d, p * d + s * (o - 1) + 1, s)
                           for p, d, s, o in zip(position, dilations, strides, out_spatial))
            patch = padded[(slice(None),) + window + (slice(g * per_group, (g + 1) * per_group),)]
            y[..., co] += patch @ w[(co,) + position]
    return y


def conv_descriptor(rank, pads, strides, dilations, groups, code=F32):
    desc = cnnl.createConvolutionDescriptor()
    cnnl.setConvolutionDescriptor(desc, rank, [p for pair in pads for p in pair], list(strides), list(dilations),
                                  groups, code)
    return desc


def problem(rng, code, batch, spatial, channels, out_channels, kernel, groups):
    x = rounded(rng, (batch, *spatial, channels), code)
    w = rounded(rng, (out_channels, *kernel, channels // groups), code, -1, 1)
    return x, w


def forward(handle, x, w, code, layouts, pads, strides, dilations, groups, bias=None, alpha=None, beta=None,
            y_init=None):
    x_layout, w_layout = layouts
    rank = x.ndim
    y_shape = (x.shape[0],) + tuple(extent(n, b, a, k, s, d) for n, (b, a), k, s, d in
                                    zip(x.shape[1:-1], pads, w.shape[1:-1], strides, dilations)) + (w.shape[0],)
    xt, wt = placed(to_layout(x, x_layout), code, x_layout), placed(to_layout(w, w_layout), code, w_layout)
    yt = (placed(to_layout(y_init, x_layout), code, x_layout) if y_init is not None
          else blank(to_layout(np.empty(y_shape), x_layout).shape, code, x_layout))
    conv = conv_descriptor(rank, pads, strides, dilations, groups, code)
    algo = cnnl.getConvolutionForwardAlgorithm(handle, conv, xt.desc, wt.desc, yt.desc,
                                               cnnl.CNNL_CONVOLUTION_FWD_FASTEST)
    bt = placed(bias, code) if bias is not None else None
    size = cnnl.getConvolutionForwardWorkspaceSize(handle, xt.desc, wt.desc, yt.desc, bt and bt.desc, conv, algo)
    workspace = blank((max(size, 1),), cnnl.CNNL_DTYPE_INT8).ptr if size else None
    cnnl.convolutionForward(handle, conv, algo, alpha, xt.desc, xt.ptr, wt.desc, wt.ptr, bt and bt.desc,
                            bt and bt.ptr, workspace, size, beta, yt.desc, yt.ptr)
    sync(handle)
    return from_layout(yt.read(), x_layout)


def backward_data(handle, dy, w, x_shape, code, layouts, pads, strides, dilations, groups):
    x_layout, w_layout = layouts
    dyt, wt = placed(to_layout(dy, x_layout), code, x_layout), placed(to_layout(w, w_layout), code, w_layout)
    dxt = blank(to_layout(np.empty(x_shape), x_layout).shape, code, x_layout)
    conv = conv_descriptor(dy.ndim, pads, strides, dilations, groups, code)
    algo = cnnl.getConvolutionBackwardDataAlgorithm(handle, wt.desc, dyt.desc, conv, dxt.desc,
                                                    cnnl.CNNL_CONVOLUTION_BWD_DATA_FASTEST)
    size = cnnl.getConvolutionBackwardDataWorkspaceSize(handle, wt.desc, dyt.desc, conv, dxt.desc, algo)
    workspace = blank((size,), cnnl.CNNL_DTYPE_INT8).ptr if size else None
    cnnl.convolutionBackwardData(handle, None, wt.desc, wt.ptr, dyt.desc, dyt.ptr, conv, algo, workspace, size, None,
                                 dxt.desc, dxt.ptr)
    sync(handle)
    return from_layout(dxt.read(), x_layout)


def backward_filter(handle, x, dy, w_shape, code, layouts, pads, strides, dilations, groups):
    x_layout, w_layout = layouts
    xt, dyt = placed(to_layout(x, x_layout), code, x_layout), placed(to_layout(dy, x_layout), code, x_layout)
    dwt = blank(to_layout(np.empty(w_shape), w_layout).shape, code, w_layout)
    conv = conv_descriptor(x.ndim, pads, strides, dilations, groups, code)
    algo = cnnl.getConvolutionBackwardFilterAlgorithm(handle, conv, xt.desc, dyt.desc, dwt.desc,
                                                      cnnl.CNNL_CONVOLUTION_BWD_FILTER_FASTEST)
    size = cnnl.getConvolutionBackwardFilterWorkspaceSize(handle, xt.desc, dyt.desc, dwt.desc, conv, algo)
    workspace = blank((size,), cnnl.CNNL_DTYPE_INT8).ptr if size else None
    cnnl.convolutionBackwardFilter(handle, None, xt.desc, xt.ptr, dyt.desc, dyt.ptr, conv, algo, workspace, size,
                                   None, dwt.desc, dwt.ptr)
    sync(handle)
    return from_layout(dwt.read(), w_layout)


def term_scale(x, w, groups):
    """A bound on |each output|: the sum of |x| * |w| over a window (for relative tolerances)."""
    return np.abs(x).max() * np.abs(w).sum(axis=tuple(range(1, w.ndim))).max() + 1.0


CASES = {  # name: (spatial, channels, out_channels, kernel, pads, strides, dilations, groups)
    "3x3": ((6, 5), 3, 4, (3, 3), ((1, 1), (1, 1)), (1, 1), (1, 1), 1),
    "1x1": ((4, 4), 5, 6, (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), 1),
    "strided_asymmetric": ((7, 6), 2, 3, (3, 2), ((1, 0), (0, 1)), (2, 1), (1, 1), 1),
    "dilated": ((7, 7), 2, 2, (3, 3), ((2, 2), (2, 2)), (1, 1), (2, 2), 1),
    "groups": ((5, 5), 4, 6, (3, 3), ((1, 1), (1, 1)), (1, 2), (1, 1), 2),
    "depthwise": ((5, 6), 3, 6, (3, 3), ((1, 1), (1, 1)), (1, 1), (1, 1), 3),
    "3d": ((4, 4, 3), 2, 3, (2, 3, 2), ((1, 0), (1, 1), (0, 1)), (1, 2, 1), (1, 1, 1), 1),
}


def layouts_for(rank):
    return [(NDHWC, NDHWC), (NCDHW, NCDHW)] if rank == 5 else [(NHWC, NHWC), (NCHW, NCHW), (NHWC, HWCN)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_matches_direct_summation(handle, name):
    spatial, c, co, kernel, pads, strides, dilations, groups = CASES[name]
    rng = np.random.default_rng(1)
    x, w = problem(rng, F32, 2, spatial, c, co, kernel, groups)
    want = reference(x, w, pads, strides, dilations, groups)
    for layouts in layouts_for(len(spatial) + 2):
        got = forward(handle, x, w, F32, layouts, pads, strides, dilations, groups)
        assert_near(got, want, F32, term_scale(x, w, groups), what=f"{name} {layouts}")


@pytest.mark.parametrize("code", FLOATS)
def test_forward_dtypes_bias_alpha_beta(handle, code):
    spatial, c, co, kernel, pads, strides, dilations, groups = CASES["3x3"]
    rng = np.random.default_rng(2)
    x, w = problem(rng, code, 2, spatial, c, co, kernel, groups)
    bias = rounded(rng, (co,), code)
    y0 = rounded(rng, (2, *spatial, co), code)
    got = forward(handle, x, w, code, (NHWC, NHWC), pads, strides, dilations, groups, bias, 0.5, 2.0, y0)
    want = 0.5 * reference(x, w, pads, strides, dilations, groups) + 2.0 * y0 + bias
    assert_near(got, want, code, 4 * term_scale(x, w, groups), what=f"dtype {code}")


@pytest.mark.parametrize("name", ["3x3", "strided_asymmetric", "groups", "depthwise", "3d", "dilated"])
def test_backward_ops_are_the_gradients_of_forward(handle, name):
    """Finite differences of the device's own float64 forward against its backward data / filter."""
    spatial, c, co, kernel, pads, strides, dilations, groups = CASES[name]
    rng = np.random.default_rng(3)
    x, w = problem(rng, F64, 2, spatial, c, co, kernel, groups)
    layouts = layouts_for(len(spatial) + 2)[0]
    geometry = (layouts, pads, strides, dilations, groups)
    dy = rng.standard_normal(forward(handle, x, w, F64, *geometry).shape)
    dx = backward_data(handle, dy, w, x.shape, F64, *geometry)
    dw = backward_filter(handle, x, dy, w.shape, F64, *geometry)
    directional_check(lambda xx: np.sum(forward(handle, xx, w, F64, *geometry) * dy), x, dx, rng)
    directional_check(lambda ww: np.sum(forward(handle, x, ww, F64, *geometry) * dy), w, dw, rng)


@pytest.mark.parametrize("code", [F32, F16, BF16])
@pytest.mark.parametrize("layouts", [(NHWC, NHWC), (NCHW, NCHW)])
def test_backward_dtypes_and_layouts(handle, code, layouts):
    spatial, c, co, kernel, pads, strides, dilations, groups = CASES["strided_asymmetric"]
    rng = np.random.default_rng(4)
    x, w = problem(rng, code, 2, spatial, c, co, kernel, groups)
    geometry = (layouts, pads, strides, dilations, groups)
    y = reference(x, w, pads, strides, dilations, groups)
    dy = rounded(rng, y.shape, code)
    # the float64 device results are verified against finite differences above; compare other types with them
    want_dx = backward_data(handle, dy, w, x.shape, F64, *geometry)
    want_dw = backward_filter(handle, x, dy, w.shape, F64, *geometry)
    scale = 4 * (np.abs(dy).max() * np.abs(w).sum() + np.abs(x).max() * np.abs(dy).sum() / co + 1)
    assert_near(backward_data(handle, dy, w, x.shape, code, *geometry), want_dx, code, scale)
    assert_near(backward_filter(handle, x, dy, w.shape, code, *geometry), want_dw, code, scale)


@settings(max_examples=15)
@given(data=st.data())
def test_forward_property(data):
    handle = cnnl.create()
    groups = data.draw(st.sampled_from([1, 2]))
    c = groups * data.draw(st.integers(1, 3))
    co = groups * data.draw(st.integers(1, 3))
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(2))
    dilations = tuple(data.draw(st.integers(1, 2)) for _ in range(2))
    pads = tuple((data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in range(2))
    strides = tuple(data.draw(st.integers(1, 3)) for _ in range(2))
    spatial = tuple(data.draw(st.integers(d * (k - 1) + 1, 8)) for k, d in zip(kernel, dilations))
    layouts = data.draw(st.sampled_from(layouts_for(4)))
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    x, w = problem(rng, F32, data.draw(st.integers(1, 3)), spatial, c, co, kernel, groups)
    got = forward(handle, x, w, F32, layouts, pads, strides, dilations, groups)
    assert_near(got, reference(x, w, pads, strides, dilations, groups), F32, term_scale(x, w, groups))


# ---- bad arguments -----------------------------------------------------------------------------------------------

@pytest.fixture
def valid(handle):
    """Descriptors of a valid 3x3 problem and a function that calls the forward with overrides."""
    x, w, y = blank((1, 5, 5, 4), F32, NHWC), blank((6, 3, 3, 4), F32, NHWC), blank((1, 5, 5, 6), F32, NHWC)
    conv = conv_descriptor(4, ((1, 1), (1, 1)), (1, 1), (1, 1), 1)
    args = dict(handle=handle, conv_desc=conv, algo=0, alpha=None, x_desc=x.desc, x=x.ptr, w_desc=w.desc, w=w.ptr,
                bias_desc=None, bias=None, workspace=None, workspace_size=0, beta=None, y_desc=y.desc, y=y.ptr)
    return args


def test_set_descriptor_rejects_bad_values():
    desc = cnnl.createConvolutionDescriptor()
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="dimNb"):
        cnnl.setConvolutionDescriptor(desc, 3, [0, 0], [1], [1], 1, F32)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="pad"):
        cnnl.setConvolutionDescriptor(desc, 4, [0, 0], [1, 1], [1, 1], 1, F32)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg=r"stride\[1\]"):
        cnnl.setConvolutionDescriptor(desc, 4, [0, 0, 0, 0], [1, 0], [1, 1], 1, F32)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg=r"pad\[0\]"):
        cnnl.setConvolutionDescriptor(desc, 4, [-1, 0, 0, 0], [1, 1], [1, 1], 1, F32)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="group_count"):
        cnnl.setConvolutionDescriptor(desc, 4, [0, 0, 0, 0], [1, 1], [1, 1], 0, F32)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="compute_type"):  # a data type, not computed here
        cnnl.setConvolutionDescriptor(desc, 4, [0, 0, 0, 0], [1, 1], [1, 1], 1, cnnl.CNNL_DTYPE_INT32)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="compute_type"):  # no data type at all
        cnnl.setConvolutionDescriptor(desc, 4, [0, 0, 0, 0], [1, 1], [1, 1], 1, 99)
    cnnl.destroyConvolutionDescriptor(desc)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="conv_desc"):
        cnnl.setConvolutionDescriptor(desc, 4, [0, 0, 0, 0], [1, 1], [1, 1], 1, F32)


@pytest.mark.mlusim_sanitize(exclude="initcheck")  # runs the op on unwritten tensors: only its checks matter
def test_forward_accepts_the_valid_call(valid):
    cnnl.convolutionForward(**valid)
    sync(valid["handle"])


@pytest.mark.parametrize("override, status, arg", [
    (lambda a: dict(y_desc=blank((1, 4, 4, 6), F32, NHWC).desc), cnnl.CNNL_STATUS_BAD_PARAM, "y_desc"),
    (lambda a: dict(w_desc=blank((6, 3, 3, 3), F32, NHWC).desc), cnnl.CNNL_STATUS_BAD_PARAM, "w_desc"),
    (lambda a: dict(x_desc=blank((1, 5, 5, 4), F16, NHWC).desc), cnnl.CNNL_STATUS_BAD_PARAM, "w_desc"),
    (lambda a: dict(x_desc=blank((1, 5, 5, 4), cnnl.CNNL_DTYPE_INT32, NHWC).desc), cnnl.CNNL_STATUS_NOT_SUPPORTED,
     "x_desc"),
    (lambda a: dict(x_desc=blank((1, 5, 5, 4), F32, cnnl.CNNL_LAYOUT_ARRAY).desc), cnnl.CNNL_STATUS_BAD_PARAM,
     "x_desc"),
    (lambda a: dict(x_desc=blank((5, 5, 4), F32).desc), cnnl.CNNL_STATUS_BAD_PARAM, "x_desc"),
    (lambda a: dict(bias_desc=blank((5,), F32).desc, bias=blank((5,), F32).ptr), cnnl.CNNL_STATUS_BAD_PARAM,
     "bias_desc"),
    (lambda a: dict(algo=7), cnnl.CNNL_STATUS_BAD_PARAM, "algo"),
    (lambda a: dict(conv_desc=cnnl.createConvolutionDescriptor()), cnnl.CNNL_STATUS_BAD_PARAM, "conv_desc"),
    (lambda a: dict(x=None), cnnl.CNNL_STATUS_BAD_PARAM, "x"),
    (lambda a: dict(y=a["y"] + 4), cnnl.CNNL_STATUS_BAD_PARAM, "y"),
    (lambda a: dict(handle="handle"), cnnl.CNNL_STATUS_BAD_PARAM, "handle"),
])
def test_forward_rejects(valid, override, status, arg):
    with raises_status(status, arg=arg):
        cnnl.convolutionForward(**{**valid, **override(valid)})


def test_half_workspace_is_required(handle):
    x, w, y = blank((1, 5, 5, 4), F16, NHWC), blank((6, 3, 3, 4), F16, NHWC), blank((1, 5, 5, 6), F16, NHWC)
    conv = conv_descriptor(4, ((1, 1), (1, 1)), (1, 1), (1, 1), 1, F16)
    size = cnnl.getConvolutionForwardWorkspaceSize(handle, x.desc, w.desc, y.desc, None, conv, 0)
    assert size == 5 * 5 * 6 * 4
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="workspace_size"):
        cnnl.convolutionForward(handle, conv, 0, None, x.desc, x.ptr, w.desc, w.ptr, None, None, None, 0, None,
                                y.desc, y.ptr)


def test_backward_and_query_rejects(handle):
    x, w, y = blank((1, 5, 5, 4), F32, NHWC), blank((6, 3, 3, 4), F32, NHWC), blank((1, 5, 5, 6), F32, NHWC)
    conv = conv_descriptor(4, ((1, 1), (1, 1)), (1, 1), (1, 1), 1)
    small = blank((1, 4, 5, 6), F32, NHWC)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="dy_desc"):
        cnnl.convolutionBackwardData(handle, None, w.desc, w.ptr, small.desc, small.ptr, conv, 0, None, 0, None,
                                     x.desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="dw_desc"):
        cnnl.convolutionBackwardFilter(handle, None, x.desc, x.ptr, y.desc, y.ptr, conv, 0, None, 0, None,
                                       blank((6, 3, 3, 2), F32, NHWC).desc, w.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="preference"):
        cnnl.getConvolutionForwardAlgorithm(handle, conv, x.desc, w.desc, y.desc, 9)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="algo"):
        cnnl.getConvolutionBackwardFilterWorkspaceSize(handle, x.desc, y.desc, w.desc, conv, -1)
    rank5 = conv_descriptor(5, ((0, 0),) * 3, (1, 1, 1), (1, 1, 1), 1)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="dx_desc"):
        cnnl.getConvolutionBackwardDataAlgorithm(handle, w.desc, y.desc, rank5, x.desc, 0)
