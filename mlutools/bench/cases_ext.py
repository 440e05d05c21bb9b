"""The builders of the benchmark table for the ops of docs/cnnl_ext.md (CNNL part 3); cases.py lists them in CASES.

Each builder has the form of cases.py: `build(arena, shape, dtype)` puts the operands in device memory through the
arena and returns (device call, numpy reference); shapes are cases.ELEMENTWISE (2-D, 64K / 1M / 16M elements)
unless a row says otherwise. The references are the numpy calls that do the same work: np.pad, np.roll and a copy of
np.flip for the data movement ops (the issue's targets: pad, roll and flip at 16M elements <= 1.0x numpy), numpy
ufunc expressions (in float32 for 16-bit types) for the arithmetic.
"""
from __future__ import annotations

import math

import numpy as np

import cnnl

HIGH = cnnl.CNNL_COMPUTATION_HIGH_PRECISION
HOST, DEVICE = cnnl.CNNL_POINTER_MODE_HOST, cnnl.CNNL_POINTER_MODE_DEVICE
NHWC = cnnl.CNNL_LAYOUT_NHWC
ROLL = 3       # shift of the roll case (along the last axis)
CLASSES = 16   # depth of the one-hot case


def _f32(values: np.ndarray) -> np.ndarray:
    return values.astype(np.float32)


def _scalar(arena, value, dtype: str) -> int:
    """A device pointer to one element of `dtype` holding value."""
    return arena.upload(np.array([value]).astype(arena.numpy_dtype(dtype)), dtype).ptr


# ---- elementwise arithmetic ----------------------------------------------------------------------------------------

def addc(divide: bool):
    """addcmul / addcdiv with a broadcast row vector as tensor2."""
    def build(arena, shape, dtype):
        (x, xv), (a, av) = arena.random(shape, dtype), arena.random(shape, dtype)
        b, bv = arena.random((shape[-1],), dtype, positive=True)
        out = arena.empty(shape, dtype)
        query, op = (cnnl.getAddcdivWorkspaceSize, cnnl.addcdiv) if divide else (cnnl.getAddcmulWorkspaceSize,
                                                                                 cnnl.addcmul)
        workspace, size = arena.workspace(query(arena.handle, x.desc, a.desc, b.desc))
        x32, a32, b32 = _f32(xv), _f32(av), _f32(bv)
        return (lambda: op(arena.handle, x.desc, x.ptr, 0.5, a.desc, a.ptr, b.desc, b.ptr, workspace, size, out.desc,
                           out.ptr),
                lambda: x32 + 0.5 * a32 / b32 if divide else x32 + 0.5 * a32 * b32)
    return build


def lerp(arena, shape, dtype):
    (x, xv), (e, ev), (w, wv) = (arena.random(shape, dtype) for _ in range(3))
    out = arena.empty(shape, dtype)
    workspace, size = arena.workspace(cnnl.getLerpWorkspaceSize(arena.handle, x.desc, e.desc, w.desc, out.desc))
    x32, e32, w32 = _f32(xv), _f32(ev), _f32(wv)
    return (lambda: cnnl.lerp(arena.handle, x.desc, x.ptr, e.desc, e.ptr, w.desc, w.ptr, workspace, size, out.desc,
                              out.ptr),
            lambda: x32 + w32 * (e32 - x32))


def atan2(arena, shape, dtype):
    (a, av), (b, bv) = arena.random(shape, dtype), arena.random(shape, dtype)
    out = arena.empty(shape, dtype)
    workspace, size = arena.workspace(cnnl.getAtan2WorkspaceSize(arena.handle, a.desc, b.desc, out.desc))
    a32, b32 = _f32(av), _f32(bv)
    return (lambda: cnnl.atan2(arena.handle, HIGH, a.desc, a.ptr, b.desc, b.ptr, workspace, size, out.desc, out.ptr),
            lambda: np.arctan2(a32, b32))


def division(name: str):
    """floor division, truncating division, floor modulo or truncating modulo (fmod) of positive operands."""
    query, numpy_op = {"floor": (cnnl.getFloorDivWorkspaceSize, np.floor_divide),
                       "trunc": (cnnl.getFloorDivTruncWorkspaceSize, lambda a, b: np.trunc(a / b)),
                       "mod": (cnnl.getFloorModWorkspaceSize, np.remainder),
                       "fmod": (cnnl.getFloorModTruncWorkspaceSize, np.fmod)}[name]

    def build(arena, shape, dtype):
        (a, av), (b, bv) = arena.random(shape, dtype), arena.random(shape, dtype, positive=True)
        out = arena.empty(shape, dtype)
        workspace, size = arena.workspace(query(arena.handle, a.desc, b.desc, out.desc))
        if name == "floor":
            call = lambda: cnnl.floorDiv_v2(arena.handle, HIGH, a.desc, a.ptr, b.desc, b.ptr, out.desc, out.ptr,  # noqa
                                            workspace, size)
        elif name == "trunc":
            call = lambda: cnnl.floorDivTrunc(arena.handle, HIGH, a.desc, a.ptr, b.desc, b.ptr, out.desc,  # noqa
                                              out.ptr, workspace, size)
        else:
            function = cnnl.floorMod if name == "mod" else cnnl.floorModTrunc
            call = lambda: function(arena.handle, a.desc, a.ptr, b.desc, b.ptr, out.desc, out.ptr,  # noqa
                                    workspace, size)
        a32, b32 = _f32(av), _f32(bv)
        return call, lambda: numpy_op(a32, b32)
    return build


def mul_n(arena, shape, dtype):
    (a, av), (b, bv), (c, cv) = (arena.random(shape, dtype) for _ in range(3))
    out = arena.empty(shape, dtype)
    a32, b32, c32 = _f32(av), _f32(bv), _f32(cv)
    return (lambda: cnnl.mulN(arena.handle, [a.desc, b.desc, c.desc], [a.ptr, b.ptr, c.ptr], out.desc, out.ptr),
            lambda: a32 * b32 * c32)


def transform(arena, shape, dtype):
    (x, xv), out = arena.random(shape, dtype), arena.empty(shape, dtype)
    x32 = _f32(xv)
    return (lambda: cnnl.transform_v2(arena.handle, HOST, 2.0, x.desc, x.ptr, 0.5, out.desc, out.ptr),
            lambda: 2.0 * x32 + 0.5)


def clip(arena, shape, dtype):
    (x, xv), out = arena.random(shape, dtype), arena.empty(shape, dtype)
    low, high = _scalar(arena, -0.5, dtype), _scalar(arena, 0.5, dtype)
    return (lambda: cnnl.clip_v2(arena.handle, DEVICE, x.desc, x.ptr, low, high, out.desc, out.ptr),
            lambda: np.clip(xv, -0.5, 0.5))


def bit_and(arena, shape, dtype):
    (a, av), (b, bv) = arena.random(shape, dtype), arena.random(shape, dtype)
    out = arena.empty(shape, dtype)
    workspace, size = arena.workspace(cnnl.getBitComputeWorkspaceSize(arena.handle, a.desc, b.desc, out.desc))
    result = np.empty_like(av)
    return (lambda: cnnl.bitCompute_v2(arena.handle, cnnl.CNNL_CYCLE_BAND_OP, a.desc, a.ptr, b.desc, b.ptr, out.desc,
                                       out.ptr, workspace, size),
            lambda: np.bitwise_and(av, bv, out=result))


# ---- unary math ----------------------------------------------------------------------------------------------------

def unary(name: str, numpy_op, leading=(), positive: bool = False, low=None, high=None, out_dtype=None):
    """y = cnnl.<name>(x) in the (handle, *leading, x_desc, x, y_desc, y) form; the reference in float32."""
    def build(arena, shape, dtype):
        if low is not None:
            x, xv = arena.between(shape, dtype, low, high)
        else:
            x, xv = arena.random(shape, dtype, positive)
        y = arena.empty(shape, out_dtype or dtype)
        x32 = _f32(xv)
        return (lambda: getattr(cnnl, name)(arena.handle, *leading, x.desc, x.ptr, y.desc, y.ptr),
                lambda: numpy_op(x32))
    return build


def erf_reference(values: np.ndarray) -> np.ndarray:
    """erf in numpy (Abramowitz-Stegun 7.1.26, |error| < 1.5e-7): the work of one vectorised evaluation."""
    t = 1.0 / (1.0 + 0.3275911 * np.abs(values))
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return np.sign(values) * (1.0 - poly * np.exp(-values * values))


def erfinv_reference(values: np.ndarray) -> np.ndarray:
    """erfinv's starting approximation (Giles) in numpy: the rational part of the op's evaluation."""
    w = -np.log((1.0 - values) * (1.0 + values))
    central = w < 5.0
    x = np.where(central, w - 2.5, np.sqrt(np.maximum(w, 5.0)) - 3.0)
    p = np.where(central, 1.50140941 + x * 0.246640727, 2.83297682 + x * 1.00167406)
    return p * values


# ---- thresholds, bias ---------------------------------------------------------------------------------------------

def threshold(arena, shape, dtype):
    (x, xv), y = arena.random(shape, dtype), arena.empty(shape, dtype)
    return (lambda: cnnl.threshold(arena.handle, x.desc, x.ptr, 0.25, -1.0, y.desc, y.ptr),
            lambda: np.where(xv <= 0.25, -1.0, xv))


def threshold_backward(arena, shape, dtype):
    (x, xv), (dy, dyv), dx = arena.random(shape, dtype), arena.random(shape, dtype), arena.empty(shape, dtype)
    return (lambda: cnnl.thresholdBackward(arena.handle, x.desc, x.ptr, dy.desc, dy.ptr, 0.25, dx.desc, dx.ptr),
            lambda: np.where(xv <= 0.25, 0, dyv))


def hardtanh(arena, shape, dtype):
    (x, xv), y = arena.random(shape, dtype), arena.empty(shape, dtype)
    return (lambda: cnnl.hardtanh(arena.handle, x.desc, x.ptr, 0.5, -0.5, y.desc, y.ptr),
            lambda: np.minimum(np.maximum(xv, -0.5), 0.5))


def hardtanh_backward(arena, shape, dtype):
    (x, xv), (dy, dyv), dx = arena.random(shape, dtype), arena.random(shape, dtype), arena.empty(shape, dtype)
    return (lambda: cnnl.hardtanhBackward(arena.handle, x.desc, x.ptr, dy.desc, dy.ptr, 0.5, -0.5, dx.desc, dx.ptr),
            lambda: np.where((xv > -0.5) & (xv < 0.5), dyv, 0))


def bias_add(arena, shape, dtype):
    """y += bias over the channels of an NHWC feature map (cases_nn.FEATURE_MAP)."""
    (y, yv), (bias, bv) = arena.random(shape, dtype, layout=NHWC), arena.random((shape[-1],), dtype)
    workspace, size = arena.workspace(cnnl.getBiasAddWorkspaceSize(arena.handle, bias.desc, y.desc))
    y32, b32 = _f32(yv), _f32(bv)
    return (lambda: cnnl.biasAdd(arena.handle, 1.0, bias.desc, bias.ptr, workspace, size, 1.0, y.desc, y.ptr),
            lambda: y32 + b32)


def bias_add_backward(arena, shape, dtype):
    (dy, dyv), db = arena.random(shape, dtype, layout=NHWC), arena.empty((shape[-1],), dtype)
    axis = len(shape) - 1
    workspace, size = arena.workspace(cnnl.getBiasAddBackwardWorkspaceSize(arena.handle, dy.desc, db.desc, axis))
    dy32 = _f32(dyv)
    return (lambda: cnnl.biasAddBackward_v2(arena.handle, dy.desc, dy.ptr, axis, db.desc, db.ptr, workspace, size),
            lambda: dy32.sum(axis=tuple(range(axis))))


def frozen_batch_norm_backward(arena, shape, dtype):
    """Eval-mode batch norm gradients on an NHWC feature map, float32 parameters."""
    (x, xv), (dy, dyv) = arena.random(shape, dtype, layout=NHWC), arena.random(shape, dtype, layout=NHWC)
    dx = arena.empty(shape, dtype, layout=NHWC)
    channels = shape[-1]
    (w, wv), (mean, mv) = arena.random((channels,), "float"), arena.random((channels,), "float")
    var, varv = arena.random((channels,), "float", positive=True)
    dw, db = arena.empty((channels,), "float"), arena.empty((channels,), "float")
    workspace, size = arena.workspace(cnnl.getFrozenBatchNormBackwardWorkspaceSize(arena.handle, x.desc))
    x32, dy32 = _f32(xv), _f32(dyv)
    invstd = 1 / np.sqrt(varv + 1e-5)
    axes = tuple(range(len(shape) - 1))

    def reference():
        return dy32 * (wv * invstd), (dy32 * (x32 - mv)).sum(axis=axes) * invstd, dy32.sum(axis=axes)
    return (lambda: cnnl.frozenBatchNormBackward_v2(
        arena.handle, None, cnnl.CNNL_BATCHNORM_SPATIAL, cnnl.CNNL_BATCHNORM_OPS_BN, x.desc, x.ptr, None, None,
        dy.desc, dy.ptr, w.desc, w.ptr, None, mean.ptr, var.ptr, 1e-5, workspace, size, None, None, dx.desc, dx.ptr,
        dw.ptr, db.ptr), reference)


# ---- padding and placement -------------------------------------------------------------------------------------------

def pad(arena, shape, dtype):
    """One element of zero padding on every side (np.pad)."""
    (x, xv) = arena.random(shape, dtype)
    y = arena.empty(tuple(n + 2 for n in shape), dtype)
    pairs = [(1, 1)] * len(shape)
    return (lambda: cnnl.pad(arena.handle, x.desc, x.ptr, pairs, 0, y.desc, y.ptr),
            lambda: np.pad(xv, 1))


def pad2d(reflect: bool):
    """Reflection / replication padding by 2 of an NCHW map (cases_nn.CHANNELS_FIRST)."""
    def build(arena, shape, dtype):
        x, xv = arena.random(shape, dtype, layout=cnnl.CNNL_LAYOUT_NCHW)
        y = arena.empty(shape[:2] + (shape[2] + 4, shape[3] + 4), dtype, layout=cnnl.CNNL_LAYOUT_NCHW)
        call = cnnl.reflectionPad2d if reflect else cnnl.replicationPad2d
        mode = "reflect" if reflect else "edge"
        return (lambda: call(arena.handle, x.desc, x.ptr, [2, 2, 2, 2], y.desc, y.ptr),
                lambda: np.pad(xv, ((0, 0), (0, 0), (2, 2), (2, 2)), mode=mode))
    return build


def roll(arena, shape, dtype):
    x, xv = arena.random(shape, dtype)
    y = arena.empty(shape, dtype)
    workspace, size = arena.workspace(cnnl.getRollWorkspaceSize(arena.handle, x.desc))
    return (lambda: cnnl.roll(arena.handle, x.desc, x.ptr, [ROLL], [1], workspace, size, y.desc, y.ptr),
            lambda: np.roll(xv, ROLL, 1))


def flip(arena, shape, dtype):
    x, xv = arena.random(shape, dtype)
    y = arena.empty(shape, dtype)
    out = np.empty_like(xv)
    return (lambda: cnnl.flip(arena.handle, [1], x.desc, x.ptr, y.desc, y.ptr),
            lambda: np.copyto(out, np.flip(xv, 1)))


def tile(arena, shape, dtype):
    """A quarter of the output, repeated 2 x 2."""
    x, xv = arena.random((shape[0] // 2, shape[1] // 2), dtype)
    y = arena.empty(shape, dtype)
    return (lambda: cnnl.tile(arena.handle, x.desc, x.ptr, y.desc, y.ptr), lambda: np.tile(xv, (2, 2)))


def tri(arena, shape, dtype):
    x, xv = arena.random(shape, dtype)
    y = arena.empty(shape, dtype)
    return (lambda: cnnl.tri(arena.handle, 0, True, x.desc, x.ptr, y.desc, y.ptr), lambda: np.triu(xv))


# ---- creation, unique, statistics --------------------------------------------------------------------------------

def arange(arena, shape, dtype):
    y = arena.empty(shape, dtype)
    n = math.prod(shape)
    return (lambda: cnnl.arange_v2(arena.handle, HIGH, 1, 2, y.desc, y.ptr),
            lambda: np.arange(1, 1 + 2 * n, 2, dtype=np.float64).astype(arena.numpy_dtype(dtype)))


def linspace(arena, shape, dtype):
    y = arena.empty(shape, dtype)
    n = math.prod(shape)
    return (lambda: cnnl.linspace(arena.handle, -1.0, 1.0, y.desc, y.ptr),
            lambda: np.linspace(-1.0, 1.0, n).astype(arena.numpy_dtype(dtype)))


def one_hot(arena, shape, dtype):
    """int32 one-hot encodings of shape[0] * shape[1] / CLASSES labels."""
    count = math.prod(shape) // CLASSES
    labels = arena.rng.integers(0, CLASSES, count).astype(np.int32)
    index = arena.upload(labels, "int32")
    on, off = _scalar(arena, 1, "int32"), _scalar(arena, 0, "int32")
    out = arena.empty((count, CLASSES), "int32")
    return (lambda: cnnl.oneHot(arena.handle, index.desc, index.ptr, CLASSES, on, off, -1, cnnl.CNNL_DTYPE_INT32,
                                out.ptr),
            lambda: np.eye(CLASSES, dtype=np.int32)[labels])


def unique(arena, shape, dtype):
    """Sorted unique values of a tensor with ~1000 distinct values, with inverse and counts."""
    values = (arena.rng.integers(0, 1000, shape)).astype(arena.numpy_dtype(dtype))
    x = arena.upload(values, dtype)
    desc = cnnl.createUniqueDescriptor()
    cnnl.setUniqueDescriptor(desc, cnnl.CNNL_SORT_ASCEND, -1, True, True)
    workspace, size = arena.workspace(cnnl.getUniqueWorkspaceSize(arena.handle, desc, x.desc))
    number, out = arena.empty((1,), "int32"), arena.empty((values.size,), dtype)
    inverse, counts = arena.empty(shape, "int32"), arena.empty((values.size,), "int32")
    return (lambda: cnnl.unique_v2(arena.handle, desc, x.desc, x.ptr, workspace, size, number.ptr, out.desc, out.ptr,
                                   inverse.desc, inverse.ptr, counts.desc, counts.ptr),
            lambda: np.unique(values, return_inverse=True, return_counts=True))


def std_var_mean(arena, shape, dtype):
    """Unbiased std and the mean over the last axis."""
    x, xv = arena.random(shape, dtype)
    std, mean = arena.empty((shape[0], 1), dtype), arena.empty((shape[0], 1), dtype)
    desc = cnnl.createStdVarMeanDescriptor()
    cnnl.setStdVarMeanDescriptor(desc, cnnl.CNNL_STD, [1], True)
    workspace, size = arena.workspace(cnnl.getStdVarMeanWorkspaceSize(arena.handle, desc, x.desc))
    x32 = _f32(xv)
    return (lambda: cnnl.stdVarMean(arena.handle, desc, x.desc, x.ptr, workspace, size, std.desc, std.ptr, None, None,
                                    mean.desc, mean.ptr),
            lambda: (x32.std(axis=1, ddof=1), x32.mean(axis=1)))


# ---- indexing -------------------------------------------------------------------------------------------------------

def masked_scatter(arena, shape, dtype):
    (x, xv), (source, sv) = arena.random(shape, dtype), arena.random(shape, dtype)
    mask, mv = arena.random(shape, "bool")
    out = arena.empty(shape, dtype)
    op = cnnl.CNNL_MASKED_SCATTER
    workspace, size = arena.workspace(cnnl.getMaskedWorkspaceSize(arena.handle, op, x.desc, mask.desc, source.desc,
                                                                  out.desc))
    result = np.empty_like(xv)

    def reference():
        np.copyto(result, xv)
        result[mv] = sv.reshape(-1)[:int(mv.sum())]
    return (lambda: cnnl.masked_v4(arena.handle, op, x.desc, x.ptr, mask.desc, mask.ptr, source.desc, source.ptr,
                                   None, workspace, size, out.desc, out.ptr, None),
            reference)


def advanced_index(arena, shape, dtype):
    """x[rows] with an int32 index of every row, shuffled."""
    x, xv = arena.random(shape, dtype)
    rows = arena.rng.permutation(shape[0]).astype(np.int32)
    index = arena.upload(rows, "int32")
    out = arena.empty(shape, dtype)
    workspace, size = arena.workspace(cnnl.getAdvancedIndexWorkspaceSize(arena.handle, x.desc, [index.desc]))
    return (lambda: cnnl.advancedIndex(arena.handle, x.desc, x.ptr, [index.desc], [index.ptr], workspace, size,
                                       out.desc, out.ptr, None, None),
            lambda: xv[rows])


def index_add(arena, shape, dtype):
    """Add half the rows of a source at shuffled rows."""
    x, xv = arena.random(shape, dtype)
    source, sv = arena.random((shape[0] // 2, shape[1]), dtype)
    rows = arena.rng.permutation(shape[0])[:shape[0] // 2].astype(np.int32)
    index, out = arena.upload(rows, "int32"), arena.empty(shape, dtype)
    x32, s32 = _f32(xv), _f32(sv)

    def reference():
        result = x32.copy()
        np.add.at(result, rows, s32)
        return result
    return (lambda: cnnl.indexAdd(arena.handle, 0, x.desc, x.ptr, index.desc, index.ptr, source.desc, source.ptr,
                                  out.desc, out.ptr),
            reference)


def index_fill(v2: bool):
    def build(arena, shape, dtype):
        x, xv = arena.random(shape, dtype)
        rows = arena.rng.permutation(shape[0])[:shape[0] // 2].astype(np.int32)
        index, out = arena.upload(rows, "int32"), arena.empty(shape, dtype)

        def reference():
            result = xv.copy()
            result[rows] = 1.5
            return result
        if v2:
            value = _scalar(arena, 1.5, dtype)
            call = lambda: cnnl.indexFill_v2(arena.handle, 0, DEVICE, value, x.desc, x.ptr, index.desc,  # noqa
                                             index.ptr, out.desc, out.ptr)
        else:
            call = lambda: cnnl.indexFill(arena.handle, 0, 1.5, x.desc, x.ptr, index.desc, index.ptr, out.desc,  # noqa
                                          out.ptr)
        return call, reference
    return build


def strided_slice_backward(arena, shape, dtype):
    """The gradient of x[::2, ::2]."""
    dy, dyv = arena.random((shape[0] // 2, shape[1] // 2), dtype)
    dx = arena.empty(shape, dtype)
    out = np.empty(shape, dyv.dtype)

    def reference():
        out.fill(0)
        out[::2, ::2] = dyv
    return (lambda: cnnl.stridedSliceBackward(arena.handle, [0, 0], list(shape), [2, 2], dy.desc, dy.ptr, dx.desc,
                                              dx.ptr),
            reference)


def as_strided_backward(arena, shape, dtype):
    """The gradient of overlapping rows: as_strided(x, (rows - 1, 2 * columns), (columns, 1)) (unfold-like)."""
    rows, columns = shape
    dy, dyv = arena.random((rows - 1, 2 * columns), dtype)
    dx = arena.empty(shape, dtype)
    workspace, size = arena.workspace(cnnl.getAsStridedBackwardWorkspaceSize(arena.handle, dx.desc))
    grads = _f32(dyv).reshape(-1)
    positions = (np.arange(rows - 1)[:, None] * columns + np.arange(2 * columns)).reshape(-1)
    return (lambda: cnnl.asStridedBackward(arena.handle, dy.desc, dy.ptr, dx.desc, dx.ptr, [columns, 1], 0, workspace,
                                           size),
            lambda: np.bincount(positions, weights=grads, minlength=rows * columns))


# ---- optimizers ------------------------------------------------------------------------------------------------------

def gradient_descent(arena, shape, dtype):
    (p, pv), (g, gv) = arena.random(shape, dtype), arena.random(shape, dtype)
    lr = _scalar(arena, 0.1, dtype)
    p32, g32 = _f32(pv), _f32(gv)
    return (lambda: cnnl.gradientDescent(arena.handle, g.desc, g.ptr, lr, p.desc, p.ptr), lambda: p32 - 0.1 * g32)


def adadelta(arena, shape, dtype):
    (p, pv), (g, gv) = arena.random(shape, dtype), arena.random(shape, dtype)
    (a, av), (u, uv) = arena.random(shape, dtype, positive=True), arena.random(shape, dtype, positive=True)
    lr, rho, eps = (_scalar(arena, v, dtype) for v in (1.0, 0.9, 1e-6))
    p32, g32, a32, u32 = _f32(pv), _f32(gv), _f32(av), _f32(uv)

    def reference():
        average = 0.9 * a32 + 0.1 * g32 * g32
        delta = np.sqrt(u32 + 1e-6) / np.sqrt(average + 1e-6) * g32
        return p32 - delta, average, 0.9 * u32 + 0.1 * delta * delta
    return (lambda: cnnl.applyAdadelta(arena.handle, p.desc, p.ptr, a.desc, a.ptr, u.desc, u.ptr, g.desc, g.ptr, lr,
                                       rho, eps),
            reference)
