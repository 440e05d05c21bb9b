"""Modulated deformable convolution through the API: zero offsets and unit masks give the plain convolution;
fractional offsets and masks against a float64 numpy reference of the bilinear sampling (mmcv's rules at the
borders); the backward (input, offset, mask, filter, bias) against central differences; groups, deformable
groups, NCHW descriptors, dtypes and bad arguments."""
import numpy as np
import pytest

import cnnl

from .nn_helpers import F16, F32, F64, assert_near, blank, directional_check, placed, raises_status, \
    rounded, sync

NHWC, NCHW = cnnl.CNNL_LAYOUT_NHWC, cnnl.CNNL_LAYOUT_NCHW


def bilinear(image, h, w):
    """mmcv's dmcn_im2col_bilinear on an (H, W) plane: 0 outside (-1, H) x (-1, W), missing corners 0."""
    height, width = image.shape
    if h <= -1 or h >= height or w <= -1 or w >= width:
        return 0.0
    h0, w0 = int(np.floor(h)), int(np.floor(w))
    lh, lw = h - h0, w - w0
    total = 0.0
    for dh, dw, weight in ((0, 0, (1 - lh) * (1 - lw)), (0, 1, (1 - lh) * lw), (1, 0, lh * (1 - lw)), (1, 1, lh * lw)):
        a, b = h0 + dh, w0 + dw
        if 0 <= a < height and 0 <= b < width:
            total += weight * image[a, b]
    return total


def reference(x, offset, mask, w, bias, stride, pad, dilation, dg, groups):
    """x (N, H, W, C), offset (N, Ho, Wo, 2 dg K), mask (N, Ho, Wo, dg K), w (Co, kh, kw, C/g) -> (N, Ho, Wo, Co)."""
    batch, height, width, channels = x.shape
    co, kh, kw, per = w.shape
    _, out_h, out_w, _ = offset.shape
    taps = kh * kw
    cols = np.zeros((batch, out_h, out_w, kh, kw, channels))
    for n in range(batch):
        for o in range(out_h):
            for p in range(out_w):
                for k in range(taps):
                    i, j = divmod(k, kw)
                    for c in range(channels):
                        g = c // (channels // dg)
                        h = o * stride[0] - pad[0] + i * dilation[0] + offset[n, o, p, g * 2 * taps + 2 * k]
                        ww = p * stride[1] - pad[1] + j * dilation[1] + offset[n, o, p, g * 2 * taps + 2 * k + 1]
                        cols[n, o, p, i, j, c] = bilinear(x[n, :, :, c], h, ww) * mask[n, o, p, g * taps + k]
    out = np.zeros((batch, out_h, out_w, co))
    per_out = co // groups
    for g in range(groups):
        part = cols[..., g * per:(g + 1) * per].reshape(batch, out_h, out_w, -1)
        out[..., g * per_out:(g + 1) * per_out] = part @ w[g * per_out:(g + 1) * per_out].reshape(per_out, -1).T
    return out + (0 if bias is None else bias)


class DCN:
    """Device operands of one DCN problem (NHWC)."""

    def __init__(self, x, offset, mask, w, bias, stride, pad, dilation, dg, groups, code=F64, layout=NHWC):
        self.shapes = (x.shape, offset.shape, w.shape)
        self.code, self.layout = code, layout
        self.desc = cnnl.createDCNDescriptor()
        cnnl.setDCNDescriptor(self.desc, 4, [pad[0], pad[0], pad[1], pad[1]], list(stride), list(dilation), dg,
                              groups, x.shape[0], cnnl.CNNL_DTYPE_FLOAT)
        self.x, self.offset = self.put(x), self.put(offset)
        self.mask = None if mask is None else self.put(mask)
        self.w = placed(w, code, NHWC)
        self.bias = None if bias is None else placed(bias, code)
        self.out_shape = offset.shape[:3] + (w.shape[0],)

    def put(self, values):
        if self.layout == NCHW:
            return placed(values.transpose(0, 3, 1, 2), self.code, NCHW)
        return placed(values, self.code, NHWC)

    def empty(self, shape):
        if self.layout == NCHW:
            return blank((shape[0], shape[3], shape[1], shape[2]), self.code, NCHW)
        return blank(shape, self.code, NHWC)

    def read(self, tensor):
        values = tensor.read()
        return values.transpose(0, 2, 3, 1) if self.layout == NCHW else values

    def forward(self, handle):
        y = self.empty(self.out_shape)
        m = self.mask
        size = cnnl.getDCNForwardWorkspaceSize(handle, self.desc, self.x.desc, self.offset.desc,
                                               None if m is None else m.desc, self.w.desc,
                                               None if self.bias is None else self.bias.desc, y.desc)
        ws = blank((size,), cnnl.CNNL_DTYPE_INT8).ptr if size else None
        cnnl.dCNForward(handle, self.desc, self.x.desc, self.x.ptr, self.offset.desc, self.offset.ptr,
                        None if m is None else m.desc, None if m is None else m.ptr, self.w.desc, self.w.ptr,
                        None if self.bias is None else self.bias.desc, None if self.bias is None else self.bias.ptr,
                        ws, size, y.desc, y.ptr)
        sync(handle)
        return self.read(y)

    def backward(self, handle, dy):
        grad = self.put(dy)
        m = self.mask
        gx, go = self.empty(self.shapes[0]), self.empty(self.shapes[1])
        gm = None if m is None else self.empty(self.shapes[1][:3] + (self.shapes[1][3] // 2,))
        size = cnnl.getDCNBakcwardDataWorkspaceSize(handle, self.desc, self.x.desc, self.offset.desc,
                                                    None if m is None else m.desc, self.w.desc, grad.desc, gx.desc,
                                                    go.desc, None if gm is None else gm.desc)
        ws = blank((size,), cnnl.CNNL_DTYPE_INT8).ptr
        cnnl.dCNBackwardData(handle, self.desc, self.x.desc, self.x.ptr, self.offset.desc, self.offset.ptr,
                             None if m is None else m.desc, None if m is None else m.ptr, self.w.desc, self.w.ptr,
                             grad.desc, grad.ptr, ws, size, gx.desc, gx.ptr, go.desc, go.ptr,
                             None if gm is None else gm.desc, None if gm is None else gm.ptr)
        gw, gb = blank(self.shapes[2], self.code, NHWC), blank((self.shapes[2][0],), self.code)
        size = cnnl.getDCNBackwardWeightWorkspaceSize(handle, self.desc, self.x.desc, self.offset.desc,
                                                      None if m is None else m.desc, grad.desc, gw.desc, gb.desc)
        ws = blank((size,), cnnl.CNNL_DTYPE_INT8).ptr
        cnnl.dCNBackwardWeight(handle, self.desc, self.x.desc, self.x.ptr, self.offset.desc, self.offset.ptr,
                               None if m is None else m.desc, None if m is None else m.ptr, grad.desc, grad.ptr, ws,
                               size, gw.desc, gw.ptr, gb.desc, gb.ptr)
        sync(handle)
        return self.read(gx), self.read(go), None if gm is None else self.read(gm), gw.read(), gb.read()


def problem(rng, batch=2, size=(5, 6), channels=4, out_channels=6, kernel=(3, 2), stride=(1, 2), pad=(1, 0),
            dilation=(1, 1), dg=2, groups=2, scale=1.5):
    x = rng.standard_normal((batch,) + size + (channels,))
    out_h = (size[0] + 2 * pad[0] - dilation[0] * (kernel[0] - 1) - 1) // stride[0] + 1
    out_w = (size[1] + 2 * pad[1] - dilation[1] * (kernel[1] - 1) - 1) // stride[1] + 1
    taps = dg * kernel[0] * kernel[1]
    offset = rng.uniform(-scale, scale, (batch, out_h, out_w, 2 * taps))
    mask = rng.uniform(0, 1, (batch, out_h, out_w, taps))
    w = rng.standard_normal((out_channels,) + kernel + (channels // groups,))
    bias = rng.standard_normal(out_channels)
    return x, offset, mask, w, bias, stride, pad, dilation, dg, groups


def test_zero_offsets_give_the_convolution(handle):
    rng = np.random.default_rng(0)
    x, offset, mask, w, bias, stride, pad, dilation, dg, groups = problem(rng)
    offset[...] = 0
    mask[...] = 1
    got = DCN(x, offset, mask, w, None, stride, pad, dilation, dg, groups).forward(handle)
    padded = np.pad(x, ((0, 0), (1, 1), (0, 0), (0, 0)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 2), axis=(1, 2))[:, ::1, ::2]
    want = np.concatenate([np.einsum("nhwcij,oijc->nhwo", windows[..., g * 2:(g + 1) * 2, :, :],
                                     w[g * 3:(g + 1) * 3]) for g in range(2)], axis=-1)
    np.testing.assert_allclose(got, want, atol=1e-12)


@pytest.mark.parametrize("layout", [NHWC, NCHW])
def test_forward_and_backward(handle, layout):
    rng = np.random.default_rng(1)
    args = problem(rng)
    dcn = DCN(*args, layout=layout)
    got = dcn.forward(handle)
    np.testing.assert_allclose(got, reference(*args), atol=1e-12)
    dy = rng.standard_normal(got.shape)
    gx, go, gm, gw, gb = dcn.backward(handle, dy)
    x, offset, mask, w, bias = args[:5]
    rest = args[5:]

    def loss(xx=x, oo=offset, mm=mask, ww=w, bb=bias):
        return float(np.sum(reference(xx, oo, mm, ww, bb, *rest) * dy))

    directional_check(lambda v: loss(xx=v), x, gx, rng)
    directional_check(lambda v: loss(oo=v), offset, go, rng, rtol=1e-5)
    directional_check(lambda v: loss(mm=v), mask, gm, rng)
    directional_check(lambda v: loss(ww=v), w, gw, rng)
    directional_check(lambda v: loss(bb=v), bias, gb, rng)


def test_no_mask_dilation_and_half(handle):
    rng = np.random.default_rng(2)
    x, offset, mask, w, bias, stride, pad, dilation, dg, groups = problem(rng, dilation=(2, 1), groups=1, dg=1,
                                                                          kernel=(2, 2), stride=(1, 1))
    got = DCN(x, offset, None, w, bias, stride, pad, dilation, dg, groups).forward(handle)
    np.testing.assert_allclose(got, reference(x, offset, np.ones_like(mask), w, bias, stride, pad, dilation, dg,
                                              groups), atol=1e-12)
    args = [rounded(rng, a.shape, F16) for a in (x, offset, mask, w, bias)]
    half = DCN(*args, stride, pad, dilation, dg, groups, code=F16).forward(handle)
    assert_near(half, reference(*args, stride, pad, dilation, dg, groups), F16, scale=8)


def test_rejects(handle):
    rng = np.random.default_rng(3)
    x, offset, mask, w, bias, stride, pad, dilation, dg, groups = problem(rng, batch=2)
    dcn = DCN(x, offset, mask, w, bias, stride, pad, dilation, dg, groups, code=F32)
    y = dcn.empty(dcn.out_shape)
    ws = blank((1 << 16,), cnnl.CNNL_DTYPE_INT8).ptr
    args = [handle, dcn.desc, dcn.x.desc, dcn.x.ptr, dcn.offset.desc, dcn.offset.ptr, dcn.mask.desc, dcn.mask.ptr,
            dcn.w.desc, dcn.w.ptr, dcn.bias.desc, dcn.bias.ptr, ws, 1 << 16, y.desc, y.ptr]
    cnnl.dCNForward(*args)
    sync(handle)
    BAD = cnnl.CNNL_STATUS_BAD_PARAM
    for position, value, arg in [(4, blank((2, 5, 3, 10), F32, NHWC).desc, "offset_desc"),
                                 (6, blank((2, 5, 3, 13), F32, NHWC).desc, "mask_desc"),
                                 (8, blank((6, 3, 2, 3), F32, NHWC).desc, "filter_desc"),
                                 (10, blank((5,), F32).desc, "bias_desc"),
                                 (14, blank((2, 5, 3, 6), F16, NHWC).desc, "output_desc"),
                                 (13, 16, "workspace_size"), (1, cnnl.createDCNDescriptor(), "dcn_desc")]:
        bad = list(args)
        bad[position] = value
        with raises_status(BAD, arg=arg):
            cnnl.dCNForward(*bad)
    with raises_status(BAD, arg="pad"):
        cnnl.setDCNDescriptor(dcn.desc, 4, [1, 1], [1, 1], [1, 1], 1, 1, 1, cnnl.CNNL_DTYPE_FLOAT)
    cnnl.setDCNDescriptor(dcn.desc, 4, [1, 1, 0, 0], [1, 2], [1, 1], 2, 2, 3, cnnl.CNNL_DTYPE_FLOAT)
    with raises_status(BAD, arg="dcn_desc"):  # im2col_step 3 does not divide the batch of 2
        cnnl.dCNForward(*args)
