"""Losses (NLL with ignore index and class weights, cross entropy composed from log-softmax and NLL, MSE, BCE,
BCE with logits, smooth L1) forward and backward against float64 references and finite differences, and their _v2
forms (cnnlMSELoss_v2 and its workspace query, cnnlNlllossForward_v2 / Backward_v2 with and without weights)."""
import numpy as np
import pytest

import cnnl

from .nn_helpers import (BF16, F16, F32, F64, FLOATS, assert_near, blank, directional_check, placed, raises_status,
                         rounded, sync)

NONE, MEAN, SUM = cnnl.CNNL_REDUCTION_NONE, cnnl.CNNL_REDUCTION_MEAN, cnnl.CNNL_REDUCTION_SUM
REDUCTIONS = [NONE, MEAN, SUM]
INT32, INT64 = cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_INT64


def reduce(values, reduction, divisor=None):
    if reduction == NONE:
        return values
    total = values.sum()
    return np.array([total / (values.size if divisor is None else divisor) if reduction == MEAN else total])


def output_dims(shape, reduction):
    return shape if reduction == NONE else (1,)


# ---- NLL and cross entropy ---------------------------------------------------------------------------------------

def nll(handle, x, target, weight, reduction, ignore, code, target_code=INT32):
    xt, tt, wt = placed(x, code), placed(target, target_code), placed(weight, code)
    tw, yt = blank((1,), code), blank(output_dims(x.shape[:1], reduction), code)
    size = cnnl.getNlllossWorkspaceSize(handle, xt.desc)
    cnnl.nlllossForward(handle, reduction, None, size, xt.desc, xt.ptr, tt.desc, tt.ptr, ignore, wt.desc, wt.ptr,
                        tw.desc, tw.ptr, yt.desc, yt.ptr)
    sync(handle)
    return yt.read(), tw.read()


def nll_backward(handle, dy, target, weight, total, reduction, ignore, shape, code):
    dyt, tt, wt, tw = placed(dy, code), placed(target, INT32), placed(weight, code), placed(total, code)
    dxt = blank(shape, code)
    cnnl.nlllossBackward(handle, reduction, dyt.desc, dyt.ptr, tt.desc, tt.ptr, ignore, wt.desc, wt.ptr, tw.desc,
                         tw.ptr, dxt.desc, dxt.ptr)
    sync(handle)
    return dxt.read()


def nll_reference(x, target, weight, reduction, ignore):
    counted = target != ignore
    w = np.where(counted, weight[np.where(counted, target, 0)], 0)
    losses = -x[np.arange(len(target)), np.where(counted, target, 0)] * w
    return reduce(losses, reduction, w.sum()), w.sum()


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_forward(handle, code, reduction):
    rng = np.random.default_rng(0)
    x = rounded(rng, (6, 5), code, -4, 0)
    target = np.array([0, 4, 2, 2, 1, 3])
    weight = rounded(rng, (5,), code, 0.5, 2)
    got, total = nll(handle, x, target, weight, reduction, 2, code)
    want, want_total = nll_reference(x, target, weight, reduction, 2)
    assert_near(got, want, code, scale=8)
    assert_near(total, [want_total], code, scale=8)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_backward_is_the_gradient(handle, reduction):
    rng = np.random.default_rng(1)
    x, target, weight = rng.standard_normal((5, 4)), np.array([3, 0, 1, 3, 2]), rng.uniform(0.5, 2, 4)
    y, total = nll(handle, x, target, weight, reduction, 1, F64)
    dy = rng.standard_normal(y.shape)
    dx = nll_backward(handle, dy, target, weight, total, reduction, 1, x.shape, F64)
    directional_check(lambda xx: np.sum(nll(handle, xx, target, weight, reduction, 1, F64)[0] * dy), x, dx, rng)


def test_nll_label_out_of_range_fails_at_sync(handle):
    x, t, w = placed(np.zeros((2, 3)), F32), placed(np.array([0, 5]), INT32), placed(np.ones(3), F32)
    tw, y = blank((1,), F32), blank((1,), F32)
    cnnl.nlllossForward(handle, MEAN, None, 0, x.desc, x.ptr, t.desc, t.ptr, -100, w.desc, w.ptr, tw.desc, tw.ptr,
                        y.desc, y.ptr)
    with pytest.raises(Exception, match="out of range"):
        sync(handle)


@pytest.mark.parametrize("code", [F32, F16, BF16])
def test_cross_entropy_composed(handle, code):
    """cross entropy = NLL of the log-softmax; its gradient = softmax - one-hot (scaled), through the API."""
    rng = np.random.default_rng(2)
    logits = rounded(rng, (4, 6), code)
    target = np.array([1, 5, 0, 3])
    xt, logp = placed(logits, code), blank((4, 6), code)
    cnnl.softmaxForward(handle, cnnl.CNNL_SOFTMAX_LOG, cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION, None, xt.desc, xt.ptr,
                        None, logp.desc, logp.ptr)
    tt, wt, tw, loss = placed(target, INT32), placed(np.ones(6), code), blank((1,), code), blank((1,), code)
    cnnl.nlllossForward(handle, MEAN, None, 0, logp.desc, logp.ptr, tt.desc, tt.ptr, -100, wt.desc, wt.ptr, tw.desc,
                        tw.ptr, loss.desc, loss.ptr)
    one, dlogp, dx = placed(np.ones(1), code), blank((4, 6), code), blank((4, 6), code)
    cnnl.nlllossBackward(handle, MEAN, one.desc, one.ptr, tt.desc, tt.ptr, -100, wt.desc, wt.ptr, tw.desc, tw.ptr,
                         dlogp.desc, dlogp.ptr)
    cnnl.softmaxBackward(handle, cnnl.CNNL_SOFTMAX_LOG, cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION, None, logp.desc,
                         logp.ptr, dlogp.desc, dlogp.ptr, None, dx.desc, dx.ptr)
    sync(handle)
    shifted = logits - logits.max(1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    assert_near(loss.read(), [-log_softmax[np.arange(4), target].mean()], code, scale=8)
    assert_near(dx.read(), (np.exp(log_softmax) - np.eye(6)[target]) / 4, code, scale=4)


def test_nll_rejects(handle):
    x, t, w, tw, y = blank((2, 3), F32), blank((2,), INT32), blank((3,), F32), blank((1,), F32), blank((1,), F32)
    args = [handle, MEAN, None, 0, x.desc, x.ptr, t.desc, t.ptr, -100, w.desc, w.ptr, tw.desc, tw.ptr, y.desc, y.ptr]
    for position, value, arg, status in [
            (1, 5, "algorithm", cnnl.CNNL_STATUS_BAD_PARAM),
            (6, blank((3,), INT32).desc, "t_desc", cnnl.CNNL_STATUS_BAD_PARAM),
            (6, blank((2,), F32).desc, "t_desc", cnnl.CNNL_STATUS_NOT_SUPPORTED),
            (9, blank((4,), F32).desc, "w_desc", cnnl.CNNL_STATUS_BAD_PARAM),
            (13, blank((2,), F32).desc, "y_desc", cnnl.CNNL_STATUS_BAD_PARAM),
            (4, blank((2, 3, 1), F32).desc, "x_desc", cnnl.CNNL_STATUS_BAD_PARAM),
            (8, "x", "ignore_index", cnnl.CNNL_STATUS_BAD_PARAM)]:
        bad = list(args)
        bad[position] = value
        with raises_status(status, arg=arg):
            cnnl.nlllossForward(*bad)


# ---- elementwise losses ------------------------------------------------------------------------------------------

def sigmoid(z):
    return 1 / (1 + np.exp(-z))


LOSSES = {  # name: (reference(x, t, w, pw), input range, has weight, has pos_weight)
    "mse": (lambda x, t, w, pw: (x - t) ** 2, (-2, 2), False, False),
    "bce": (lambda x, t, w, pw: -w * (t * np.log(x) + (1 - t) * np.log(1 - x)), (0.05, 0.95), True, False),
    "bce_logits": (lambda x, t, w, pw: -w * (pw * t * np.log(sigmoid(x)) + (1 - t) * np.log(1 - sigmoid(x))),
                   (-3, 3), True, True),
    "smooth_l1": (lambda x, t, w, pw: np.where(np.abs(x - t) < 0.5, 0.5 * (x - t) ** 2 / 0.5, np.abs(x - t) - 0.25),
                  (-2, 2), False, False),
}


def loss_forward(handle, name, x, t, w, pw, reduction, code):
    xt, tt = placed(x, code), placed(t, code)
    wt = placed(w, code) if w is not None else None
    pt = placed(pw, code) if pw is not None else None
    yt = blank(output_dims(x.shape, reduction), code)
    if name == "mse":
        cnnl.mSELoss(handle, reduction, xt.desc, xt.ptr, tt.desc, tt.ptr, yt.desc, yt.ptr)
    elif name == "bce":
        size = cnnl.getBceLossWorkspaceSize(handle, xt.desc, wt and wt.desc)
        cnnl.bceLoss(handle, xt.desc, xt.ptr, tt.desc, tt.ptr, wt and wt.desc, wt and wt.ptr, reduction, None, size,
                     yt.desc, yt.ptr)
    elif name == "bce_logits":
        size = cnnl.getBceWithLogitsWorkspaceSize(handle, xt.desc, wt and wt.desc, pt and pt.desc)
        cnnl.bceWithLogits_v2(handle, cnnl.CNNL_COMPUTATION_HIGH_PRECISION, xt.desc, xt.ptr, tt.desc, tt.ptr,
                              wt and wt.desc, wt and wt.ptr, pt and pt.desc, pt and pt.ptr, reduction, None, size,
                              yt.desc, yt.ptr)
    else:
        size = cnnl.getSmoothL1LossForwardWorkspaceSize(handle, xt.desc, reduction)
        cnnl.smoothL1LossForward_v2(handle, xt.desc, xt.ptr, tt.desc, tt.ptr, 0.5, reduction, None, size, yt.desc,
                                    yt.ptr)
    sync(handle)
    return yt.read()


def loss_backward(handle, name, x, t, w, pw, dy, reduction, code):
    xt, tt, gt, dxt = placed(x, code), placed(t, code), placed(dy, code), blank(x.shape, code)
    wt = placed(w, code) if w is not None else None
    pt = placed(pw, code) if pw is not None else None
    if name == "mse":
        cnnl.mSELossBackward(handle, reduction, xt.desc, xt.ptr, tt.desc, tt.ptr, gt.desc, gt.ptr, dxt.desc, dxt.ptr)
    elif name == "bce":
        size = cnnl.getBceLossBackwardWorkspaceSize(handle, tt.desc, wt and wt.desc)
        cnnl.bceLossBackward(handle, gt.desc, gt.ptr, xt.desc, xt.ptr, tt.desc, tt.ptr, wt and wt.desc,
                             wt and wt.ptr, reduction, None, size, dxt.desc, dxt.ptr)
    elif name == "bce_logits":
        size = cnnl.getBceWithLogitsBackwardWorkspaceSize(handle, tt.desc, wt and wt.desc, pt and pt.desc)
        cnnl.bceWithLogitsBackward(handle, gt.desc, gt.ptr, xt.desc, xt.ptr, tt.desc, tt.ptr, wt and wt.desc,
                                   wt and wt.ptr, pt and pt.desc, pt and pt.ptr, reduction, None, size, dxt.desc,
                                   dxt.ptr)
    else:
        size = cnnl.getSmoothL1LossBackwardWorkspaceSize(handle, xt.desc, reduction)
        cnnl.smoothL1LossBackward_v2(handle, xt.desc, xt.ptr, tt.desc, tt.ptr, gt.desc, gt.ptr, 0.5, reduction, None,
                                     size, dxt.desc, dxt.ptr)
    sync(handle)
    return dxt.read()


def loss_problem(rng, name, code):
    reference, (low, high), has_weight, has_pos = LOSSES[name]
    x = rounded(rng, (3, 4), code, low, high)
    t = rounded(rng, (3, 4), code, 0, 1) if name.startswith("bce") else rounded(rng, (3, 4), code, -2, 2)
    w = rounded(rng, (4,), code, 0.5, 2) if has_weight else None
    pw = rounded(rng, (4,), code, 0.5, 2) if has_pos else None
    return x, t, w, pw


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_forward(handle, name, reduction, code):
    x, t, w, pw = loss_problem(np.random.default_rng(3), name, code)
    values = LOSSES[name][0](x, t, 1 if w is None else w, 1 if pw is None else pw)
    assert_near(loss_forward(handle, name, x, t, w, pw, reduction, code), reduce(values, reduction), code,
                scale=16 if reduction == NONE else 16 * values.size)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_backward_is_the_gradient(handle, name, reduction):
    rng = np.random.default_rng(4)
    x, t, w, pw = loss_problem(rng, name, F64)
    dy = rng.standard_normal(output_dims(x.shape, reduction))
    dx = loss_backward(handle, name, x, t, w, pw, dy, reduction, F64)
    directional_check(lambda xx: np.sum(loss_forward(handle, name, xx, t, w, pw, reduction, F64) * dy), x, dx, rng,
                      step=1e-7)


@pytest.mark.parametrize("code", [F32, F16, BF16])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_backward_dtypes(handle, name, code):
    rng = np.random.default_rng(5)
    x, t, w, pw = loss_problem(rng, name, code)
    dy = rounded(rng, x.shape, code)
    want = loss_backward(handle, name, x, t, w, pw, dy, NONE, F64)
    assert_near(loss_backward(handle, name, x, t, w, pw, dy, NONE, code), want, code, scale=16)


def test_bce_clamps_logarithms(handle):
    x, t = np.array([0.0, 1.0, 0.5]), np.array([1.0, 0.0, 1.0])
    assert_near(loss_forward(handle, "bce", x, t, None, None, NONE, F32), [100.0, 100.0, np.log(2)], F32, scale=100)


def test_elementwise_rejects(handle):
    x, t, y = blank((3, 4), F32), blank((3, 4), F32), blank((1,), F32)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="reduction"):
        cnnl.mSELoss(handle, 3, x.desc, x.ptr, t.desc, t.ptr, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.mSELoss(handle, NONE, x.desc, x.ptr, t.desc, t.ptr, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="target_desc"):
        cnnl.mSELoss(handle, SUM, x.desc, x.ptr, blank((4, 3), F32).desc, t.ptr, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="weight_desc"):
        cnnl.bceLoss(handle, x.desc, x.ptr, t.desc, t.ptr, blank((3,), F32).desc, t.ptr, SUM, None, 0, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="prefer"):
        cnnl.bceWithLogits_v2(handle, 9, x.desc, x.ptr, t.desc, t.ptr, None, None, None, None, SUM, None, 0, y.desc,
                              y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="beta"):
        cnnl.smoothL1LossForward_v2(handle, x.desc, x.ptr, t.desc, t.ptr, -1.0, SUM, None, 0, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="grad_desc"):
        cnnl.mSELossBackward(handle, SUM, x.desc, x.ptr, t.desc, t.ptr, x.desc, x.ptr, x.desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="input_desc"):
        ints = blank((3, 4), INT32)
        cnnl.mSELoss(handle, NONE, ints.desc, ints.ptr, ints.desc, ints.ptr, ints.desc, ints.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="diff_input_desc"):
        cnnl.smoothL1LossBackward_v2(handle, x.desc, x.ptr, t.desc, t.ptr, y.desc, y.ptr, 0.5, SUM, None, 0,
                                     blank((3, 5), F32).desc, x.ptr)


# ---- the _v2 forms: cnnlMSELoss_v2, cnnlNlllossForward_v2 / Backward_v2 ---------------------------------------------

@pytest.mark.parametrize("code", [F32, F16, BF16, F64])
@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM])
def test_mse_v2(handle, code, reduction):
    rng = np.random.default_rng(reduction)
    x, t = rounded(rng, (3, 4), code), rounded(rng, (3, 4), code)
    xt, tt = placed(x, code), placed(t, code)
    yt = blank((3, 4) if reduction == NONE else (1,), code)
    size = cnnl.getMSELossWorkspaceSize(handle, xt.desc)
    assert size == 0
    cnnl.mSELoss_v2(handle, reduction, xt.desc, xt.ptr, tt.desc, tt.ptr, None, size, yt.desc, yt.ptr)
    sync(handle)
    assert_near(yt.read(), reduce((x - t) ** 2, reduction), code, scale=16)


def nll_v2(handle, x, target, weight, reduction, ignore, code=F64, index=INT32):
    xt, tt = placed(x, code), placed(target, index)
    wt = None if weight is None else placed(weight, code)
    tw, yt = blank((1,), code), blank(x.shape[:1] if reduction == NONE else (1,), code)
    size = cnnl.getNlllossWorkspaceSize(handle, xt.desc)
    cnnl.nlllossForward_v2(handle, reduction, xt.desc, xt.ptr, tt.desc, tt.ptr, ignore,
                           None if wt is None else wt.desc, None if wt is None else wt.ptr, None, size, tw.desc,
                           tw.ptr, yt.desc, yt.ptr)
    sync(handle)
    return yt.read(), tw.read()


def nll_v2_backward(handle, dy, target, weight, total, reduction, ignore, shape, code=F64):
    dyt, tt, tw = placed(dy, code), placed(target, INT32), placed(total, code)
    wt = None if weight is None else placed(weight, code)
    dx = blank(shape, code)
    cnnl.nlllossBackward_v2(handle, reduction, dyt.desc, dyt.ptr, tt.desc, tt.ptr, ignore,
                            None if wt is None else wt.desc, None if wt is None else wt.ptr, tw.desc, tw.ptr,
                            dx.desc, dx.ptr)
    sync(handle)
    return dx.read()


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", [NONE, MEAN, SUM])
def test_nll_v2(handle, weighted, reduction):
    rng = np.random.default_rng(3 * weighted + reduction)
    x = rng.standard_normal((6, 5))
    target = np.array([0, 4, 2, 2, 1, 3])
    weight = rng.uniform(0.5, 2, 5) if weighted else None
    w = weight if weighted else np.ones(5)
    counted = target != 2
    per_sample = np.where(counted, -x[np.arange(6), target] * w[target], 0)
    total = w[target][counted].sum()
    got, got_total = nll_v2(handle, x, target, weight, reduction, 2, index=INT64)
    np.testing.assert_allclose(got, reduce(per_sample, reduction, total), rtol=1e-12)
    np.testing.assert_allclose(got_total, [total], rtol=1e-12)
    dy = rng.standard_normal(got.shape)
    dx = nll_v2_backward(handle, dy, target, weight, got_total, reduction, 2, x.shape)
    directional_check(lambda xx: np.sum(nll_v2(handle, xx, target, weight, reduction, 2)[0] * dy), x, dx, rng)


def test_v2_forms_reject(handle):
    BAD, UNSUPPORTED = cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED
    x, t, tw, y = blank((2, 3), F32), blank((2,), INT32), blank((1,), F32), blank((1,), F32)
    args = [handle, MEAN, x.desc, x.ptr, t.desc, t.ptr, -100, None, None, None, 0, tw.desc, tw.ptr, y.desc, y.ptr]
    for position, value, arg, status in [(1, 7, "reduction", BAD), (7, blank((4,), F32).desc, "weight_desc", BAD),
                                         (4, blank((2,), F32).desc, "target_desc", UNSUPPORTED),
                                         (4, blank((3,), INT32).desc, "target_desc", BAD),
                                         (13, blank((2,), F32).desc, "output_desc", BAD),
                                         (11, blank((1,), F16).desc, "total_weight_desc", BAD),
                                         (10, 16, "workspace", BAD)]:
        bad = list(args)
        bad[position] = value
        with raises_status(status, arg=arg):
            cnnl.nlllossForward_v2(*bad)
    with raises_status(BAD, arg="target_desc"):
        cnnl.mSELoss_v2(handle, MEAN, x.desc, x.ptr, blank((3, 2), F32).desc, x.ptr, None, 0, y.desc, y.ptr)
