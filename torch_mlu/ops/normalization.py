"""Batch, layer and group norm over cnnl, forward and backward.

- batch norm: cnnlBatchNormForwardTraining (the running statistics are updated in place on the device, with the
  unbiased batch variance, as torch) / cnnlBatchNormForwardInference, and cnnlBatchNormBackward; the backward of
  an evaluation-mode batch norm (running statistics, no batch terms) is composed of elementwise ops and sums.
  [N, C] inputs are described as arrays (channels last), [N, C, L] as [N, C, L, 1] NCHW, 4-D/5-D as NCHW/NCDHW or,
  channels-last, NHWC/NDHWC. The per-channel parameters share one type (the running statistics', else the
  weight's, else the input's; float32 for half inputs without parameters).
- layer norm: cnnlLayerNormForward / cnnlLayerNormBackward_v2 over the trailing normalized dims.
- group norm: cnnlGroupNormForward_v3 / cnnlGroupNormBackward over (N, C, *spatial).
cnnl refuses a negative eps (torch allows it): the layer and group norm forwards then run composed of native
reductions and elementwise ops (_rows_forward); their backward kernels need no eps (they read mean and rstd).
"""
from __future__ import annotations

import math

import torch

import cnnl

from ._core import FLOATING, aten, check_same_device, desc, fallback, feature_desc, handle, register, workspace
from ._iter import type_name


def _present(*tensors):
    return [t for t in tensors if t is not None]


def _native(*tensors) -> bool:
    return all(t.device.type == "mlu" and t.dtype in FLOATING for t in _present(*tensors))


# ---- batch norm -----------------------------------------------------------------------------------------------------
def _bn_view(t: torch.Tensor):
    """(tensor to describe, its cnnl descriptor) with the channels where cnnl's batch norm expects them."""
    if t.dim() == 2:
        return t, desc(t)
    if t.dim() == 3:
        t = t.unsqueeze(-1)
    fmt = torch.channels_last if t.dim() == 4 else torch.channels_last_3d
    channel_last = t.is_contiguous(memory_format=fmt) and not t.is_contiguous()
    return t, feature_desc(t, channel_last)


def _parameter_dtype(input, weight, running_mean) -> torch.dtype:
    for candidate in (running_mean, weight):
        if candidate is not None:
            return candidate.dtype
    return torch.float32 if input.dtype in (torch.float16, torch.bfloat16) else input.dtype


def _parameter(input, value, dtype, default):
    """A batch norm weight or bias as cnnl takes it: dense, in `dtype`; `default` (1 or 0) per channel when torch
    passes None."""
    if value is None:
        return torch.full((input.shape[1],), default, dtype=dtype, device=input.device)
    return value.to(dtype).contiguous()


def _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """(output, save_mean, save_invstd) of torch's native_batch_norm on mlu."""
    dtype = _parameter_dtype(input, weight, running_mean)
    w, b = _parameter(input, weight, dtype, 1), _parameter(input, bias, dtype, 0)
    channels = input.shape[1]
    out = torch.empty_like(input)
    x, x_desc = _bn_view(input)
    y, y_desc = _bn_view(out)
    params_desc = desc(w)
    h = handle(out)
    if training:
        save_mean = torch.empty(channels, dtype=dtype, device=input.device)
        save_invstd = torch.empty(channels, dtype=dtype, device=input.device)
        if input.numel():
            cnnl.batchNormForwardTraining(h, 1.0, 0.0, x_desc, x.data_ptr(), params_desc, w.data_ptr(), b.data_ptr(),
                                          None if running_mean is None else running_mean.data_ptr(),
                                          None if running_var is None else running_var.data_ptr(), eps, momentum,
                                          y_desc, y.data_ptr(), save_mean.data_ptr(), save_invstd.data_ptr())
        return out, save_mean, save_invstd
    if input.numel():
        cnnl.batchNormForwardInference(h, 1.0, 0.0, x_desc, x.data_ptr(), params_desc, w.data_ptr(), b.data_ptr(),
                                       running_mean.data_ptr(), running_var.data_ptr(), eps, y_desc, y.data_ptr())
    empty = torch.empty(0, dtype=dtype, device=input.device)
    return out, empty, empty.clone()


def _bn_servable(input, weight, bias, running_mean, running_var, training, eps=0.0) -> bool:
    if not _native(input, weight, bias, running_mean, running_var) or not 2 <= input.dim() <= 5 or eps < 0:
        return False
    stats = _present(running_mean, running_var)
    if len(stats) == 1 or (not training and len(stats) != 2):
        return False
    params = _present(weight, bias, running_mean, running_var)
    if any(p.dtype != params[0].dtype for p in params):
        return False
    return all(s.is_contiguous() for s in stats) and input.shape[1] > 0


def _check_parameter_types(weight, bias, running_mean, running_var) -> None:
    """torch_mlu's check of batch norm's parameters (torch's checkAllSameType, its message with the mlu type
    names): weight, bias and the running statistics of one dtype."""
    named = [(position, name, tensor) for position, name, tensor in
             ((2, "weight", weight), (3, "bias", bias), (4, "running_mean", running_mean),
              (5, "running_var", running_var)) if tensor is not None]
    for position, name, tensor in named[1:]:
        first_position, first_name, first = named[0]
        if tensor.dtype != first.dtype:
            raise RuntimeError(
                f"Expected tensor for argument #{first_position} '{first_name}' to have the same type as tensor for "
                f"argument #{position} '{name}'; but type mlu{type_name(first.dtype)}Type does not equal "
                f"mlu{type_name(tensor.dtype)}Type (while checking arguments for "
                f"cnnl_native_batch_norm)")


@register("aten::native_batch_norm")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """aten::native_batch_norm -> (output, save_mean, save_invstd) (cnnlBatchNormForwardTraining / Inference; the
    running statistics are updated in place)."""
    check_same_device(input, *_present(weight, bias, running_mean, running_var))
    _check_parameter_types(weight, bias, running_mean, running_var)
    if not _bn_servable(input, weight, bias, running_mean, running_var, training, eps):
        if running_mean is None or running_var is None:
            return fallback(aten._native_batch_norm_legit.no_stats, input, weight, bias, training, momentum, eps)
        return fallback(aten._native_batch_norm_legit.default, input, weight, bias, running_mean, running_var,
                        training, momentum, eps)
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


@register("aten::_native_batch_norm_legit")
def native_batch_norm_legit(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """aten::_native_batch_norm_legit (the functionalisation-friendly name of native_batch_norm)."""
    check_same_device(input, *_present(weight, bias, running_mean, running_var))
    _check_parameter_types(weight, bias, running_mean, running_var)
    if not _bn_servable(input, weight, bias, running_mean, running_var, training, eps):
        return fallback(aten._native_batch_norm_legit.default, input, weight, bias, running_mean, running_var,
                        training, momentum, eps)
    return _batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


@register("aten::_native_batch_norm_legit.no_stats")
def native_batch_norm_legit_no_stats(input, weight, bias, training, momentum, eps):
    """aten::_native_batch_norm_legit.no_stats (batch statistics only)."""
    check_same_device(input, *_present(weight, bias))
    if not _bn_servable(input, weight, bias, None, None, True, eps):
        return fallback(aten._native_batch_norm_legit.no_stats, input, weight, bias, training, momentum, eps)
    return _batch_norm(input, weight, bias, None, None, True, momentum, eps)


@register("aten::_batch_norm_with_update")
def batch_norm_with_update(input, weight, bias, running_mean, running_var, momentum, eps):
    """aten::_batch_norm_with_update -> (output, save_mean, save_invstd, reserve): training batch norm updating the
    running statistics in place (the reserve is empty, as on the CPU)."""
    check_same_device(input, running_mean, running_var, *_present(weight, bias))
    if not _bn_servable(input, weight, bias, running_mean, running_var, True, eps):
        return fallback(aten._batch_norm_with_update.default, input, weight, bias, running_mean, running_var,
                        momentum, eps)
    out, save_mean, save_invstd = _batch_norm(input, weight, bias, running_mean, running_var, True, momentum, eps)
    return out, save_mean, save_invstd, torch.empty(0, dtype=torch.uint8, device=input.device)


@register("aten::batch_norm_backward")
def batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_var, update, eps,
                        output_mask, reserve):
    """aten::batch_norm_backward(...) -> (grad_input, grad_weight, grad_bias): the backward of
    _batch_norm_with_update (training: the saved statistics) or _batch_norm_no_update."""
    return native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_var,
                                      update or running_mean is None, eps, output_mask)


def _channel_shape(input: torch.Tensor) -> tuple:
    return (1, -1) + (1,) * (input.dim() - 2)


def _reduce_dims(input: torch.Tensor) -> list:
    return [d for d in range(input.dim()) if d != 1]


@register("aten::native_batch_norm_backward")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train,
                               eps, output_mask):
    """aten::native_batch_norm_backward -> (grad_input, grad_weight, grad_bias) (cnnlBatchNormBackward in training;
    evaluation mode composed of elementwise ops on the running statistics)."""
    check_same_device(grad_out, input, *_present(weight, running_mean, running_var, save_mean, save_invstd))
    usable = _native(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd) and \
        2 <= input.dim() <= 5 and grad_out.dtype == input.dtype and (
            not train or (save_mean is not None and save_mean.numel() == input.shape[1]))
    if not usable:
        return fallback(aten.native_batch_norm_backward.default, grad_out, input, weight, running_mean, running_var,
                        save_mean, save_invstd, train, eps, output_mask)
    if not train:
        invstd = torch.rsqrt(running_var + eps)
        scale = invstd if weight is None else invstd * weight
        shape = _channel_shape(input)
        grad_input = grad_out * scale.reshape(shape).to(input.dtype) if output_mask[0] else None
        grad_weight = (grad_out * (input - running_mean.reshape(shape)) * invstd.reshape(shape)).sum(
            _reduce_dims(input)).to(weight.dtype) if output_mask[1] and weight is not None else None
        grad_bias = grad_out.sum(_reduce_dims(input)).to(weight.dtype if weight is not None else grad_out.dtype) \
            if output_mask[2] else None
        return grad_input, grad_weight, grad_bias
    dtype = save_mean.dtype
    w = _parameter(input, weight, dtype, 1)  # (the bias does not enter the gradients)
    dx = torch.empty_like(input)
    dweight = torch.empty(input.shape[1], dtype=dtype, device=input.device)
    dbias = torch.empty(input.shape[1], dtype=dtype, device=input.device)
    if input.numel():
        x, x_desc = _bn_view(input)
        dy = grad_out.contiguous(memory_format=torch.channels_last) if (
            input.dim() == 4 and input.is_contiguous(memory_format=torch.channels_last)
            and not input.is_contiguous()) else grad_out
        dy, dy_desc = _bn_view(dy)
        dxv, dx_desc = _bn_view(dx)
        cnnl.batchNormBackward(handle(dx), 1.0, 0.0, 1.0, 0.0, x_desc, x.data_ptr(), dy_desc, dy.data_ptr(), desc(w),
                               w.data_ptr(), save_mean.data_ptr(), save_invstd.data_ptr(), eps, dx_desc,
                               dxv.data_ptr(), dweight.data_ptr(), dbias.data_ptr())
    else:
        dweight.zero_()
        dbias.zero_()
    return (dx if output_mask[0] else None, dweight if output_mask[1] and weight is not None else None,
            dbias if output_mask[2] else None)


# ---- composed row normalisation (negative eps) ---------------------------------------------------------------------
def _rows_forward(rows: torch.Tensor, eps: float):
    """(xhat, mean, rstd) of a [R, K] tensor normalised along K (the biased variance, as torch's norms)."""
    mean = rows.mean(1, keepdim=True)
    centered = rows - mean
    rstd = torch.rsqrt((centered * centered).mean(1, keepdim=True) + eps)
    return centered * rstd, mean, rstd


def _composed_layer_norm(input, axis, weight, bias, eps):
    rows = input.reshape(math.prod(input.shape[:axis]), -1)
    xhat, mean, rstd = _rows_forward(rows, eps)
    out = xhat if weight is None else xhat * weight.reshape(1, -1)
    out = out if bias is None else out + bias.reshape(1, -1)
    stats_shape = tuple(input.shape[:axis]) + (1,) * (input.dim() - axis)
    return out.reshape(input.shape), mean.reshape(stats_shape), rstd.reshape(stats_shape)


# ---- layer norm -----------------------------------------------------------------------------------------------------
def _layer_axis(input, normalized_shape) -> int:
    normalized = list(normalized_shape)
    axis = input.dim() - len(normalized)
    if axis < 0 or list(input.shape[axis:]) != normalized:
        raise RuntimeError(f"Given normalized_shape={normalized}, expected input with shape [*, "
                           f"{', '.join(map(str, normalized))}], but got input of size{list(input.shape)}")
    return axis


@register("aten::native_layer_norm")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """aten::native_layer_norm -> (output, mean, rstd) (cnnlLayerNormForward)."""
    check_same_device(input, *_present(weight, bias))
    params = _present(weight, bias)
    if not _native(input, weight, bias) or any(p.dtype != input.dtype for p in params):
        return fallback(aten.native_layer_norm.default, input, normalized_shape, weight, bias, eps)
    axis = _layer_axis(input, normalized_shape)
    if eps < 0 and input.numel() and axis < input.dim():
        return _composed_layer_norm(input, axis, weight, bias, eps)
    x = input.contiguous()
    stats_shape = tuple(input.shape[:axis]) + (1,) * (input.dim() - axis)
    out = torch.empty(input.shape, dtype=input.dtype, device=input.device)
    mean = torch.empty(stats_shape, dtype=input.dtype, device=input.device)
    rstd = torch.empty(stats_shape, dtype=input.dtype, device=input.device)
    if input.numel():
        if math.prod(input.shape[axis:]) == 0 or axis == input.dim():
            return fallback(aten.native_layer_norm.default, input, normalized_shape, weight, bias, eps)
        h = handle(out)
        x_desc = desc(x)
        w = None if weight is None else weight.contiguous().reshape(-1)
        b = None if bias is None else bias.contiguous().reshape(-1)
        wb = w if w is not None else b
        size = cnnl.getLayerNormOpWorkspaceSize(h, axis, x_desc)
        ws, _keep = workspace(size, input.device)
        cnnl.layerNormForward(h, x_desc, x.data_ptr(), axis, None if wb is None else desc(wb),
                              None if w is None else w.data_ptr(), None if b is None else b.data_ptr(), eps, ws, size,
                              desc(out), out.data_ptr(), desc(mean), mean.data_ptr(), rstd.data_ptr())
    return out, mean, rstd


@register("aten::native_layer_norm_backward")
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    """aten::native_layer_norm_backward -> (grad_input, grad_weight, grad_bias) (cnnlLayerNormBackward_v2)."""
    check_same_device(grad_out, input, mean, rstd, *_present(weight, bias))
    params = _present(weight, bias)
    if not _native(grad_out, input, weight, bias, mean, rstd) or any(
            t.dtype != input.dtype for t in (grad_out, mean, rstd, *params)):
        return fallback(aten.native_layer_norm_backward.default, grad_out, input, normalized_shape, mean, rstd,
                        weight, bias, output_mask)
    axis = _layer_axis(input, normalized_shape)
    if input.numel() == 0:  # nothing normalised: zero parameter gradients
        zeros = torch.zeros(tuple(normalized_shape), dtype=input.dtype, device=input.device)
        return (torch.empty_like(input) if output_mask[0] else None,
                zeros if output_mask[1] and weight is not None else None,
                zeros.clone() if output_mask[2] and bias is not None else None)
    x, dy = input.contiguous(), grad_out.contiguous()
    w = None if weight is None else weight.contiguous().reshape(-1)
    dx = torch.empty(input.shape, dtype=input.dtype, device=input.device)
    cols = math.prod(input.shape[axis:])
    dweight = torch.empty(cols, dtype=input.dtype, device=input.device)
    dbias = torch.empty(cols, dtype=input.dtype, device=input.device)
    h = handle(dx)
    x_desc = desc(x)
    m, r = mean.contiguous(), rstd.contiguous()
    size = cnnl.getLayerNormBackwardWorkspaceSize(h, x_desc, axis)
    ws, _keep = workspace(size, input.device)
    cnnl.layerNormBackward_v2(h, x_desc, x.data_ptr(), axis, desc(dy), dy.data_ptr(), desc(dweight),
                              None if w is None else w.data_ptr(), desc(m), m.data_ptr(), r.data_ptr(), ws, size,
                              desc(dx), dx.data_ptr(), dweight.data_ptr(), dbias.data_ptr())
    shape = tuple(normalized_shape)
    return (dx if output_mask[0] else None,
            dweight.reshape(shape) if output_mask[1] and weight is not None else None,
            dbias.reshape(shape) if output_mask[2] and bias is not None else None)


# ---- group norm -----------------------------------------------------------------------------------------------------
@register("aten::native_group_norm")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """aten::native_group_norm -> (output, mean, rstd) (cnnlGroupNormForward_v3)."""
    check_same_device(input, *_present(weight, bias))
    if not _native(input, weight, bias) or any(p.dtype != input.dtype for p in _present(weight, bias)) or \
            input.dim() < 2:
        return fallback(aten.native_group_norm.default, input, weight, bias, N, C, HxW, group, eps)
    if input.numel() == 0:  # torch's statistics of a group of no elements: mean 0, rstd NaN
        return (torch.empty_like(input), torch.zeros((N, group), dtype=input.dtype, device=input.device),
                torch.full((N, group), float("nan"), dtype=input.dtype, device=input.device))
    if eps < 0:
        xhat, mean, rstd = _rows_forward(input.reshape(N * group, -1), eps)
        channel = (1, C) + (1,) * (input.dim() - 2)
        out = xhat.reshape(input.shape)
        out = out if weight is None else out * weight.reshape(channel)
        out = out if bias is None else out + bias.reshape(channel)
        return out, mean.reshape(N, group), rstd.reshape(N, group)
    x = input.contiguous()
    out = torch.empty(input.shape, dtype=input.dtype, device=input.device)
    mean = torch.empty((N, group), dtype=input.dtype, device=input.device)
    rstd = torch.empty((N, group), dtype=input.dtype, device=input.device)
    w = weight if weight is not None else torch.ones(C, dtype=input.dtype, device=input.device)
    b = bias if bias is not None else torch.zeros(C, dtype=input.dtype, device=input.device)
    h = handle(out)
    x_desc = desc(x)
    size = cnnl.getGroupNormForwardWorkspaceSize(h, group, x_desc)
    ws, _keep = workspace(size, input.device)
    cnnl.groupNormForward_v3(h, eps, group, x_desc, x.data_ptr(), desc(w), w.data_ptr(), b.data_ptr(), ws, size,
                             desc(out), out.data_ptr(), desc(mean), mean.data_ptr(), rstd.data_ptr())
    return out, mean, rstd


@register("aten::native_group_norm_backward")
def native_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group, output_mask):
    """aten::native_group_norm_backward -> (grad_input, grad_weight, grad_bias) (cnnlGroupNormBackward)."""
    check_same_device(grad_out, input, mean, rstd, *_present(weight))
    if not _native(grad_out, input, mean, rstd, weight) or any(
            t.dtype != input.dtype for t in (grad_out, mean, rstd, *_present(weight))):
        return fallback(aten.native_group_norm_backward.default, grad_out, input, mean, rstd, weight, N, C, HxW,
                        group, output_mask)
    if input.numel() == 0:
        # torch's sums over empty groups: the bias gradient is 0; the weight gradient sums (0 - 0 * mean) * rstd,
        # NaN where a group's statistics are (a group of no elements has NaN mean and rstd)
        dscale = (mean * 0 * rstd).view(N, group).sum(0).repeat_interleave(C // group) if N else \
            torch.zeros(C, dtype=input.dtype, device=input.device)
        return (torch.empty_like(input) if output_mask[0] else None,
                dscale if output_mask[1] and weight is not None else None,
                torch.zeros(C, dtype=input.dtype, device=input.device) if output_mask[2] else None)
    x, dy = input.contiguous(), grad_out.contiguous()
    m, r = mean.contiguous(), rstd.contiguous()
    dx = torch.empty(input.shape, dtype=input.dtype, device=input.device)
    dscale = torch.empty(C, dtype=input.dtype, device=input.device)
    dbias = torch.empty(C, dtype=input.dtype, device=input.device)
    gamma = weight if weight is not None else torch.ones(C, dtype=input.dtype, device=input.device)
    h = handle(dx)
    size = cnnl.getGroupNormBackwardWorkspaceSize(h, N * C)
    ws, _keep = workspace(size, input.device)
    cnnl.groupNormBackward(h, desc(x), x.data_ptr(), desc(dy), dy.data_ptr(), desc(gamma), gamma.data_ptr(), desc(m),
                           m.data_ptr(), desc(r), r.data_ptr(), group, desc(dx), dx.data_ptr(), desc(dscale),
                           dscale.data_ptr(), desc(dbias), dbias.data_ptr(), ws, size)
    return (dx if output_mask[0] else None, dscale if output_mask[1] and weight is not None else None,
            dbias if output_mask[2] else None)
