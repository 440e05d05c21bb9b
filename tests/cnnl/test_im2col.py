"""im2col, col2im and unfold through the API against direct numpy loops / numpy's sliding_window_view (and
PyTorch's F.unfold / F.fold where torch is importable): padding, stride, dilation, NCHW and NHWC, dtypes, the
col2im sum as the adjoint of im2col, empty tensors and bad arguments."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cnnl

from .nn_helpers import BF16, F16, F32, F64, NUMPY, assert_near, blank, placed, raises_status, rounded, sync

NCHW, NHWC = cnnl.CNNL_LAYOUT_NCHW, cnnl.CNNL_LAYOUT_NHWC


def conv(pads, strides, dilations):
    desc = cnnl.createConvolutionDescriptor()
    cnnl.setConvolutionDescriptor(desc, 4, [pads[0], pads[0], pads[1], pads[1]], list(strides), list(dilations), 1,
                                  cnnl.CNNL_DTYPE_FLOAT)
    return desc


def filter_desc(kernel, code):
    return blank((1, 1) + tuple(kernel), code, NCHW).desc


def reference_im2col(x, kernel, pads, strides, dilations):
    """Direct loops: columns (N, C * kh * kw, oh * ow) of an (N, C, H, W) array."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[0]), (pads[1], pads[1])))
    oh = (h + 2 * pads[0] - dilations[0] * (kernel[0] - 1) - 1) // strides[0] + 1
    ow = (w + 2 * pads[1] - dilations[1] * (kernel[1] - 1) - 1) // strides[1] + 1
    out = np.zeros((n, c * kernel[0] * kernel[1], oh * ow), x.dtype)
    for ci in range(c):
        for i in range(kernel[0]):
            for j in range(kernel[1]):
                row = (ci * kernel[0] + i) * kernel[1] + j
                for a in range(oh):
                    for b in range(ow):
                        out[:, row, a * ow + b] = xp[:, ci, a * strides[0] + i * dilations[0],
                                                     b * strides[1] + j * dilations[1]]
    return out


def im2col(handle, x, kernel, pads, strides, dilations, code, layout=NCHW):
    xt = placed(x if layout == NCHW else x.transpose(0, 2, 3, 1), code, layout)
    want_shape = reference_im2col(x, kernel, pads, strides, dilations).shape
    yt = blank(want_shape, code)
    cd, wd = conv(pads, strides, dilations), filter_desc(kernel, code)
    size = cnnl.getIm2ColWorkspaceSize(handle, xt.desc, wd, cd, yt.desc)
    cnnl.im2Col(handle, xt.desc, xt.ptr, wd, cd, None, None, None, None, size, yt.desc, yt.ptr)
    sync(handle)
    return yt.read()


def col2im(handle, columns, image_shape, kernel, pads, strides, dilations, code, layout=NCHW):
    """columns (N, C * kh * kw, L) in PyTorch's layout; CNNL takes them transposed to (N, L, C * kh * kw)."""
    ct = placed(np.ascontiguousarray(columns.transpose(0, 2, 1)), code)
    shape = image_shape if layout == NCHW else tuple(np.array(image_shape)[[0, 2, 3, 1]])
    yt = blank(shape, code, layout)
    cd, wd = conv(pads, strides, dilations), filter_desc(kernel, code)
    size = cnnl.getCol2ImWorkspaceSize(handle, ct.desc, wd, yt.desc)
    workspace = blank((size,), cnnl.CNNL_DTYPE_INT8).ptr if size else None
    cnnl.col2Im(handle, ct.desc, ct.ptr, wd, cd, workspace, size, yt.desc, yt.ptr)
    sync(handle)
    result = yt.read()
    return result if layout == NCHW else result.transpose(0, 3, 1, 2)


GEOMETRIES = [((3, 3), (1, 1), (1, 1), (1, 1)), ((2, 3), (0, 2), (2, 1), (1, 2)), ((1, 1), (0, 0), (1, 1), (1, 1)),
              ((3, 2), (1, 0), (2, 3), (2, 1))]


@pytest.mark.parametrize("kernel,pads,strides,dilations", GEOMETRIES)
@pytest.mark.parametrize("layout", [NCHW, NHWC])
def test_im2col_and_col2im(handle, kernel, pads, strides, dilations, layout):
    rng = np.random.default_rng(sum(kernel) + sum(pads))
    x = rng.standard_normal((2, 3, 7, 8))
    columns = im2col(handle, x, kernel, pads, strides, dilations, F64, layout)
    np.testing.assert_array_equal(columns, reference_im2col(x, kernel, pads, strides, dilations))
    grad = rng.standard_normal(columns.shape)
    folded = col2im(handle, grad, x.shape, kernel, pads, strides, dilations, F64, layout)
    # col2im is the adjoint (transpose) of im2col
    np.testing.assert_allclose(np.sum(columns * grad), np.sum(x * folded), rtol=1e-12)
    torch = pytest.importorskip("torch")
    want = torch.nn.functional.fold(torch.tensor(grad), x.shape[2:], kernel, dilation=dilations, padding=pads,
                                    stride=strides).numpy()
    np.testing.assert_allclose(folded, want, atol=1e-12)


@pytest.mark.parametrize("code", [F32, F16, BF16])
def test_dtypes(handle, code):
    rng = np.random.default_rng(1)
    x = rounded(rng, (1, 2, 5, 5), code)
    columns = im2col(handle, x, (3, 3), (1, 1), (1, 1), (1, 1), code)
    np.testing.assert_array_equal(columns, reference_im2col(x, (3, 3), (1, 1), (1, 1), (1, 1)))
    folded = col2im(handle, columns, x.shape, (3, 3), (1, 1), (1, 1), (1, 1), code)
    counts = col2im(handle, np.ones(columns.shape), x.shape, (3, 3), (1, 1), (1, 1), (1, 1), F64)
    assert_near(folded, x * counts, code, scale=9)  # every pixel comes back once per window holding it


@settings(max_examples=20)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=4), st.data())
def test_unfold(dims, data):
    handle = cnnl.create()
    dim = data.draw(st.integers(0, len(dims) - 1))
    size = data.draw(st.integers(0, dims[dim]))
    step = data.draw(st.integers(1, 3))
    code = data.draw(st.sampled_from([F32, F16, cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_BOOL]))
    x = (np.arange(np.prod(dims)).reshape(dims) % 7).astype(NUMPY[code])
    want = np.lib.stride_tricks.sliding_window_view(x, size, axis=dim)
    want = want[(slice(None),) * dim + (slice(None, None, step),)]
    xt, yt = placed(x, code), blank(want.shape, code)
    cnnl.unfold(handle, dim, size, step, xt.desc, xt.ptr, yt.desc, yt.ptr)
    sync(handle)
    np.testing.assert_array_equal(yt.read(), want)


# runs ops on unwritten tensors: only their checks and empty results matter
@pytest.mark.mlusim_sanitize(exclude="initcheck")
def test_rejects_and_empty(handle):
    BAD, UNSUPPORTED = cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED
    x, y = blank((1, 2, 4, 4), F32, NCHW), blank((1, 18, 16), F32)
    cd, wd = conv((1, 1), (1, 1), (1, 1)), filter_desc((3, 3), F32)
    args = [handle, x.desc, x.ptr, wd, cd, None, None, None, None, 0, y.desc, y.ptr]
    cnnl.im2Col(*args)
    sync(handle)
    for position, value, arg, status in [(10, blank((1, 18, 15), F32).desc, "y_desc", BAD),
                                         (10, blank((1, 18, 16), F16).desc, "y_desc", BAD),
                                         (1, blank((1, 2, 4, 4), F32).desc, "x_desc", BAD),
                                         (5, blank((1,), F32).desc, "bias_desc", UNSUPPORTED),
                                         (4, cnnl.createConvolutionDescriptor(), "conv_desc", BAD),
                                         (3, filter_desc((7, 7), F32), "x_desc", BAD),
                                         (11, None, "y", BAD)]:
        bad = list(args)
        bad[position] = value
        with raises_status(status, arg=arg):
            cnnl.im2Col(*bad)
    three_d = cnnl.createConvolutionDescriptor()
    cnnl.setConvolutionDescriptor(three_d, 5, [0] * 6, [1] * 3, [1] * 3, 1, cnnl.CNNL_DTYPE_FLOAT)
    with raises_status(UNSUPPORTED, arg="conv_desc"):
        cnnl.im2Col(handle, x.desc, x.ptr, wd, three_d, None, None, None, None, 0, y.desc, y.ptr)
    half = blank((1, 16, 18), F16)
    image = blank((1, 2, 4, 4), F16, NCHW)
    size = cnnl.getCol2ImWorkspaceSize(handle, half.desc, wd, image.desc)
    assert size == 32 * 4
    with raises_status(BAD, arg="workspace_size"):
        cnnl.col2Im(handle, half.desc, half.ptr, wd, cd, None, 0, image.desc, image.ptr)
    with raises_status(BAD, arg="size"):
        cnnl.unfold(handle, 0, 5, 1, blank((4,), F32).desc, None, blank((0, 5), F32).desc, None)
    with raises_status(BAD, arg="dim"):
        cnnl.unfold(handle, 3, 1, 1, blank((4,), F32).desc, None, blank((4, 1), F32).desc, None)
    empty, columns = blank((0, 2, 4, 4), F32, NCHW), blank((0, 18, 16), F32)
    cnnl.im2Col(handle, empty.desc, None, wd, cd, None, None, None, None, 0, columns.desc, None)
    sync(handle)
