"""scaled_dot_product_attention on mlu through cnnl's flash attention.

torch asks the backend which SDPA implementation to use (aten::_fused_sdp_choice); for mlu tensors this answers
OVERRIDEABLE whenever cnnlFlashAttentionForward_v2 / Backward_v2 can serve the call, and torch then calls
_scaled_dot_product_fused_attention_overrideable and its backward, implemented here; otherwise MATH (torch's own
composition of matmul and softmax). q/k/v of [batch, heads, seq, dim] ([batch, seq, dim]: one head) are handed to
cnnl as [batch, seq, heads, dim] views (its non-packed layout); the output is returned as the transposed view, as
CUDA's flash attention does.
Dropout draws from the mlu generator's Philox stream (seed, offset), which the backward replays.
"""
from __future__ import annotations

import math

import torch

import cnnl
from mlusim.memo import BoundedMemo

from .. import _state
from ._core import TORCH_TO_CNNL, check_same_device, desc, handle, register, workspace

MATH, OVERRIDEABLE = int(torch._C._SDPBackend.MATH), int(torch._C._SDPBackend.OVERRIDEABLE)
SUPPORTED = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
MAX_HEAD_DIM = 256


def _four_d(t: torch.Tensor) -> torch.Tensor:
    """[batch, seq, dim] as [batch, 1 head, seq, dim] (SDPA without a heads dim)."""
    return t.unsqueeze(1) if t.dim() == 3 else t


def _four_d_shape(t: torch.Tensor) -> tuple:
    """_four_d(t).shape, from the metadata alone (the choice runs on traced fake tensors too: no op may run)."""
    return (t.shape[0], 1, *t.shape[1:]) if t.dim() == 3 else tuple(t.shape)


def _servable(query, key, value, attn_mask, enable_gqa: bool) -> bool:
    tensors = (query, key, value)
    if any(t.device.type != "mlu" or t.dim() != query.dim() or t.dtype != query.dtype for t in tensors):
        return False
    if query.dim() not in (3, 4):
        return False
    q_shape, k_shape, v_shape = _four_d_shape(query), _four_d_shape(key), _four_d_shape(value)
    if query.dtype not in SUPPORTED or max(q_shape[-1], v_shape[-1]) > MAX_HEAD_DIM:
        return False
    if q_shape[-1] != k_shape[-1] or k_shape[:3] != v_shape[:3] or q_shape[0] != k_shape[0]:
        return False
    heads_q, heads_k = q_shape[1], k_shape[1]
    if heads_q != heads_k and not (enable_gqa and heads_k and heads_q % heads_k == 0):
        return False
    if attn_mask is not None:  # an additive bias without a gradient, broadcasting over [batch, heads, q, k]
        if attn_mask.requires_grad or attn_mask.device != query.device or attn_mask.dim() > 4:
            return False
        if not attn_mask.is_floating_point() or attn_mask.dtype not in TORCH_TO_CNNL:
            return False
        full = (q_shape[0], heads_q, q_shape[2], k_shape[2])
        shape = (1,) * (4 - attn_mask.dim()) + tuple(attn_mask.shape)
        if any(n not in (1, m) for n, m in zip(shape, full)):
            return False
    return True


@register("aten::_fused_sdp_choice")
def fused_sdp_choice(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None,
                     enable_gqa=False) -> int:
    """aten::_fused_sdp_choice: OVERRIDEABLE (cnnl flash attention) when it can serve the call, else MATH."""
    return OVERRIDEABLE if _servable(query, key, value, attn_mask, enable_gqa) else MATH


_descriptors = BoundedMemo(256, forget=lambda old: cnnl.destroyFlashAttentionDescriptor(old))


def _descriptor(backward: bool, dtype, is_causal: bool, max_q: int, max_k: int, dropout_p: float, scale: float):
    """A cached flash attention descriptor for one problem."""
    key = (backward, dtype, bool(is_causal), max_q, max_k, float(dropout_p), float(scale))
    found = _descriptors.get(key)
    if found is not None:
        return found
    made = cnnl.createFlashAttentionDescriptor()
    compute = cnnl.CNNL_DTYPE_DOUBLE if dtype == torch.float64 else cnnl.CNNL_DTYPE_FLOAT
    mode = cnnl.CNNL_ATTN_MASK_CAUSAL if is_causal else cnnl.CNNL_ATTN_MASK_NONE
    setter = cnnl.setFlashAttentionBackwardDescriptor if backward else cnnl.setFlashAttentionDescriptor
    setter(made, compute, cnnl.CNNL_COMPUTATION_HIGH_PRECISION, mode, False, False, False, max_q, max_k,
           float(dropout_p), float(scale))
    return _descriptors.put(key, made)


def _bias(attn_bias, dtype):
    if attn_bias is None:
        return None
    bias = attn_bias if attn_bias.dtype == dtype else attn_bias.to(dtype)
    while bias.dim() < 4:
        bias = bias.unsqueeze(0)
    return bias


def _seq_major(t: torch.Tensor) -> torch.Tensor:
    """[batch, heads, seq, dim] as cnnl's [batch, seq, heads, dim] view."""
    return t.transpose(1, 2)


def _generator(device: torch.device):
    return _state.C.default_generator(device.index)


@register("aten::_scaled_dot_product_fused_attention_overrideable")
def sdpa_forward(query, key, value, attn_bias=None, dropout_p=0.0, is_causal=False, return_debug_mask=False, *,
                 scale=None):
    """aten::_scaled_dot_product_fused_attention_overrideable (cnnlFlashAttentionForward_v2)."""
    device = check_same_device(query, key, value)
    if query.dim() == 3:
        result = sdpa_forward(_four_d(query), _four_d(key), _four_d(value), attn_bias, dropout_p, is_causal,
                              return_debug_mask, scale=scale)
        return (result[0].squeeze(1), result[1].squeeze(1), *result[2:])
    batch, heads, max_q, _ = query.shape
    max_k, dv = key.shape[2], value.shape[3]
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    descriptor = _descriptor(False, query.dtype, is_causal, max_q, max_k, dropout_p, scale)
    q, k, v = _seq_major(query), _seq_major(key), _seq_major(value)
    out = torch.empty((batch, max_q, heads, dv), dtype=query.dtype, device=device)
    lse = torch.empty((batch, heads, max_q), dtype=torch.float32, device=device)
    seed = offset = 0
    h = handle(out)
    q_desc, k_desc, v_desc = desc(q), desc(k), desc(v)
    if dropout_p > 0:
        generator = _generator(device)
        seed, offset = generator.initial_seed(), generator.get_offset()
        drawn = cnnl.getFlashAttentionGeneratedRandomNumbers(h, descriptor, q_desc, v_desc, None)
        generator.set_offset(offset + (drawn + 3) // 4)
    bias = _bias(attn_bias, query.dtype)
    if out.numel():
        size = cnnl.getFlashAttentionForwardWorkspaceSize(h, descriptor, q_desc, k_desc, v_desc)
        ws, _keep = workspace(size, device)
        cnnl.flashAttentionForward_v2(h, descriptor, q_desc, q.data_ptr(), k_desc, k.data_ptr(), v_desc, v.data_ptr(),
                                      None, None, None, None, None, None,
                                      None if bias is None else desc(bias), None if bias is None else bias.data_ptr(),
                                      None, None, (seed, offset) if dropout_p > 0 else None, ws, size, None, None,
                                      desc(lse), lse.data_ptr(), desc(out), out.data_ptr())
    cpu_long = dict(dtype=torch.int64)
    return (out.transpose(1, 2), lse, torch.empty(0, **cpu_long), torch.empty(0, **cpu_long), max_q, max_k,
            torch.tensor(seed, **cpu_long), torch.tensor(offset, **cpu_long),
            torch.empty(0, dtype=query.dtype, device=device))


@register("aten::_scaled_dot_product_fused_attention_overrideable_backward")
def sdpa_backward(grad_out, query, key, value, attn_bias, grad_input_mask, out, logsumexp, cum_seq_q, cum_seq_k,
                  max_q, max_k, dropout_p, is_causal, philox_seed, philox_offset, *, scale=None):
    """aten::_scaled_dot_product_fused_attention_overrideable_backward (cnnlFlashAttentionBackward_v2); the
    attention bias gets no gradient (the forward is chosen only for a bias that needs none)."""
    device = check_same_device(grad_out, query, key, value, out)
    if query.dim() == 3:
        grads = sdpa_backward(_four_d(grad_out), _four_d(query), _four_d(key), _four_d(value), attn_bias,
                              grad_input_mask, _four_d(out), logsumexp.unsqueeze(1), cum_seq_q, cum_seq_k, max_q,
                              max_k, dropout_p, is_causal, philox_seed, philox_offset, scale=scale)
        return (grads[0].squeeze(1), grads[1].squeeze(1), grads[2].squeeze(1), grads[3])
    scale = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    descriptor = _descriptor(True, query.dtype, is_causal, query.shape[2], key.shape[2], dropout_p, scale)
    q, k, v, o = _seq_major(query), _seq_major(key), _seq_major(value), _seq_major(out)
    do = _seq_major(grad_out if grad_out.dtype == query.dtype else grad_out.to(query.dtype))
    grads = [torch.empty(t.shape, dtype=query.dtype, device=device) for t in (q, k, v)]
    bias = _bias(attn_bias if attn_bias is not None and attn_bias.numel() else None, query.dtype)
    if any(g.numel() for g in grads):
        h = handle(grads[0])
        q_desc, k_desc, v_desc = desc(q), desc(k), desc(v)
        size = cnnl.getFlashAttentionBackwardWorkspaceSize(h, descriptor, q_desc, k_desc, v_desc)
        ws, _keep = workspace(size, device)
        rng = (int(philox_seed), int(philox_offset)) if dropout_p > 0 else None
        cnnl.flashAttentionBackward_v2(h, descriptor, desc(do), do.data_ptr(), q_desc, q.data_ptr(), k_desc,
                                       k.data_ptr(), v_desc, v.data_ptr(), desc(o), o.data_ptr(), desc(logsumexp),
                                       logsumexp.data_ptr(), None, None, None, None, None, None,
                                       None if bias is None else desc(bias),
                                       None if bias is None else bias.data_ptr(), rng, ws, size,
                                       desc(grads[0]), grads[0].data_ptr(), desc(grads[1]), grads[1].data_ptr(),
                                       desc(grads[2]), grads[2].data_ptr(), None, None, None, None)
    if attn_bias is not None and grad_input_mask[3]:
        raise RuntimeError("mlu: cnnl's flash attention gives no gradient for attn_mask (scaled_dot_product_"
                           "attention takes torch's math path when the mask requires grad)")
    return (grads[0].transpose(1, 2), grads[1].transpose(1, 2), grads[2].transpose(1, 2),
            torch.empty(0, dtype=query.dtype, device=device))
