"""Neural-network ops: convolution, pooling, normalisation, softmax, matmul, reductions, resize, pad.

Convolution and matmul run MagicMind's own kernels (`magicmind/kernels/conv.py`, `matmul.py`: the epilogue of
a fused layer and quantized arithmetic live there); pooling, softmax, layer normalisation and resize run through
CNNL's public API at run time (`magicmind/runtime/library.py`), so they are not evaluated on the host
(`host_evaluable = False`: a constant input does not fold them). Feature maps are NCHW (the network's form) or
NHWC (attrs["layout"], what the builder's layout pass makes of them).
"""
from __future__ import annotations

import numpy as np

from mlusim import cost

from ...kernels import conv as conv_kernel
from ...kernels import matmul as matmul_kernel
from ...kernels.codegen import bias_epilogue
from ...kernels.ufuncs import as_compute
from ...status import invalid
from . import Op, register
from .shapes import axis_of, broadcast, product


def _spatial(attrs, count, key, default):
    value = attrs.get(key)
    return tuple(int(v) for v in value) if value is not None else (default,) * count


def conv_output_extent(size, before, after, kernel, stride, dilation):
    if size < 0:
        return -1
    return (size + before + after - dilation * (kernel - 1) - 1) // stride + 1


def pooled_extent(size, kernel, before, after, stride, dilation, ceil_mode):
    """Output extent of one pooled axis (ONNX / PyTorch: with ceil_mode the last window must start inside the
    input or its leading padding)."""
    span = size + before + after - dilation * (kernel - 1) - 1
    extent = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (extent - 1) * stride >= size + before:
        extent -= 1
    return extent


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


def channel_axis(attrs, rank: int) -> int:
    """The channel axis of a feature map: 1 (NCHW, the network's form) or the last (NHWC, after the layout pass)."""
    return rank - 1 if attrs.get("layout", "NCHW") == "NHWC" else 1


def spatial_axes(attrs, rank: int) -> tuple:
    return tuple(range(1, rank - 1)) if attrs.get("layout", "NCHW") == "NHWC" else tuple(range(2, rank))


def feature_shape(attrs, batch, channels, spatial) -> tuple:
    if attrs.get("layout", "NCHW") == "NHWC":
        return (batch,) + tuple(spatial) + (channels,)
    return (batch, channels) + tuple(spatial)


def conv_weights(attrs, w_shape) -> tuple:
    """(output channels, input channels per group, kernel) of conv weights: OI<spatial> (Co, Cg, *K), or packed
    for the kernel (G, Cog, K*Cg) with attrs["kernel"]."""
    if attrs.get("packed"):
        kernel = tuple(int(k) for k in attrs["kernel"])
        groups = int(attrs.get("group", 1))
        if len(w_shape) != 3 or w_shape[0] != groups:
            raise invalid(f"conv: packed weights {list(w_shape)} are not (groups, Co / groups, K * C / groups)")
        return w_shape[0] * w_shape[1], w_shape[2] // max(1, product(kernel)), kernel
    return w_shape[0], w_shape[1], tuple(w_shape[2:])


def epilogue_dtype(attrs, default):
    epilogue = attrs.get("epilogue")
    return np.dtype(epilogue["nodes"][-1]["dtype"]) if epilogue else np.dtype(default)


def quantization(spec):
    """The kernels' Quantization of a layer's attrs["quant"] entry ({"bits", "scale", "zero", "unsigned"}), or
    None."""
    if not spec:
        return None
    return conv_kernel.Quantization(spec["bits"], spec["scale"], spec.get("zero", 0), spec.get("unsigned", False))


@register
class Conv(Op):
    """conv(x, w[, b]): convolution of 1 to 3 spatial axes, w (Co, C/groups, *K); strides, pads, dilations,
    groups, auto_pad as ONNX Conv. After the builder: layout NHWC, packed weights, and a fused layer's
    `epilogue` (an elementwise expression over the float32 accumulator and the extra inputs after w), `quant`
    for int8/int16 arithmetic. 16-bit floats are computed in float32 and rounded once."""

    name = "conv"
    unit = cost.TENSOR
    arity = (2, None)

    def infer(self, attrs, ins):
        x, w = ins[0], ins[1]
        out_dtype = epilogue_dtype(attrs, x.dtype)
        if x.shape is None or w.shape is None:
            return [(None, out_dtype)]
        co, cg, kernel = conv_weights(attrs, w.shape)
        if len(x.shape) not in (3, 4, 5) or len(kernel) != len(x.shape) - 2:
            raise invalid(f"conv: x {list(x.shape)} and w {list(w.shape)} must both have 3 to 5 dims")
        if not attrs.get("epilogue") and len(ins) > 3:
            raise invalid(f"conv: takes x, w and a bias, got {len(ins)} inputs")
        count = len(x.shape) - 2
        axis = channel_axis(attrs, len(x.shape))
        spatial_in = tuple(x.shape[a] for a in spatial_axes(attrs, len(x.shape)))
        strides = _spatial(attrs, count, "strides", 1)
        dilations = _spatial(attrs, count, "dilations", 1)
        groups = int(attrs.get("group", 1))
        if x.shape[axis] >= 0 and cg * groups != x.shape[axis]:
            raise invalid(f"conv: w has {cg} input channels per group x {groups} groups; x has "
                          f"{x.shape[axis]} channels")
        if co % groups:
            raise invalid(f"conv: {co} output channels do not divide into {groups} groups")
        if not attrs.get("epilogue") and len(ins) == 3 and ins[2].shape is not None and \
                product(ins[2].shape) not in (-1, co):
            raise invalid(f"conv: bias {list(ins[2].shape)} must hold one value per output channel ({co})")
        pads = resolve_pads(attrs, spatial_in, kernel, strides, dilations)
        if pads is None:
            return [(feature_shape(attrs, x.shape[0], co, (-1,) * count), out_dtype)]
        spatial = tuple(conv_output_extent(n, b, a, k, s, d) for n, (b, a), k, s, d in
                        zip(spatial_in, pads, kernel, strides, dilations))
        if any(0 <= e < 1 for e in spatial) or any(e < -1 for e in spatial):
            raise invalid(f"conv: the filter {list(kernel)} does not fit the padded input {list(spatial_in)}")
        return [(feature_shape(attrs, x.shape[0], co, spatial), out_dtype)]

    def prepare(self, attrs, ins, outs):
        x, w, out = ins[0], ins[1], outs[0]
        rank = len(x.shape)
        nhwc = attrs.get("layout", "NCHW") == "NHWC"
        co, cg, kernel = conv_weights(attrs, w.shape)
        count = rank - 2
        strides = _spatial(attrs, count, "strides", 1)
        dilations = _spatial(attrs, count, "dilations", 1)
        groups = int(attrs.get("group", 1))
        spatial_in = tuple(x.shape[a] for a in spatial_axes(attrs, rank))
        pads = resolve_pads(attrs, spatial_in, kernel, strides, dilations)
        x_cl = x.shape if nhwc else (x.shape[0],) + spatial_in + (x.shape[1],)
        out_cl = out.shape if nhwc else (out.shape[0],) + tuple(out.shape[2:]) + (out.shape[1],)
        if attrs.get("epilogue"):
            epilogue, extras = attrs["epilogue"], [i.shape for i in ins[2:]]
        else:
            epilogue = bias_epilogue(ins[2].dtype if len(ins) > 2 else None, out.dtype)
            extras = [(co,)] if len(ins) > 2 else []
        if not nhwc:
            extras = [_to_channel_last(s) if len(s) == rank else s for s in extras]
        quant = quantization(attrs.get("quant"))
        packed = None
        if not attrs.get("packed"):
            if w.value is not None:
                packed = conv_kernel.pack_weights(np.asarray(w.value), groups)
        kernel_layer = conv_kernel.Conv(x_cl, kernel, co, groups, strides, pads, dilations, out_cl, epilogue,
                                        extras, quant, constant_weights=w.value is not None)
        bias_only = not attrs.get("epilogue")

        def run(arrays, results):
            x_data, w_data = arrays[0], arrays[1]
            weights = packed if packed is not None else (
                w_data if attrs.get("packed") else conv_kernel.pack_weights(np.asarray(w_data), groups))
            more = [a.reshape(-1) if bias_only else a for a in arrays[2:]]
            if nhwc:
                kernel_layer(x_data, weights, more, results[0])
                return
            more = [np.ascontiguousarray(np.moveaxis(a, 1, -1)) if a.ndim == rank else a for a in more]
            target = np.empty(out_cl, results[0].dtype)
            kernel_layer(np.ascontiguousarray(np.moveaxis(x_data, 1, -1)), weights, more, target)
            results[0][...] = np.moveaxis(target, -1, 1)

        run.flops = kernel_layer.flops
        return run

    def run(self, attrs, ins, outs):
        from . import Info
        run = self.prepare(attrs, [Info(a.shape, a.dtype, a) for a in ins], [Info(o.shape, o.dtype) for o in outs])
        run(ins, outs)

    def flops(self, attrs, in_shapes, out_shapes):
        co, cg, kernel = conv_weights(attrs, in_shapes[1])
        return 2.0 * product(out_shapes[0]) * cg * product(kernel)


def _to_channel_last(shape):
    return (shape[0],) + tuple(shape[2:]) + (shape[1],)


def pool_geometry(attrs, x_shape, layout="NCHW"):
    """(kernel, strides, dilations, pads) of a pooling over 1 or 2 spatial axes, as 2-D (1-D: a height of 1)."""
    kernel = tuple(attrs["kernel_shape"])
    strides = _spatial(attrs, len(kernel), "strides", 1)
    dilations = _spatial(attrs, len(kernel), "dilations", 1)
    spatial_in = tuple(x_shape[a] for a in spatial_axes({"layout": layout}, len(x_shape)))
    pads = resolve_pads(attrs, spatial_in, kernel, strides, dilations)
    if len(kernel) == 1:
        kernel, strides, dilations, pads = (1,) + kernel, (1,) + strides, (1,) + dilations, ((0, 0),) + pads
    return kernel, strides, dilations, pads


@register
class Pool(Op):
    """pool(x, mode="max"|"avg"): 2-D (or 1-D) pooling over kernel_shape with strides, pads, dilations,
    ceil_mode, count_include_pad (ONNX MaxPool / AveragePool); run by cnnlPoolingForward."""

    name = "pool"
    host_evaluable = False

    def infer(self, attrs, ins):
        x = ins[0]
        if x.shape is None:
            return [(None, x.dtype)]
        count = len(x.shape) - 2
        if count not in (1, 2):
            raise invalid(f"pool: x {list(x.shape)} must have 3 or 4 dims")
        if x.dtype.kind != "f":
            raise invalid(f"pool: takes a float tensor, got {x.dtype}")
        kernel = tuple(attrs["kernel_shape"])
        if len(kernel) != count:
            raise invalid(f"pool: kernel_shape {list(kernel)} does not match {count} spatial axes")
        strides = _spatial(attrs, count, "strides", 1)
        dilations = _spatial(attrs, count, "dilations", 1)
        spatial_in = tuple(x.shape[a] for a in spatial_axes(attrs, len(x.shape)))
        pads = resolve_pads(attrs, spatial_in, kernel, strides, dilations)
        axis = channel_axis(attrs, len(x.shape))
        if pads is None:
            return [(feature_shape(attrs, x.shape[0], x.shape[axis], (-1,) * count), x.dtype)]
        ceil = bool(attrs.get("ceil_mode", 0))
        spatial = tuple(-1 if n < 0 else pooled_extent(n, k, b, a, s, d, ceil)
                        for n, k, (b, a), s, d in zip(spatial_in, kernel, pads, strides, dilations))
        if any(0 <= e < 1 for e in spatial):
            raise invalid(f"pool: the window {list(kernel)} does not fit the padded input {list(spatial_in)}")
        return [(feature_shape(attrs, x.shape[0], x.shape[axis], spatial), x.dtype)]

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
        axes = spatial_axes(attrs, len(x.shape))
        return [(tuple(1 if i in axes else d for i, d in enumerate(x.shape)), x.dtype)]

    def run(self, attrs, ins, outs):
        x = as_compute(ins[0])
        axes = spatial_axes(attrs, x.ndim)
        outs[0][...] = x.mean(axis=axes, keepdims=True) if attrs["mode"] == "avg" else x.max(axis=axes, keepdims=True)

    def flops(self, attrs, in_shapes, out_shapes):
        return float(product(in_shapes[0]))


@register
class BatchNorm(Op):
    """batch_norm(x, scale, bias, mean, var): inference batch normalisation over the channel axis (epsilon)."""

    name = "batch_norm"
    arity = (5, 5)

    def infer(self, attrs, ins):
        x = ins[0]
        if x.shape is not None and len(x.shape) < 2:
            raise invalid(f"batch_norm: x {list(x.shape)} has no channel axis")
        for i, name in ((1, "scale"), (2, "bias"), (3, "mean"), (4, "var")):
            s = ins[i].shape
            if x.shape is None or s is None:
                continue
            channels = x.shape[channel_axis(attrs, len(x.shape))]
            if channels >= 0 and product(s) not in (-1, channels):
                raise invalid(f"batch_norm: {name} {list(s)} must hold one value per channel ({channels})")
        return [(x.shape, x.dtype)]

    def run(self, attrs, ins, outs):
        x, scale, bias, mean, var = (as_compute(a) for a in ins)
        shape = [1] * x.ndim
        shape[channel_axis(attrs, x.ndim)] = -1
        factor, shift = batch_norm_factors(scale, bias, mean, var, attrs.get("epsilon", 1e-5))
        outs[0][...] = x * factor.reshape(shape).astype(x.dtype) + shift.reshape(shape).astype(x.dtype)

    def flops(self, attrs, in_shapes, out_shapes):
        return 2.0 * product(out_shapes[0])


def batch_norm_factors(scale, bias, mean, var, epsilon):
    """(factor, shift) per channel of inference batch normalisation: y = x * factor + shift."""
    scale, bias, mean, var = (np.asarray(a, np.float32).reshape(-1) for a in (scale, bias, mean, var))
    factor = scale / np.sqrt(var + np.float32(epsilon))
    return factor, bias - mean * factor


@register
class Softmax(Op):
    """softmax(x, axis[, log]): along one axis; run by cnnlSoftmaxForward_v2."""

    name = "softmax"
    host_evaluable = False

    def infer(self, attrs, ins):
        x = ins[0]
        if x.shape is not None:
            axis_of(attrs.get("axis", -1), max(len(x.shape), 1), "softmax")
        if x.dtype.kind != "f":
            raise invalid(f"softmax: takes a float tensor, got {x.dtype}")
        return [(x.shape, x.dtype)]

    def flops(self, attrs, in_shapes, out_shapes):
        return 4.0 * product(out_shapes[0])


@register
class LayerNorm(Op):
    """layer_norm(x[, gamma[, beta]]): normalise over the axes from `axis` to the last (epsilon), then scale and
    shift (ONNX LayerNormalization, torch layer_norm); run by cnnlLayerNormForward."""

    name = "layer_norm"
    arity = (1, 3)
    host_evaluable = False

    def infer(self, attrs, ins):
        x = ins[0]
        if x.dtype.kind != "f":
            raise invalid(f"layer_norm: takes a float tensor, got {x.dtype}")
        if x.shape is not None:
            axis = axis_of(attrs.get("axis", -1), len(x.shape), "layer_norm")
            inner = product(x.shape[axis:])
            for i, name in ((1, "gamma"), (2, "beta")):
                if len(ins) > i and ins[i].shape is not None and inner >= 0 and \
                        product(ins[i].shape) not in (-1, inner):
                    raise invalid(f"layer_norm: {name} {list(ins[i].shape)} must span the normalised axes "
                                  f"{list(x.shape[axis:])}")
                if len(ins) > i and ins[i].dtype != x.dtype:
                    raise invalid(f"layer_norm: {name} is {ins[i].dtype}, x {x.dtype}")
        return [(x.shape, x.dtype)]

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
    last two axes; bias (broadcast over the rows) is added. 16-bit floats accumulate in float32. After the
    builder: a fused layer's `epilogue` over the accumulator and the extra inputs after b, `quant_a` / `quant_b`
    (`b_integer`: b holds integer weights) for int8/int16 arithmetic."""

    name = "matmul"
    unit = cost.TENSOR
    arity = (2, None)

    def infer(self, attrs, ins):
        a, b = ins[0], ins[1]
        if a.dtype != b.dtype and not attrs.get("b_integer"):
            raise invalid(f"matmul: input types differ ({a.dtype} and {b.dtype})")
        if not attrs.get("epilogue") and len(ins) > 3:
            raise invalid(f"matmul: takes a, b and a bias, got {len(ins)} inputs")
        shape = matmul_shape(a.shape, b.shape, bool(attrs.get("trans_a")), bool(attrs.get("trans_b")))
        if len(ins) == 3 and not attrs.get("epilogue"):
            shape = broadcast(shape, ins[2].shape, node="matmul bias")
        return [(shape, epilogue_dtype(attrs, a.dtype))]

    def prepare(self, attrs, ins, outs):
        a, b, out = ins[0], ins[1], outs[0]
        if a.dtype.kind != "f":
            def integer(arrays, results):
                x, y = arrays[0], arrays[1]
                x = x.swapaxes(-1, -2) if attrs.get("trans_a") and x.ndim > 1 else x
                y = y.swapaxes(-1, -2) if attrs.get("trans_b") and y.ndim > 1 else y
                value = np.matmul(x, y)
                if len(arrays) == 3:
                    value = value + arrays[2]
                results[0][...] = value
            integer.flops = 2.0 * product(out.shape) * (a.shape[-1] if a.shape else 1)
            return integer
        if attrs.get("epilogue"):
            epilogue, extras = attrs["epilogue"], [i.shape for i in ins[2:]]
        elif len(ins) == 3:
            epilogue, extras = bias_epilogue(ins[2].dtype, out.dtype), [ins[2].shape]
        else:
            epilogue, extras = bias_epilogue(None, out.dtype), []
        product_shape = matmul_shape(a.shape, b.shape, bool(attrs.get("trans_a")), bool(attrs.get("trans_b")))
        if tuple(product_shape) != tuple(out.shape):  # a bias that widens the product: the plain broadcast rule
            layer = matmul_kernel.MatMul(a.shape, b.shape, bool(attrs.get("trans_a")), bool(attrs.get("trans_b")),
                                         product_shape, bias_epilogue(None, np.float32), [])

            def widened(arrays, results):
                acc = np.empty(product_shape, np.float32)
                layer(arrays[0], arrays[1], [], acc)
                results[0][...] = as_compute(acc) + as_compute(arrays[2])
            widened.flops = layer.flops
            return widened
        layer = matmul_kernel.MatMul(a.shape, b.shape, bool(attrs.get("trans_a")), bool(attrs.get("trans_b")),
                                     out.shape, epilogue, extras, quantization(attrs.get("quant_a")),
                                     quantization(attrs.get("quant_b")), bool(attrs.get("b_integer")),
                                     constant_b=b.value is not None)

        def run(arrays, results):
            layer(arrays[0], arrays[1], list(arrays[2:]), results[0])

        run.flops = layer.flops
        return run

    def run(self, attrs, ins, outs):
        from . import Info
        run = self.prepare(attrs, [Info(a.shape, a.dtype, a) for a in ins], [Info(o.shape, o.dtype) for o in outs])
        run(ins, outs)

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


#: ONNX Resize's rules -> the names of CNNL's interp enums (magicmind/runtime/library.py maps them)
RESIZE_COORDINATES = {"half_pixel": "ALGO0", "pytorch_half_pixel": "ALGO1", "align_corners": "ALGO2",
                      "asymmetric": "ALGO3", "tf_half_pixel_for_nn": "ALGO4"}
RESIZE_ROUNDING = {"floor": "FLOOR", "ceil": "CEIL", "round_prefer_floor": "ROUND_PERFER_FLOOR",
                   "round_prefer_ceil": "ROUND_PERFER_CEIL"}
RESIZE_MODES = ("nearest", "linear", "cubic")


def resize_rule(attrs, rank: int, node: str = "resize"):
    """(mode, coordinate rule, nearest rounding, cubic coefficient, exclude_outside, spatial scales or None) of a
    resize, the rules by name."""
    mode = attrs.get("mode", "nearest")
    if mode == "cubic" and rank != 4:
        raise invalid(f"{node}: cubic resize takes 4-D tensors, x has {rank} dims")
    scales = attrs.get("scales")
    spatial = [scales[a] for a in spatial_axes(attrs, rank)] if scales else None
    return (mode, RESIZE_COORDINATES[attrs.get("coordinate_transformation_mode", "half_pixel")],
            RESIZE_ROUNDING[attrs.get("nearest_mode", "round_prefer_floor")], float(attrs.get("cubic_coeff_a", -0.75)),
            bool(attrs.get("exclude_outside", 0)), spatial)


@register
class Resize(Op):
    """resize(x, sizes) with attrs mode (nearest/linear/cubic), coordinate_transformation_mode, nearest_mode,
    scales (float per axis, or None): ONNX Resize over the spatial axes of a feature map (sizes and scales in
    the tensor's own axis order); run by cnnlInterp_v3."""

    name = "resize"
    value_inputs = (1,)
    arity = (2, 2)
    host_evaluable = False

    def infer(self, attrs, ins):
        x, sizes = ins
        for key, table in (("mode", RESIZE_MODES), ("coordinate_transformation_mode", RESIZE_COORDINATES),
                           ("nearest_mode", RESIZE_ROUNDING)):
            if key in attrs and attrs[key] not in table:
                raise invalid(f"resize: {key} {attrs[key]!r} is not supported (one of {', '.join(table)})")
        if x.shape is None:
            return [(None, x.dtype)]
        if len(x.shape) < 3 or len(x.shape) > 5:
            raise invalid(f"resize: x {list(x.shape)} must have 1 to 3 spatial axes")
        if x.dtype.kind != "f":
            raise invalid(f"resize: takes a float tensor, got {x.dtype}")
        kept = [a for a in range(len(x.shape)) if a not in spatial_axes(attrs, len(x.shape))]
        if sizes.value is None:
            return [(tuple(x.shape[a] if a in kept else -1 for a in range(len(x.shape))), x.dtype)]
        target = tuple(int(v) for v in np.asarray(sizes.value).reshape(-1))
        if len(target) != len(x.shape):
            raise invalid(f"resize: sizes {list(target)} must give every axis of x {list(x.shape)}")
        if any(target[a] != x.shape[a] and x.shape[a] != -1 for a in kept):
            raise invalid(f"resize: only spatial axes are resized (sizes {list(target)}, x {list(x.shape)})")
        return [(target, x.dtype)]


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
