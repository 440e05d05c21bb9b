"""Masks over cnnl: masked_fill_ (cnnlMasked_v3 FILL, the value a host number or a 0-d mlu tensor read on the
device), masked_select (cnnlMasked_v3 SELECT) and nonzero (cnnlNumTrue_v2 + cnnlWhere_v2). masked_select and
nonzero need the number of selected elements on the host: they wait for the stream, as on CUDA.
"""
from __future__ import annotations

import torch

import cnnl

from ._core import aten, check_same_device, desc, fallback, handle, register, workspace
from ._iter import Destination, resize_out
from .copy import copy_into
from .fill import device_scalar
from .indexing import at_least_1d, native


def _masked_fill(self, mask, value, overload) -> torch.Tensor:
    if mask.dtype != torch.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{str(mask.dtype).replace('torch.', '')}")
    if isinstance(value, torch.Tensor) and value.dim() != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    check_same_device(self, mask)
    if not native(self):
        return fallback(overload, self, mask, value)
    shape = torch.broadcast_shapes(self.shape, mask.shape)
    if tuple(shape) != tuple(self.shape):
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}")
    if self.numel() == 0:
        return self
    if isinstance(value, torch.Tensor) and value.device.type == "mlu":
        fill = value if value.dtype == self.dtype else value.to(self.dtype)
    else:
        fill = device_scalar(value.item() if isinstance(value, torch.Tensor) else value, self.dtype, self.device)
    m = mask if mask.device == self.device else mask.to(self.device)
    x, m, f = at_least_1d(self, m, fill)
    h = handle(x)
    x_desc, m_desc, f_desc = desc(x), desc(m), desc(f)
    size = cnnl.getMaskedWorkspaceSize(h, cnnl.CNNL_MASKED_FILL, x_desc, m_desc, f_desc, x_desc)
    ws, _keep = workspace(size, self.device)
    cnnl.masked_v3(h, cnnl.CNNL_MASKED_FILL, x_desc, x.data_ptr(), m_desc, m.data_ptr(), f_desc, f.data_ptr(), ws,
                   size, x_desc, x.data_ptr(), None)
    return self


@register("aten::masked_fill_.Scalar")
def masked_fill_scalar_(self, mask, value):
    """aten::masked_fill_.Scalar(self, mask, value)."""
    return _masked_fill(self, mask, value, aten.masked_fill_.Scalar)


@register("aten::masked_fill_.Tensor")
def masked_fill_tensor_(self, mask, value):
    """aten::masked_fill_.Tensor(self, mask, value): a 0-d value, read on the device when it is an mlu tensor."""
    return _masked_fill(self, mask, value, aten.masked_fill_.Tensor)


def _host_count(count: torch.Tensor) -> int:
    """Wait for the stream and read a one-element device count."""
    return int(count.cpu().reshape(-1)[0])


def _masked_select_into(self, mask, out):
    check_same_device(self, mask, out)
    if mask.dtype != torch.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    if not native(self):
        return fallback(aten.masked_select.out, self, mask, out=out)
    shape = torch.broadcast_shapes(self.shape, mask.shape)
    x = self.expand(shape) if tuple(self.shape) != tuple(shape) else self
    m = mask if mask.device == self.device else mask.to(self.device)
    x, m = at_least_1d(x, m)
    if x.numel() == 0:
        resize_out(out, (0,))
        return out
    staged = torch.empty(x.shape, dtype=self.dtype, device=self.device)
    count = torch.empty(1, dtype=torch.int32, device=self.device)
    h = handle(staged)
    x_desc, m_desc, s_desc = desc(x), desc(m), desc(staged)
    size = cnnl.getMaskedWorkspaceSize(h, cnnl.CNNL_MASKED_SELECT, x_desc, m_desc, None, s_desc)
    ws, _keep = workspace(size, self.device)
    cnnl.masked_v3(h, cnnl.CNNL_MASKED_SELECT, x_desc, x.data_ptr(), m_desc, m.data_ptr(), None, None, ws, size,
                   s_desc, staged.data_ptr(), count.data_ptr())
    chosen = _host_count(count)
    target = Destination(out, (chosen,), self.dtype, (self, mask))
    if chosen:
        copy_into(staged.reshape(-1)[:chosen], target.target)
    return target.finish()


@register("aten::masked_select.out")
def masked_select_out(self, mask, *, out):
    """aten::masked_select.out(self, mask, *, out)."""
    return _masked_select_into(self, mask, out)


@register("aten::masked_select")
def masked_select(self, mask):
    """aten::masked_select(self, mask): the selected elements as a 1-D tensor (waits for the stream)."""
    return _masked_select_into(self, mask, torch.empty(0, dtype=self.dtype, device=self.device))


# ---- nonzero --------------------------------------------------------------------------------------------------------
def _nonzero_into(self, out):
    check_same_device(self, out)
    if out.dtype != torch.int64:
        raise RuntimeError(f"nonzero: Expected out tensor to have scalar type Long but got scalar type "
                           f"{str(out.dtype).replace('torch.', '')}")
    if not native(self):
        return fallback(aten.nonzero.out, self, out=out)
    if self.dim() == 0:
        truth = bool(self.cpu())
        resize_out(out, (1 if truth else 0, 0))
        return out
    if self.numel() == 0:
        resize_out(out, (0, self.dim()))
        return out
    h = handle(self)
    count = torch.empty(1, dtype=torch.int64, device=self.device)
    x_desc, n_desc = desc(self), desc(count)
    cnnl.numTrue_v2(h, x_desc, self.data_ptr(), n_desc, count.data_ptr())
    chosen = _host_count(count)
    target = Destination(out, (chosen, self.dim()), torch.int64, (self,))
    if chosen:
        result = target.target
        size = cnnl.getWhereWorkspaceSize(h, n_desc)
        ws, _keep = workspace(size, self.device)
        cnnl.where_v2(h, x_desc, self.data_ptr(), n_desc, count.data_ptr(), False, ws, size, desc(result),
                      result.data_ptr())
    return target.finish()


@register("aten::nonzero.out")
def nonzero_out(self, *, out):
    """aten::nonzero.out(self, *, out)."""
    return _nonzero_into(self, out)


@register("aten::nonzero")
def nonzero(self):
    """aten::nonzero(self): [n, ndim] int64 coordinates of the nonzero elements (waits for the stream)."""
    return _nonzero_into(self, torch.empty(0, dtype=torch.int64, device=self.device))
