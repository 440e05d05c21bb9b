"""Embedding's backward over cnnl (cnnlEmbeddingBackward: the table's gradient, rows summed per index) and
embedding_renorm_ (max_norm), which torch's embedding forward (an index_select) leaves to the backend.
"""
from __future__ import annotations

import torch

import cnnl

from ._core import aten, check_same_device, desc, fallback, handle, register, workspace
from .indexing import INDEX_TYPES, native


@register("aten::embedding_dense_backward")
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    """aten::embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq): the table's
    gradient, rows summed per index (cnnlEmbeddingBackward; padding_idx -1: none)."""
    check_same_device(grad_output, indices)
    if not native(grad_output) or not grad_output.is_floating_point() or indices.dtype not in INDEX_TYPES or \
            not -1 <= padding_idx < num_weights:
        return fallback(aten.embedding_dense_backward.default, grad_output, indices, num_weights, padding_idx,
                        scale_grad_by_freq)
    width = grad_output.shape[-1]
    out = torch.empty((num_weights, width), dtype=grad_output.dtype, device=grad_output.device)
    if out.numel() == 0:
        return out
    if indices.numel() == 0:
        return out.zero_()
    flat = indices.reshape(-1)
    diff = grad_output.reshape(flat.numel(), width)
    h = handle(out)
    d_desc, o_desc = desc(diff), desc(out)
    size = cnnl.getEmbeddingBackwardWorkspaceSize(h, d_desc, o_desc, scale_grad_by_freq)
    ws, _keep = workspace(size, out.device)
    cnnl.embeddingBackward(h, padding_idx, scale_grad_by_freq, desc(flat), flat.data_ptr(), d_desc, diff.data_ptr(),
                           ws, size, o_desc, out.data_ptr())
    return out


@register("aten::embedding_renorm_")
def embedding_renorm_(self, indices, max_norm, norm_type):
    """aten::embedding_renorm_(self, indices, max_norm, norm_type): the indexed rows with a norm above max_norm
    scaled to max_norm / (norm + 1e-7) (a row indexed twice gets the same value twice)."""
    check_same_device(self, indices)
    if not native(self) or not self.is_floating_point() or indices.dtype not in INDEX_TYPES or self.dim() != 2:
        return fallback(aten.embedding_renorm_.default, self, indices, max_norm, norm_type)
    flat = indices.reshape(-1)
    if flat.numel() == 0:
        return self
    rows = self.index_select(0, flat)
    norms = torch.linalg.vector_norm(rows, norm_type, dim=1, keepdim=True)
    scale = torch.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    self.index_put_((flat,), rows * scale)
    return self
