"""Batch normalisation: cnnlBatchNormForwardTraining(_v2), cnnlBatchNormForwardInference,
cnnlBatchNormBackward(_v2) and the workspace queries.

x is 2-D to 5-D; the channel axis is 1 for NCHW/NCDHW layouts and the last axis otherwise (NHWC, NDHWC, NLC, NC,
ARRAY). weight, bias, running mean/var and the saved mean/invstd are 1-D [C] tensors described by `wbmv_desc`,
which may be a wider float type than x (e.g. FLOAT for HALF data). Training: batch statistics (biased variance in
the normalisation); running_x = (1 - momentum) * running_x + momentum * batch_x with the unbiased variance; saved
outputs are the batch mean and 1 / sqrt(var + eps). The _v2 forms accept an IDENTITY activation descriptor (or
NULL), mode SPATIAL or SPATIAL_PERSISTENT and bnOps BN; other fusions are NOT_SUPPORTED. No workspace is needed.
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.validate import as_enum, as_number

from .. import checks
from .. import enums as E
from ..descriptors import live
from ..handle import handle_arg
from ..kernels import normalization as K
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from ..views import is_null
from . import nn_common as N
from .activation import ActivationDescriptor

_FLOPS_PER_ELEMENT = 8


def _input(op, x_desc, arg="x_desc") -> TensorDescriptor:
    x = tensor_arg(x_desc, arg)
    N.float_tensor(x, arg, op)
    if not 2 <= len(x.dims) <= 5:
        raise ArgumentFault(f"{len(x.dims)} dims; batch norm takes 2 to 5", arg)
    return x


def _params(op, wbmv_desc, x: TensorDescriptor) -> TensorDescriptor:
    params = tensor_arg(wbmv_desc, "wbmv_desc")
    N.float_tensor(params, "wbmv_desc", op)
    channels = x.dims[N.channel_axis(x)]
    if params.dims != (channels,):
        raise ArgumentFault(f"dims {list(params.dims)}; expected [{channels}] (one per channel)", "wbmv_desc")
    return params


def _eps(value) -> float:
    eps = float(as_number(value, "eps"))
    if not eps >= 0:
        raise ArgumentFault(f"eps {eps} must be >= 0", "eps")
    return eps


def _fusion(activation_desc, mode, bn_ops) -> None:
    """The _v2 fusion arguments: only plain batch norm over spatial positions is supported."""
    if activation_desc is not None:
        act = live(activation_desc, ActivationDescriptor, "activation_desc")
        if act.is_set and act.mode != E.CNNL_ACTIVATION_IDENTITY:
            raise NotSupportedFault("fused activations are not supported (use IDENTITY or NULL)", "activation_desc")
    if as_enum(mode, "mode", E.BATCHNORM_MODES, "cnnlBatchNormMode_t") == E.CNNL_BATCHNORM_PER_ACTIVATION:
        raise NotSupportedFault("CNNL_BATCHNORM_PER_ACTIVATION is not supported", "mode")
    if as_enum(bn_ops, "bnOps", E.BATCHNORM_OPS, "cnnlBatchNormOps_t") != E.CNNL_BATCHNORM_OPS_BN:
        raise NotSupportedFault("fused add/activation batch norm ops are not supported", "bnOps")


def _no_extra(desc, pointer, arg: str) -> None:
    if desc is not None or not is_null(pointer):
        raise NotSupportedFault(f"'{arg}' (a fused residual input) is not supported; pass NULL", arg)


@api("cnnlGetBatchNormForwardWorkspaceSize")
def getBatchNormForwardWorkspaceSize(handle, x_desc) -> int:
    """cnnlGetBatchNormForwardWorkspaceSize(handle, x_desc, &size) -> size (0: the statistics need no scratch)."""
    handle_arg(handle)
    _input("cnnlBatchNormForwardTraining", x_desc)
    return 0


@api("cnnlGetBatchNormBackwardWorkspaceSize")
def getBatchNormBackwardWorkspaceSize(handle, x_desc) -> int:
    """cnnlGetBatchNormBackwardWorkspaceSize(handle, x_desc, &size) -> size (0)."""
    handle_arg(handle)
    _input("cnnlBatchNormBackward", x_desc)
    return 0


def _training(c_name, handle, alpha, beta, x_desc, x, wbmv_desc, weight, bias, mov_mean, mov_var, eps, momentum,
              y_desc, y, save_mean, save_std, workspace=None, workspace_size=0) -> None:
    with OpCall(c_name, handle) as call:
        xd = _input(c_name, x_desc)
        yd = tensor_arg(y_desc, "y_desc")
        checks.same_dtype(xd, "x_desc", (yd, "y_desc"))
        checks.same_shape(xd, "x_desc", (yd, "y_desc"))
        pd = _params(c_name, wbmv_desc, xd)
        epsilon, rate = _eps(eps), float(as_number(momentum, "momentum"))
        scale, accumulate = checks.scalar(alpha, "alpha", 1, xd.dtype), checks.scalar(beta, "beta", 0, xd.dtype)
        xv = call.input(xd, x, "x")
        wv, bv = call.input(pd, weight, "weight"), call.input(pd, bias, "bias")
        stats = [call.output(pd, p, a, read=True) if not is_null(p) else None
                 for p, a in ((mov_mean, "mov_mean"), (mov_var, "mov_var"))]
        saved = [call.output(pd, p, a) if not is_null(p) else None
                 for p, a in ((save_mean, "save_mean"), (save_std, "save_std"))]
        yv = call.output(yd, y, "y", read=accumulate != 0)
        call.workspace(workspace, workspace_size, 0, "cnnlGetBatchNormForwardWorkspaceSize")
        axis = N.channel_axis(xd)
        call.submit(lambda: K.batch_norm_training(xv, wv, bv, yv, axis, epsilon, rate, *stats, *saved, scale,
                                                  accumulate), flops=_FLOPS_PER_ELEMENT * xd.size, dtype=xd.dtype)


@api("cnnlBatchNormForwardTraining")
def batchNormForwardTraining(handle, alpha, beta, x_desc, x, wbmv_desc, weight, bias, mov_mean, mov_var, eps,
                             momentum, y_desc, y, save_mean, save_std) -> None:
    """cnnlBatchNormForwardTraining(handle, alpha, beta, x_desc, x, wbmv_desc, weight, bias, mov_mean, mov_var, eps,
    momentum, y_desc, y, save_mean, save_std): y = alpha * bn(x) + beta * y with batch statistics; the running
    statistics (mov_mean, mov_var) are updated and the batch mean and invstd saved (any of the four may be NULL)."""
    _training("cnnlBatchNormForwardTraining", handle, alpha, beta, x_desc, x, wbmv_desc, weight, bias, mov_mean,
              mov_var, eps, momentum, y_desc, y, save_mean, save_std)


@api("cnnlBatchNormForwardTraining_v2")
def batchNormForwardTraining_v2(handle, activation_desc, mode, bnOps, alpha, beta, x_desc, x, z_desc, z, wbmv_desc,
                                weight, bias, mov_mean, mov_var, eps, momentum, y_desc, y, save_mean, save_std,
                                workspace, workspace_size, reserve_space, reserve_space_size) -> None:
    """cnnlBatchNormForwardTraining_v2(handle, activation_desc, mode, bnOps, alpha, beta, x_desc, x, z_desc, z,
    wbmv_desc, weight, bias, mov_mean, mov_var, eps, momentum, y_desc, y, save_mean, save_std, workspace,
    workspace_size, reserve_space, reserve_space_size): as cnnlBatchNormForwardTraining; z must be NULL and the
    reserve space is not used."""
    _fusion(activation_desc, mode, bnOps)
    _no_extra(z_desc, z, "z")
    _training("cnnlBatchNormForwardTraining_v2", handle, alpha, beta, x_desc, x, wbmv_desc, weight, bias, mov_mean,
              mov_var, eps, momentum, y_desc, y, save_mean, save_std, workspace, workspace_size)


@api("cnnlBatchNormForwardInference")
def batchNormForwardInference(handle, alpha, beta, x_desc, x, wbmv_desc, weight, bias, mov_mean, mov_var, eps,
                              z_desc, z) -> None:
    """cnnlBatchNormForwardInference(handle, alpha, beta, x_desc, x, wbmv_desc, weight, bias, mov_mean, mov_var,
    eps, z_desc, z): z = alpha * ((x - mov_mean) / sqrt(mov_var + eps) * weight + bias) + beta * z."""
    with OpCall("cnnlBatchNormForwardInference", handle) as call:
        xd = _input("cnnlBatchNormForwardInference", x_desc)
        zd = tensor_arg(z_desc, "z_desc")
        checks.same_dtype(xd, "x_desc", (zd, "z_desc"))
        checks.same_shape(xd, "x_desc", (zd, "z_desc"))
        pd = _params("cnnlBatchNormForwardInference", wbmv_desc, xd)
        epsilon = _eps(eps)
        scale, accumulate = checks.scalar(alpha, "alpha", 1, xd.dtype), checks.scalar(beta, "beta", 0, xd.dtype)
        xv = call.input(xd, x, "x")
        params = [call.input(pd, p, a) for p, a in ((weight, "weight"), (bias, "bias"), (mov_mean, "mov_mean"),
                                                    (mov_var, "mov_var"))]
        zv = call.output(zd, z, "z", read=accumulate != 0)
        axis = N.channel_axis(xd)
        call.submit(lambda: K.batch_norm_inference(xv, *params, zv, axis, epsilon, scale, accumulate),
                    flops=2 * xd.size, dtype=xd.dtype)


def _backward(c_name, handle, alphas, param_alphas, x_desc, x, dy_desc, dy, wbmv_desc, weight, saved_mean,
              saved_invstd, eps, dx_desc, dx, dweight, dbias, workspace=None, workspace_size=0) -> None:
    with OpCall(c_name, handle) as call:
        xd = _input(c_name, x_desc)
        dyd, dxd = tensor_arg(dy_desc, "diff_y_desc"), tensor_arg(dx_desc, "diff_x_desc")
        checks.same_dtype(xd, "x_desc", (dyd, "diff_y_desc"), (dxd, "diff_x_desc"))
        checks.same_shape(xd, "x_desc", (dyd, "diff_y_desc"), (dxd, "diff_x_desc"))
        pd = _params(c_name, wbmv_desc, xd)
        _eps(eps)
        data = tuple(checks.scalar(v, a, d, xd.dtype) for v, a, d in zip(alphas, ("alpha_data_diff",
                                                                               "beta_data_diff"), (1, 0)))
        param = tuple(checks.scalar(v, a, d, pd.dtype) for v, a, d in zip(param_alphas, ("alpha_param_diff",
                                                                                       "beta_param_diff"), (1, 0)))
        xv, dyv = call.input(xd, x, "x"), call.input(dyd, dy, "diff_y")
        wv = call.input(pd, weight, "weight")
        mean, invstd = call.input(pd, saved_mean, "saved_mean"), call.input(pd, saved_invstd, "saved_invstd")
        dxv = call.output(dxd, dx, "diff_x", read=data[1] != 0)
        grads = [call.output(pd, p, a, read=param[1] != 0) if not is_null(p) else None
                 for p, a in ((dweight, "diff_weight"), (dbias, "diff_bias"))]
        call.workspace(workspace, workspace_size, 0, "cnnlGetBatchNormBackwardWorkspaceSize")
        axis = N.channel_axis(xd)
        call.submit(lambda: K.batch_norm_backward(xv, dyv, wv, mean, invstd, dxv, *grads, axis, data, param),
                    flops=_FLOPS_PER_ELEMENT * xd.size, dtype=xd.dtype)


@api("cnnlBatchNormBackward")
def batchNormBackward(handle, alpha_data_diff, beta_data_diff, alpha_param_diff, beta_param_diff, x_desc, x,
                      diff_z_desc, diff_z, wbmv_desc, weight, saved_mean, saved_invstd, eps, diff_x_desc, diff_x,
                      diff_weight, diff_bias) -> None:
    """cnnlBatchNormBackward(handle, alpha_data_diff, beta_data_diff, alpha_param_diff, beta_param_diff, x_desc, x,
    diff_z_desc, diff_z, wbmv_desc, weight, saved_mean, saved_invstd, eps, diff_x_desc, diff_x, diff_weight,
    diff_bias): the training-mode gradients from the saved batch statistics; diff_x = alpha_data * grad + beta_data
    * diff_x, likewise the parameter gradients with alpha_param/beta_param (diff_weight, diff_bias may be NULL)."""
    _backward("cnnlBatchNormBackward", handle, (alpha_data_diff, beta_data_diff), (alpha_param_diff,
              beta_param_diff), x_desc, x, diff_z_desc, diff_z, wbmv_desc, weight, saved_mean, saved_invstd, eps,
              diff_x_desc, diff_x, diff_weight, diff_bias)


@api("cnnlBatchNormBackward_v2")
def batchNormBackward_v2(handle, activation_desc, mode, bnOps, alpha_data_diff, beta_data_diff, alpha_param_diff,
                         beta_param_diff, x_desc, x, y_desc, y, diff_y_desc, diff_y, wbmv_desc, weight, bias,
                         saved_mean, saved_invstd, eps, diff_z_desc, diff_z, diff_x_desc, diff_x, diff_weight,
                         diff_bias, workspace, workspace_size, reserve_space, reserve_space_size) -> None:
    """cnnlBatchNormBackward_v2(handle, activation_desc, mode, bnOps, alpha_data_diff, beta_data_diff,
    alpha_param_diff, beta_param_diff, x_desc, x, y_desc, y, diff_y_desc, diff_y, wbmv_desc, weight, bias,
    saved_mean, saved_invstd, eps, diff_z_desc, diff_z, diff_x_desc, diff_x, diff_weight, diff_bias, workspace,
    workspace_size, reserve_space, reserve_space_size): as cnnlBatchNormBackward; y (used by fused activations)
    is not read and diff_z must be NULL."""
    _fusion(activation_desc, mode, bnOps)
    _no_extra(diff_z_desc, diff_z, "diff_z")
    _backward("cnnlBatchNormBackward_v2", handle, (alpha_data_diff, beta_data_diff), (alpha_param_diff,
              beta_param_diff), x_desc, x, diff_y_desc, diff_y, wbmv_desc, weight, saved_mean, saved_invstd, eps,
              diff_x_desc, diff_x, diff_weight, diff_bias, workspace, workspace_size)
