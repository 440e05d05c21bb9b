"""Cases of normalisation (docs/cnnl_normalization.md): batch norm over NHWC maps with float32 parameters (as mixed-
precision training keeps them), layer / RMS norm over the last axis, group norm over NCHW maps, frozen and synchronised
batch norm."""
from __future__ import annotations

import numpy as np

import cnnl

from .base import CHANNELS_FIRST, Case, EPS, FEATURE_MAP, NCHW, NHWC, SUITE_COLUMNS, SUITE_ROWS, f32, int_tensor
from ..op_bench import OpBench


def frozen_batch_norm_backward(arena, shape, dtype):
    """Eval-mode batch norm gradients on an NHWC feature map, float32 parameters."""
    (x, xv), (dy, dyv) = arena.random(shape, dtype, layout=NHWC), arena.random(shape, dtype, layout=NHWC)
    dx = arena.empty(shape, dtype, layout=NHWC)
    channels = shape[-1]
    (w, wv), (mean, mv) = arena.random((channels,), "float"), arena.random((channels,), "float")
    var, varv = arena.random((channels,), "float", positive=True)
    dw, db = arena.empty((channels,), "float"), arena.empty((channels,), "float")
    workspace, size = arena.workspace(cnnl.getFrozenBatchNormBackwardWorkspaceSize(arena.handle, x.desc))
    x32, dy32 = f32(xv), f32(dyv)
    invstd = 1 / np.sqrt(varv + 1e-5)
    axes = tuple(range(len(shape) - 1))

    def reference():
        return dy32 * (wv * invstd), (dy32 * (x32 - mv)).sum(axis=axes) * invstd, dy32.sum(axis=axes)
    return (lambda: cnnl.frozenBatchNormBackward_v2(
        arena.handle, None, cnnl.CNNL_BATCHNORM_SPATIAL, cnnl.CNNL_BATCHNORM_OPS_BN, x.desc, x.ptr, None, None,
        dy.desc, dy.ptr, w.desc, w.ptr, None, mean.ptr, var.ptr, 1e-5, workspace, size, None, None, dx.desc, dx.ptr,
        dw.ptr, db.ptr), reference)


MOMENTUM = 0.1
GROUPS = 8


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


def _channel_rows(values):
    return f32(values).reshape(-1, values.shape[-1])


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


def _sync_bn_parameters(arena, channels):
    (mean, mv), (invstd, iv) = arena.random((channels,), "float"), arena.between((channels,), "float", 0.5, 2)
    (weight, wv), (bias, bv) = arena.random((channels,), "float"), arena.random((channels,), "float")
    return (mean, invstd, weight, bias), (mv, iv, wv, bv)


def sync_bn_elemt(arena, shape, dtype):
    (x, xv), y = arena.random(shape, dtype, layout=NHWC), arena.empty(shape, dtype, layout=NHWC)
    (mean, invstd, weight, bias), (mv, iv, wv, bv) = _sync_bn_parameters(arena, shape[-1])
    values = f32(xv)
    return (lambda: cnnl.syncBatchNormElemt(arena.handle, x.desc, x.ptr, mean.desc, mean.ptr, invstd.desc, invstd.ptr,
                                            weight.desc, weight.ptr, bias.desc, bias.ptr, y.desc, y.ptr),
            lambda: (values - mv) * (iv * wv) + bv)


def sync_bn_backward_reduce(arena, shape, dtype):
    (x, xv), (dy, dyv) = arena.random(shape, dtype, layout=NHWC), arena.random(shape, dtype, layout=NHWC)
    (mean, invstd, _, _), (mv, iv, _, _) = _sync_bn_parameters(arena, shape[-1])
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
    (mean, invstd, weight, _), (mv, iv, wv, _) = _sync_bn_parameters(arena, shape[-1])
    (sum_dy, sv), (sum_dy_xmu, sxv) = arena.random((shape[-1],), "float"), arena.random((shape[-1],), "float")
    total = int(np.prod(shape[:-1]))
    counts, _ = int_tensor(arena, [total])
    values, grads = f32(xv), f32(dyv)

    def reference():
        return (grads - sv / total - (values - mv) * iv ** 2 * sxv / total) * iv * wv
    return (lambda: cnnl.syncBatchNormBackwardElemtV2(arena.handle, dy.desc, dy.ptr, x.desc, x.ptr, mean.desc,
                                                      mean.ptr, invstd.desc, invstd.ptr, weight.desc, weight.ptr,
                                                      sum_dy.desc, sum_dy.ptr, sum_dy_xmu.desc, sum_dy_xmu.ptr,
                                                      counts.desc, counts.ptr, dx.desc, dx.ptr),
            reference)


#: the cases of this family, in the order the table lists them
CASES = (
    Case("bn train", "cnnlBatchNormForwardTraining", batch_norm_training(v2=False), shapes=FEATURE_MAP),
    Case("bn train v2", "cnnlBatchNormForwardTraining_v2", batch_norm_training(v2=True), shapes=FEATURE_MAP),
    Case("bn inference", "cnnlBatchNormForwardInference", batch_norm_inference, shapes=FEATURE_MAP),
    Case("bn bwd", "cnnlBatchNormBackward", batch_norm_backward(v2=False), shapes=FEATURE_MAP),
    Case("bn bwd v2", "cnnlBatchNormBackward_v2", batch_norm_backward(v2=True), shapes=FEATURE_MAP),
    Case("layer norm", "cnnlLayerNormForward", layer_norm),
    Case("layer norm bwd", "cnnlLayerNormBackward_v2", norm_backward(rms=False)),
    Case("rms norm", "cnnlRmsNormForward", rms_norm),
    Case("rms norm bwd", "cnnlRmsNormBackward", norm_backward(rms=True)),
    Case("group norm", "cnnlGroupNormForward_v3", group_norm, shapes=CHANNELS_FIRST),
    Case("group norm bwd", "cnnlGroupNormBackward", group_norm_backward, shapes=CHANNELS_FIRST),
    Case("frozen bn bwd", "cnnlFrozenBatchNormBackward_v2", frozen_batch_norm_backward, shapes=FEATURE_MAP),
    Case("sync bn stats", "cnnlSyncBatchNormStats_v2", sync_bn_stats, shapes=FEATURE_MAP),
    Case("sync bn gather", "cnnlSyncBatchNormGatherStatsWithCounts", sync_bn_gather, shapes=FEATURE_MAP,
             dtypes=("float",)),
    Case("sync bn elemt", "cnnlSyncBatchNormElemt", sync_bn_elemt, shapes=FEATURE_MAP),
    Case("sync bn bwd reduce", "cnnlSyncBatchnormBackwardReduce_v2", sync_bn_backward_reduce,
             shapes=FEATURE_MAP),
    Case("sync bn bwd elemt", "cnnlSyncBatchNormBackwardElemtV2", sync_bn_backward_elemt, shapes=FEATURE_MAP),
)


# ---- layer norm rows of the nn suite (cnnl against vectorised numpy) ------------------------------------------------

def layer_norm_rows_case(device: OpBench):
    """(synced cnnlLayerNormForward, the vectorised numpy layer norm) over (SUITE_ROWS, SUITE_COLUMNS) float32 rows."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((SUITE_ROWS, SUITE_COLUMNS), dtype=np.float32)
    weight = rng.standard_normal(SUITE_COLUMNS, dtype=np.float32)
    bias = rng.standard_normal(SUITE_COLUMNS, dtype=np.float32)
    desc, wb_desc, stats_desc = device.desc(x.shape), device.desc((SUITE_COLUMNS,)), device.desc((SUITE_ROWS,))
    px, py = device.put(x), device.empty(x.nbytes)
    pw, pb = device.put(weight), device.put(bias)
    mean, rstd = device.empty(SUITE_ROWS * 4), device.empty(SUITE_ROWS * 4)

    def op():
        cnnl.layerNormForward(device.handle, desc, px, 1, wb_desc, pw, pb, 1e-5, None, 0, desc, py, stats_desc, mean,
                              rstd)

    def reference():
        mu = x.mean(axis=1, keepdims=True)
        var = x.var(axis=1, keepdims=True)
        return (x - mu) / np.sqrt(var + 1e-5) * weight + bias

    return device.synced(op), reference
