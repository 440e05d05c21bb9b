"""Cases of convolution (docs/cnnl_convolution.md): the 3x3 convolutions (stride 1, padding 1, NHWC) in all three
directions, im2col / col2im / unfold, deformable convolution. References in float32 through im2col windows and
np.tensordot, as the forward case."""
from __future__ import annotations

import numpy as np

import cnnl

from .base import Case, ELEMENTWISE, FLOATS, NCHW, NHWC, f32
from numpy.lib.stride_tricks import as_strided
from ..op_bench import OpBench


#: (batch, height, width, channels, output channels) of the 3x3 convolutions
CONVOLUTION = {"small": (1, 16, 16, 32, 32), "medium": (8, 32, 32, 64, 64), "large": (32, 56, 56, 64, 64)}


def _conv_descriptor():
    conv = cnnl.createConvolutionDescriptor()
    cnnl.setConvolutionDescriptor(conv, 4, [1, 1, 1, 1], [1, 1], [1, 1], 1, cnnl.CNNL_DTYPE_FLOAT)
    return conv


def _padded(values: np.ndarray) -> np.ndarray:
    """A float32 copy of an NHWC map with one zero row/column around each plane."""
    return np.pad(values.astype(np.float32), ((0, 0), (1, 1), (1, 1), (0, 0)))


def _windows(padded: np.ndarray) -> np.ndarray:
    """The N H W C 3 3 im2col view of a padded map."""
    return np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(1, 2))


def _conv_operands(arena, shape, dtype):
    """x, w (O 3 3 C) and dy of a convolution with their host copies."""
    batch, height, width, channels, outputs = shape
    return (arena.random((batch, height, width, channels), dtype, layout=NHWC),
            arena.random((outputs, 3, 3, channels), dtype, layout=NHWC),
            arena.random((batch, height, width, outputs), dtype, layout=NHWC))


def convolution(arena, shape, dtype):
    """y = conv(x, w)."""
    (x, xv), (w, wv), (y, _) = _conv_operands(arena, shape, dtype)
    conv = _conv_descriptor()
    algo = cnnl.getConvolutionForwardAlgorithm(arena.handle, conv, x.desc, w.desc, y.desc, 0)
    workspace, size = arena.workspace(cnnl.getConvolutionForwardWorkspaceSize(arena.handle, x.desc, w.desc, y.desc,
                                                                              None, conv, algo))
    padded, w32 = _padded(xv), wv.astype(np.float32)
    return (lambda: cnnl.convolutionForward(arena.handle, conv, algo, None, x.desc, x.ptr, w.desc, w.ptr, None, None,
                                            workspace, size, None, y.desc, y.ptr),
            lambda: np.tensordot(_windows(padded), w32, axes=([3, 4, 5], [3, 1, 2])))


def convolution_backward_data(arena, shape, dtype):
    """dx = the convolution of dy with the flipped, transposed filter."""
    (x, _), (w, wv), (dy, dyv) = _conv_operands(arena, shape, dtype)
    conv = _conv_descriptor()
    algo = cnnl.getConvolutionBackwardDataAlgorithm(arena.handle, w.desc, dy.desc, conv, x.desc,
                                                    cnnl.CNNL_CONVOLUTION_BWD_DATA_FASTEST)
    workspace, size = arena.workspace(cnnl.getConvolutionBackwardDataWorkspaceSize(arena.handle, w.desc, dy.desc,
                                                                                   conv, x.desc, algo))
    padded, flipped = _padded(dyv), wv[:, ::-1, ::-1, :].astype(np.float32)
    return (lambda: cnnl.convolutionBackwardData(arena.handle, None, w.desc, w.ptr, dy.desc, dy.ptr, conv, algo,
                                                 workspace, size, None, x.desc, x.ptr),
            lambda: np.tensordot(_windows(padded), flipped, axes=([3, 4, 5], [0, 1, 2])))


def convolution_backward_filter(arena, shape, dtype):
    """dw = the correlation of x's windows with dy over batch and positions."""
    (x, xv), (w, _), (dy, dyv) = _conv_operands(arena, shape, dtype)
    conv = _conv_descriptor()
    algo = cnnl.getConvolutionBackwardFilterAlgorithm(arena.handle, conv, x.desc, dy.desc, w.desc,
                                                      cnnl.CNNL_CONVOLUTION_BWD_FILTER_FASTEST)
    workspace, size = arena.workspace(cnnl.getConvolutionBackwardFilterWorkspaceSize(arena.handle, x.desc, dy.desc,
                                                                                     w.desc, conv, algo))
    padded, dy32 = _padded(xv), dyv.astype(np.float32)
    return (lambda: cnnl.convolutionBackwardFilter(arena.handle, None, x.desc, x.ptr, dy.desc, dy.ptr, conv, algo,
                                                   workspace, size, None, w.desc, w.ptr),
            lambda: np.tensordot(dy32, _windows(padded), axes=([0, 1, 2], [0, 1, 2])).transpose(0, 2, 3, 1))


#: NCHW images of im2col / col2im with a 3x3 window, padding 1
IMAGES = {"small": (2, 8, 32, 32), "medium": (4, 16, 64, 64), "large": (8, 32, 128, 128)}
#: (N, H, W, C, Co) of the deformable convolution (3x3, padding 1)
DCN = {"small": (1, 16, 16, 16, 16), "medium": (2, 32, 32, 32, 32)}


def _window_descriptors(arena, dtype):
    conv = cnnl.createConvolutionDescriptor()
    cnnl.setConvolutionDescriptor(conv, 4, [1, 1, 1, 1], [1, 1], [1, 1], 1, cnnl.CNNL_DTYPE_FLOAT)
    return conv, arena.descriptor((1, 1, 3, 3), dtype, NCHW)


def im2col(arena, shape, dtype):
    """cnnlIm2Col (3x3, padding 1) against numpy's sliding windows."""
    batch, channels, height, width = shape
    (x, xv) = arena.random(shape, dtype, layout=NCHW)
    y = arena.empty((batch, channels * 9, height * width), dtype)
    conv, window = _window_descriptors(arena, dtype)
    padded = np.pad(xv, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), axis=(2, 3))  # N C H W 3 3
    out = np.empty((batch, channels, 3, 3, height, width), xv.dtype)
    return (lambda: cnnl.im2Col(arena.handle, x.desc, x.ptr, window, conv, None, None, None, None, 0, y.desc, y.ptr),
            lambda: np.copyto(out, windows.transpose(0, 1, 4, 5, 2, 3)))


def col2im(arena, shape, dtype):
    """cnnlCol2Im (3x3, padding 1) against summing the windows back with numpy slices."""
    batch, channels, height, width = shape
    (col, cv) = arena.random((batch, height * width, channels * 9), dtype)
    y = arena.empty(shape, dtype, layout=NCHW)
    conv, window = _window_descriptors(arena, dtype)
    workspace, size = arena.workspace(cnnl.getCol2ImWorkspaceSize(arena.handle, col.desc, window, y.desc))
    columns = f32(cv).reshape(batch, height, width, channels, 3, 3)

    def reference():
        padded = np.zeros((batch, channels, height + 2, width + 2), np.float32)
        for i in range(3):
            for j in range(3):
                padded[:, :, i:i + height, j:j + width] += columns[..., i, j].transpose(0, 3, 1, 2)
        return padded[:, :, 1:-1, 1:-1]
    return (lambda: cnnl.col2Im(arena.handle, col.desc, col.ptr, window, conv, workspace, size, y.desc, y.ptr),
            reference)


def unfold(arena, shape, dtype):
    """cnnlUnfold of the last axis in windows of 8 every 4, against a copy of numpy's sliding window view."""
    (x, xv) = arena.random(shape, dtype)
    out_shape = shape[:-1] + ((shape[-1] - 8) // 4 + 1, 8)
    y = arena.empty(out_shape, dtype)
    out = np.empty(out_shape, xv.dtype)
    view = np.lib.stride_tricks.sliding_window_view(xv, 8, axis=-1)[..., ::4, :]
    return (lambda: cnnl.unfold(arena.handle, -1, 8, 4, x.desc, x.ptr, y.desc, y.ptr), lambda: np.copyto(out, view))


def _dcn_operands(arena, shape, dtype):
    batch, height, width, channels, out_channels = shape
    (x, xv) = arena.random((batch, height, width, channels), dtype, layout=NHWC)
    (offset, ov) = arena.random((batch, height, width, 18), dtype, layout=NHWC)
    (mask, mv) = arena.between((batch, height, width, 9), dtype, 0, 1)
    mask = arena.upload(mv, dtype, NHWC)
    (w, wv) = arena.random((out_channels, 3, 3, channels), dtype, layout=NHWC)
    desc = cnnl.createDCNDescriptor()
    cnnl.setDCNDescriptor(desc, 4, [1, 1, 1, 1], [1, 1], [1, 1], 1, 1, batch, cnnl.CNNL_DTYPE_FLOAT)
    return desc, (x, offset, mask, w), tuple(f32(v) for v in (xv, ov, mv, wv))


def _deform_points(x, offset):
    """Per (n, o, p, tap): the sampling point's corners, their weights and validity (3x3, padding 1, stride 1)."""
    batch, height, width, _ = x.shape
    o, p = np.meshgrid(np.arange(height), np.arange(width), indexing="ij")
    taps = np.arange(9)
    h = o[..., None] - 1 + taps // 3 + offset[..., 0::2]   # (N, H, W, 9)
    w = p[..., None] - 1 + taps % 3 + offset[..., 1::2]
    inside = (h > -1) & (w > -1) & (h < height) & (w < width)
    h0, w0 = np.floor(h).astype(np.int64), np.floor(w).astype(np.int64)
    lh, lw = h - h0, w - w0
    corners = []
    for dh, dw, weight in ((0, 0, (1 - lh) * (1 - lw)), (0, 1, (1 - lh) * lw), (1, 0, lh * (1 - lw)),
                           (1, 1, lh * lw)):
        a, b = h0 + dh, w0 + dw
        valid = inside & (a >= 0) & (a < height) & (b >= 0) & (b < width)
        corners.append((np.clip(a, 0, height - 1), np.clip(b, 0, width - 1), np.where(valid, weight, 0), valid))
    return corners, lh, lw


def numpy_deform_columns(x, offset, mask):
    """(N, H, W, 9, C) modulated bilinear samples of a 3x3, padding 1, stride 1 DCN in numpy."""
    corners, _, _ = _deform_points(x, offset)
    n = np.arange(x.shape[0])[:, None, None, None]
    samples = np.zeros(mask.shape + (x.shape[3],), np.float32)
    for a, b, weight, _ in corners:
        samples += (weight * mask)[..., None] * x[n, a, b]
    return samples


def numpy_deform_backward(x, offset, mask, columns):
    """(dx, doffset, dmask) of the sampling from the column gradients (N, H, W, 9, C), in numpy."""
    corners, lh, lw = _deform_points(x, offset)
    n = np.broadcast_to(np.arange(x.shape[0])[:, None, None, None], mask.shape)
    dx = np.zeros(x.shape, np.float32)
    values = []
    for a, b, weight, valid in corners:
        np.add.at(dx, (n, a, b), (weight * mask)[..., None] * columns)
        values.append(np.where(valid[..., None], x[n, a, b], 0))
    v1, v2, v3, v4 = values
    hh, hw = (1 - lh)[..., None], (1 - lw)[..., None]
    grad_h = (columns * (-hw * v1 - lw[..., None] * v2 + hw * v3 + lw[..., None] * v4)).sum(-1) * mask
    grad_w = (columns * (-hh * v1 + hh * v2 - lh[..., None] * v3 + lh[..., None] * v4)).sum(-1) * mask
    doffset = np.stack([grad_h, grad_w], -1).reshape(offset.shape)
    dmask = (columns * sum(weight[..., None] * v for (_, _, weight, _), v in zip(corners, values))).sum(-1)
    return dx, doffset, dmask


def dcn_forward(arena, shape, dtype):
    """cnnlDCNForward (3x3, padding 1) against numpy sampling and one matmul."""
    desc, (x, offset, mask, w), (xv, ov, mv, wv) = _dcn_operands(arena, shape, dtype)
    y = arena.empty(shape[:3] + (shape[4],), dtype, NHWC)
    workspace, size = arena.workspace(cnnl.getDCNForwardWorkspaceSize(arena.handle, desc, x.desc, offset.desc,
                                                                      mask.desc, w.desc, None, y.desc))
    return (lambda: cnnl.dCNForward(arena.handle, desc, x.desc, x.ptr, offset.desc, offset.ptr, mask.desc, mask.ptr,
                                    w.desc, w.ptr, None, None, workspace, size, y.desc, y.ptr),
            lambda: numpy_deform_columns(xv, ov, mv).reshape(-1, 9 * shape[3]) @ wv.reshape(shape[4], -1).T)


def dcn_backward_data(arena, shape, dtype):
    """cnnlDCNBackwardData against numpy: the column gradients, their bilinear scatter (np.add.at) and the offset and
    mask derivatives."""
    desc, (x, offset, mask, w), (xv, ov, mv, wv) = _dcn_operands(arena, shape, dtype)
    (dy, dyv) = arena.random(shape[:3] + (shape[4],), dtype, layout=NHWC)
    dx, doffset, dmask = (arena.empty(t, dtype, NHWC) for t in (shape[:4], shape[:3] + (18,), shape[:3] + (9,)))
    workspace, size = arena.workspace(cnnl.getDCNBakcwardDataWorkspaceSize(
        arena.handle, desc, x.desc, offset.desc, mask.desc, w.desc, dy.desc, dx.desc, doffset.desc, dmask.desc))
    grads = f32(dyv)

    def reference():
        columns = grads.reshape(-1, shape[4]) @ wv.reshape(shape[4], -1)
        return numpy_deform_backward(xv, ov, mv, columns.reshape(shape[:3] + (9, shape[3])))
    return (lambda: cnnl.dCNBackwardData(arena.handle, desc, x.desc, x.ptr, offset.desc, offset.ptr, mask.desc,
                                         mask.ptr, w.desc, w.ptr, dy.desc, dy.ptr, workspace, size, dx.desc, dx.ptr,
                                         doffset.desc, doffset.ptr, dmask.desc, dmask.ptr),
            reference)


def dcn_backward_weight(arena, shape, dtype):
    """cnnlDCNBackwardWeight against numpy sampling and one matmul."""
    desc, (x, offset, mask, w), (xv, ov, mv, wv) = _dcn_operands(arena, shape, dtype)
    (dy, dyv) = arena.random(shape[:3] + (shape[4],), dtype, layout=NHWC)
    dw, db = arena.empty((shape[4], 3, 3, shape[3]), dtype, NHWC), arena.empty((shape[4],), dtype)
    workspace, size = arena.workspace(cnnl.getDCNBackwardWeightWorkspaceSize(
        arena.handle, desc, x.desc, offset.desc, mask.desc, dy.desc, dw.desc, db.desc))
    grads = f32(dyv).reshape(-1, shape[4])
    return (lambda: cnnl.dCNBackwardWeight(arena.handle, desc, x.desc, x.ptr, offset.desc, offset.ptr, mask.desc,
                                           mask.ptr, dy.desc, dy.ptr, workspace, size, dw.desc, dw.ptr, db.desc,
                                           db.ptr),
            lambda: (grads.T @ numpy_deform_columns(xv, ov, mv).reshape(grads.shape[0], -1), grads.sum(axis=0)))


#: the cases of this family, in the order the table lists them
CASES = (
    Case("conv 3x3", "cnnlConvolutionForward", convolution, shapes=CONVOLUTION, dtypes=FLOATS,
             reference="im2col + np.tensordot float32"),
    Case("conv bwd data", "cnnlConvolutionBackwardData", convolution_backward_data, shapes=CONVOLUTION,
             dtypes=FLOATS, reference="im2col + np.tensordot float32"),
    Case("conv bwd filter", "cnnlConvolutionBackwardFilter", convolution_backward_filter, shapes=CONVOLUTION,
             dtypes=FLOATS, reference="im2col + np.tensordot float32"),
    Case("im2col", "cnnlIm2Col", im2col, shapes=IMAGES),
    Case("col2im", "cnnlCol2Im", col2im, shapes=IMAGES),
    Case("unfold", "cnnlUnfold", unfold, shapes=ELEMENTWISE),
    Case("dcn", "cnnlDCNForward", dcn_forward, shapes=DCN, dtypes=("float",),
             reference="numpy sampling + matmul"),
    Case("dcn bwd data", "cnnlDCNBackwardData", dcn_backward_data, shapes=DCN, dtypes=("float",),
             reference="numpy column gradients"),
    Case("dcn bwd weight", "cnnlDCNBackwardWeight", dcn_backward_weight, shapes=DCN, dtypes=("float",),
             reference="numpy sampling + matmul"),
)


# ---- the ResNet-50 layers of the nn suite: cnnl against im2col + numpy's BLAS, and torch's CPU conv2d ---------------

RESNET_BATCH = 8
#: ResNet-50's distinct convolution shapes: (name, input H=W, in channels, out channels, kernel, stride, padding)
RESNET50_LAYERS = [
    ("conv1 7x7/2 3->64 @224", 224, 3, 64, 7, 2, 3),
    ("layer1 1x1 64->64 @56", 56, 64, 64, 1, 1, 0),
    ("layer1 3x3 64->64 @56", 56, 64, 64, 3, 1, 1),
    ("layer1 1x1 64->256 @56", 56, 64, 256, 1, 1, 0),
    ("layer1 1x1 256->64 @56", 56, 256, 64, 1, 1, 0),
    ("layer2 1x1 256->128 @56", 56, 256, 128, 1, 1, 0),
    ("layer2 3x3/2 128->128 @56", 56, 128, 128, 3, 2, 1),
    ("layer2 1x1/2 256->512 @56", 56, 256, 512, 1, 2, 0),
    ("layer2 3x3 128->128 @28", 28, 128, 128, 3, 1, 1),
    ("layer2 1x1 128->512 @28", 28, 128, 512, 1, 1, 0),
    ("layer3 3x3 256->256 @14", 14, 256, 256, 3, 1, 1),
    ("layer3 1x1 1024->256 @14", 14, 1024, 256, 1, 1, 0),
    ("layer4 3x3 512->512 @7", 7, 512, 512, 3, 1, 1),
    ("layer4 1x1 2048->512 @7", 7, 2048, 512, 1, 1, 0),
]


def torch_or_none():
    """torch, or None where it is not importable."""
    try:
        import torch
    except ImportError:
        return None
    return torch


def im2col_conv(x: np.ndarray, w: np.ndarray, stride: int, padding: int) -> np.ndarray:
    """The baseline: pad, im2col through as_strided + one reshape copy, one sgemm (numpy's BLAS, all cores)."""
    n, h, width, c = x.shape
    out_channels, k = w.shape[0], w.shape[1]
    xp = np.pad(x, ((0, 0), (padding, padding), (padding, padding), (0, 0))) if padding else x
    ho, wo = (h + 2 * padding - k) // stride + 1, (width + 2 * padding - k) // stride + 1
    s = xp.strides
    cols = as_strided(xp, (n, ho, wo, k, k, c), (s[0], s[1] * stride, s[2] * stride, s[1], s[2], s[3]))
    return (cols.reshape(n * ho * wo, -1) @ w.reshape(out_channels, -1).T).reshape(n, ho, wo, out_channels)


def resnet_layer_case(device: OpBench, size: int, cin: int, cout: int, k: int, stride: int, padding: int):
    """(cnnl op, numpy baseline, torch reference or None) for one convolution layer."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((RESNET_BATCH, size, size, cin), dtype=np.float32)
    w = rng.standard_normal((cout, k, k, cin), dtype=np.float32)
    out = (size + 2 * padding - k) // stride + 1
    nhwc = cnnl.CNNL_LAYOUT_NHWC
    x_desc, w_desc = device.desc(x.shape, layout=nhwc), device.desc(w.shape, layout=nhwc)
    y_desc = device.desc((RESNET_BATCH, out, out, cout), layout=nhwc)
    px, pw, py = device.put(x), device.put(w), device.empty(RESNET_BATCH * out * out * cout * 4)
    conv = cnnl.createConvolutionDescriptor()
    cnnl.setConvolutionDescriptor(conv, 4, [padding] * 4, [stride] * 2, [1, 1], 1, cnnl.CNNL_DTYPE_FLOAT)
    algo = cnnl.getConvolutionForwardAlgorithm(device.handle, conv, x_desc, w_desc, y_desc,
                                               cnnl.CNNL_CONVOLUTION_FWD_FASTEST)
    size_ws = cnnl.getConvolutionForwardWorkspaceSize(device.handle, x_desc, w_desc, y_desc, None, conv, algo)

    def op():
        cnnl.convolutionForward(device.handle, conv, algo, None, x_desc, px, w_desc, pw, None, None, None, size_ws,
                                None, y_desc, py)

    torch = torch_or_none()
    reference_torch = None
    if torch is not None:
        tx = torch.from_numpy(x).permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)
        tw = torch.from_numpy(w).permute(0, 3, 1, 2).contiguous(memory_format=torch.channels_last)

        def reference_torch():
            with torch.no_grad():
                torch.nn.functional.conv2d(tx, tw, stride=stride, padding=padding)

    return device.synced(op), (lambda: im2col_conv(x, w, stride, padding)), reference_torch
