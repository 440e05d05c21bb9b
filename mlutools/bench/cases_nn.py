"""The neural-network builders of the benchmark table (the ops of docs/cnnl_nn.md) and the shapes they run at;
cases.py lists them in CASES.

Each builder has the form of cases.py: `build(arena, shape, dtype)` puts the operands in device memory through the
arena and returns (device call, numpy reference). Operands in the case's dtype; indices int32, masks bool, the
parameters of batch norm float32 (as mixed-precision training keeps them). Setup the call needs (indices of a max
pooling, a device random state) is queued and synced in the build, outside the measurement. The references do the
op's arithmetic in numpy on the host copies; the convolutions in float32 through im2col windows and np.tensordot, as
the forward case.
"""
from __future__ import annotations

import numpy as np

import cnnl

NHWC, NCHW = cnnl.CNNL_LAYOUT_NHWC, cnnl.CNNL_LAYOUT_NCHW

#: (batch, height, width, channels, output channels) of the 3x3 convolutions
CONVOLUTION = {"small": (1, 16, 16, 32, 32), "medium": (8, 32, 32, 64, 64), "large": (32, 56, 56, 64, 64)}
#: NHWC (batch, height, width, channels) feature maps of pooling and batch norm: 64K, 1M, 16M elements as ELEMENTWISE
FEATURE_MAP = {"small": (4, 32, 32, 16), "medium": (8, 64, 64, 32), "large": (32, 128, 128, 32)}
#: NCHW (batch, channels, height, width) of group norm, the same element counts
CHANNELS_FIRST = {"small": (4, 16, 32, 32), "medium": (8, 32, 64, 64), "large": (32, 32, 128, 128)}
#: (tokens, vocabulary, width) of the embedding: a 64K, 1M, 16M element output
EMBEDDING = {"small": (1024, 4096, 64), "medium": (16384, 32768, 64), "large": (262144, 65536, 64)}

EPS = 1e-5
MOMENTUM = 0.1
GROUPS = 8
POOL = 2             # window = stride of the pooling cases (no padding)
ADAPTIVE = 4         # input / output extent of the adaptive pooling cases
DROPOUT = 0.5
SMOOTH_L1_BETA = 1.0
SEED = 0


# ---- convolution: 3x3, stride 1, padding 1, NHWC --------------------------------------------------------------------

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


# ---- pooling: 2x2 windows, stride 2, NHWC ---------------------------------------------------------------------------

def _pool_descriptor(mode: int):
    desc = cnnl.createPoolingDescriptor()
    cnnl.setPooling2dDescriptor(desc, mode, cnnl.CNNL_NOT_PROPAGATE_NAN, POOL, POOL, 0, 0, 0, 0, POOL, POOL)
    return desc


def _blocks(values: np.ndarray, edge: int) -> np.ndarray:
    """An NHWC map as (N, H/edge, edge, W/edge, edge, C) blocks (a view)."""
    n, h, w, c = values.shape
    return values.reshape(n, h // edge, edge, w // edge, edge, c)


def _pooled(shape, edge: int) -> tuple:
    n, h, w, c = shape
    return (n, h // edge, w // edge, c)


def _window_argmax(values: np.ndarray) -> np.ndarray:
    """Position 0..3 of the maximum of each 2x2 window, (N, H/2, W/2, C)."""
    n, h, w, c = values.shape
    return _blocks(values, POOL).transpose(0, 1, 3, 5, 2, 4).reshape(n, h // POOL, w // POOL, c, POOL * POOL) \
        .argmax(axis=-1)


def _pooling(arena, shape, dtype, mode):
    (x, values), y = arena.random(shape, dtype, layout=NHWC), arena.empty(_pooled(shape, POOL), dtype, layout=NHWC)
    workspace, size = arena.workspace(cnnl.getPoolingWorkspaceSize(arena.handle, mode, y.dims[2], y.dims[1]))
    return x, values, y, _pool_descriptor(mode), workspace, size


def max_pooling(arena, shape, dtype):
    x, values, y, desc, workspace, size = _pooling(arena, shape, dtype, cnnl.CNNL_POOLING_MAX)
    return (lambda: cnnl.poolingForward(arena.handle, desc, None, x.desc, x.ptr, None, y.desc, y.ptr, workspace,
                                        size),
            lambda: _blocks(values, POOL).max(axis=(2, 4)))


def average_pooling_v2(arena, shape, dtype):
    x, values, y, desc, workspace, size = _pooling(arena, shape, dtype,
                                                   cnnl.CNNL_POOLING_AVERAGE_COUNT_INCLUDE_PADDING)
    return (lambda: cnnl.poolingForward_v2(arena.handle, desc, None, x.desc, x.ptr, None, None, y.desc, y.ptr,
                                           workspace, size),
            lambda: _blocks(values, POOL).mean(axis=(2, 4)))


def _max_with_index(arena, shape, dtype):
    x, values, y, desc, _, _ = _pooling(arena, shape, dtype, cnnl.CNNL_POOLING_MAX)
    index = arena.empty(y.dims, "int32", layout=NHWC)
    workspace, size = arena.workspace(cnnl.getPoolingWithIndexWorkspaceSize(arena.handle, x.desc, y.desc))

    def call():
        cnnl.poolingForwardWithIndex(arena.handle, desc, None, x.desc, x.ptr, None, y.desc, y.ptr, index.desc,
                                     index.ptr, workspace, size)
    return x, values, y, index, desc, call


def max_pooling_with_index(arena, shape, dtype):
    """The maximum and its flat position h * W + w in the input plane."""
    _, values, _, _, _, call = _max_with_index(arena, shape, dtype)
    _, h, w, _ = shape
    rows = np.arange(0, h, POOL).reshape(1, -1, 1, 1) * w
    columns = np.arange(0, w, POOL).reshape(1, 1, -1, 1)

    def reference():
        where = _window_argmax(values)
        return _blocks(values, POOL).max(axis=(2, 4)), rows + columns + (where // POOL) * w + where % POOL
    return call, reference


def max_pooling_backward(arena, shape, dtype):
    """dx from dy through the indices of the forward with index (queued and synced in the build)."""
    x, values, y, index, desc, forward = _max_with_index(arena, shape, dtype)
    forward()
    arena.sync()
    dy, dyv = arena.random(y.dims, dtype, layout=NHWC)
    dx = arena.empty(shape, dtype, layout=NHWC)
    where = _window_argmax(values)[..., None] == np.arange(POOL * POOL)
    n, h, w, c = shape

    def reference():
        windows = np.where(where, dyv[..., None], 0).reshape(n, h // POOL, w // POOL, c, POOL, POOL)
        return windows.transpose(0, 1, 4, 2, 5, 3).reshape(shape)
    return (lambda: cnnl.poolingBackward(arena.handle, desc, None, index.desc, index.ptr, dy.desc, dy.ptr, x.desc,
                                         x.ptr, None, dx.desc, dx.ptr),
            reference)


def adaptive_pooling(v2: bool):
    """Adaptive average pooling to a quarter of each extent (cnnlAdaptivePoolingForward or its _v2)."""
    mode = cnnl.CNNL_POOLING_AVERAGE_COUNT_INCLUDE_PADDING

    def build(arena, shape, dtype):
        (x, values) = arena.random(shape, dtype, layout=NHWC)
        y = arena.empty(_pooled(shape, ADAPTIVE), dtype, layout=NHWC)
        if v2:
            workspace, size = arena.workspace(cnnl.getAdaptivePoolingForwardWorkspaceSize(arena.handle, x.desc, mode,
                                                                                          y.desc))
            call = lambda: cnnl.adaptivePoolingForward_v2(arena.handle, x.desc, x.ptr, mode, workspace, size,  # noqa
                                                          y.desc, y.ptr, None, None)
        else:
            call = lambda: cnnl.adaptivePoolingForward(arena.handle, x.desc, x.ptr, mode, y.desc, y.ptr,  # noqa
                                                       None, None)
        return call, lambda: _blocks(values, ADAPTIVE).mean(axis=(2, 4))
    return build


def adaptive_pooling_backward(arena, shape, dtype):
    """dx = dy spread evenly over each bin."""
    dy, dyv = arena.random(_pooled(shape, ADAPTIVE), dtype, layout=NHWC)
    dx = arena.empty(shape, dtype, layout=NHWC)
    mode = cnnl.CNNL_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
    out = np.empty(shape, dyv.dtype)
    spread = dyv[:, :, None, :, None, :]
    return (lambda: cnnl.adaptivePoolingBackward(arena.handle, dy.desc, dy.ptr, None, None, mode, dx.desc, dx.ptr),
            lambda: np.multiply(spread, 1 / ADAPTIVE ** 2, out=_blocks(out, ADAPTIVE)))


# ---- softmax over the last dimension --------------------------------------------------------------------------------

def _softmax_rows(values: np.ndarray) -> np.ndarray:
    shifted = np.exp(values - values.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def softmax(v2: bool):
    """cnnlSoftmaxForward, or cnnlSoftmaxForward_v2 with high precision."""
    def build(arena, shape, dtype):
        (x, values), y = arena.random(shape, dtype), arena.empty(shape, dtype)
        leading = (cnnl.CNNL_SOFTMAX_ACCURATE, cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION)
        function = cnnl.softmaxForward_v2 if v2 else cnnl.softmaxForward
        if v2:
            leading += (cnnl.CNNL_COMPUTATION_HIGH_PRECISION,)
        return (lambda: function(arena.handle, *leading, None, x.desc, x.ptr, None, y.desc, y.ptr),
                lambda: _softmax_rows(values))
    return build


def softmax_backward(arena, shape, dtype):
    """dx = y (dy - sum(dy y)) for y a softmax."""
    (y, yv), (dy, dyv), dx = arena.between(shape, dtype, 0, 2 / shape[-1]), arena.random(shape, dtype), \
        arena.empty(shape, dtype)
    return (lambda: cnnl.softmaxBackward(arena.handle, cnnl.CNNL_SOFTMAX_ACCURATE,
                                         cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION, None, y.desc, y.ptr, dy.desc, dy.ptr,
                                         None, dx.desc, dx.ptr),
            lambda: yv * (dyv - (dyv * yv).sum(axis=-1, keepdims=True)))


# ---- batch norm over NHWC maps (channels last), float32 parameters --------------------------------------------------

def _channel_statistics(values: np.ndarray):
    """(rows as (N*H*W, C), mean, biased variance) in float32."""
    rows = values.reshape(-1, values.shape[-1])
    return rows, rows.mean(axis=0, dtype=np.float32), rows.var(axis=0, dtype=np.float32)


def _bn_parameters(arena, channels: int, names):
    """float32 [C] parameters: weight in (0.5, 1.5), the others random; a dict name -> (tensor, values)."""
    return {name: arena.random((channels,), "float", positive=name in ("weight", "var")) for name in names}


def batch_norm_training(v2: bool):
    """Training forward: batch statistics, running-statistic update, normalised output."""
    def build(arena, shape, dtype):
        (x, values), y = arena.random(shape, dtype, layout=NHWC), arena.empty(shape, dtype, layout=NHWC)
        p = _bn_parameters(arena, shape[-1], ("weight", "bias", "mean", "var"))
        saved = [arena.empty((shape[-1],), "float") for _ in range(2)]
        (weight, wv), (bias, bv), (mean, mv), (var, vv) = p["weight"], p["bias"], p["mean"], p["var"]

        def reference():
            rows, batch_mean, batch_var = _channel_statistics(values)
            invstd = 1 / np.sqrt(batch_var + EPS)
            count = rows.shape[0]
            running = ((1 - MOMENTUM) * mv + MOMENTUM * batch_mean,
                       (1 - MOMENTUM) * vv + MOMENTUM * batch_var * count / (count - 1))
            return (rows - batch_mean) * (invstd * wv) + bv, invstd, running

        if v2:
            workspace, size = arena.workspace(cnnl.getBatchNormForwardWorkspaceSize(arena.handle, x.desc))
            call = lambda: cnnl.batchNormForwardTraining_v2(  # noqa: E731
                arena.handle, None, cnnl.CNNL_BATCHNORM_SPATIAL, cnnl.CNNL_BATCHNORM_OPS_BN, None, None, x.desc,
                x.ptr, None, None, weight.desc, weight.ptr, bias.ptr, mean.ptr, var.ptr, EPS, MOMENTUM, y.desc,
                y.ptr, saved[0].ptr, saved[1].ptr, workspace, size, None, 0)
        else:
            call = lambda: cnnl.batchNormForwardTraining(  # noqa: E731
                arena.handle, None, None, x.desc, x.ptr, weight.desc, weight.ptr, bias.ptr, mean.ptr, var.ptr, EPS,
                MOMENTUM, y.desc, y.ptr, saved[0].ptr, saved[1].ptr)
        return call, reference
    return build


def batch_norm_inference(arena, shape, dtype):
    """y = (x - running mean) / sqrt(running var + eps) * weight + bias."""
    (x, values), y = arena.random(shape, dtype, layout=NHWC), arena.empty(shape, dtype, layout=NHWC)
    p = _bn_parameters(arena, shape[-1], ("weight", "bias", "mean", "var"))
    (weight, wv), (_, bv), (_, mv), (_, vv) = p["weight"], p["bias"], p["mean"], p["var"]

    def reference():
        scale = wv / np.sqrt(vv + EPS)
        return values * scale + (bv - mv * scale)
    return (lambda: cnnl.batchNormForwardInference(arena.handle, None, None, x.desc, x.ptr, weight.desc, weight.ptr,
                                                   *(p[name][0].ptr for name in ("bias", "mean", "var")), EPS,
                                                   y.desc, y.ptr),
            reference)


def batch_norm_backward(v2: bool):
    """dx, dweight, dbias from dy and the saved batch statistics of x."""
    def build(arena, shape, dtype):
        (x, values), (dy, dyv) = arena.random(shape, dtype, layout=NHWC), arena.random(shape, dtype, layout=NHWC)
        dx = arena.empty(shape, dtype, layout=NHWC)
        channels = shape[-1]
        weight, wv = arena.random((channels,), "float", positive=True)
        _, batch_mean, batch_var = _channel_statistics(values)
        batch_invstd = 1 / np.sqrt(batch_var + EPS)
        mean, invstd = arena.upload(batch_mean, "float"), arena.upload(batch_invstd, "float")
        dweight, dbias = arena.empty((channels,), "float"), arena.empty((channels,), "float")
        grads = dyv.reshape(-1, channels)

        def reference():
            normalised = (values.reshape(-1, channels) - batch_mean) * batch_invstd
            db, dw = grads.sum(axis=0, dtype=np.float32), (grads * normalised).sum(axis=0, dtype=np.float32)
            count = normalised.shape[0]
            return wv * batch_invstd / count * (count * grads - db - normalised * dw), dw, db

        if v2:
            workspace, size = arena.workspace(cnnl.getBatchNormBackwardWorkspaceSize(arena.handle, x.desc))
            call = lambda: cnnl.batchNormBackward_v2(  # noqa: E731
                arena.handle, None, cnnl.CNNL_BATCHNORM_SPATIAL, cnnl.CNNL_BATCHNORM_OPS_BN, None, None, None, None,
                x.desc, x.ptr, None, None, dy.desc, dy.ptr, weight.desc, weight.ptr, None, mean.ptr, invstd.ptr, EPS,
                None, None, dx.desc, dx.ptr, dweight.ptr, dbias.ptr, workspace, size, None, 0)
        else:
            call = lambda: cnnl.batchNormBackward(  # noqa: E731
                arena.handle, None, None, None, None, x.desc, x.ptr, dy.desc, dy.ptr, weight.desc, weight.ptr,
                mean.ptr, invstd.ptr, EPS, dx.desc, dx.ptr, dweight.ptr, dbias.ptr)
        return call, reference
    return build


# ---- layer norm and RMS norm over the last axis of (rows, columns) --------------------------------------------------

AXIS = 1


def _row_statistics(values: np.ndarray, centred: bool):
    """(mean or 0, rstd) of each row, keepdims, float32."""
    mean = values.mean(axis=1, keepdims=True, dtype=np.float32) if centred else np.float32(0)
    centred_values = values - mean
    rstd = 1 / np.sqrt((centred_values * centred_values).mean(axis=1, keepdims=True, dtype=np.float32) + EPS)
    return mean, rstd


def _norm_operands(arena, shape, dtype):
    """x, dy, weight [columns] and bias [columns] with their host copies."""
    return (arena.random(shape, dtype), arena.random(shape, dtype), arena.random(shape[1:], dtype, positive=True),
            arena.random(shape[1:], dtype))


def layer_norm(arena, shape, dtype):
    (x, values), _, (weight, wv), (bias, bv) = _norm_operands(arena, shape, dtype)
    y, mean, rstd = arena.empty(shape, dtype), arena.empty(shape[:1], dtype), arena.empty(shape[:1], dtype)
    workspace, size = arena.workspace(cnnl.getLayerNormOpWorkspaceSize(arena.handle, AXIS, x.desc))

    def reference():
        row_mean, row_rstd = _row_statistics(values, centred=True)
        return (values - row_mean) * row_rstd * wv + bv
    return (lambda: cnnl.layerNormForward(arena.handle, x.desc, x.ptr, AXIS, weight.desc, weight.ptr, bias.ptr, EPS,
                                          workspace, size, y.desc, y.ptr, mean.desc, mean.ptr, rstd.ptr),
            reference)


def rms_norm(arena, shape, dtype):
    (x, values), _, (weight, wv), _ = _norm_operands(arena, shape, dtype)
    y, rstd = arena.empty(shape, dtype), arena.empty(shape[:1], dtype)
    workspace, size = arena.workspace(cnnl.getRmsNormOpWorkspaceSize(arena.handle, AXIS, x.desc))
    return (lambda: cnnl.rmsNormForward(arena.handle, AXIS, x.desc, x.ptr, weight.desc, weight.ptr, None, EPS,
                                        workspace, size, y.desc, y.ptr, rstd.desc, rstd.ptr),
            lambda: values * _row_statistics(values, centred=False)[1] * wv)


def _row_norm_backward(values, grads, weight, mean, rstd, centred: bool):
    """dx, dweight, dbias of y = (x - mean) rstd weight + bias per row (mean 0 and no bias when not centred)."""
    normalised = (values - mean) * rstd
    scaled = grads * weight
    inner = scaled - scaled.mean(axis=1, keepdims=True) if centred else scaled
    dx = rstd * (inner - normalised * (scaled * normalised).mean(axis=1, keepdims=True))
    dweight = (grads * normalised).sum(axis=0, dtype=np.float32)
    return (dx, dweight, grads.sum(axis=0, dtype=np.float32)) if centred else (dx, dweight)


def norm_backward(rms: bool):
    """cnnlLayerNormBackward_v2 or cnnlRmsNormBackward from the saved statistics of x."""
    def build(arena, shape, dtype):
        (x, values), (dy, dyv), (weight, wv), _ = _norm_operands(arena, shape, dtype)
        dx, dweight, dbias = arena.empty(shape, dtype), arena.empty(shape[1:], dtype), arena.empty(shape[1:], dtype)
        row_mean, row_rstd = _row_statistics(values, centred=not rms)
        rstd = arena.upload(row_rstd.reshape(-1).astype(values.dtype), dtype)
        if rms:
            workspace, size = arena.workspace(cnnl.getRmsNormBackwardWorkspaceSize(arena.handle, x.desc, AXIS))
            call = lambda: cnnl.rmsNormBackward(  # noqa: E731
                arena.handle, AXIS, x.desc, x.ptr, dy.desc, dy.ptr, weight.desc, weight.ptr, rstd.desc, rstd.ptr,
                workspace, size, dx.desc, dx.ptr, dweight.desc, dweight.ptr, None)
        else:
            mean = arena.upload(row_mean.reshape(-1).astype(values.dtype), dtype)
            workspace, size = arena.workspace(cnnl.getLayerNormBackwardWorkspaceSize(arena.handle, x.desc, AXIS))
            call = lambda: cnnl.layerNormBackward_v2(  # noqa: E731
                arena.handle, x.desc, x.ptr, AXIS, dy.desc, dy.ptr, weight.desc, weight.ptr, mean.desc, mean.ptr,
                rstd.ptr, workspace, size, dx.desc, dx.ptr, dweight.ptr, dbias.ptr)
        return call, lambda: _row_norm_backward(values, dyv, wv, row_mean, row_rstd, centred=not rms)
    return build


# ---- group norm over NCHW maps --------------------------------------------------------------------------------------

def _group_statistics(values: np.ndarray):
    """(values as (N, groups, -1), mean, rstd), keepdims, float32."""
    groups = values.reshape(values.shape[0], GROUPS, -1)
    mean = groups.mean(axis=-1, keepdims=True, dtype=np.float32)
    return groups, mean, 1 / np.sqrt(groups.var(axis=-1, keepdims=True, dtype=np.float32) + EPS)


def _per_channel(values: np.ndarray) -> np.ndarray:
    return values.reshape(1, -1, 1, 1)


def group_norm(arena, shape, dtype):
    (x, values), y = arena.random(shape, dtype, layout=NCHW), arena.empty(shape, dtype, layout=NCHW)
    (scale, sv), (bias, bv) = arena.random(shape[1:2], dtype, positive=True), arena.random(shape[1:2], dtype)
    mean, rstd = arena.empty((shape[0] * GROUPS,), dtype), arena.empty((shape[0] * GROUPS,), dtype)
    workspace, size = arena.workspace(cnnl.getGroupNormForwardWorkspaceSize(arena.handle, GROUPS, x.desc))

    def reference():
        groups, group_mean, group_rstd = _group_statistics(values)
        return ((groups - group_mean) * group_rstd).reshape(shape) * _per_channel(sv) + _per_channel(bv)
    return (lambda: cnnl.groupNormForward_v3(arena.handle, EPS, GROUPS, x.desc, x.ptr, scale.desc, scale.ptr,
                                             bias.ptr, workspace, size, y.desc, y.ptr, mean.desc, mean.ptr, rstd.ptr),
            reference)


def group_norm_backward(arena, shape, dtype):
    (x, values), (dy, dyv) = arena.random(shape, dtype, layout=NCHW), arena.random(shape, dtype, layout=NCHW)
    (scale, sv), dx = arena.random(shape[1:2], dtype, positive=True), arena.empty(shape, dtype, layout=NCHW)
    dscale, dbias = arena.empty(shape[1:2], dtype), arena.empty(shape[1:2], dtype)
    _, group_mean, group_rstd = _group_statistics(values)
    mean, rstd = (arena.upload(v.reshape(-1).astype(values.dtype), dtype) for v in (group_mean, group_rstd))
    workspace, size = arena.workspace(cnnl.getGroupNormBackwardWorkspaceSize(arena.handle, shape[0] * shape[1]))
    batch = shape[0]

    def reference():
        groups = values.reshape(batch, GROUPS, -1)
        normalised = (groups - group_mean) * group_rstd
        planes = normalised.reshape(shape)
        scaled = (dyv * _per_channel(sv)).reshape(batch, GROUPS, -1)
        dx_ = group_rstd * (scaled - scaled.mean(axis=-1, keepdims=True)
                            - normalised * (scaled * normalised).mean(axis=-1, keepdims=True))
        return dx_, (dyv * planes).sum(axis=(0, 2, 3)), dyv.sum(axis=(0, 2, 3), dtype=np.float32)
    return (lambda: cnnl.groupNormBackward(arena.handle, x.desc, x.ptr, dy.desc, dy.ptr, scale.desc, scale.ptr,
                                           mean.desc, mean.ptr, rstd.desc, rstd.ptr, GROUPS, dx.desc, dx.ptr,
                                           dscale.desc, dscale.ptr, dbias.desc, dbias.ptr, workspace, size),
            reference)


# ---- indexing over (rows, columns) ----------------------------------------------------------------------------------

def _indices(arena, values: np.ndarray):
    """An int32 device tensor of `values` and its host copy."""
    values = values.astype(np.int32)
    return arena.upload(values, "int32"), values


def index_select(arena, shape, dtype):
    """y = x[index] over rows, index a permutation of the rows."""
    (x, values), y = arena.random(shape, dtype), arena.empty(shape, dtype)
    index, iv = _indices(arena, arena.rng.permutation(shape[0]))
    out = np.empty_like(values)
    return (lambda: cnnl.indexSelect(arena.handle, 0, x.desc, x.ptr, index.desc, index.ptr, y.desc, y.ptr),
            lambda: np.take(values, iv, axis=0, out=out))


def _row_permutations(arena, shape) -> np.ndarray:
    """Every row a permutation of the column numbers."""
    return arena.rng.permuted(np.broadcast_to(np.arange(shape[1]), shape), axis=1)


def gather(arena, shape, dtype):
    """y[i, j] = x[i, index[i, j]]."""
    (x, values), y = arena.random(shape, dtype), arena.empty(shape, dtype)
    index, iv = _indices(arena, _row_permutations(arena, shape))
    return (lambda: cnnl.gather(arena.handle, 1, x.desc, x.ptr, index.desc, index.ptr, y.desc, y.ptr),
            lambda: np.take_along_axis(values, iv, axis=1))


def scatter(arena, shape, dtype):
    """out = x with out[i, index[i, j]] = src[i, j] (no duplicate targets)."""
    (x, values), (src, sv), out = arena.random(shape, dtype), arena.random(shape, dtype), arena.empty(shape, dtype)
    index, iv = _indices(arena, _row_permutations(arena, shape))
    host = np.empty_like(values)

    def reference():
        np.copyto(host, values)
        np.put_along_axis(host, iv, sv, axis=1)
    return (lambda: cnnl.scatter(arena.handle, 1, x.desc, x.ptr, index.desc, index.ptr, src.desc, src.ptr, out.desc,
                                 out.ptr, cnnl.CNNL_SCATTER),
            reference)


def embedding(arena, shape, dtype):
    """y = table[indices] for `tokens` random indices."""
    tokens, vocabulary, width = shape
    (table, tv), y = arena.random((vocabulary, width), dtype), arena.empty((tokens, width), dtype)
    indices, iv = _indices(arena, arena.rng.integers(0, vocabulary, tokens))
    out = np.empty((tokens, width), tv.dtype)
    return (lambda: cnnl.embeddingForward_v2(arena.handle, table.desc, table.ptr, indices.desc, indices.ptr, -1, None,
                                             None, y.desc, y.ptr),
            lambda: np.take(tv, iv, axis=0, out=out))


def embedding_backward(arena, shape, dtype):
    """The table gradient: the rows of diff added at their indices."""
    tokens, vocabulary, width = shape
    (diff, dv), grad = arena.random((tokens, width), dtype), arena.empty((vocabulary, width), dtype)
    indices, iv = _indices(arena, arena.rng.integers(0, vocabulary, tokens))
    workspace, size = arena.workspace(cnnl.getEmbeddingBackwardWorkspaceSize(arena.handle, diff.desc, grad.desc,
                                                                             False))
    out = np.empty((vocabulary, width), dv.dtype)

    def reference():
        out.fill(0)
        np.add.at(out, iv, dv)
    return (lambda: cnnl.embeddingBackward(arena.handle, -1, False, indices.desc, indices.ptr, diff.desc, diff.ptr,
                                           workspace, size, grad.desc, grad.ptr),
            reference)


def masked_fill(arena, shape, dtype):
    """out = where(mask, value, x)."""
    (x, values), (mask, mv), out = arena.random(shape, dtype), arena.random(shape, "bool"), arena.empty(shape, dtype)
    fill_value = np.array([-1.0], values.dtype)
    value = arena.upload(fill_value, dtype)
    op = cnnl.CNNL_MASKED_FILL
    workspace, size = arena.workspace(cnnl.getMaskedWorkspaceSize(arena.handle, op, x.desc, mask.desc, value.desc,
                                                                  out.desc))
    return (lambda: cnnl.masked_v3(arena.handle, op, x.desc, x.ptr, mask.desc, mask.ptr, value.desc, value.ptr,
                                   workspace, size, out.desc, out.ptr, None),
            lambda: np.where(mv, fill_value, values))


def index_put(arena, shape, dtype):
    """out = x with half of the rows (distinct, random) replaced by rows of value."""
    rows = shape[0] // 2
    (x, values), (value, vv) = arena.random(shape, dtype), arena.random((rows,) + tuple(shape[1:]), dtype)
    out = arena.empty(shape, dtype)
    index, iv = _indices(arena, arena.rng.permutation(shape[0])[:rows])
    workspace, size = arena.workspace(cnnl.getIndexPutWorkspaceSize(arena.handle, x.desc, [index.desc], value.desc,
                                                                    False))
    host = np.empty_like(values)

    def reference():
        np.copyto(host, values)
        host[iv] = vv
    return (lambda: cnnl.indexPut(arena.handle, x.desc, x.ptr, [index.desc], [index.ptr], value.desc, value.ptr,
                                  workspace, size, False, False, out.desc, out.ptr),
            reference)


def _half_zero(arena, shape, dtype):
    """A device tensor whose values are zero in about half the places, and its host copy."""
    values = arena.host(shape, dtype)
    values[values < 0] = 0
    return arena.upload(values, dtype), values


def num_true(arena, shape, dtype):
    (x, values), count = _half_zero(arena, shape, dtype), arena.empty((1,), "int32")
    return (lambda: cnnl.numTrue_v2(arena.handle, x.desc, x.ptr, count.desc, count.ptr),
            lambda: np.count_nonzero(values))


def where_nonzero(arena, shape, dtype):
    """The (row, column) of every nonzero, given their number."""
    (x, values) = _half_zero(arena, shape, dtype)
    count, _ = _indices(arena, np.array([np.count_nonzero(values)]))
    y = arena.empty((int(np.count_nonzero(values)), len(shape)), "int32")
    workspace, size = arena.workspace(cnnl.getWhereWorkspaceSize(arena.handle, count.desc))
    return (lambda: cnnl.where_v2(arena.handle, x.desc, x.ptr, count.desc, count.ptr, False, workspace, size, y.desc,
                                  y.ptr),
            lambda: np.argwhere(values))


# ---- random numbers (Philox) and dropout ----------------------------------------------------------------------------

def _generator():
    generator = cnnl.randCreateGenerator(cnnl.CNNL_RAND_RNG_PHILOX)
    cnnl.randSetPseudoRandomGeneratorSeed(generator, SEED)
    return generator


def _host_numbers(draw, count: int, numpy_dtype):
    """A reference drawing `count` float32 numbers with `draw(out=...)` and storing them as `numpy_dtype`."""
    numbers, out = np.empty(count, np.float32), np.empty(count, numpy_dtype)
    rng = np.random.default_rng(SEED)

    def reference():
        getattr(rng, draw)(dtype=np.float32, out=numbers)
        np.copyto(out, numbers, casting="unsafe")
    return reference


def rand_uniform(arena, shape, dtype):
    """Uniform [0, 1) numbers from a device state made by cnnlRandMakeMTGP32KernelState (synced in the build)."""
    count, numpy_dtype = int(np.prod(shape)), arena.numpy_dtype(dtype)
    generator = _generator()
    state = arena.malloc(cnnl.randGetMTGP32StateSize(generator))
    cnnl.randMakeMTGP32KernelState(arena.handle, state, None, None, SEED)
    arena.sync()
    output = arena.malloc(count * numpy_dtype.itemsize)
    return (lambda: cnnl.randGenerateUniform(arena.handle, generator, arena.code(dtype), state, count, 0.0, 1.0,
                                             output),
            _host_numbers("random", count, numpy_dtype))


def rand_normal(arena, shape, dtype):
    """Standard normal numbers from the generator's own stream."""
    count, numpy_dtype = int(np.prod(shape)), arena.numpy_dtype(dtype)
    generator, output = _generator(), arena.malloc(count * numpy_dtype.itemsize)
    return (lambda: cnnl.randGenerateNormal(arena.handle, generator, arena.code(dtype), None, count, 0.0, 1.0,
                                            output),
            _host_numbers("standard_normal", count, numpy_dtype))


def dropout(arena, shape, dtype):
    """y = x / (1 - p) where uniform >= p, else 0; the bool mask of kept places."""
    (x, values), mask, y = arena.random(shape, dtype), arena.empty(shape, "bool"), arena.empty(shape, dtype)
    generator, rng = _generator(), np.random.default_rng(SEED)
    numbers = np.empty(shape, np.float32)

    def reference():
        keep = rng.random(dtype=np.float32, out=numbers) >= DROPOUT
        return keep, np.where(keep, values / (1 - DROPOUT), 0)
    return (lambda: cnnl.fusedDropout_v2(arena.handle, generator, x.desc, x.ptr, DROPOUT, None, mask.desc, mask.ptr,
                                         y.desc, y.ptr),
            reference)


# ---- losses over (rows, columns), mean reduction --------------------------------------------------------------------

def nll_loss(arena, shape, dtype):
    """Mean negative log-likelihood of one label per row, class weights, ignore index -100."""
    rows, classes = shape
    (x, values), (weight, wv) = arena.between(shape, dtype, -8, 0), arena.random((classes,), dtype, positive=True)
    target, tv = _indices(arena, arena.rng.integers(0, classes, rows))
    total, y = arena.empty((1,), dtype), arena.empty((1,), dtype)
    workspace, size = arena.workspace(cnnl.getNlllossWorkspaceSize(arena.handle, x.desc))
    positions = np.arange(rows)

    def reference():
        weights = wv[tv]
        return -(values[positions, tv] * weights).sum(dtype=np.float32) / weights.sum(dtype=np.float32)
    return (lambda: cnnl.nlllossForward(arena.handle, cnnl.CNNL_REDUCTION_MEAN, workspace, size, x.desc, x.ptr,
                                        target.desc, target.ptr, -100, weight.desc, weight.ptr, total.desc, total.ptr,
                                        y.desc, y.ptr),
            reference)


def nll_loss_backward(arena, shape, dtype):
    """dx = -weight[label] dy / total weight at each row's label, 0 elsewhere."""
    rows, classes = shape
    (weight, wv), dx = arena.random((classes,), dtype, positive=True), arena.empty(shape, dtype)
    target, tv = _indices(arena, arena.rng.integers(0, classes, rows))
    numpy_dtype = arena.numpy_dtype(dtype)
    total_weight = wv[tv].sum(dtype=np.float32).astype(numpy_dtype).reshape(1)
    dy, total = arena.upload(np.ones(1, numpy_dtype), dtype), arena.upload(total_weight, dtype)
    out, positions = np.empty(shape, numpy_dtype), np.arange(rows)

    def reference():
        out.fill(0)
        out[positions, tv] = -wv[tv] / total_weight
    return (lambda: cnnl.nlllossBackward(arena.handle, cnnl.CNNL_REDUCTION_MEAN, dy.desc, dy.ptr, target.desc,
                                         target.ptr, -100, weight.desc, weight.ptr, total.desc, total.ptr, dx.desc,
                                         dx.ptr),
            reference)


def _loss_operands(arena, shape, dtype, probabilities: bool):
    """x (in (0.05, 0.95) for BCE), target (in [0, 1) for the BCE losses)."""
    x = arena.between(shape, dtype, 0.05, 0.95) if probabilities else arena.random(shape, dtype)
    target = arena.between(shape, dtype, 0, 1) if probabilities else arena.random(shape, dtype)
    return x, target


def _sigmoid(values):
    return 1 / (1 + np.exp(-values))


#: name -> (mean loss of (x, t), gradient of the mean loss per element times n, x is a probability)
LOSSES = {
    "mse": (lambda x, t: np.square(x - t).mean(dtype=np.float32), lambda x, t: 2 * (x - t), False),
    "bce": (lambda x, t: -(t * np.log(x) + (1 - t) * np.log1p(-x)).mean(dtype=np.float32),
            lambda x, t: (x - t) / (x * (1 - x)), True),
    "bce_logits": (lambda x, t: (np.maximum(x, 0) - x * t + np.log1p(np.exp(-np.abs(x)))).mean(dtype=np.float32),
                   lambda x, t: _sigmoid(x) - t, False),
    "smooth_l1": (lambda x, t: np.where(np.abs(x - t) < SMOOTH_L1_BETA, 0.5 * np.square(x - t) / SMOOTH_L1_BETA,
                                        np.abs(x - t) - 0.5 * SMOOTH_L1_BETA).mean(dtype=np.float32),
                  lambda x, t: np.clip((x - t) / SMOOTH_L1_BETA, -1, 1), False),
}


def _loss_forward_call(name, arena, x, t, y):
    h = arena.handle
    if name == "mse":
        return lambda: cnnl.mSELoss(h, cnnl.CNNL_MSE_LOSS_MEAN, x.desc, x.ptr, t.desc, t.ptr, y.desc, y.ptr)
    if name == "bce":
        workspace, size = arena.workspace(cnnl.getBceLossWorkspaceSize(h, x.desc, None))
        return lambda: cnnl.bceLoss(h, x.desc, x.ptr, t.desc, t.ptr, None, None, cnnl.CNNL_BCE_LOSS_MEAN, workspace,
                                    size, y.desc, y.ptr)
    if name == "bce_logits":
        workspace, size = arena.workspace(cnnl.getBceWithLogitsWorkspaceSize(h, x.desc, None, None))
        return lambda: cnnl.bceWithLogits_v2(h, cnnl.CNNL_COMPUTATION_HIGH_PRECISION, x.desc, x.ptr, t.desc, t.ptr,
                                             None, None, None, None, cnnl.CNNL_BCE_WITH_LOGITS_MEAN, workspace, size,
                                             y.desc, y.ptr)
    workspace, size = arena.workspace(cnnl.getSmoothL1LossForwardWorkspaceSize(
        h, x.desc, cnnl.CNNL_SMOOTHL1LOSS_REDUCTION_MEAN))
    return lambda: cnnl.smoothL1LossForward_v2(h, x.desc, x.ptr, t.desc, t.ptr, SMOOTH_L1_BETA,
                                               cnnl.CNNL_SMOOTHL1LOSS_REDUCTION_MEAN, workspace, size, y.desc, y.ptr)


def _loss_backward_call(name, arena, x, t, dy, dx):
    h = arena.handle
    if name == "mse":
        return lambda: cnnl.mSELossBackward(h, cnnl.CNNL_MSE_LOSS_MEAN, x.desc, x.ptr, t.desc, t.ptr, dy.desc, dy.ptr,
                                            dx.desc, dx.ptr)
    if name == "bce":
        workspace, size = arena.workspace(cnnl.getBceLossBackwardWorkspaceSize(h, t.desc, None))
        return lambda: cnnl.bceLossBackward(h, dy.desc, dy.ptr, x.desc, x.ptr, t.desc, t.ptr, None, None,
                                            cnnl.CNNL_BCE_LOSS_MEAN, workspace, size, dx.desc, dx.ptr)
    if name == "bce_logits":
        workspace, size = arena.workspace(cnnl.getBceWithLogitsBackwardWorkspaceSize(h, t.desc, None, None))
        return lambda: cnnl.bceWithLogitsBackward(h, dy.desc, dy.ptr, x.desc, x.ptr, t.desc, t.ptr, None, None, None,
                                                  None, cnnl.CNNL_BCE_WITH_LOGITS_MEAN, workspace, size, dx.desc,
                                                  dx.ptr)
    workspace, size = arena.workspace(cnnl.getSmoothL1LossBackwardWorkspaceSize(
        h, x.desc, cnnl.CNNL_SMOOTHL1LOSS_REDUCTION_MEAN))
    return lambda: cnnl.smoothL1LossBackward_v2(h, x.desc, x.ptr, t.desc, t.ptr, dy.desc, dy.ptr, SMOOTH_L1_BETA,
                                                cnnl.CNNL_SMOOTHL1LOSS_REDUCTION_MEAN, workspace, size, dx.desc,
                                                dx.ptr)


def loss(name: str):
    """The mean loss of x against a target (one output element)."""
    forward, _, probabilities = LOSSES[name]

    def build(arena, shape, dtype):
        (x, xv), (t, tv) = _loss_operands(arena, shape, dtype, probabilities)
        return _loss_forward_call(name, arena, x, t, arena.empty((1,), dtype)), lambda: forward(xv, tv)
    return build


def loss_backward(name: str):
    """The gradient of the mean loss for an output gradient of 1."""
    _, gradient, probabilities = LOSSES[name]

    def build(arena, shape, dtype):
        (x, xv), (t, tv) = _loss_operands(arena, shape, dtype, probabilities)
        dy = arena.upload(np.ones(1, xv.dtype), dtype)
        scale = np.float32(1 / xv.size)
        return (_loss_backward_call(name, arena, x, t, dy, arena.empty(shape, dtype)),
                lambda: gradient(xv, tv) * scale)
    return build
