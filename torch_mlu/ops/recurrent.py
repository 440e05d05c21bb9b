"""The fused LSTM and GRU cells torch runs nn.LSTM / nn.GRU (and LSTMCell / GRUCell) with on an accelerator:
aten::_thnn_fused_lstm_cell, _thnn_fused_gru_cell and their backward kernels (CUDA-only in torch, so the CPU
fallback cannot serve them). Each is composed of native elementwise ops on the gates, with torch's CUDA kernels'
gate order (LSTM: input, forget, cell, output; GRU: reset, input, new) and workspace layout, which torch's
autograd formulas hand back to the backward kernels."""
from __future__ import annotations

from typing import Optional

import torch

from ._core import check_same_device, register


def _gates(input_gates: torch.Tensor, hidden_gates: torch.Tensor, input_bias, hidden_bias) -> torch.Tensor:
    gates = input_gates + hidden_gates
    if input_bias is not None:
        gates = gates + input_bias
    if hidden_bias is not None:
        gates = gates + hidden_bias
    return gates


def _check_cell(name: str, input_gates, hidden_gates, state, input_bias, hidden_bias, count: int) -> None:
    check_same_device(input_gates, hidden_gates, state, *(b for b in (input_bias, hidden_bias) if b is not None))
    if input_gates.shape != hidden_gates.shape or input_gates.dim() != 2:
        raise RuntimeError(f"{name}: input_gates {list(input_gates.shape)} and hidden_gates "
                           f"{list(hidden_gates.shape)} must be the same 2-d shape")
    if input_gates.shape[1] != count * state.shape[-1] or state.shape[0] != input_gates.shape[0]:
        raise RuntimeError(f"{name}: gates {list(input_gates.shape)} do not fit the state {list(state.shape)} "
                           f"({count} gates of its size)")
    if (input_bias is None) != (hidden_bias is None):
        raise RuntimeError(f"{name}: input_bias and hidden_bias must both be given or both be None")


@register("aten::_thnn_fused_lstm_cell")
def fused_lstm_cell(input_gates, hidden_gates, cx, input_bias=None, hidden_bias=None):
    """aten::_thnn_fused_lstm_cell(input_gates, hidden_gates, cx, input_bias, hidden_bias) -> (hy, cy, workspace):
    one LSTM step; the workspace holds the four activated gates for the backward."""
    _check_cell("_thnn_fused_lstm_cell", input_gates, hidden_gates, cx, input_bias, hidden_bias, 4)
    i, f, g, o = _gates(input_gates, hidden_gates, input_bias, hidden_bias).chunk(4, 1)
    workspace = torch.cat([torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)], 1)
    i, f, g, o = workspace.chunk(4, 1)
    cy = f * cx + i * g
    hy = o * torch.tanh(cy)
    return hy, cy, workspace


@register("aten::_thnn_fused_lstm_cell_backward_impl")
def fused_lstm_cell_backward(grad_hy: Optional[torch.Tensor], grad_cy: Optional[torch.Tensor], cx, cy, workspace,
                             has_bias: bool):
    """aten::_thnn_fused_lstm_cell_backward_impl(grad_hy, grad_cy, cx, cy, workspace, has_bias) -> (grad_gates,
    grad_cx, grad_bias): missing output gradients count as zeros."""
    if grad_hy is None and grad_cy is None:
        return torch.Tensor(), torch.Tensor(), torch.Tensor()
    i, f, g, o = workspace.chunk(4, 1)
    tanh_cy = torch.tanh(cy)
    grad_c = torch.zeros_like(cy) if grad_cy is None else grad_cy
    if grad_hy is not None:
        grad_o = grad_hy * tanh_cy
        grad_c = grad_c + grad_hy * o * (1 - tanh_cy * tanh_cy)
    else:
        grad_o = torch.zeros_like(o)
    grad_gates = torch.cat([grad_c * g * i * (1 - i), grad_c * cx * f * (1 - f), grad_c * i * (1 - g * g),
                            grad_o * o * (1 - o)], 1)
    grad_bias = grad_gates.sum(0) if has_bias else torch.Tensor()
    return grad_gates, grad_c * f, grad_bias


@register("aten::_thnn_fused_gru_cell")
def fused_gru_cell(input_gates, hidden_gates, hx, input_bias=None, hidden_bias=None):
    """aten::_thnn_fused_gru_cell(input_gates, hidden_gates, hx, input_bias, hidden_bias) -> (hy, workspace): one
    GRU step; the workspace holds the reset, input and new gates, hx and the hidden part of the new gate."""
    _check_cell("_thnn_fused_gru_cell", input_gates, hidden_gates, hx, input_bias, hidden_bias, 3)
    if input_bias is not None:
        input_gates = input_gates + input_bias
        hidden_gates = hidden_gates + hidden_bias
    in_r, in_i, in_n = input_gates.chunk(3, 1)
    hid_r, hid_i, hid_n = hidden_gates.chunk(3, 1)
    reset = torch.sigmoid(in_r + hid_r)
    update = torch.sigmoid(in_i + hid_i)
    new = torch.tanh(in_n + reset * hid_n)
    hy = new + update * (hx - new)
    return hy, torch.cat([reset, update, new, hx, hid_n], 1)


@register("aten::_thnn_fused_gru_cell_backward")
def fused_gru_cell_backward(grad_hy, workspace, has_bias: bool):
    """aten::_thnn_fused_gru_cell_backward(grad_hy, workspace, has_bias) -> (grad_input_gates, grad_hidden_gates,
    grad_hx, grad_input_bias, grad_hidden_bias)."""
    reset, update, new, hx, hid_n = workspace.chunk(5, 1)
    grad_update = grad_hy * (hx - new) * update * (1 - update)
    grad_new = grad_hy * (1 - update) * (1 - new * new)
    grad_reset = grad_new * hid_n * reset * (1 - reset)
    grad_input_gates = torch.cat([grad_reset, grad_update, grad_new], 1)
    grad_hidden_gates = torch.cat([grad_reset, grad_update, grad_new * reset], 1)
    if has_bias:
        return (grad_input_gates, grad_hidden_gates, grad_hy * update, grad_input_gates.sum(0),
                grad_hidden_gates.sum(0))
    return grad_input_gates, grad_hidden_gates, grad_hy * update, torch.Tensor(), torch.Tensor()
