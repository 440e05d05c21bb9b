"""Synchronised batch norm through the API, as DDP's SyncBatchNorm uses it: a batch split over two "devices"
(two calls), statistics gathered with counts, the elementwise normalisation, the backward sums reduced across the
devices and the elementwise backward - against one float64 batch norm over the whole batch and its gradient by
central differences. Also layouts, dtypes and bad arguments."""
import numpy as np
import pytest

import cnnl

from .nn_helpers import (BF16, F16, F32, F64, assert_near, blank, directional_check, placed, raises_status,
                                  rounded, sync)

NC, NLC, NHWC, NCHW, NDHWC = (cnnl.CNNL_LAYOUT_NC, cnnl.CNNL_LAYOUT_NLC, cnnl.CNNL_LAYOUT_NHWC, cnnl.CNNL_LAYOUT_NCHW,
                              cnnl.CNNL_LAYOUT_NDHWC)
EPS = 1e-5


def axis_of(layout, ndim):
    return 1 if layout == NCHW else ndim - 1


def batch_norm(x, axis, weight, bias):
    """Training-mode batch norm of the whole batch (float64 reference)."""
    axes = tuple(a for a in range(x.ndim) if a != axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + EPS) * weight.reshape(shape) + bias.reshape(shape)


def stats(handle, x, layout, code):
    xt = placed(x, code, layout)
    channels = x.shape[axis_of(layout, x.ndim)]
    mean, invstd = blank((channels,), F32), blank((channels,), F32)
    size = cnnl.getSyncBatchNormStatsWorkspaceSize(handle, xt.desc)
    cnnl.syncBatchNormStats_v2(handle, xt.desc, xt.ptr, None, size, EPS, mean.desc, mean.ptr, invstd.desc,
                               invstd.ptr)
    sync(handle)
    return mean.read().astype(np.float64), invstd.read().astype(np.float64)


def gather(handle, means, invstds, counts, running=None, momentum=0.1):
    ma, ia, ct = placed(np.array(means), F32), placed(np.array(invstds), F32), placed(np.array(counts, float), F32)
    channels = len(means[0])
    mean, invstd = blank((channels,), F32), blank((channels,), F32)
    rm = rv = None
    if running is not None:
        rm, rv = placed(running[0], F32), placed(running[1], F32)
    cnnl.syncBatchNormGatherStatsWithCounts(handle, ma.desc, ma.ptr, ia.desc, ia.ptr, None if rm is None else rm.desc,
                                            None if rm is None else rm.ptr, None if rv is None else rv.desc,
                                            None if rv is None else rv.ptr, momentum, EPS, ct.desc, ct.ptr, mean.desc,
                                            mean.ptr, invstd.desc, invstd.ptr)
    sync(handle)
    result = [mean.read(), invstd.read()]
    if running is not None:
        result += [rm.read(), rv.read()]
    return [np.asarray(r, np.float64) for r in result]


def elemt(handle, x, mean, invstd, weight, bias, layout, code):
    xt, y = placed(x, code, layout), blank(x.shape, code, layout)
    mt, st_ = placed(mean, F32), placed(invstd, F32)
    wt, bt = placed(weight, F32), placed(bias, F32)
    cnnl.syncBatchNormElemt(handle, xt.desc, xt.ptr, mt.desc, mt.ptr, st_.desc, st_.ptr, wt.desc, wt.ptr, bt.desc,
                            bt.ptr, y.desc, y.ptr)
    sync(handle)
    return y.read()


def backward_reduce(handle, dy, x, mean, invstd, layout, code, flags=(True, True, True)):
    dyt, xt = placed(dy, code, layout), placed(x, code, layout)
    mt, st_ = placed(mean, F32), placed(invstd, F32)
    channels = len(mean)
    outs = [blank((channels,), F32) for _ in range(4)]  # sum_dy, sum_dy_xmu, dweight, dbias
    size = cnnl.getSyncBatchnormBackwardReduceWorkspaceSize(handle, xt.desc)
    cnnl.syncBatchnormBackwardReduce_v2(handle, dyt.desc, dyt.ptr, xt.desc, xt.ptr, mt.desc, mt.ptr, st_.desc, st_.ptr,
                                        None, size, outs[2].desc, outs[2].ptr, outs[3].desc, outs[3].ptr, outs[0].desc,
                                        outs[0].ptr, outs[1].desc, outs[1].ptr, *flags)
    sync(handle)
    return [np.asarray(o.read(), np.float64) for o in outs]


def backward_elemt(handle, dy, x, mean, invstd, weight, sum_dy, sum_dy_xmu, counts, layout, code):
    dyt, xt, dx = placed(dy, code, layout), placed(x, code, layout), blank(x.shape, code, layout)
    ts = [placed(v, F32) for v in (mean, invstd, weight, sum_dy, sum_dy_xmu)]
    ct = placed(np.array(counts), cnnl.CNNL_DTYPE_INT32)
    cnnl.syncBatchNormBackwardElemtV2(handle, dyt.desc, dyt.ptr, xt.desc, xt.ptr, ts[0].desc, ts[0].ptr, ts[1].desc,
                                      ts[1].ptr, ts[2].desc, ts[2].ptr, ts[3].desc, ts[3].ptr, ts[4].desc, ts[4].ptr,
                                      ct.desc, ct.ptr, dx.desc, dx.ptr)
    sync(handle)
    return dx.read()


@pytest.mark.parametrize("layout,shape", [(NC, (6, 3)), (NLC, (4, 5, 3)), (NHWC, (4, 3, 2, 5)), (NCHW, (4, 5, 3, 2)),
                                          (NDHWC, (2, 2, 3, 2, 4))])
def test_two_devices_equal_one_batch(handle, layout, shape):
    rng = np.random.default_rng(len(shape))
    x = rng.standard_normal(shape)
    axis = axis_of(layout, x.ndim)
    channels = shape[axis]
    weight, bias = rng.uniform(0.5, 2, channels), rng.standard_normal(channels)
    parts = [x[:1], x[1:]]  # unequal shares
    counts = [p.size // channels for p in parts]
    local = [stats(handle, p, layout, F32) for p in parts]
    for part, (mean, invstd) in zip(parts, local):
        axes = tuple(a for a in range(x.ndim) if a != axis)
        np.testing.assert_allclose(mean, part.mean(axis=axes), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(invstd, 1 / np.sqrt(part.var(axis=axes) + EPS), rtol=1e-4)
    running = (rng.standard_normal(channels), rng.uniform(0.5, 2, channels))
    mean, invstd, rm, rv = gather(handle, [m for m, _ in local], [s for _, s in local], counts, running)
    axes = tuple(a for a in range(x.ndim) if a != axis)
    total = x.size // channels
    np.testing.assert_allclose(mean, x.mean(axis=axes), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(invstd, 1 / np.sqrt(x.var(axis=axes) + EPS), rtol=1e-4)
    np.testing.assert_allclose(rm, 0.9 * running[0] + 0.1 * x.mean(axis=axes), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv, 0.9 * running[1] + 0.1 * x.var(axis=axes) * total / (total - 1), rtol=1e-4)
    y = np.concatenate([elemt(handle, p, mean, invstd, weight, bias, layout, F64) for p in parts])
    np.testing.assert_allclose(y, batch_norm(x, axis, weight, bias), rtol=1e-4, atol=1e-4)
    # backward: per-device sums, all-reduced (added) across devices, then the elementwise gradient per device
    dy = rng.standard_normal(shape)
    dy_parts = [dy[:1], dy[1:]]
    reduced = [backward_reduce(handle, g, p, mean, invstd, layout, F64) for g, p in zip(dy_parts, parts)]
    sum_dy, sum_dy_xmu = reduced[0][0] + reduced[1][0], reduced[0][1] + reduced[1][1]
    dweight, dbias = reduced[0][2] + reduced[1][2], reduced[0][3] + reduced[1][3]
    dx = np.concatenate([backward_elemt(handle, g, p, mean, invstd, weight, sum_dy, sum_dy_xmu, counts, layout, F64)
                         for g, p in zip(dy_parts, parts)])
    directional_check(lambda xx: np.sum(batch_norm(xx, axis, weight, bias) * dy), x, dx, rng, rtol=1e-4)
    directional_check(lambda ww: np.sum(batch_norm(x, axis, ww, bias) * dy), weight, dweight, rng, rtol=1e-4)
    directional_check(lambda bb: np.sum(batch_norm(x, axis, weight, bb) * dy), bias, dbias, rng, rtol=1e-4)


def test_backward_reduce_flags_leave_other_outputs_alone(handle):
    rng = np.random.default_rng(1)
    x, dy = rng.standard_normal((5, 3)), rng.standard_normal((5, 3))
    mean, invstd = x.mean(0), 1 / np.sqrt(x.var(0) + EPS)
    xt, dyt = placed(x, F64, NC), placed(dy, F64, NC)
    mt, st_ = placed(mean, F32), placed(invstd, F32)
    dbias = placed(np.full(3, 7.0), F32)
    cnnl.syncBatchnormBackwardReduce_v2(handle, dyt.desc, dyt.ptr, xt.desc, xt.ptr, mt.desc, mt.ptr, st_.desc, st_.ptr,
                                        None, 0, None, None, dbias.desc, dbias.ptr, None, None, None, None, False,
                                        False, True)
    sync(handle)
    np.testing.assert_allclose(dbias.read(), dy.sum(0), rtol=1e-6)


@pytest.mark.parametrize("code", [F32, F16, BF16])
def test_elemt_dtypes(handle, code):
    rng = np.random.default_rng(2)
    x = rounded(rng, (4, 6, 5), code)
    mean, invstd = rng.standard_normal(5), rng.uniform(0.5, 2, 5)
    weight, bias = rng.standard_normal(5), rng.standard_normal(5)
    got = elemt(handle, x, mean, invstd, weight, bias, NLC, code)
    m32, s32, w32, b32 = (v.astype(np.float32).astype(np.float64) for v in (mean, invstd, weight, bias))
    assert_near(got, (x - m32) * s32 * w32 + b32, code, scale=8)


def test_empty_device_share_and_rejects(handle):
    """A device with no samples contributes count 0 (its statistics are NaN and ignored)."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 3))
    empty_mean, empty_invstd = stats(handle, np.zeros((0, 3)), NC, F32)
    assert np.isnan(empty_mean).all()
    full = stats(handle, x, NC, F32)
    mean, invstd = gather(handle, [empty_mean, full[0]], [empty_invstd, full[1]], [0, 5])
    np.testing.assert_allclose(mean, x.mean(0), rtol=1e-5)
    np.testing.assert_allclose(invstd, 1 / np.sqrt(x.var(0) + EPS), rtol=1e-4)
    xt, m = placed(x, F32, NC), blank((4,), F32)
    BAD, UNSUPPORTED = cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED
    with raises_status(BAD, arg="mean_desc"):
        cnnl.syncBatchNormStats_v2(handle, xt.desc, xt.ptr, None, 0, EPS, m.desc, m.ptr, m.desc, m.ptr)
    with raises_status(BAD, arg="eps"):
        good = blank((3,), F32)
        cnnl.syncBatchNormStats_v2(handle, xt.desc, xt.ptr, None, 0, -1.0, good.desc, good.ptr, good.desc, good.ptr)
    with raises_status(UNSUPPORTED, arg="x_desc"):
        ints = placed(np.zeros((5, 3)), cnnl.CNNL_DTYPE_INT32)
        cnnl.syncBatchNormStats_v2(handle, ints.desc, ints.ptr, None, 0, EPS, good.desc, good.ptr, good.desc,
                                   good.ptr)
    with raises_status(BAD, arg="count_all_desc"):
        gathered = placed(np.zeros((2, 3)), F32)
        counts = placed(np.zeros(3), F32)
        cnnl.syncBatchNormGatherStatsWithCounts(handle, gathered.desc, gathered.ptr, gathered.desc, gathered.ptr,
                                                None, None, None, None, 0.1, EPS, counts.desc, counts.ptr, good.desc,
                                                good.ptr, good.desc, good.ptr)
    with raises_status(BAD, arg="desc_sum_dy"):  # asked for but NULL
        cnnl.syncBatchnormBackwardReduce_v2(handle, xt.desc, xt.ptr, xt.desc, xt.ptr, good.desc, good.ptr, good.desc,
                                            good.ptr, None, 0, None, None, None, None, None, None, None, None, True,
                                            False, False)
