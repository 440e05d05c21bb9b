"""Synchronised batch norm (what DDP's SyncBatchNorm calls on each device): cnnlGetSyncBatchNormStatsWorkspaceSize,
cnnlSyncBatchNormStats_v2, cnnlSyncBatchNormGatherStatsWithCounts, cnnlSyncBatchNormElemt,
cnnlGetSyncBatchnormBackwardReduceWorkspaceSize, cnnlSyncBatchnormBackwardReduce_v2,
cnnlSyncBatchNormBackwardElemtV2.

Argument orders from DeepLink DIOPI's Cambricon backend (functions/SynBatchNorm.cpp). x, y, dy, dx
are 2-D to 5-D (DIOPI passes NC, NLC, NHWC, NDHWC); the channel axis is 1 for NCHW/NCDHW layouts and the last
otherwise. Per-channel tensors (mean, invstd, weight, bias, running statistics, sums) are [C] of any float type;
the gathered statistics are [W, C] with counts [W] (float or integer; the backward's count tensor is INT32 or
INT64 in DIOPI). The cross-device exchange itself (allGather of the statistics, allReduce of the sums) is cncl's.
Numerics in `cnnl.kernels.sync_batch_norm`. No workspace is needed.
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault
from mlusim.validate import as_number

from .. import checks
from ..handle import handle_arg
from ..kernels import sync_batch_norm as K
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from ..views import pointer_value
from . import nn_common as N
from .batch_norm import _eps, _input

_COUNT_TYPES = N.NN_FLOATS + N.INDEX_TYPES


def _channels(op, desc, arg, x: TensorDescriptor) -> TensorDescriptor:
    """A [C] float tensor of x's channels."""
    target = tensor_arg(desc, arg)
    N.float_tensor(target, arg, op)
    channels = x.dims[N.channel_axis(x)]
    if target.dims != (channels,):
        raise ArgumentFault(f"dims {list(target.dims)}; expected [{channels}] (one per channel)", arg)
    return target


def _optional_channels(op, desc, pointer, arg, x):
    if desc is None or not pointer_value(pointer, arg[:-5]):
        return None
    return _channels(op, desc, arg, x)


def _like(x: TensorDescriptor, x_arg, desc, arg) -> TensorDescriptor:
    target = tensor_arg(desc, arg)
    checks.same_dtype(x, x_arg, (target, arg))
    checks.same_shape(x, x_arg, (target, arg))
    if target.layout != x.layout:
        raise ArgumentFault(f"layout {target.layout} differs from {x_arg}'s {x.layout}", arg)
    return target


@api("cnnlGetSyncBatchNormStatsWorkspaceSize")
def getSyncBatchNormStatsWorkspaceSize(handle, x_desc) -> int:
    """cnnlGetSyncBatchNormStatsWorkspaceSize(handle, x_desc, &size) -> size (0)."""
    handle_arg(handle)
    _input("cnnlSyncBatchNormStats_v2", x_desc)
    return 0


@api("cnnlSyncBatchNormStats_v2")
def syncBatchNormStats_v2(handle, x_desc, x, workspace, workspace_size, eps, mean_desc, mean, invstd_desc,
                          invstd) -> None:
    """cnnlSyncBatchNormStats_v2(handle, x_desc, x, workspace, workspace_size, eps, mean_desc, mean, invstd_desc,
    invstd): this device's per-channel mean and 1 / sqrt(biased variance + eps)."""
    op = "cnnlSyncBatchNormStats_v2"
    with OpCall(op, handle) as call:
        xd = _input(op, x_desc)
        md, sd = _channels(op, mean_desc, "mean_desc", xd), _channels(op, invstd_desc, "invstd_desc", xd)
        epsilon = _eps(eps)
        xv = call.input(xd, x, "x")
        mv, sv = call.output(md, mean, "mean"), call.output(sd, invstd, "invstd")
        call.workspace(workspace, workspace_size, 0, "cnnlGetSyncBatchNormStatsWorkspaceSize")
        axis = N.channel_axis(xd)
        call.submit(lambda: K.stats(xv, axis, epsilon, mv, sv), flops=3 * xd.size, dtype=xd.dtype)


@api("cnnlSyncBatchNormGatherStatsWithCounts")
def syncBatchNormGatherStatsWithCounts(handle, mean_all_desc, mean_all, invstd_all_desc, invstd_all,
                                       moving_mean_desc, moving_mean, moving_var_desc, moving_var, momentum, eps,
                                       count_all_desc, count_all, mean_desc, mean, invstd_desc, invstd) -> None:
    """cnnlSyncBatchNormGatherStatsWithCounts(handle, mean_all_desc, mean_all, invstd_all_desc, invstd_all,
    moving_mean_desc, moving_mean, moving_var_desc, moving_var, momentum, eps, count_all_desc, count_all, mean_desc,
    mean, invstd_desc, invstd): the global statistics from every device's [W, C] mean and invstd and its [W]
    element count; the moving (running) statistics are updated when given (either may be NULL)."""
    op = "cnnlSyncBatchNormGatherStatsWithCounts"
    with OpCall(op, handle) as call:
        ma, ia = tensor_arg(mean_all_desc, "mean_all_desc"), tensor_arg(invstd_all_desc, "invstd_all_desc")
        N.float_tensor(ma, "mean_all_desc", op)
        N.float_tensor(ia, "invstd_all_desc", op)
        if len(ma.dims) != 2:
            raise ArgumentFault(f"dims {list(ma.dims)}; the gathered statistics are [W, C]", "mean_all_desc")
        checks.same_shape(ma, "mean_all_desc", (ia, "invstd_all_desc"))
        devices, channels = ma.dims
        cd = tensor_arg(count_all_desc, "count_all_desc")
        checks.supported_dtype(cd, "count_all_desc", _COUNT_TYPES, op)
        N.elements_match(cd, "count_all_desc", devices, "one count per device")
        outputs = []
        for desc, arg in ((mean_desc, "mean_desc"), (invstd_desc, "invstd_desc")):
            target = tensor_arg(desc, arg)
            N.float_tensor(target, arg, op)
            N.elements_match(target, arg, channels, "one value per channel")
            outputs.append(target)
        running = []
        for desc, pointer, arg in ((moving_mean_desc, moving_mean, "moving_mean_desc"),
                                   (moving_var_desc, moving_var, "moving_var_desc")):
            if desc is None or not pointer_value(pointer, arg[:-5]):
                running.append(None)
                continue
            target = tensor_arg(desc, arg)
            N.float_tensor(target, arg, op)
            N.elements_match(target, arg, channels, "one value per channel")
            running.append((target, pointer, arg[:-5]))
        rate, epsilon = float(as_number(momentum, "momentum")), _eps(eps)
        mav, iav, cv = call.input(ma, mean_all, "mean_all"), call.input(ia, invstd_all, "invstd_all"), call.input(
            cd, count_all, "count_all")
        mv, sv = call.output(outputs[0], mean, "mean"), call.output(outputs[1], invstd, "invstd")
        rv = [None if r is None else call.output(r[0], r[1], r[2], read=True) for r in running]
        call.submit(lambda: K.gather_stats(mav, iav, cv, rate, epsilon, mv, sv, *rv), flops=8 * ma.size,
                    dtype=ma.dtype)


@api("cnnlSyncBatchNormElemt")
def syncBatchNormElemt(handle, x_desc, x, mean_desc, mean, invstd_desc, invstd, filter_desc, filter, bias_desc,
                       bias, y_desc, y) -> None:
    """cnnlSyncBatchNormElemt(handle, x_desc, x, mean_desc, mean, invstd_desc, invstd, filter_desc, filter,
    bias_desc, bias, y_desc, y): y = (x - mean) * invstd * filter + bias (filter and bias may be NULL)."""
    op = "cnnlSyncBatchNormElemt"
    with OpCall(op, handle) as call:
        xd = _input(op, x_desc)
        yd = _like(xd, "x_desc", y_desc, "y_desc")
        md, sd = _channels(op, mean_desc, "mean_desc", xd), _channels(op, invstd_desc, "invstd_desc", xd)
        wd = _optional_channels(op, filter_desc, filter, "filter_desc", xd)
        bd = _optional_channels(op, bias_desc, bias, "bias_desc", xd)
        xv, mv, sv = call.input(xd, x, "x"), call.input(md, mean, "mean"), call.input(sd, invstd, "invstd")
        wv = call.input(wd, filter, "filter") if wd is not None else None
        bv = call.input(bd, bias, "bias") if bd is not None else None
        yv = call.output(yd, y, "y")
        axis = N.channel_axis(xd)
        call.submit(lambda: K.elemt(xv, mv, sv, wv, bv, yv, axis), flops=2 * xd.size, dtype=xd.dtype)


@api("cnnlGetSyncBatchnormBackwardReduceWorkspaceSize")
def getSyncBatchnormBackwardReduceWorkspaceSize(handle, x_desc) -> int:
    """cnnlGetSyncBatchnormBackwardReduceWorkspaceSize(handle, x_desc, &size) -> size (0)."""
    handle_arg(handle)
    _input("cnnlSyncBatchnormBackwardReduce_v2", x_desc)
    return 0


@api("cnnlSyncBatchnormBackwardReduce_v2")
def syncBatchnormBackwardReduce_v2(handle, desc_dz, dz, desc_x, x, desc_mean, mean, desc_ivstd, ivstd, workspace,
                                   workspace_size, desc_dfilter, dfilter, desc_dbias, dbias, desc_sum_dy, sum_dy,
                                   desc_sum_dy_xmu, sum_dy_xmu, needs_input_grad0, needs_input_grad1,
                                   needs_input_grad2) -> None:
    """cnnlSyncBatchnormBackwardReduce_v2(handle, desc_dz, dz, desc_x, x, desc_mean, mean, desc_ivstd, ivstd,
    workspace, workspace_size, desc_dfilter, dfilter, desc_dbias, dbias, desc_sum_dy, sum_dy, desc_sum_dy_xmu,
    sum_dy_xmu, needs_input_grad0, needs_input_grad1, needs_input_grad2): this device's sum_dy and sum_dy_xmu
    (written when needs_input_grad0), dfilter = sum_dy_xmu * invstd (needs_input_grad1) and dbias = sum_dy
    (needs_input_grad2). Outputs not asked for may be NULL."""
    op = "cnnlSyncBatchnormBackwardReduce_v2"
    with OpCall(op, handle) as call:
        xd = _input(op, desc_x, "desc_x")
        dzd = _like(xd, "desc_x", desc_dz, "desc_dz")
        md, sd = _channels(op, desc_mean, "desc_mean", xd), _channels(op, desc_ivstd, "desc_ivstd", xd)
        wanted = [checks.flag(v, f"needs_input_grad{i}") for i, v in enumerate((needs_input_grad0, needs_input_grad1,
                                                                                needs_input_grad2))]
        outputs = {}
        for name, desc, pointer, needed in (("sum_dy", desc_sum_dy, sum_dy, wanted[0]),
                                            ("sum_dy_xmu", desc_sum_dy_xmu, sum_dy_xmu, wanted[0]),
                                            ("dfilter", desc_dfilter, dfilter, wanted[1]),
                                            ("dbias", desc_dbias, dbias, wanted[2])):
            outputs[name] = (_channels(op, desc, f"desc_{name}", xd), pointer) if needed else None
        views = [call.input(dzd, dz, "dz"), call.input(xd, x, "x"), call.input(md, mean, "mean"),
                 call.input(sd, ivstd, "ivstd")]
        results = {name: None if spec is None else call.output(spec[0], spec[1], name)
                   for name, spec in outputs.items()}
        call.workspace(workspace, workspace_size, 0, "cnnlGetSyncBatchnormBackwardReduceWorkspaceSize")
        axis = N.channel_axis(xd)
        call.submit(lambda: K.backward_reduce(*views, axis, **{"sum_dy": results["sum_dy"],
                                                                "sum_dy_xmu": results["sum_dy_xmu"],
                                                                "dweight": results["dfilter"],
                                                                "dbias": results["dbias"]}),
                    flops=3 * xd.size, dtype=xd.dtype)


@api("cnnlSyncBatchNormBackwardElemtV2")
def syncBatchNormBackwardElemtV2(handle, diff_y_desc, diff_y, x_desc, x, mean_desc, mean, invstd_desc, invstd,
                                 filter_desc, filter, sum_dy_desc, sum_dy, sum_dy_xmu_desc, sum_dy_xmu, count_desc,
                                 count, diff_x_desc, diff_x) -> None:
    """cnnlSyncBatchNormBackwardElemtV2(handle, diff_y_desc, diff_y, x_desc, x, mean_desc, mean, invstd_desc,
    invstd, filter_desc, filter, sum_dy_desc, sum_dy, sum_dy_xmu_desc, sum_dy_xmu, count_desc, count, diff_x_desc,
    diff_x): diff_x from the globally reduced sums; `count` holds every device's element count (filter may be
    NULL)."""
    op = "cnnlSyncBatchNormBackwardElemtV2"
    with OpCall(op, handle) as call:
        xd = _input(op, x_desc)
        dyd = _like(xd, "x_desc", diff_y_desc, "diff_y_desc")
        dxd = _like(xd, "x_desc", diff_x_desc, "diff_x_desc")
        per_channel = [_channels(op, d, a, xd) for d, a in ((mean_desc, "mean_desc"), (invstd_desc, "invstd_desc"))]
        wd = _optional_channels(op, filter_desc, filter, "filter_desc", xd)
        sums = [_channels(op, d, a, xd) for d, a in ((sum_dy_desc, "sum_dy_desc"),
                                                     (sum_dy_xmu_desc, "sum_dy_xmu_desc"))]
        cd = tensor_arg(count_desc, "count_desc")
        checks.supported_dtype(cd, "count_desc", _COUNT_TYPES, op)
        dyv, xv = call.input(dyd, diff_y, "diff_y"), call.input(xd, x, "x")
        mv, sv = call.input(per_channel[0], mean, "mean"), call.input(per_channel[1], invstd, "invstd")
        wv = call.input(wd, filter, "filter") if wd is not None else None
        s1, s2 = call.input(sums[0], sum_dy, "sum_dy"), call.input(sums[1], sum_dy_xmu, "sum_dy_xmu")
        cv = call.input(cd, count, "count")
        dxv = call.output(dxd, diff_x, "diff_x")
        axis = N.channel_axis(xd)
        call.submit(lambda: K.backward_elemt(dyv, xv, mv, sv, wv, s1, s2, cv, dxv, axis), flops=5 * xd.size,
                    dtype=xd.dtype)
