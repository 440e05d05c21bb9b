"""Benchmark builders of the part 3 ops (docs/cnnl_nn_ext.md): flash attention and interpolation, in the form of
cases.py (`build(arena, shape, dtype)` -> (device call, numpy reference)), and the numpy equivalents the ext suite
compares against.

Flash attention runs causal-free packed attention at (batch, heads, sequence, head dim); its reference is the same
attention in float32 numpy, one (sequence, head) at a time (so the reference, too, never holds more than one score
matrix). Interpolation resizes NCHW maps by 2 with bilinear weights (align_corners=False); its reference is the
separable numpy form (two gathers and weighted sums per axis).
"""
from __future__ import annotations

import math

import numpy as np

import cnnl

#: (batch, heads, sequence, head dim) of flash attention
ATTENTION = {"small": (1, 4, 256, 64), "medium": (2, 8, 1024, 64), "large": (4, 16, 2048, 64)}
#: NCHW input maps of the 2x bilinear interpolation: 64K, 1M, 16M elements
INTERPOLATION = {"small": (4, 16, 32, 32), "medium": (8, 32, 64, 64), "large": (16, 64, 128, 128)}


def attention_reference(q, k, v, batch, scale, causal=False):
    """The numpy reference: per sequence and head, in float32."""
    length = q.shape[0] // batch
    out = np.empty(q.shape, np.float32)
    future = np.triu(np.ones((length, length), bool), 1)
    for b in range(batch):
        rows = slice(b * length, (b + 1) * length)
        for h in range(q.shape[1]):
            scores = (q[rows, h] * np.float32(scale)) @ k[rows, h].T
            if causal:
                scores[future] = -np.inf
            scores -= scores.max(axis=1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=1, keepdims=True)
            out[rows, h] = scores @ v[rows, h]
    return out


class _Flash:
    """Device operands of one packed flash attention problem (equal sequence lengths)."""

    def __init__(self, arena, shape, dtype):
        batch, heads, length, depth = shape
        total = batch * length
        (self.q, qv), (self.k, kv), (self.v, vv) = (arena.random((total, heads, depth), dtype) for _ in range(3))
        self.host = [a.astype(np.float32) for a in (qv, kv, vv)]
        self.offsets = arena.upload(np.arange(batch + 1, dtype=np.int32) * length, "int32")
        self.out = arena.empty((total, heads, depth), dtype)
        self.lse = arena.empty((heads, total), "float")
        self.scale = 1 / math.sqrt(depth)
        self.length = length

    def descriptor(self, backward=False, mask=cnnl.CNNL_ATTN_MASK_NONE):
        desc = cnnl.createFlashAttentionDescriptor()
        setter = cnnl.setFlashAttentionBackwardDescriptor if backward else cnnl.setFlashAttentionDescriptor
        setter(desc, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_ACTIVATION_HIGH_PRECISION, mask, True, False, False,
               self.length, self.length, 0.0, self.scale)
        return desc


def flash_attention_call(arena, shape, dtype):
    """(device call, packed float32 host q, k, v, softmax scale) of one flash attention forward of `shape`."""
    flash = _Flash(arena, shape, dtype)
    desc = flash.descriptor()
    q, k, v, offsets = flash.q, flash.k, flash.v, flash.offsets
    workspace, size = arena.workspace(cnnl.getFlashAttentionForwardWorkspaceSize(arena.handle, desc, q.desc, k.desc,
                                                                                 v.desc))

    def call():
        cnnl.flashAttentionForward(arena.handle, desc, q.desc, q.ptr, k.desc, k.ptr, v.desc, v.ptr, offsets.desc,
                                   offsets.ptr, offsets.desc, offsets.ptr, None, workspace, size, None, None,
                                   flash.lse.desc, flash.lse.ptr, flash.out.desc, flash.out.ptr)
    call.flash = flash
    return call, flash.host, flash.scale


def flash_attention(arena, shape, dtype):
    """cnnlFlashAttentionForward against float32 numpy attention."""
    call, (q, k, v), scale = flash_attention_call(arena, shape, dtype)
    return call, lambda: attention_reference(q, k, v, shape[0], scale)


def bilinear_taps(size, extent):
    """(first, second, weight of second) of PyTorch's align_corners=False linear resize of one axis."""
    ratio = np.float32(size / extent)
    src = np.maximum((np.arange(extent, dtype=np.float32) + np.float32(0.5)) * ratio - np.float32(0.5),
                     np.float32(0))
    first = np.minimum(np.floor(src).astype(np.int64), size - 1)
    second = np.minimum(first + 1, size - 1)
    return first, second, (src - first).astype(np.float32)


def numpy_bilinear(x, out_h, out_w):
    """The separable numpy 2x bilinear resize of NCHW float32 maps (the reference of the interpolation case)."""
    h0, h1, wh = bilinear_taps(x.shape[2], out_h)
    w0, w1, ww = bilinear_taps(x.shape[3], out_w)
    rows = x[:, :, h0] * (1 - wh)[:, None]
    rows += x[:, :, h1] * wh[:, None]
    out = rows[..., w0] * (1 - ww)
    out += rows[..., w1] * ww
    return out


def interpolation_call(arena, shape, dtype):
    """(device call, host input) of a 2x bilinear interpolation of NCHW maps of `shape`."""
    x, values = arena.random(shape, dtype, layout=cnnl.CNNL_LAYOUT_NCHW)
    out_shape = shape[:2] + (2 * shape[2], 2 * shape[3])
    y = arena.empty(out_shape, dtype, layout=cnnl.CNNL_LAYOUT_NCHW)
    desc = cnnl.createInterpDescriptor()
    cnnl.setInterpDescriptor(desc, cnnl.CNNL_INTERP_BILINEAR, cnnl.CNNL_INTERP_COORDINATE_TRANSFORMATION_ALGO0)
    return (lambda: cnnl.interp_v3(arena.handle, desc, x.desc, x.ptr, y.desc, y.ptr)), values


def interpolation(arena, shape, dtype):
    """cnnlInterp_v3 (bilinear, 2x) against the separable numpy resize."""
    call, values = interpolation_call(arena, shape, dtype)
    values = values.astype(np.float32)
    return call, lambda: numpy_bilinear(values, 2 * shape[2], 2 * shape[3])


# ---- the remaining part 3 ops: one builder each, references doing the same work in numpy -------------------------

#: (batch, sequence, heads, head dim) of rotary embedding: 64K, 2M, 16M elements
SEQUENCES = {"small": (1, 128, 8, 64), "medium": (4, 512, 16, 64), "large": (8, 1024, 32, 64)}
#: NHWC feature maps of the synchronised batch norm (as cases_nn.FEATURE_MAP)
FEATURE_MAP = {"small": (4, 32, 32, 16), "medium": (8, 64, 64, 32), "large": (32, 128, 128, 32)}
#: NCHW images of im2col / col2im with a 3x3 window, padding 1
IMAGES = {"small": (2, 8, 32, 32), "medium": (4, 16, 64, 64), "large": (8, 32, 128, 128)}
#: (T, N, C, S) of CTC loss
CTC = {"small": (50, 4, 20, 10), "medium": (200, 16, 40, 40), "large": (400, 32, 80, 80)}
#: (B, R1, R2, M) of cdist
CDIST = {"small": (2, 128, 128, 32), "medium": (4, 512, 512, 64), "large": (8, 1024, 1024, 64)}
#: (B, m, n) of QR
MATRICES = {"small": (16, 32, 32), "medium": (32, 128, 128), "large": (16, 512, 512)}
#: (rows, classes, samples) of multinomial sampling with replacement
MULTINOMIAL = {"small": (64, 100, 10), "medium": (256, 1000, 100), "large": (1024, 1000, 1000)}
#: boxes of NMS
BOXES = {"small": (500,), "medium": (2000,)}
#: (N, H, W, C, Co) of the deformable convolution (3x3, padding 1)
DCN = {"small": (1, 16, 16, 16, 16), "medium": (2, 32, 32, 32, 32)}
#: (rows, classes) of the NLL losses, elements of MSE (as cases.ELEMENTWISE)
ROWS = {"small": (256, 256), "medium": (1024, 1024), "large": (4096, 4096)}
VECTOR = {"small": (1 << 16,), "medium": (1 << 20,), "large": (1 << 24,)}

NHWC, NCHW = cnnl.CNNL_LAYOUT_NHWC, cnnl.CNNL_LAYOUT_NCHW
EPS = 1e-5


def _ints(arena, values, dtype="int32"):
    values = np.asarray(values, np.int32)
    return arena.upload(values, dtype), values


def _f32(values):
    return np.asarray(values, np.float32)


# ---- flash attention: _v2 forward, backward ----------------------------------------------------------------------

def flash_attention_v2(arena, shape, dtype):
    """cnnlFlashAttentionForward_v2 (causal, no extras) against float32 numpy attention."""
    flash = _Flash(arena, shape, dtype)
    desc = flash.descriptor(mask=cnnl.CNNL_ATTN_MASK_CAUSAL)
    q, k, v, offsets, out, lse = flash.q, flash.k, flash.v, flash.offsets, flash.out, flash.lse
    return (lambda: cnnl.flashAttentionForward_v2(arena.handle, desc, q.desc, q.ptr, k.desc, k.ptr, v.desc, v.ptr,
                                                  offsets.desc, offsets.ptr, offsets.desc, offsets.ptr, None, None,
                                                  None, None, None, None, None, None, 0, None, None, lse.desc,
                                                  lse.ptr, out.desc, out.ptr),
            lambda: attention_reference(*flash.host, shape[0], flash.scale, causal=True))


def attention_backward_reference(q, k, v, dout, batch, scale):
    """Dense float32 attention gradients per (sequence, head)."""
    length = q.shape[0] // batch
    grads = [np.empty_like(q), np.empty_like(k), np.empty_like(v)]
    for b in range(batch):
        rows = slice(b * length, (b + 1) * length)
        for h in range(q.shape[1]):
            scores = (q[rows, h] * np.float32(scale)) @ k[rows, h].T
            probs = np.exp(scores - scores.max(axis=1, keepdims=True))
            probs /= probs.sum(axis=1, keepdims=True)
            grads[2][rows, h] = probs.T @ dout[rows, h]
            dprobs = dout[rows, h] @ v[rows, h].T
            dscores = probs * (dprobs - (dprobs * probs).sum(axis=1, keepdims=True)) * np.float32(scale)
            grads[0][rows, h] = dscores @ k[rows, h]
            grads[1][rows, h] = dscores.T @ q[rows, h]
    return grads


def flash_attention_backward(v2: bool):
    """cnnlFlashAttentionBackward(_v2) (the forward runs in the build) against dense float32 gradients."""
    def build(arena, shape, dtype):
        batch, heads, length, depth = shape
        forward, host, scale = flash_attention_call(arena, shape, dtype)
        forward()
        arena.sync()
        flash = forward.flash
        q, k, v, out, lse, offsets = flash.q, flash.k, flash.v, flash.out, flash.lse, flash.offsets
        grad, gv = arena.random(flash.out.dims, dtype)
        dq, dk, dv = (arena.empty(flash.out.dims, dtype) for _ in range(3))
        desc = flash.descriptor(backward=True)
        workspace, size = arena.workspace(cnnl.getFlashAttentionBackwardWorkspaceSize(arena.handle, desc, q.desc,
                                                                                      k.desc, v.desc))
        extras = (None, None, None, None) if v2 else ()
        name = "flashAttentionBackward_v2" if v2 else "flashAttentionBackward"
        gradient = _f32(gv)
        return (lambda: getattr(cnnl, name)(arena.handle, desc, grad.desc, grad.ptr, q.desc, q.ptr, k.desc, k.ptr, v.desc,
                                 v.ptr, out.desc, out.ptr, lse.desc, lse.ptr, offsets.desc, offsets.ptr, offsets.desc,
                                 offsets.ptr, *extras, None, workspace, size, dq.desc, dq.ptr, dk.desc, dk.ptr,
                                 dv.desc, dv.ptr, None, None, None, None),
                lambda: attention_backward_reference(*host, gradient, batch, scale))
    return build


# ---- interpolation backward --------------------------------------------------------------------------------------

def _bilinear_matrix(size, extent):
    """The dense (extent, size) matrix of the align_corners=False linear resize of one axis."""
    first, second, weight = bilinear_taps(size, extent)
    matrix = np.zeros((extent, size), np.float32)
    np.add.at(matrix, (np.arange(extent), first), 1 - weight)
    np.add.at(matrix, (np.arange(extent), second), weight)
    return matrix


def interpolation_backward(arena, shape, dtype):
    """cnnlInterpBackward_v2 (bilinear, 2x) against the transposed dense resize matrices."""
    out_shape = shape[:2] + (2 * shape[2], 2 * shape[3])
    dy, dyv = arena.random(out_shape, dtype, layout=NCHW)
    dx = arena.empty(shape, dtype, layout=NCHW)
    rows, cols = _bilinear_matrix(shape[2], out_shape[2]), _bilinear_matrix(shape[3], out_shape[3])
    grads = _f32(dyv)
    return (lambda: cnnl.interpBackward_v2(arena.handle, False, True, cnnl.CNNL_INTERP_BACKWARD_BILINEAR, None, True,
                                           dy.desc, dy.ptr, dx.desc, dx.ptr),
            lambda: rows.T @ grads @ cols)


# ---- rotary embedding --------------------------------------------------------------------------------------------

def rotary(arena, shape, dtype):
    """cnnlRotaryEmbedding of split halves (NTBC) against the numpy rotation."""
    batch, length, heads, depth = shape
    (x, xv), y = arena.random(shape, dtype), arena.empty(shape, dtype)
    angles = arena.rng.uniform(-3, 3, (length, 1, depth // 2))
    cos_host, sin_host = np.cos(angles).astype(xv.dtype), np.sin(angles).astype(xv.dtype)
    cos, sin = arena.upload(cos_host, dtype), arena.upload(sin_host, dtype)
    item = xv.dtype.itemsize
    halves = []
    for base in (x, y):
        for part in range(2):
            desc = cnnl.createTensorDescriptor()
            cnnl.setTensorDescriptorEx(desc, cnnl.CNNL_LAYOUT_ARRAY, arena.code(dtype),
                                       [batch, length, heads, depth // 2],
                                       [length * heads * depth, heads * depth, depth, 1])
            halves += [desc, base.ptr + part * depth // 2 * item]
    desc = cnnl.createRotaryEmbeddingDescriptor()
    cnnl.setRotaryEmbeddingDescriptor(desc, False, cnnl.CNNL_SEQDATA_NTBC)
    values, c, s = _f32(xv), _f32(cos_host), _f32(sin_host)

    def reference():
        first, second = values[..., :depth // 2], values[..., depth // 2:]
        return np.concatenate([first * c - second * s, first * s + second * c], -1)
    return (lambda: cnnl.rotaryEmbedding(arena.handle, desc, *halves[:4], cos.desc, cos.ptr, sin.desc, sin.ptr, None,
                                         0, *halves[4:]),
            reference)


# ---- synchronised batch norm --------------------------------------------------------------------------------------

def _channel_rows(values):
    return _f32(values).reshape(-1, values.shape[-1])


def sync_bn_stats(arena, shape, dtype):
    (x, xv) = arena.random(shape, dtype, layout=NHWC)
    mean, invstd = arena.empty((shape[-1],), "float"), arena.empty((shape[-1],), "float")
    rows = _channel_rows(xv)
    return (lambda: cnnl.syncBatchNormStats_v2(arena.handle, x.desc, x.ptr, None, 0, EPS, mean.desc, mean.ptr,
                                               invstd.desc, invstd.ptr),
            lambda: (rows.mean(axis=0), 1 / np.sqrt(rows.var(axis=0) + EPS)))


def sync_bn_gather(arena, shape, dtype):
    """Gather the statistics of 8 devices (shape: the per-device map; C channels)."""
    channels, devices = shape[-1], 8
    (means, mv), (invstds, iv) = arena.random((devices, channels), "float"), arena.between((devices, channels),
                                                                                           "float", 0.5, 2)
    counts = arena.upload(np.full(devices, np.prod(shape[:-1]), np.float32), "float")
    mean, invstd = arena.empty((channels,), "float"), arena.empty((channels,), "float")
    weights = np.full((devices, 1), float(np.prod(shape[:-1])), np.float32)

    def reference():
        total = weights.sum()
        m = (weights * mv).sum(axis=0) / total
        var = (weights * (1 / iv ** 2 - EPS + (mv - m) ** 2)).sum(axis=0) / total
        return m, 1 / np.sqrt(var + EPS)
    return (lambda: cnnl.syncBatchNormGatherStatsWithCounts(arena.handle, means.desc, means.ptr, invstds.desc,
                                                            invstds.ptr, None, None, None, None, 0.1, EPS,
                                                            counts.desc, counts.ptr, mean.desc, mean.ptr, invstd.desc,
                                                            invstd.ptr),
            reference)


def _bn_parameters(arena, channels):
    (mean, mv), (invstd, iv) = arena.random((channels,), "float"), arena.between((channels,), "float", 0.5, 2)
    (weight, wv), (bias, bv) = arena.random((channels,), "float"), arena.random((channels,), "float")
    return (mean, invstd, weight, bias), (mv, iv, wv, bv)


def sync_bn_elemt(arena, shape, dtype):
    (x, xv), y = arena.random(shape, dtype, layout=NHWC), arena.empty(shape, dtype, layout=NHWC)
    (mean, invstd, weight, bias), (mv, iv, wv, bv) = _bn_parameters(arena, shape[-1])
    values = _f32(xv)
    return (lambda: cnnl.syncBatchNormElemt(arena.handle, x.desc, x.ptr, mean.desc, mean.ptr, invstd.desc, invstd.ptr,
                                            weight.desc, weight.ptr, bias.desc, bias.ptr, y.desc, y.ptr),
            lambda: (values - mv) * (iv * wv) + bv)


def sync_bn_backward_reduce(arena, shape, dtype):
    (x, xv), (dy, dyv) = arena.random(shape, dtype, layout=NHWC), arena.random(shape, dtype, layout=NHWC)
    (mean, invstd, _, _), (mv, iv, _, _) = _bn_parameters(arena, shape[-1])
    outs = [arena.empty((shape[-1],), "float") for _ in range(4)]
    rows, grads = _channel_rows(xv), _channel_rows(dyv)

    def reference():
        sum_dy, sum_dy_xmu = grads.sum(axis=0), (grads * (rows - mv)).sum(axis=0)
        return sum_dy, sum_dy_xmu, sum_dy_xmu * iv
    return (lambda: cnnl.syncBatchnormBackwardReduce_v2(arena.handle, dy.desc, dy.ptr, x.desc, x.ptr, mean.desc,
                                                        mean.ptr, invstd.desc, invstd.ptr, None, 0, outs[2].desc,
                                                        outs[2].ptr, outs[3].desc, outs[3].ptr, outs[0].desc,
                                                        outs[0].ptr, outs[1].desc, outs[1].ptr, True, True, True),
            reference)


def sync_bn_backward_elemt(arena, shape, dtype):
    (x, xv), (dy, dyv) = arena.random(shape, dtype, layout=NHWC), arena.random(shape, dtype, layout=NHWC)
    dx = arena.empty(shape, dtype, layout=NHWC)
    (mean, invstd, weight, _), (mv, iv, wv, _) = _bn_parameters(arena, shape[-1])
    (sum_dy, sv), (sum_dy_xmu, sxv) = arena.random((shape[-1],), "float"), arena.random((shape[-1],), "float")
    total = int(np.prod(shape[:-1]))
    counts, _ = _ints(arena, [total])
    values, grads = _f32(xv), _f32(dyv)

    def reference():
        return (grads - sv / total - (values - mv) * iv ** 2 * sxv / total) * iv * wv
    return (lambda: cnnl.syncBatchNormBackwardElemtV2(arena.handle, dy.desc, dy.ptr, x.desc, x.ptr, mean.desc,
                                                      mean.ptr, invstd.desc, invstd.ptr, weight.desc, weight.ptr,
                                                      sum_dy.desc, sum_dy.ptr, sum_dy_xmu.desc, sum_dy_xmu.ptr,
                                                      counts.desc, counts.ptr, dx.desc, dx.ptr),
            reference)


# ---- im2col, col2im, unfold --------------------------------------------------------------------------------------

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
    columns = _f32(cv).reshape(batch, height, width, channels, 3, 3)

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


# ---- losses -------------------------------------------------------------------------------------------------------

def mse_v2(arena, shape, dtype):
    (x, xv), (t, tv), y = arena.random(shape, dtype), arena.random(shape, dtype), arena.empty((1,), dtype)
    a, b = _f32(xv), _f32(tv)
    return (lambda: cnnl.mSELoss_v2(arena.handle, cnnl.CNNL_MSE_LOSS_MEAN, x.desc, x.ptr, t.desc, t.ptr, None, 0,
                                    y.desc, y.ptr),
            lambda: np.mean((a - b) ** 2))


def nll_v2(backward: bool):
    """cnnlNlllossForward_v2 / Backward_v2 (mean, no class weights)."""
    def build(arena, shape, dtype):
        rows, classes = shape
        (x, xv) = arena.between(shape, dtype, -8, 0)
        target, tv = _ints(arena, arena.rng.integers(0, classes, rows))
        positions = np.arange(rows)
        if not backward:
            total, y = arena.empty((1,), dtype), arena.empty((1,), dtype)
            values = _f32(xv)
            return (lambda: cnnl.nlllossForward_v2(arena.handle, cnnl.CNNL_REDUCTION_MEAN, x.desc, x.ptr, target.desc,
                                                   target.ptr, -100, None, None, None, 0, total.desc, total.ptr,
                                                   y.desc, y.ptr),
                    lambda: -values[positions, tv].mean())
        dy = arena.upload(np.ones(1, xv.dtype), dtype)
        total = arena.upload(np.full(1, rows, xv.dtype), dtype)
        dx, out = arena.empty(shape, dtype), np.empty(shape, np.float32)

        def reference():
            out.fill(0)
            out[positions, tv] = -1 / rows
        return (lambda: cnnl.nlllossBackward_v2(arena.handle, cnnl.CNNL_REDUCTION_MEAN, dy.desc, dy.ptr, target.desc,
                                                target.ptr, -100, None, None, total.desc, total.ptr, dx.desc, dx.ptr),
                reference)
    return build


def _ctc_reference(log_probs, labels, lengths):
    """The mean CTC loss by the alpha recursion, vectorised over the batch (float32)."""
    steps, batch, _ = log_probs.shape
    states = 2 * labels.shape[1] + 1
    extended = np.zeros((batch, states), np.int64)
    extended[:, 1::2] = labels
    skip = np.zeros((batch, states), bool)
    skip[:, 3::2] = labels[:, 1:] != labels[:, :-1]
    alpha = np.full((batch, states), -np.inf, np.float32)
    rows = np.arange(batch)[:, None]
    alpha[:, :2] = log_probs[0][rows, extended[:, :2]]
    for t in range(1, steps):
        stay, step = alpha, np.concatenate([np.full((batch, 1), -np.inf, np.float32), alpha[:, :-1]], 1)
        jump = np.concatenate([np.full((batch, 2), -np.inf, np.float32), alpha[:, :-2]], 1)
        jump = np.where(skip, jump, -np.inf)
        alpha = np.logaddexp(np.logaddexp(stay, step), jump) + log_probs[t][rows, extended]
    nll = -np.logaddexp(alpha[:, -1], alpha[:, -2])
    return np.mean(nll / lengths)


def ctc(arena, shape, dtype):
    """cnnlCTCLoss (loss and gradient, mean over label lengths and batch) against the numpy alpha recursion."""
    steps, batch, classes, label_length = shape
    logits = arena.rng.standard_normal((steps, batch, classes)).astype(arena.numpy_dtype(dtype))
    x = arena.upload(logits, dtype, cnnl.CNNL_LAYOUT_TNC)
    labels, lv = _ints(arena, arena.rng.integers(1, classes, (batch, label_length)))
    input_lengths, _ = _ints(arena, np.full(batch, steps))
    label_lengths, _ = _ints(arena, np.full(batch, label_length))
    loss, grads = arena.empty((1,), dtype), arena.empty((steps, batch, classes), dtype, cnnl.CNNL_LAYOUT_TNC)
    desc = cnnl.createCTCLossDescriptor()
    cnnl.setCTCLossDescriptor(desc, cnnl.CNNL_LOG_SOFTMAX_NORMALIZATION,
                              cnnl.CNNL_REDUCE_MODE_MEAN_BY_LABEL_LENGTH_AND_BATCH, cnnl.CNNL_NONE_ZERO_INFINITY, 0,
                              steps, label_length)
    workspace, size = arena.workspace(cnnl.getCTCLossWorkspaceSize(arena.handle, desc, x.desc, True))
    values = _f32(logits)
    log_probs = values - np.log(np.exp(values).sum(axis=-1, keepdims=True))
    return (lambda: cnnl.cTCLoss(arena.handle, desc, x.desc, x.ptr, labels.desc, labels.ptr, input_lengths.desc,
                                 input_lengths.ptr, label_lengths.desc, label_lengths.ptr, workspace, size, loss.desc,
                                 loss.ptr, grads.desc, grads.ptr),
            lambda: _ctc_reference(log_probs, lv, float(label_length)))


# ---- distances, linear algebra, complex numbers --------------------------------------------------------------------

def cdist(backward: bool):
    """cnnlCdistForward / cnnlCdistBackward with p = 2 against the numpy BLAS formulation."""
    def build(arena, shape, dtype):
        batch, first, second, depth = shape
        (a, av), (b, bv) = arena.random((batch, first, depth), dtype), arena.random((batch, second, depth), dtype)
        x1, x2 = _f32(av), _f32(bv)

        def distances():
            squared = (x1 * x1).sum(-1)[..., None] + (x2 * x2).sum(-1)[:, None, :] - 2 * x1 @ x2.transpose(0, 2, 1)
            return np.sqrt(np.maximum(squared, 0))
        if not backward:
            y = arena.empty((batch, first, second), dtype)
            return (lambda: cnnl.cdistForward(arena.handle, a.desc, a.ptr, b.desc, b.ptr, 2.0, y.desc, y.ptr),
                    distances)
        dist_values = distances().astype(av.dtype)
        dist, (grad, gv) = arena.upload(dist_values, dtype), arena.random((batch, first, second), dtype)
        dx = arena.empty((batch, first, depth), dtype)
        r, g = _f32(dist_values), _f32(gv)

        def reference():
            weights = np.where(r == 0, 0, g / np.where(r == 0, 1, r))
            return x1 * weights.sum(-1)[..., None] - weights @ x2
        return (lambda: cnnl.cdistBackward(arena.handle, a.desc, a.ptr, b.desc, b.ptr, dist.desc, dist.ptr, grad.desc,
                                           grad.ptr, 2.0, dx.desc, dx.ptr),
                reference)
    return build


def qr(arena, shape, dtype):
    """cnnlQR (reduced) against numpy.linalg.qr."""
    (a, av) = arena.random(shape, dtype)
    q, r = arena.empty(shape, dtype), arena.empty((shape[0], shape[2], shape[2]), dtype)
    workspace, size = arena.workspace(cnnl.getQRWorkspaceSize(arena.handle, a.desc, True))
    values = _f32(av)
    return (lambda: cnnl.qR(arena.handle, a.desc, a.ptr, q.desc, q.ptr, r.desc, r.ptr, workspace, size, True),
            lambda: np.linalg.qr(values))


def polar(arena, shape, dtype):
    """cnnlPolar into COMPLEX_FLOAT against numpy's complex exponential."""
    (radius, rv), (angle, av) = arena.random(shape, dtype, positive=True), arena.random(shape, dtype)
    out_desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(out_desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_COMPLEX_FLOAT, list(shape))
    out = arena.malloc(8 * int(np.prod(shape)))
    return (lambda: cnnl.polar(arena.handle, radius.desc, radius.ptr, angle.desc, angle.ptr, out_desc, out, None, 0),
            lambda: rv * np.exp(1j * av.astype(np.complex64)))


def trigon(arena, shape, dtype):
    """cnnlTrigonForward (asin) against np.arcsin."""
    (x, xv), y = arena.between(shape, dtype, -1, 1), arena.empty(shape, dtype)
    desc = cnnl.createTrigonDescriptor()
    cnnl.setTrigonDescriptor_v2(desc, cnnl.CNNL_TRIGON_ASIN, cnnl.CNNL_COMPUTATION_HIGH_PRECISION)
    out = np.empty_like(xv)
    return lambda: cnnl.trigonForward(arena.handle, desc, x.desc, x.ptr, y.desc, y.ptr), lambda: np.arcsin(xv, out=out)


# ---- random sampling ----------------------------------------------------------------------------------------------

def _generator():
    generator = cnnl.randCreateGenerator(cnnl.CNNL_RAND_RNG_PHILOX)
    cnnl.randSetPseudoRandomGeneratorSeed(generator, 1)
    return generator


def discrete_uniform(arena, shape, dtype):
    """cnnlRandGenerateDescreteUniform in [0, 1000) against numpy's Philox integers."""
    count = shape[0]
    out = arena.empty(shape, dtype)
    host = np.random.Generator(np.random.Philox(1))
    generator = _generator()
    return (lambda: cnnl.randGenerateDescreteUniform(arena.handle, generator, arena.code(dtype), None, count, 0,
                                                     1000, out.ptr),
            lambda: host.integers(0, 1000, count).astype(arena.numpy_dtype(dtype)))


def multinomial(arena, shape, dtype):
    """cnnlRandGenerateMultinomial_v2 with replacement against numpy's inverse-CDF sampling."""
    rows, classes, samples = shape
    (x, xv) = arena.random((rows, classes), dtype, positive=True)
    y = arena.empty((rows, samples), "int32")
    workspace, size = arena.workspace(cnnl.getRandGenerateMultinomialWorkspaceSize(arena.handle, x.desc))
    host = np.random.Generator(np.random.Philox(1))
    cumulative = np.cumsum(_f32(xv), axis=1)

    def reference():
        targets = host.random((rows, samples)) * cumulative[:, -1:]
        return [np.searchsorted(cumulative[r], targets[r], side="right") for r in range(rows)]
    generator = _generator()
    return (lambda: cnnl.randGenerateMultinomial_v2(arena.handle, generator, x.desc, x.ptr, True, False, None,
                                                    workspace, size, y.desc, y.ptr),
            reference)


# ---- NMS, deformable convolution ----------------------------------------------------------------------------------

def _numpy_nms(boxes, scores, threshold):
    order = np.argsort(-scores, kind="stable")
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    keep = []
    while order.size:
        i, rest = order[0], order[1:]
        keep.append(i)
        w = np.maximum(np.minimum(boxes[i, 2], boxes[rest, 2]) - np.maximum(boxes[i, 0], boxes[rest, 0]), 0)
        h = np.maximum(np.minimum(boxes[i, 3], boxes[rest, 3]) - np.maximum(boxes[i, 1], boxes[rest, 1]), 0)
        inter = w * h
        order = rest[inter / (area[i] + area[rest] - inter) < threshold]
    return keep


def nms(arena, shape, dtype):
    """cnnlNms_v2 (hard NMS, IoU 0.5, indices) against the numpy greedy loop."""
    count = shape[0]
    corner = arena.rng.uniform(0, 100, (count, 2)).astype(np.float32)
    boxes_host = np.concatenate([corner, corner + arena.rng.uniform(5, 30, (count, 2))], 1).astype(
        arena.numpy_dtype(dtype))
    boxes = arena.upload(boxes_host, dtype)
    (scores, sv) = arena.random((count,), dtype, positive=True)
    out, size_t = arena.empty((count,), "int32"), arena.empty((1,), "int32")
    desc = cnnl.createNmsDescriptor()
    cnnl.setNmsDescriptor_v5(desc, cnnl.CNNL_NMS_BOX_DIAGONAL, cnnl.CNNL_NMS_OUTPUT_TARGET_INDICES,
                             cnnl.CNNL_NMS_ALGO_EXCLUDE_BOUNDARY, cnnl.CNNL_NMS_HARD_NMS, 0.5, 0.0, count, 0.0, 0.0, 0,
                             False)
    workspace, size = arena.workspace(cnnl.getNmsWorkspaceSize_v3(arena.handle, boxes.desc, scores.desc))
    b, s = _f32(boxes_host), _f32(sv)
    return (lambda: cnnl.nms_v2(arena.handle, desc, boxes.desc, boxes.ptr, scores.desc, scores.ptr, workspace, size,
                                out.desc, out.ptr, size_t.ptr),
            lambda: _numpy_nms(b, s, 0.5))


def _dcn_operands(arena, shape, dtype):
    batch, height, width, channels, out_channels = shape
    (x, xv) = arena.random((batch, height, width, channels), dtype, layout=NHWC)
    (offset, ov) = arena.random((batch, height, width, 18), dtype, layout=NHWC)
    (mask, mv) = arena.between((batch, height, width, 9), dtype, 0, 1)
    mask = arena.upload(mv, dtype, NHWC)
    (w, wv) = arena.random((out_channels, 3, 3, channels), dtype, layout=NHWC)
    desc = cnnl.createDCNDescriptor()
    cnnl.setDCNDescriptor(desc, 4, [1, 1, 1, 1], [1, 1], [1, 1], 1, 1, batch, cnnl.CNNL_DTYPE_FLOAT)
    return desc, (x, offset, mask, w), tuple(_f32(v) for v in (xv, ov, mv, wv))


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
    grads = _f32(dyv)

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
    grads = _f32(dyv).reshape(-1, shape[4])
    return (lambda: cnnl.dCNBackwardWeight(arena.handle, desc, x.desc, x.ptr, offset.desc, offset.ptr, mask.desc,
                                           mask.ptr, dy.desc, dy.ptr, workspace, size, dw.desc, dw.ptr, db.desc,
                                           db.ptr),
            lambda: (grads.T @ numpy_deform_columns(xv, ov, mv).reshape(grads.shape[0], -1), grads.sum(axis=0)))
