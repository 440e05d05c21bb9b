"""sort, topk (cnnlTopKTensor_v3) and cumsum (cnnlCumsum).

sort is a top-k of the whole axis with ties in ascending index order, so it is stable either way (torch's CPU
sort is stable too); NaN sorts as the largest value, as in torch. Indices are int64.
"""
from __future__ import annotations

import torch

import cnnl

from ._core import TORCH_TO_CNNL, aten, check_same_device, desc, fallback, handle, register, workspace
from ._iter import Destination, INTEGRAL, check_castable, cpp_name


def _axis(dim: int, ndim: int) -> int:
    rank = max(ndim, 1)
    if not -rank <= dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")
    return dim % rank


def topk_into(x: torch.Tensor, k: int, axis: int, largest: bool, values: torch.Tensor,
              indices: torch.Tensor) -> None:
    """cnnlTopKTensor_v3 of x (k along axis) into values (x's dtype) and int64 indices, both of the result shape."""
    h = handle(values)
    x_desc, v_desc, i_desc = desc(x), desc(values), desc(indices)
    size = cnnl.getTopKTensorWorkspaceSize(h, x_desc, k, axis, largest, v_desc, i_desc)
    ws, _keep = workspace(size, x.device)
    cnnl.topKTensor_v3(h, x_desc, x.data_ptr(), k, axis, largest, True, True, ws, size, v_desc, values.data_ptr(),
                       i_desc, indices.data_ptr())


def _selection(self, k: int, dim: int, largest: bool, values, indices, name: str):
    """The shared body of topk and sort: checks, outputs, the 0-d case."""
    axis = _axis(dim, self.dim())
    extent = self.shape[axis] if self.dim() else 1
    if not 0 <= k <= extent:
        raise RuntimeError("selected index k out of range")
    shape = list(self.shape)
    if self.dim():
        shape[axis] = k
    if values.dtype != self.dtype:
        raise RuntimeError(f"{name}: Expected out tensor to have dtype {cpp_name(self.dtype)}, but got "
                           f"{cpp_name(values.dtype)} instead")
    if indices.dtype != torch.int64:
        raise RuntimeError(f"{name}: Expected out tensor to have dtype long int, but got {cpp_name(indices.dtype)} "
                           f"instead")
    value_target = Destination(values, shape, self.dtype, (self,))
    index_target = Destination(indices, shape, torch.int64, (self,))
    if value_target.target.numel():
        x = self.reshape(1) if self.dim() == 0 else self
        v = value_target.target.reshape(1) if self.dim() == 0 else value_target.target
        i = index_target.target.reshape(1) if self.dim() == 0 else index_target.target
        topk_into(x, k, axis, largest, v, i)
    value_target.finish()
    index_target.finish()
    return values, indices


@register("aten::topk.values")
def topk_values(self, k, dim=-1, largest=True, sorted=True, *, values, indices):
    """aten::topk.values(self, k, dim, largest, sorted, *, values, indices): always sorted."""
    check_same_device(self, values, indices)
    if self.device.type != "mlu" or self.dtype not in TORCH_TO_CNNL:
        return fallback(aten.topk.values, self, k, dim, largest, sorted, values=values, indices=indices)
    return _selection(self, k, dim, largest, values, indices, "topk")


@register("aten::sort.values_stable")
def sort_values_stable(self, *, stable=None, dim=-1, descending=False, values, indices):
    """aten::sort.values_stable(self, *, stable, dim, descending, values, indices)."""
    check_same_device(self, values, indices)
    if self.device.type != "mlu" or self.dtype not in TORCH_TO_CNNL:
        return fallback(aten.sort.values_stable, self, stable=stable, dim=dim, descending=descending,
                        values=values, indices=indices)
    extent = self.shape[_axis(dim, self.dim())] if self.dim() else 1
    return _selection(self, extent, dim, descending, values, indices, "sort")


@register("aten::cumsum.out")
def cumsum_out(self, dim, *, dtype=None, out):
    """aten::cumsum.out(self, dim, *, dtype, out): integers and bool sum in int64 unless dtype says otherwise."""
    check_same_device(self, out)
    result = dtype if dtype is not None else (torch.int64 if self.dtype in INTEGRAL else self.dtype)
    if self.device.type != "mlu" or result not in TORCH_TO_CNNL or result == torch.bool \
            or self.dtype not in TORCH_TO_CNNL:
        return fallback(aten.cumsum.out, self, dim, dtype=dtype, out=out)
    axis = _axis(dim, self.dim())
    check_castable(result, out)
    target = Destination(out, self.shape, result, (self,))
    y = target.target
    if y.numel():
        x = self if self.dtype == result else self.to(result)
        if self.dim() == 0:
            x, y = x.reshape(1), y.reshape(1)
        cnnl.cumsum(handle(y), desc(x), x.data_ptr(), axis, False, False, cnnl.CNNL_PROPAGATE_NAN, desc(y),
                    y.data_ptr())
    return target.finish()

