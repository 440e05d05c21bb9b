"""Layer norm, RMS norm and group norm against float64 references; backward ops against finite differences of the
forward ops; bad arguments."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cnnl

from .nn_helpers import BF16, F16, F32, F64, FLOATS, assert_near, blank, directional_check, placed, raises_status, \
    rounded, rounded_to, sync

NHWC, NCHW, ARRAY = cnnl.CNNL_LAYOUT_NHWC, cnnl.CNNL_LAYOUT_NCHW, cnnl.CNNL_LAYOUT_ARRAY


# ---- layer norm and RMS norm -------------------------------------------------------------------------------------

def rows_reference(x, axis, weight, bias, eps, centered):
    axes = tuple(range(axis, x.ndim))
    mean = x.mean(axis=axes, keepdims=True) if centered else 0
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)
    y = (x - mean) * rstd
    y = y * weight if weight is not None else y
    y = y + bias if bias is not None else y
    return y, np.broadcast_to(mean, rstd.shape).reshape(-1), rstd.reshape(-1)


def layer_norm(handle, x, axis, weight, bias, code, eps=1e-5, rms=False):
    rows = int(np.prod(x.shape[:axis]))
    xt, yt = placed(x, code), blank(x.shape, code)
    wt = placed(weight, code) if weight is not None else None
    bt = placed(bias, code) if bias is not None else None
    mt, rt = blank((rows,), code), blank((rows,), code)
    if rms:
        size = cnnl.getRmsNormOpWorkspaceSize(handle, axis, xt.desc)
        cnnl.rmsNormForward(handle, axis, xt.desc, xt.ptr, wt and wt.desc, wt and wt.ptr, bt and bt.ptr, eps, None,
                            size, yt.desc, yt.ptr, rt.desc, rt.ptr)
    else:
        size = cnnl.getLayerNormOpWorkspaceSize(handle, axis, xt.desc)
        cnnl.layerNormForward(handle, xt.desc, xt.ptr, axis, wt and wt.desc, wt and wt.ptr, bt and bt.ptr, eps,
                              None, size, yt.desc, yt.ptr, mt.desc, mt.ptr, rt.ptr)
    sync(handle)
    return yt.read(), (None if rms else mt.read()), rt.read()


def layer_norm_backward(handle, x, dy, axis, weight, mean, rstd, code, rms=False):
    xt, dyt, dxt = placed(x, code), placed(dy, code), blank(x.shape, code)
    wt = placed(weight, code)
    dwt, dbt = blank(weight.shape, code), blank(weight.shape, code)
    rt = placed(rstd, code)
    if rms:
        size = cnnl.getRmsNormBackwardWorkspaceSize(handle, xt.desc, axis)
        cnnl.rmsNormBackward(handle, axis, xt.desc, xt.ptr, dyt.desc, dyt.ptr, wt.desc, wt.ptr, rt.desc, rt.ptr,
                             None, size, dxt.desc, dxt.ptr, dwt.desc, dwt.ptr, dbt.ptr)
    else:
        mt = placed(mean, code)
        size = cnnl.getLayerNormBackwardWorkspaceSize(handle, xt.desc, axis)
        cnnl.layerNormBackward_v2(handle, xt.desc, xt.ptr, axis, dyt.desc, dyt.ptr, wt.desc, wt.ptr, mt.desc, mt.ptr,
                                  rt.ptr, None, size, dxt.desc, dxt.ptr, dwt.ptr, dbt.ptr)
    sync(handle)
    return dxt.read(), dwt.read(), dbt.read()


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("axis, affine", [(1, True), (2, True), (2, False)])
def test_layer_and_rms_norm_forward(handle, code, rms, axis, affine):
    rng = np.random.default_rng(5)
    x = rounded(rng, (3, 4, 6), code, -3, 3)
    weight = rounded(rng, x.shape[axis:], code, 0.5, 2) if affine else None
    bias = rounded(rng, x.shape[axis:], code) if affine else None
    y, mean, rstd = layer_norm(handle, x, axis, weight, bias, code, rms=rms)
    want, want_mean, want_rstd = rows_reference(x, axis, weight, bias, 1e-5, not rms)
    assert_near(y, want, code, scale=8)
    assert_near(rstd, want_rstd, code, scale=4)
    if not rms:
        assert_near(mean, want_mean, code)


@pytest.mark.parametrize("rms", [False, True])
def test_layer_and_rms_norm_backward_are_the_gradients(handle, rms):
    rng = np.random.default_rng(6)
    x, dy = rng.standard_normal((3, 2, 5)), rng.standard_normal((3, 2, 5))
    weight, bias = rng.uniform(0.5, 2, (2, 5)), rng.standard_normal((2, 5))
    _, mean, rstd = layer_norm(handle, x, 1, weight, bias, F64, rms=rms)
    dx, dw, db = layer_norm_backward(handle, x, dy, 1, weight, mean, rstd, F64, rms=rms)
    loss = lambda xx, ww, bb: np.sum(layer_norm(handle, xx, 1, ww, bb, F64, rms=rms)[0] * dy)  # noqa: E731
    directional_check(lambda xx: loss(xx, weight, bias), x, dx, rng)
    directional_check(lambda ww: loss(x, ww, bias), weight, dw, rng)
    directional_check(lambda bb: loss(x, weight, bb), bias, db, rng)


@pytest.mark.parametrize("code", [F32, F16, BF16])
def test_layer_norm_backward_dtypes(handle, code):
    rng = np.random.default_rng(7)
    x, dy = rounded(rng, (4, 8), code), rounded(rng, (4, 8), code)
    weight = rounded(rng, (8,), code, 0.5, 2)
    _, mean, rstd = rows_reference(x, 1, None, None, 1e-5, True)
    mean, rstd = rounded_to(mean, code), rounded_to(rstd, code)
    want = layer_norm_backward(handle, x, dy, 1, weight, mean, rstd, F64)
    for got, expected in zip(layer_norm_backward(handle, x, dy, 1, weight, mean, rstd, code), want):
        assert_near(got, expected, code, scale=16)


@settings(max_examples=15)
@given(dims=st.lists(st.integers(1, 5), min_size=2, max_size=4), seed=st.integers(0, 99), data=st.data())
def test_layer_norm_property(dims, seed, data):
    handle = cnnl.create()
    axis = data.draw(st.integers(0, len(dims) - 1))
    x = np.random.default_rng(seed).normal(0, 3, dims)
    assert_near(layer_norm(handle, x, axis, None, None, F32)[0], rows_reference(x, axis, None, None, 1e-5, True)[0],
                F32, scale=64)


@pytest.mark.mlusim_sanitize(exclude="initcheck")  # runs the op on unwritten tensors: only its checks matter
def test_layer_norm_rejects(handle):
    x, y = blank((2, 3, 4), F32), blank((2, 3, 4), F32)
    stats, w = blank((6,), F32), blank((4,), F32)
    args = [handle, x.desc, x.ptr, 2, w.desc, w.ptr, w.ptr, 1e-5, None, 0, y.desc, y.ptr, stats.desc, stats.ptr,
            stats.ptr]
    cnnl.layerNormForward(*args)
    for position, value, arg in [(3, 3, "axis"), (4, blank((3, 4), F32).desc, "wb_desc"),
                                 (12, blank((2,), F32).desc, "mean_rstd_desc"), (7, -1.0, "eps"),
                                 (10, blank((2, 3, 5), F32).desc, "y_desc")]:
        bad = list(args)
        bad[position] = value
        with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg=arg):
            cnnl.layerNormForward(*bad)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="mean_rstd_desc"):
        cnnl.rmsNormBackward(handle, 2, x.desc, x.ptr, y.desc, y.ptr, w.desc, w.ptr, blank((7,), F32).desc,
                             stats.ptr, None, 0, x.desc, x.ptr, None, None, None)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="diff_wb_desc"):
        cnnl.rmsNormBackward(handle, 2, x.desc, x.ptr, y.desc, y.ptr, w.desc, w.ptr, blank((6,), F32).desc,
                             stats.ptr, None, 0, x.desc, x.ptr, blank((5,), F32).desc, None, None)


# ---- group norm --------------------------------------------------------------------------------------------------

def group_reference(x, groups, weight, bias, eps):
    n, c = x.shape[:2]
    rows = x.reshape(n, groups, -1)
    mean, var = rows.mean(-1, keepdims=True), rows.var(-1, keepdims=True)
    normalised = ((rows - mean) / np.sqrt(var + eps)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return normalised * weight.reshape(shape) + bias.reshape(shape), mean.reshape(-1), 1 / np.sqrt(var.reshape(-1)
                                                                                                     + eps)


def group_norm(handle, x, groups, weight, bias, code, eps=1e-5):
    xt, yt = placed(x, code, NCHW if x.ndim == 4 else ARRAY), blank(x.shape, code, NCHW if x.ndim == 4 else ARRAY)
    wt, bt = placed(weight, code), placed(bias, code)
    mt, rt = blank((x.shape[0] * groups,), code), blank((x.shape[0] * groups,), code)
    size = cnnl.getGroupNormForwardWorkspaceSize(handle, groups, xt.desc)
    cnnl.groupNormForward_v3(handle, eps, groups, xt.desc, xt.ptr, wt.desc, wt.ptr, bt.ptr, None, size, yt.desc,
                             yt.ptr, mt.desc, mt.ptr, rt.ptr)
    sync(handle)
    return yt.read(), mt.read(), rt.read()


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("shape, groups", [((2, 6, 3, 4), 3), ((3, 4, 5), 2), ((2, 4, 2, 2), 4)])
def test_group_norm_forward(handle, code, shape, groups):
    rng = np.random.default_rng(8)
    x = rounded(rng, shape, code, -3, 3)
    weight, bias = rounded(rng, shape[1:2], code, 0.5, 2), rounded(rng, shape[1:2], code)
    y, mean, rstd = group_norm(handle, x, groups, weight, bias, code)
    want, want_mean, want_rstd = group_reference(x, groups, weight, bias, 1e-5)
    assert_near(y, want, code, scale=8)
    assert_near(mean, want_mean, code)
    assert_near(rstd, want_rstd, code, scale=4)


def test_group_norm_backward_is_the_gradient(handle):
    rng = np.random.default_rng(9)
    x, dy = rng.standard_normal((2, 6, 2, 3)), rng.standard_normal((2, 6, 2, 3))
    weight, bias = rng.uniform(0.5, 2, 6), rng.standard_normal(6)
    _, mean, rstd = group_norm(handle, x, 3, weight, bias, F64)
    ts = [placed(v, F64, NCHW) for v in (x, dy)]
    wt, mt, rt = placed(weight, F64), placed(mean, F64), placed(rstd, F64)
    dxt, dwt, dbt = blank(x.shape, F64, NCHW), blank((6,), F64), blank((6,), F64)
    cnnl.groupNormBackward(handle, ts[0].desc, ts[0].ptr, ts[1].desc, ts[1].ptr, wt.desc, wt.ptr, mt.desc, mt.ptr,
                           rt.desc, rt.ptr, 3, dxt.desc, dxt.ptr, dwt.desc, dwt.ptr, dbt.desc, dbt.ptr, None,
                           cnnl.getGroupNormBackwardWorkspaceSize(handle, 12))
    sync(handle)
    loss = lambda xx, ww, bb: np.sum(group_norm(handle, xx, 3, ww, bb, F64)[0] * dy)  # noqa: E731
    directional_check(lambda xx: loss(xx, weight, bias), x, dxt.read(), rng)
    directional_check(lambda ww: loss(x, ww, bias), weight, dwt.read(), rng)
    directional_check(lambda bb: loss(x, weight, bb), bias, dbt.read(), rng)


def test_group_norm_rejects(handle):
    x, w, s = blank((2, 6, 3), F32), blank((6,), F32), blank((4,), F32)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="num_groups"):
        cnnl.groupNormForward_v3(handle, 1e-5, 4, x.desc, x.ptr, w.desc, w.ptr, w.ptr, None, 0, x.desc, x.ptr,
                                 s.desc, s.ptr, s.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="mean_rstd_desc"):
        cnnl.groupNormForward_v3(handle, 1e-5, 3, x.desc, x.ptr, w.desc, w.ptr, w.ptr, None, 0, x.desc, x.ptr,
                                 s.desc, s.ptr, s.ptr)
    nhwc = blank((2, 3, 3, 6), F32, NHWC)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="x_desc"):
        cnnl.getGroupNormForwardWorkspaceSize(handle, 3, nhwc.desc)


def test_group_norm_backward_needs_statistics(handle):
    x, w, s = blank((2, 6, 3), F32), blank((6,), F32), blank((6,), F32)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="mean_desc"):
        cnnl.groupNormBackward(handle, x.desc, x.ptr, x.desc, x.ptr, w.desc, w.ptr, None, None, s.desc, s.ptr, 3,
                               x.desc, x.ptr, None, None, None, None, None, 0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="rstd_desc"):
        cnnl.groupNormBackward(handle, x.desc, x.ptr, x.desc, x.ptr, w.desc, w.ptr, s.desc, s.ptr,
                               blank((5,), F32).desc, s.ptr, 3, x.desc, x.ptr, None, None, None, None, None, 0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="diff_x_desc"):
        cnnl.layerNormBackward_v2(handle, x.desc, x.ptr, 1, x.desc, x.ptr, None, None, s.desc, s.ptr, s.ptr, None, 0,
                                  blank((2, 6, 4), F32).desc, x.ptr, None, None)


# ---- rows of specials and extremes against torch CPU --------------------------------------------------------------

_TORCH_TYPES = {F32: "float32", F16: "float16", BF16: "bfloat16"}
#: (a huge value, a value whose square underflows float32) of each storage type
_EXTREMES = {F32: (1e18, 1e-23), F16: (60000.0, 6e-8), BF16: (1e18, 1e-23)}


@st.composite
def special_rows(draw):
    """(values (float64), code, rows, cols): normal rows with NaN, +-inf, a huge value (without squares that
    overflow float32: torch's NaN or 0 there depends on the row length), rows of values whose squares underflow
    float32, or signed zeros."""
    code = draw(st.sampled_from([F32, F16, BF16]))
    rows, cols = draw(st.sampled_from([(4, 6), (3, 40), (2, 300)]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = rng.uniform(-3, 3, (rows, cols))
    huge, tiny = _EXTREMES[code]
    kind = draw(st.sampled_from(["specials", "huge", "tiny", "zeros"]))
    for r in range(rows):
        where = rng.choice(cols // 2, size=draw(st.integers(0, 3)), replace=False)
        if kind == "specials":
            values[r, where] = rng.choice([np.nan, np.inf, -np.inf], where.size)
        elif kind == "huge" and where.size:
            values[r, where[0]] = huge * rng.choice([-1, 1])
        elif kind == "tiny":
            values[r] = rng.uniform(-1, 1, cols) * tiny
        elif kind == "zeros":
            values[r] = np.where(rng.random(cols) < 0.5, 0.0, -0.0)
    return values, code, rows, cols


def _agree(got, want, code, what, mean=False):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if mean:  # torch's vectorised running mean lets an infinity through when it comes last in its lane, else NaN
        want = np.where(np.isinf(want) & np.isnan(got), np.nan, want)
    assert np.array_equal(np.isnan(got), np.isnan(want)), f"{what}: NaN positions\n{got}\n{want}"
    assert np.array_equal(got[np.isinf(want)], want[np.isinf(want)]), f"{what}: infinities\n{got}\n{want}"
    fine = np.isfinite(want)
    assert_near(got[fine], want[fine], code, scale=np.abs(want[fine]) + 1)


@settings(max_examples=40, deadline=None)
@given(special_rows(), st.sampled_from(["layer", "rms", "group"]))
def test_rows_of_specials_and_extremes_normalise_as_torch_does(problem, norm):
    """Layer, RMS and group norm of rows with NaN, +-inf, a huge value, squares that underflow, signed zeros, in
    float32, half and bfloat16, against torch CPU: y, and the mean and rstd that the backward reads (the mean of a
    row holding an infinity is NaN, as torch's running mean makes it, not the sum's inf)."""
    import torch

    values, code, rows, cols = problem
    handle = cnnl.create()
    stored = rounded_to(values, code)
    source = torch.from_numpy(stored).to(getattr(torch, _TORCH_TYPES[code]))
    if norm == "group":
        x = stored.reshape(rows, 2, cols // 2)
        got = group_norm(handle, x, 2, np.ones(2), np.zeros(2), code)
        want = torch.native_group_norm(source.reshape(rows, 2, cols // 2), None, None, rows, 2, cols // 2, 2, 1e-5)
    elif norm == "layer":
        got = layer_norm(handle, stored, 1, None, None, code)
        want = torch.native_layer_norm(source, [cols], None, None, 1e-5)
    else:
        y, _, rstd = layer_norm(handle, stored, 1, None, None, code, rms=True)
        got = (y, rstd)
        mean_square = source.float().pow(2).mean(1, keepdim=True)
        want = ((source.float() * torch.rsqrt(mean_square + 1e-5)).to(source.dtype), torch.rsqrt(mean_square + 1e-5))
    for index, (mine, theirs) in enumerate(zip((g for g in got if g is not None), want)):
        _agree(mine.reshape(-1), theirs.float().numpy().reshape(-1), code, f"{norm} output {index}",
               mean=index == 1 and norm != "rms")
