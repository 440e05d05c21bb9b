"""The _v2 loss forms through the API: cnnlMSELoss_v2 (+ workspace query), cnnlNlllossForward_v2 and
cnnlNlllossBackward_v2 with and without class weights, against float64 numpy and central differences."""
import numpy as np
import pytest

import cnnl

from ..cnnl_nn.nn_helpers import BF16, F16, F32, F64, assert_near, blank, directional_check, placed, raises_status, \
    rounded, sync

NONE, MEAN, SUM = cnnl.CNNL_REDUCTION_NONE, cnnl.CNNL_REDUCTION_MEAN, cnnl.CNNL_REDUCTION_SUM
INT32, INT64 = cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_INT64


def reduce(values, reduction, divisor=None):
    if reduction == NONE:
        return values
    return np.array([values.sum() / (values.size if divisor is None else divisor) if reduction == MEAN
                     else values.sum()])


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


def nll(handle, x, target, weight, reduction, ignore, code=F64, index=INT32):
    xt, tt = placed(x, code), placed(target, index)
    wt = None if weight is None else placed(weight, code)
    tw, yt = blank((1,), code), blank(x.shape[:1] if reduction == NONE else (1,), code)
    size = cnnl.getNlllossWorkspaceSize(handle, xt.desc)
    cnnl.nlllossForward_v2(handle, reduction, xt.desc, xt.ptr, tt.desc, tt.ptr, ignore,
                           None if wt is None else wt.desc, None if wt is None else wt.ptr, None, size, tw.desc,
                           tw.ptr, yt.desc, yt.ptr)
    sync(handle)
    return yt.read(), tw.read()


def nll_backward(handle, dy, target, weight, total, reduction, ignore, shape, code=F64):
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
    got, got_total = nll(handle, x, target, weight, reduction, 2, index=INT64)
    np.testing.assert_allclose(got, reduce(per_sample, reduction, total), rtol=1e-12)
    np.testing.assert_allclose(got_total, [total], rtol=1e-12)
    dy = rng.standard_normal(got.shape)
    dx = nll_backward(handle, dy, target, weight, got_total, reduction, 2, x.shape)
    directional_check(lambda xx: np.sum(nll(handle, xx, target, weight, reduction, 2)[0] * dy), x, dx, rng)


def test_rejects(handle):
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
