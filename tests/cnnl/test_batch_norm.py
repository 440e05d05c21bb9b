"""Batch norm (training, inference, backward, the v1 and v2 forms) against float64 references; the backward
against finite differences of the forward; bad arguments."""
import numpy as np
import pytest

import cnnl

from .nn_helpers import BF16, F16, F32, F64, FLOATS, assert_near, blank, directional_check, placed, raises_status, \
    rounded, rounded_to, sync

NHWC, NCHW = cnnl.CNNL_LAYOUT_NHWC, cnnl.CNNL_LAYOUT_NCHW
SPATIAL, BN = cnnl.CNNL_BATCHNORM_SPATIAL, cnnl.CNNL_BATCHNORM_OPS_BN


def bn_reference(x, weight, bias, axis, eps):
    axes = tuple(a for a in range(x.ndim) if a != axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    invstd = 1 / np.sqrt(var + eps)
    y = (x - mean.reshape(shape)) * (invstd * weight).reshape(shape) + bias.reshape(shape)
    return y, mean, var, invstd


def bn_train(handle, x, weight, bias, code, layout, eps=1e-5, momentum=0.1, running=None, param_code=None, v2=False):
    p = param_code or code
    xt, yt = placed(x, code, layout), blank(x.shape, code, layout)
    wt, bt = placed(weight, p), placed(bias, p)
    rm, rv = (placed(running[0], p), placed(running[1], p)) if running is not None else (None, None)
    sm, sv = blank(weight.shape, p), blank(weight.shape, p)
    if v2:
        act = cnnl.createActivationDescriptor()
        cnnl.setActivationDescriptor_v5(act, cnnl.CNNL_ACTIVATION_IDENTITY, cnnl.CNNL_ACTIVATION_HIGH_PRECISION,
                                        cnnl.CNNL_NOT_PROPAGATE_NAN, 1.0, -1, 1.0, 1.0, False)
        size = cnnl.getBatchNormForwardWorkspaceSize(handle, xt.desc)
        cnnl.batchNormForwardTraining_v2(handle, act, SPATIAL, BN, None, None, xt.desc, xt.ptr, None, None, wt.desc,
                                         wt.ptr, bt.ptr, rm and rm.ptr, rv and rv.ptr, eps, momentum, yt.desc, yt.ptr,
                                         sm.ptr, sv.ptr, None, size, None, 0)
    else:
        cnnl.batchNormForwardTraining(handle, None, None, xt.desc, xt.ptr, wt.desc, wt.ptr, bt.ptr, rm and rm.ptr,
                                      rv and rv.ptr, eps, momentum, yt.desc, yt.ptr, sm.ptr, sv.ptr)
    sync(handle)
    stats = (rm.read(), rv.read()) if running is not None else None
    return yt.read(), sm.read(), sv.read(), stats


def bn_backward(handle, x, dy, weight, mean, invstd, code, layout, v2=False):
    xt, dyt, dxt = placed(x, code, layout), placed(dy, code, layout), blank(x.shape, code, layout)
    wt, mt, it = placed(weight, code), placed(mean, code), placed(invstd, code)
    dwt, dbt = blank(weight.shape, code), blank(weight.shape, code)
    if v2:
        cnnl.batchNormBackward_v2(handle, None, SPATIAL, BN, None, None, None, None, xt.desc, xt.ptr, None, None,
                                  dyt.desc, dyt.ptr, wt.desc, wt.ptr, None, mt.ptr, it.ptr, 1e-5, None, None,
                                  dxt.desc, dxt.ptr, dwt.ptr, dbt.ptr, None, 0, None, 0)
    else:
        cnnl.batchNormBackward(handle, None, None, None, None, xt.desc, xt.ptr, dyt.desc, dyt.ptr, wt.desc, wt.ptr,
                               mt.ptr, it.ptr, 1e-5, dxt.desc, dxt.ptr, dwt.ptr, dbt.ptr)
    sync(handle)
    return dxt.read(), dwt.read(), dbt.read()


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("layout, shape, axis", [(NHWC, (4, 3, 5, 6), 3), (NCHW, (4, 6, 3, 5), 1),
                                                 (cnnl.CNNL_LAYOUT_NC, (8, 6), 1),
                                                 (cnnl.CNNL_LAYOUT_NDHWC, (2, 2, 3, 3, 6), 4)])
def test_batch_norm_training(handle, code, layout, shape, axis):
    rng = np.random.default_rng(0)
    x = rounded(rng, shape, code, -3, 3)
    weight, bias = rounded(rng, (6,), code, 0.5, 2), rounded(rng, (6,), code)
    running = (np.zeros(6), np.ones(6))
    y, mean, invstd, (rm, rv) = bn_train(handle, x, weight, bias, code, layout, running=running,
                                         v2=layout == NCHW)
    want, want_mean, var, want_invstd = bn_reference(x, weight, bias, axis, 1e-5)
    count = x.size // 6
    assert_near(y, want, code, scale=8)
    assert_near(mean, want_mean, code)
    assert_near(invstd, want_invstd, code, scale=4)
    assert_near(rm, 0.1 * want_mean, code)
    assert_near(rv, 0.9 + 0.1 * var * count / (count - 1), code)


def test_batch_norm_half_data_float_parameters(handle):
    rng = np.random.default_rng(1)
    x = rounded(rng, (4, 3, 3, 5), F16)
    weight, bias = rng.uniform(0.5, 2, 5), rng.standard_normal(5)
    y, mean, _, _ = bn_train(handle, x, weight, bias, F16, NHWC, param_code=F32)
    assert_near(y, bn_reference(x, weight, bias, 3, 1e-5)[0], F16, scale=8)
    assert_near(mean, x.mean(axis=(0, 1, 2)), F32, scale=1e-2)


@pytest.mark.parametrize("code", FLOATS)
def test_batch_norm_inference(handle, code):
    rng = np.random.default_rng(2)
    x = rounded(rng, (3, 4, 4, 5), code)
    weight, bias, mean, var = (rounded(rng, (5,), code, 0.5, 2), rounded(rng, (5,), code), rounded(rng, (5,), code),
                               rounded(rng, (5,), code, 0.5, 2))
    xt, zt = placed(x, code, NHWC), placed(np.ones(x.shape), code, NHWC)
    params = [placed(v, code) for v in (weight, bias, mean, var)]
    cnnl.batchNormForwardInference(handle, 2.0, 1.0, xt.desc, xt.ptr, params[0].desc, *(p.ptr for p in params),
                                   1e-3, zt.desc, zt.ptr)
    sync(handle)
    want = 2 * ((x - mean) / np.sqrt(var + 1e-3) * weight + bias) + 1
    assert_near(zt.read(), want, code, scale=16)


@pytest.mark.parametrize("layout, shape", [(NHWC, (3, 2, 3, 4)), (NCHW, (3, 4, 2, 3))])
def test_batch_norm_backward_is_the_gradient(handle, layout, shape):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    weight, bias = rng.uniform(0.5, 2, 4), rng.standard_normal(4)
    y, mean, invstd, _ = bn_train(handle, x, weight, bias, F64, layout)
    dy = rng.standard_normal(shape)
    dx, dw, db = bn_backward(handle, x, dy, weight, mean, invstd, F64, layout, v2=layout == NCHW)
    directional_check(lambda xx: np.sum(bn_train(handle, xx, weight, bias, F64, layout)[0] * dy), x, dx, rng)
    directional_check(lambda ww: np.sum(bn_train(handle, x, ww, bias, F64, layout)[0] * dy), weight, dw, rng)
    directional_check(lambda bb: np.sum(bn_train(handle, x, weight, bb, F64, layout)[0] * dy), bias, db, rng)


@pytest.mark.parametrize("code", [F32, F16, BF16])
def test_batch_norm_backward_dtypes(handle, code):
    rng = np.random.default_rng(4)
    x, dy = rounded(rng, (4, 3, 3, 5), code), rounded(rng, (4, 3, 3, 5), code)
    weight = rounded(rng, (5,), code, 0.5, 2)
    _, mean, var, _ = bn_reference(x, weight, np.zeros(5), 3, 1e-5)
    mean, invstd = [rounded_to(v, code) for v in (mean, 1 / np.sqrt(var + 1e-5))]
    want = bn_backward(handle, x, dy, weight, mean, invstd, F64, NHWC)
    for got, expected in zip(bn_backward(handle, x, dy, weight, mean, invstd, code, NHWC), want):
        assert_near(got, expected, code, scale=8 * np.abs(expected).max() + 8)


@pytest.mark.mlusim_sanitize(exclude="initcheck")  # runs the op on unwritten tensors: only its checks matter
def test_batch_norm_rejects(handle):
    x, y, p = blank((2, 3, 3, 4), F32, NHWC), blank((2, 3, 3, 4), F32, NHWC), blank((4,), F32)
    call = dict(handle=handle, alpha=None, beta=None, x_desc=x.desc, x=x.ptr, wbmv_desc=p.desc, weight=p.ptr,
                bias=p.ptr, mov_mean=None, mov_var=None, eps=1e-5, momentum=0.1, y_desc=y.desc, y=y.ptr,
                save_mean=None, save_std=None)
    cnnl.batchNormForwardTraining(**call)
    for override, status, arg in [
            (dict(wbmv_desc=blank((3,), F32).desc), cnnl.CNNL_STATUS_BAD_PARAM, "wbmv_desc"),
            (dict(eps=-1.0), cnnl.CNNL_STATUS_BAD_PARAM, "eps"),
            (dict(y_desc=blank((2, 3, 3, 4), F16, NHWC).desc), cnnl.CNNL_STATUS_BAD_PARAM, "y_desc"),
            (dict(x_desc=blank((4,), F32).desc), cnnl.CNNL_STATUS_BAD_PARAM, "x_desc"),
            (dict(x_desc=blank((2, 4), cnnl.CNNL_DTYPE_INT32).desc), cnnl.CNNL_STATUS_NOT_SUPPORTED, "x_desc"),
            (dict(weight=None), cnnl.CNNL_STATUS_BAD_PARAM, "weight")]:
        with raises_status(status, arg=arg):
            cnnl.batchNormForwardTraining(**{**call, **override})
    relu = cnnl.createActivationDescriptor()
    cnnl.setActivationDescriptor(relu, cnnl.CNNL_ACTIVATION_RELU, cnnl.CNNL_NOT_PROPAGATE_NAN, 0.0)
    v2 = [handle, relu, SPATIAL, BN, None, None, x.desc, x.ptr, None, None, p.desc, p.ptr, p.ptr, None, None, 1e-5,
          0.1, y.desc, y.ptr, None, None, None, 0, None, 0]
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="activation_desc"):
        cnnl.batchNormForwardTraining_v2(*v2)
    for position, value, arg in [(2, cnnl.CNNL_BATCHNORM_PER_ACTIVATION, "mode"),
                                 (3, cnnl.CNNL_BATCHNORM_OPS_BN_ADD_ACTIVATION, "bnOps"), (8, x.desc, "z")]:
        bad = list(v2)
        bad[1], bad[position] = None, value
        with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg=arg):
            cnnl.batchNormForwardTraining_v2(*bad)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="diff_x_desc"):
        cnnl.batchNormBackward(handle, None, None, None, None, x.desc, x.ptr, y.desc, y.ptr, p.desc, p.ptr, p.ptr,
                               p.ptr, 1e-5, blank((2, 3, 3, 5), F32, NHWC).desc, y.ptr, None, None)
