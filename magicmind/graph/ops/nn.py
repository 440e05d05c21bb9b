"""Neural-network ops: convolution, pooling, normalisation, softmax, matmul, reductions, resize, pad.

The heavy kernels are cnnl's host kernel library (the same code cnnl's ops run: im2col + BLAS convolution, the
separable pooling and interpolation kernels, row normalisation, softmax, batched matmul); tensors are NCHW here and
reach the channel-last kernels as transposed views.
"""
from __future__ import annotations

import numpy as np
from cnnl.kernels.conv import conv_forward
from cnnl.kernels.interpolate import ALIGN_CORNERS, ASYMMETRIC, HALF_PIXEL, HALF_PIXEL_NEAREST, PYTORCH_HALF_PIXEL
from cnnl.kernels.interpolate import CEIL, FLOOR, LINEAR, NEAREST, ROUND_HALF_DOWN, ROUND_HALF_UP, CUBIC
from cnnl.kernels.interpolate import Interp, interpolate
from cnnl.kernels.matmul import matmul as matmul_kernel
from cnnl.kernels.normalization import rows_forward
from cnnl.kernels.pool import Windows, avg_pool_forward, max_pool_forward, pooled_extent
from cnnl.kernels.softmax import softmax_forward
from mlusim import cost

from ...kernels.ufuncs import as_compute
from ...status import invalid
from . import Op, register
from .shapes import axis_of, broadcast, product


def _channel_last(a: np.ndarray) -> np.ndarray:
    return np.moveaxis(a, 1, -1)


def _spatial(attrs, count, key, default):
    value = attrs.get(key)
    return tuple(int(v) for v in value) if value is not None else (default,) * count


def conv_output_extent(size, before, after, kernel, stride, dilation):
    if size < 0:
        return -1
    return (size + before + after - dilation * (kernel - 1) - 1) // stride + 1


def resolve_pads(attrs, in_spatial, kernel, strides, dilations):
    """((before, after), ...) per spatial axis from explicit `pads` (ONNX order: all befores, then all afters) or
    `auto_pad` SAME_UPPER / SAME_LOWER / VALID."""
    count = len(kernel)
    mode = attrs.get("auto_pad", "NOTSET")
    if mode in ("SAME_UPPER", "SAME_LOWER"):
        pads = []
        for n, k, s, d in zip(in_spatial, kernel, strides, dilations):
            if n < 0:
                return None
            total = max(0, (-(-n // s) - 1) * s + (k - 1) * d + 1 - n)
            small, large = total // 2, total - total // 2
            pads.append((small, large) if mode == "SAME_UPPER" else (large, small))
        return tuple(pads)
    if mode == "VALID":
        return ((0, 0),) * count
    flat = attrs.get("pads") or (0,) * (2 * count)
    if len(flat) != 2 * count:
        raise invalid(f"pads holds {len(flat)} values; {2 * count} expected for {count} spatial axes")
    return tuple((int(flat[i]), int(flat[i + count])) for i in range(count))


@register
class Conv(Op):
    """conv(x, w[, b]): NC<spatial> convolution (1 to 3 spatial axes), w (Co, C/groups, *K); strides, pads,
    dilations, groups, auto_pad as ONNX Conv. Computed in float32 for 16-bit floats (one rounding)."""

    name = "conv"
    unit = cost.TENSOR
    arity = (2, 3)

    def infer(self, attrs, ins):
        x, w = ins[0], ins[1]
        if x.shape is None or w.shape is None:
            return [(None, x.dtype)]
        if len(x.shape) not in (3, 4, 5) or len(w.shape) != len(x.shape):
            raise invalid(f"conv: x {list(x.shape)} and w {list(w.shape)} must both have 3 to 5 dims")
        count = len(x.shape) - 2
        kernel = w.shape[2:]
        strides = _spatial(attrs, count, "strides", 1)
        dilations = _spatial(attrs, count, "dilations", 1)
        groups = int(attrs.get("group", 1))
        if x.shape[1] >= 0 and w.shape[1] * groups != x.shape[1]:
            raise invalid(f"conv: w has {w.shape[1]} input channels per group x {groups} groups; x has "
                          f"{x.shape[1]} channels")
        if w.shape[0] % groups:
            raise invalid(f"conv: {w.shape[0]} output channels do not divide into {groups} groups")
        if len(ins) == 3 and ins[2].shape is not None and product(ins[2].shape) not in (-1, w.shape[0]):
            raise invalid(f"conv: bias {list(ins[2].shape)} must hold one value per output channel ({w.shape[0]})")
        pads = resolve_pads(attrs, x.shape[2:], kernel, strides, dilations)
        if pads is None:
            return [((x.shape[0], w.shape[0]) + (-1,) * count, x.dtype)]
        spatial = tuple(conv_output_extent(n, b, a, k, s, d) for n, (b, a), k, s, d in
                        zip(x.shape[2:], pads, kernel, strides, dilations))
        if any(0 <= e < 1 for e in spatial) or any(e < -1 for e in spatial):
            raise invalid(f"conv: the filter {list(kernel)} does not fit the padded input {list(x.shape[2:])}")
        return [((x.shape[0], w.shape[0]) + spatial, x.dtype)]

    def run(self, attrs, ins, outs):
        x, w = ins[0], ins[1]
        out = outs[0]
        count = x.ndim - 2
        strides = _spatial(attrs, count, "strides", 1)
        dilations = _spatial(attrs, count, "dilations", 1)
        pads = resolve_pads(attrs, x.shape[2:], w.shape[2:], strides, dilations)
        bias = ins[2].reshape(-1) if len(ins) == 3 else None
        conv_forward(_channel_last(x), _channel_last(w), _channel_last(out), pads, strides, dilations,
                     int(attrs.get("group", 1)), bias=bias)

    def flops(self, attrs, in_shapes, out_shapes):
        w = in_shapes[1]
        return 2.0 * product(out_shapes[0]) * product(w[1:])


@register
class Pool(Op):
    """pool(x, mode="max"|"avg"): 2-D (or 1-D) pooling over kernel_shape with strides, pads, dilations,
    ceil_mode, count_include_pad (ONNX MaxPool / AveragePool)."""

    name = "pool"

    def infer(self, attrs, ins):
        x = ins[0]
        if x.shape is None:
            return [(None, x.dtype)]
        count = len(x.shape) - 2
        if count not in (1, 2):
            raise invalid(f"pool: x {list(x.shape)} must have 3 or 4 dims")
        kernel = tuple(attrs["kernel_shape"])
        if len(kernel) != count:
            raise invalid(f"pool: kernel_shape {list(kernel)} does not match {count} spatial axes")
        strides = _spatial(attrs, count, "strides", 1)
        dilations = _spatial(attrs, count, "dilations", 1)
        pads = resolve_pads(attrs, x.shape[2:], kernel, strides, dilations)
        if pads is None:
            return [(x.shape[:2] + (-1,) * count, x.dtype)]
        ceil = bool(attrs.get("ceil_mode", 0))
        spatial = tuple(-1 if n < 0 else pooled_extent(n, k, b, a, s, d, ceil)
                        for n, k, (b, a), s, d in zip(x.shape[2:], kernel, pads, strides, dilations))
        if any(0 <= e < 1 for e in spatial):
            raise invalid(f"pool: the window {list(kernel)} does not fit the padded input {list(x.shape[2:])}")
        return [(x.shape[:2] + spatial, x.dtype)]

    def run(self, attrs, ins, outs):
        x, out = ins[0], outs[0]
        kernel = tuple(attrs["kernel_shape"])
        strides = _spatial(attrs, len(kernel), "strides", 1)
        dilations = _spatial(attrs, len(kernel), "dilations", 1)
        pads = resolve_pads(attrs, x.shape[2:], kernel, strides, dilations)
        if x.ndim == 3:  # 1-D pooling as 2-D over rows of height 1
            x, out = x[:, :, None, :], out[:, :, None, :]
            kernel, strides, dilations, pads = (1,) + kernel, (1,) + strides, (1,) + dilations, ((0, 0),) + pads
        windows = Windows(x.shape[2:], out.shape[2:], kernel, strides, dilations, pads)
        if attrs["mode"] == "max":
            max_pool_forward(_channel_last(x), _channel_last(out), windows)
        else:
            avg_pool_forward(_channel_last(x), _channel_last(out), windows, bool(attrs.get("count_include_pad", 0)))

    def flops(self, attrs, in_shapes, out_shapes):
        return float(product(out_shapes[0]) * product(attrs["kernel_shape"]))


@register
class GlobalPool(Op):
    """global_pool(x, mode="avg"|"max"): over every spatial axis, kept as extent 1."""

    name = "global_pool"

    def infer(self, attrs, ins):
        x = ins[0]
        if x.shape is None:
            return [(None, x.dtype)]
        if len(x.shape) < 3:
            raise invalid(f"global_pool: x {list(x.shape)} has no spatial axes")
        return [(x.shape[:2] + (1,) * (len(x.shape) - 2), x.dtype)]

    def run(self, attrs, ins, outs):
        x = as_compute(ins[0])
        axes = tuple(range(2, x.ndim))
        outs[0][...] = x.mean(axis=axes, keepdims=True) if attrs["mode"] == "avg" else x.max(axis=axes, keepdims=True)

    def flops(self, attrs, in_shapes, out_shapes):
        return float(product(in_shapes[0]))


@register
class BatchNorm(Op):
    """batch_norm(x, scale, bias, mean, var): inference batch normalisation over axis 1 (epsilon)."""

    name = "batch_norm"
    arity = (5, 5)

    def infer(self, attrs, ins):
        x = ins[0]
        if x.shape is not None and len(x.shape) < 2:
            raise invalid(f"batch_norm: x {list(x.shape)} has no channel axis")
        for i, name in ((1, "scale"), (2, "bias"), (3, "mean"), (4, "var")):
            s = ins[i].shape
            if x.shape is not None and s is not None and x.shape[1] >= 0 and product(s) not in (-1, x.shape[1]):
                raise invalid(f"batch_norm: {name} {list(s)} must hold one value per channel ({x.shape[1]})")
        return [(x.shape, x.dtype)]

    def run(self, attrs, ins, outs):
        x, scale, bias, mean, var = (as_compute(a) for a in ins)
        shape = (1, -1) + (1,) * (x.ndim - 2)
        factor = scale.reshape(-1) / np.sqrt(var.reshape(-1) + np.float32(attrs.get("epsilon", 1e-5)))
        shift = bias.reshape(-1) - mean.reshape(-1) * factor
        outs[0][...] = x * factor.reshape(shape).astype(x.dtype) + shift.reshape(shape).astype(x.dtype)

    def flops(self, attrs, in_shapes, out_shapes):
        return 2.0 * product(out_shapes[0])


@register
class Softmax(Op):
    """softmax(x, axis[, log]): along one axis."""

    name = "softmax"

    def infer(self, attrs, ins):
        x = ins[0]
        if x.shape is not None:
            axis_of(attrs.get("axis", -1), len(x.shape), "softmax")
        if x.dtype.kind != "f":
            raise invalid(f"softmax: takes a float tensor, got {x.dtype}")
        return [(x.shape, x.dtype)]

    def run(self, attrs, ins, outs):
        x = ins[0]
        if x.size == 0:
            return
        axis = axis_of(attrs.get("axis", -1), x.ndim, "softmax")
        softmax_forward(x, outs[0], axis, log=bool(attrs.get("log", False)))

    def flops(self, attrs, in_shapes, out_shapes):
        return 4.0 * product(out_shapes[0])


@register
class LayerNorm(Op):
    """layer_norm(x[, gamma[, beta]]): normalise over the axes from `axis` to the last (epsilon), then scale and
    shift (ONNX LayerNormalization, torch layer_norm)."""

    name = "layer_norm"
    arity = (1, 3)

    def infer(self, attrs, ins):
        x = ins[0]
        if x.shape is not None:
            axis = axis_of(attrs.get("axis", -1), len(x.shape), "layer_norm")
            inner = product(x.shape[axis:])
            for i, name in ((1, "gamma"), (2, "beta")):
                if len(ins) > i and ins[i].shape is not None and inner >= 0 and \
                        product(ins[i].shape) not in (-1, inner):
                    raise invalid(f"layer_norm: {name} {list(ins[i].shape)} must span the normalised axes "
                                  f"{list(x.shape[axis:])}")
        return [(x.shape, x.dtype)]

    def run(self, attrs, ins, outs):
        x = ins[0]
        axis = axis_of(attrs.get("axis", -1), x.ndim, "layer_norm")
        rows = product(x.shape[:axis])
        if x.size == 0:
            return
        weight = ins[1].reshape(-1) if len(ins) > 1 else None
        bias = ins[2].reshape(-1) if len(ins) > 2 else None
        rows_forward(np.ascontiguousarray(x), outs[0], rows, float(attrs.get("epsilon", 1e-5)), True, weight, bias)

    def flops(self, attrs, in_shapes, out_shapes):
        return 6.0 * product(out_shapes[0])


def matmul_shape(a, b, trans_a=False, trans_b=False, node="matmul"):
    """numpy matmul's output shape (1-D operands promoted and their axis dropped), -1 aware."""
    if a is None or b is None:
        return None
    if len(a) == 0 or len(b) == 0:
        raise invalid(f"{node}: operands must have at least 1 dim")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    m, k = (a2[-1], a2[-2]) if trans_a else (a2[-2], a2[-1])
    kb, n = (b2[-1], b2[-2]) if trans_b else (b2[-2], b2[-1])
    if k >= 0 and kb >= 0 and k != kb:
        raise invalid(f"{node}: inner dimensions differ ({list(a)} x {list(b)})")
    batch = broadcast(a2[:-2], b2[:-2], node=node)
    out = tuple(batch) + (m, n)
    if len(a) == 1:
        out = out[:-2] + (n,)
    if len(b) == 1:
        out = out[:-1]
    return out


@register
class MatMul(Op):
    """matmul(a, b[, bias]): numpy matmul semantics (batched, broadcasting, 1-D operands), trans_a / trans_b on the
    last two axes; bias (broadcast over the rows) is added. 16-bit floats accumulate in float32."""

    name = "matmul"
    unit = cost.TENSOR
    arity = (2, 3)

    def infer(self, attrs, ins):
        a, b = ins[0], ins[1]
        if a.dtype != b.dtype:
            raise invalid(f"matmul: input types differ ({a.dtype} and {b.dtype})")
        shape = matmul_shape(a.shape, b.shape, bool(attrs.get("trans_a")), bool(attrs.get("trans_b")))
        if len(ins) == 3:
            shape = broadcast(shape, ins[2].shape, node="matmul bias")
        return [(shape, a.dtype)]

    def run(self, attrs, ins, outs):
        a, b = ins[0], ins[1]
        out = outs[0]
        trans_a, trans_b = bool(attrs.get("trans_a")), bool(attrs.get("trans_b"))
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        view = out.reshape(matmul_shape(a2.shape, b2.shape, trans_a, trans_b))
        if a2.dtype.kind not in "f":
            product = np.matmul(a2.swapaxes(-1, -2) if trans_a else a2, b2.swapaxes(-1, -2) if trans_b else b2)
            view[...] = product
        else:
            matmul_kernel(a2, b2, view, trans_a, trans_b)
        if len(ins) == 3:
            out[...] = as_compute(out) + as_compute(ins[2])

    def flops(self, attrs, in_shapes, out_shapes):
        a = in_shapes[0]
        k = a[-2] if attrs.get("trans_a") and len(a) > 1 else a[-1]
        return 2.0 * product(out_shapes[0]) * k


REDUCE = {
    "sum": lambda x, axes, keep: np.sum(x, axis=axes, keepdims=keep),
    "mean": lambda x, axes, keep: np.mean(x, axis=axes, keepdims=keep),
    "max": lambda x, axes, keep: np.max(x, axis=axes, keepdims=keep),
    "min": lambda x, axes, keep: np.min(x, axis=axes, keepdims=keep),
    "prod": lambda x, axes, keep: np.prod(x, axis=axes, keepdims=keep),
    "l1": lambda x, axes, keep: np.sum(np.abs(x), axis=axes, keepdims=keep),
    "l2": lambda x, axes, keep: np.sqrt(np.sum(x * x, axis=axes, keepdims=keep)),
    "sumsq": lambda x, axes, keep: np.sum(x * x, axis=axes, keepdims=keep),
    "logsumexp": lambda x, axes, keep: np.log(np.sum(np.exp(x), axis=axes, keepdims=keep)),
    "and": lambda x, axes, keep: np.all(x, axis=axes, keepdims=keep),
    "or": lambda x, axes, keep: np.any(x, axis=axes, keepdims=keep),
}


def reduce_axes(attrs, rank, node="reduce"):
    axes = attrs.get("axes")
    if axes is None or len(axes) == 0:
        return None if not attrs.get("noop_with_empty_axes") else ()
    resolved = tuple(sorted({axis_of(a, rank, node, "axes") for a in axes}))
    return resolved


@register
class Reduce(Op):
    """reduce(x, fn, axes, keepdims): sum/mean/max/min/prod/l1/l2/sumsq/logsumexp/and/or over `axes`
    (all when empty)."""

    name = "reduce"

    def infer(self, attrs, ins):
        x = ins[0]
        if attrs["fn"] not in REDUCE:
            raise invalid(f"reduce: unknown function {attrs['fn']!r}")
        if x.shape is None:
            return [(None, x.dtype)]
        axes = reduce_axes(attrs, len(x.shape))
        axes = tuple(range(len(x.shape))) if axes is None else axes
        keep = bool(attrs.get("keepdims", 1))
        if attrs["fn"] in ("max", "min") and any(x.shape[a] == 0 for a in axes):
            raise invalid(f"reduce {attrs['fn']}: reducing an empty axis of {list(x.shape)}")
        shape = tuple((1 if i in axes else d) for i, d in enumerate(x.shape) if keep or i not in axes)
        return [(shape, x.dtype)]

    def run(self, attrs, ins, outs):
        x = ins[0]
        axes = reduce_axes(attrs, x.ndim)
        if axes == ():
            outs[0][...] = x
            return
        wide = x.astype(np.float32) if x.dtype == np.float16 else x
        outs[0][...] = REDUCE[attrs["fn"]](wide, axes, bool(attrs.get("keepdims", 1)))

    def flops(self, attrs, in_shapes, out_shapes):
        return float(product(in_shapes[0]))


@register
class ArgMax(Op):
    """arg_reduce(x, fn="max"|"min", axis, keepdims, select_last_index) -> int64 indices."""

    name = "arg_reduce"

    def infer(self, attrs, ins):
        x = ins[0]
        if x.shape is None:
            return [(None, np.dtype(np.int64))]
        axis = axis_of(attrs.get("axis", 0), len(x.shape), "arg_reduce")
        keep = bool(attrs.get("keepdims", 1))
        shape = tuple((1 if i == axis else d) for i, d in enumerate(x.shape) if keep or i != axis)
        return [(shape, np.dtype(np.int64))]

    def run(self, attrs, ins, outs):
        x = as_compute(ins[0])
        axis = axis_of(attrs.get("axis", 0), x.ndim, "arg_reduce")
        fn = np.argmax if attrs.get("fn", "max") == "max" else np.argmin
        if attrs.get("select_last_index"):
            flipped = np.flip(x, axis)
            index = x.shape[axis] - 1 - fn(flipped, axis=axis)
        else:
            index = fn(x, axis=axis)
        if attrs.get("keepdims", 1):
            index = np.expand_dims(index, axis)
        outs[0][...] = index


_COORDINATES = {"half_pixel": HALF_PIXEL, "pytorch_half_pixel": PYTORCH_HALF_PIXEL, "align_corners": ALIGN_CORNERS,
                "asymmetric": ASYMMETRIC, "tf_half_pixel_for_nn": HALF_PIXEL_NEAREST}
_ROUNDING = {"floor": FLOOR, "ceil": CEIL, "round_prefer_floor": ROUND_HALF_DOWN, "round_prefer_ceil": ROUND_HALF_UP}
_MODES = {"nearest": NEAREST, "linear": LINEAR, "cubic": CUBIC}


@register
class Resize(Op):
    """resize(x, sizes) with attrs mode (nearest/linear/cubic), coordinate_transformation_mode, nearest_mode,
    scales (float per axis, or None): ONNX Resize over the spatial axes of an NC... tensor."""

    name = "resize"
    value_inputs = (1,)
    arity = (2, 2)

    def infer(self, attrs, ins):
        x, sizes = ins
        for key, table in (("mode", _MODES), ("coordinate_transformation_mode", _COORDINATES),
                           ("nearest_mode", _ROUNDING)):
            if key in attrs and attrs[key] not in table:
                raise invalid(f"resize: {key} {attrs[key]!r} is not supported (one of {', '.join(table)})")
        if x.shape is None:
            return [(None, x.dtype)]
        if sizes.value is None:
            return [(x.shape[:2] + (-1,) * (len(x.shape) - 2), x.dtype)]
        target = tuple(int(v) for v in np.asarray(sizes.value).reshape(-1))
        if len(target) != len(x.shape):
            raise invalid(f"resize: sizes {list(target)} must give every axis of x {list(x.shape)}")
        if target[:2] != x.shape[:2] and -1 not in x.shape[:2]:
            raise invalid(f"resize: only spatial axes are resized (sizes {list(target)}, x {list(x.shape)})")
        if len(x.shape) < 3 or len(x.shape) > 5:
            raise invalid(f"resize: x {list(x.shape)} must have 1 to 3 spatial axes")
        return [(target, x.dtype)]

    def run(self, attrs, ins, outs):
        x, out = ins[0], outs[0]
        spec = Interp(_MODES[attrs.get("mode", "nearest")],
                      _COORDINATES[attrs.get("coordinate_transformation_mode", "half_pixel")],
                      _ROUNDING[attrs.get("nearest_mode", "round_prefer_floor")],
                      float(attrs.get("cubic_coeff_a", -0.75)), bool(attrs.get("exclude_outside", 0)))
        scales = attrs.get("scales")
        interpolate(_channel_last(x), _channel_last(out), spec, tuple(scales[2:]) if scales else None)


@register
class Pad(Op):
    """pad(x, pads): ONNX Pad with the pads (befores then afters per axis) as attribute or value input, mode
    constant / reflect / edge, constant value."""

    name = "pad"
    value_inputs = (1,)
    arity = (2, 2)

    def infer(self, attrs, ins):
        x, pads = ins
        if attrs.get("mode", "constant") not in ("constant", "reflect", "edge"):
            raise invalid(f"pad: mode {attrs.get('mode')!r} is not supported (constant, reflect, edge)")
        if x.shape is None:
            return [(None, x.dtype)]
        if pads.value is None:
            return [((-1,) * len(x.shape), x.dtype)]
        flat = [int(v) for v in np.asarray(pads.value).reshape(-1)]
        rank = len(x.shape)
        if len(flat) != 2 * rank:
            raise invalid(f"pad: pads holds {len(flat)} values, {2 * rank} expected for x {list(x.shape)}")
        shape = tuple(-1 if d < 0 else d + flat[i] + flat[i + rank] for i, d in enumerate(x.shape))
        if any(d < -1 for d in shape):
            raise invalid(f"pad: pads {flat} remove more than x {list(x.shape)} holds")
        return [(shape, x.dtype)]

    def run(self, attrs, ins, outs):
        x, pads = ins
        rank = x.ndim
        flat = [int(v) for v in np.asarray(pads).reshape(-1)]
        crop = tuple(slice(max(0, -flat[i]), x.shape[i] - max(0, -flat[i + rank])) for i in range(rank))
        widths = [(max(0, flat[i]), max(0, flat[i + rank])) for i in range(rank)]
        mode = attrs.get("mode", "constant")
        if mode == "constant":
            outs[0][...] = np.pad(x[crop], widths, mode="constant", constant_values=attrs.get("value", 0))
        else:
            outs[0][...] = np.pad(x[crop], widths, mode="reflect" if mode == "reflect" else "edge")
