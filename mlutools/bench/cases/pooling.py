"""Cases of pooling and interpolation (docs/cnnl_pooling.md): 2x2 windows at stride 2 (NHWC), adaptive pooling, bilinear
2x interpolation (align_corners=False) and its backward, against separable numpy forms."""
from __future__ import annotations

import numpy as np

import cnnl

from .base import Case, FEATURE_MAP, NCHW, NHWC, f32


POOL = 2             # window = stride of the pooling cases (no padding)
ADAPTIVE = 4         # input / output extent of the adaptive pooling cases


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


#: NCHW input maps of the 2x bilinear interpolation: 64K, 1M, 16M elements
INTERPOLATION = {"small": (4, 16, 32, 32), "medium": (8, 32, 64, 64), "large": (16, 64, 128, 128)}


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
    grads = f32(dyv)
    return (lambda: cnnl.interpBackward_v2(arena.handle, False, True, cnnl.CNNL_INTERP_BACKWARD_BILINEAR, None, True,
                                           dy.desc, dy.ptr, dx.desc, dx.ptr),
            lambda: rows.T @ grads @ cols)


#: the cases of this family, in the order the table lists them
CASES = (
    Case("max pool 2x2", "cnnlPoolingForward", max_pooling, shapes=FEATURE_MAP),
    Case("avg pool 2x2", "cnnlPoolingForward_v2", average_pooling_v2, shapes=FEATURE_MAP),
    Case("max pool index", "cnnlPoolingForwardWithIndex", max_pooling_with_index, shapes=FEATURE_MAP),
    Case("max pool bwd", "cnnlPoolingBackward", max_pooling_backward, shapes=FEATURE_MAP),
    Case("adaptive avg", "cnnlAdaptivePoolingForward", adaptive_pooling(v2=False), shapes=FEATURE_MAP),
    Case("adaptive avg v2", "cnnlAdaptivePoolingForward_v2", adaptive_pooling(v2=True), shapes=FEATURE_MAP),
    Case("adaptive avg bwd", "cnnlAdaptivePoolingBackward", adaptive_pooling_backward, shapes=FEATURE_MAP),
    Case("interp bilinear 2x", "cnnlInterp_v3", interpolation, shapes=INTERPOLATION, dtypes=("float", "half"),
             reference="numpy separable resize"),
    Case("interp bilinear 2x bwd", "cnnlInterpBackward_v2", interpolation_backward, shapes=INTERPOLATION,
             dtypes=("float",), reference="numpy resize matrices"),
)
