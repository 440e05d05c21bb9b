"""Indexing over cnnl: index_select (cnnlIndexSelect), gather (cnnlGather), scatter / scatter_add (cnnlScatter),
index (x[i], cnnlAdvancedIndex), index_put_ (cnnlIndexPut), index_add (cnnlIndexAdd) and index_fill_
(cnnlIndexFill_v2). (Masks: masking.py; embedding's backward: embedding.py.)

Indices are range-checked when the queued op runs (an out-of-range index fails at the next synchronisation, as on
the device).
"""
from __future__ import annotations

import torch

import cnnl

from ._core import TORCH_TO_CNNL, aten, check_same_device, desc, fallback, handle, register, workspace
from ._iter import Destination, check_no_internal_overlap, type_name
from .copy import copy_into
from .fill import converted, device_scalar

INDEX_TYPES = (torch.int32, torch.int64)


def _axis(dim: int, ndim: int) -> int:
    rank = max(ndim, 1)
    if not -rank <= dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")
    return dim % rank


def at_least_1d(*tensors: torch.Tensor):
    return tuple(t.reshape(1) if t.dim() == 0 else t for t in tensors)


def native(*tensors: torch.Tensor) -> bool:
    return all(t.device.type == "mlu" and t.dtype in TORCH_TO_CNNL for t in tensors)


# ---- index_select ---------------------------------------------------------------------------------------------------
def _index_select_into(self, dim, index, out):
    check_same_device(self, index, out)
    check_no_internal_overlap(out)  # before out is resized, as torch's index_select_out
    if index.dtype not in INDEX_TYPES:
        raise IndexError("index_select(): Expected dtype int32 or int64 for index")
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if not native(self, index):
        return fallback(aten.index_select.out, self, dim, index, out=out)
    if out.dtype != self.dtype:
        raise RuntimeError("index_select(): self and result must have the same scalar type")
    axis = _axis(dim, self.dim())
    shape = list(self.shape)
    if self.dim():
        shape[axis] = index.numel()
    target = Destination(out, shape, self.dtype, (self, index))
    result = target.target
    if result.numel():
        if (self.shape[axis] if self.dim() else 1) == 0:
            raise IndexError("index out of range in self")
        x, y = at_least_1d(self, result)
        i = index.reshape(-1)
        cnnl.indexSelect(handle(y), axis, desc(x), x.data_ptr(), desc(i), i.data_ptr(), desc(y), y.data_ptr())
    return target.finish()


@register("aten::index_select.out")
def index_select_out(self, dim, index, *, out):
    """aten::index_select.out(self, dim, index, *, out)."""
    return _index_select_into(self, dim, index, out)


@register("aten::index_select")
def index_select(self, dim, index):
    """aten::index_select(self, dim, index)."""
    return _index_select_into(self, dim, index, torch.empty(0, dtype=self.dtype, device=self.device))


# ---- gather / scatter -----------------------------------------------------------------------------------------------
def _check_index(name: str, index: torch.Tensor) -> None:
    if index.dtype not in INDEX_TYPES:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index")


@register("aten::gather.out")
def gather_out(self, dim, index, *, sparse_grad=False, out):
    """aten::gather.out(self, dim, index, *, sparse_grad, out)."""
    check_same_device(self, index, out)
    if index.numel():
        _check_index("gather", index)
    if not native(self):
        return fallback(aten.gather.out, self, dim, index, sparse_grad=sparse_grad, out=out)
    axis = _axis(dim, self.dim())
    target = Destination(out, index.shape, self.dtype, (self, index))
    result = target.target
    if result.numel():
        x, i, y = at_least_1d(self, index, result)
        cnnl.gather(handle(y), axis, desc(x), x.data_ptr(), desc(i), i.data_ptr(), desc(y), y.data_ptr())
    return target.finish()


def _scatter(self, dim, index, src, out, add: bool, overload, args):
    """out = self with src (a tensor, or a number broadcast over the index) scattered or added at index."""
    tensors = [self, index, out] + ([src] if isinstance(src, torch.Tensor) else [])
    check_same_device(*tensors)
    if index.numel():
        _check_index("scatter" if not add else "scatter_add", index)
    if not native(self) or (add and self.dtype == torch.bool) or (
            isinstance(src, torch.Tensor) and src.dtype != self.dtype):
        if isinstance(src, torch.Tensor) and src.dtype != self.dtype:
            raise RuntimeError(f"{'scatter' if not add else 'scatter_add'}(): Expected self.dtype to be equal to "
                               f"src.dtype")
        return fallback(overload, *args, out=out)
    axis = _axis(dim, self.dim())
    target = Destination(out, self.shape, self.dtype, (self, index, src))
    result = target.target
    if result.numel():
        if result is not self:
            copy_into(self, result)
        if index.numel():
            if isinstance(src, torch.Tensor):
                source = src
            else:
                source = device_scalar(src, self.dtype, self.device).expand(index.shape)
            x, i, s = at_least_1d(result, index, source)
            cnnl.scatter(handle(x), axis, desc(x), x.data_ptr(), desc(i), i.data_ptr(), desc(s), s.data_ptr(),
                         desc(x), x.data_ptr(), cnnl.CNNL_SCATTER_ADD if add else cnnl.CNNL_SCATTER)
    return target.finish()


@register("aten::scatter.src_out")
def scatter_src_out(self, dim, index, src, *, out):
    """aten::scatter.src_out(self, dim, index, src, *, out)."""
    return _scatter(self, dim, index, src, out, False, aten.scatter.src_out, (self, dim, index, src))


@register("aten::scatter.value_out")
def scatter_value_out(self, dim, index, value, *, out):
    """aten::scatter.value_out(self, dim, index, value, *, out)."""
    return _scatter(self, dim, index, value, out, False, aten.scatter.value_out, (self, dim, index, value))


@register("aten::scatter_add.out")
def scatter_add_out(self, dim, index, src, *, out):
    """aten::scatter_add.out(self, dim, index, src, *, out)."""
    return _scatter(self, dim, index, src, out, True, aten.scatter_add.out, (self, dim, index, src))


@register("aten::scatter.reduce_out")
def scatter_reduce_out(self, dim, index, src, *, reduce, out):
    """aten::scatter.reduce_out(self, dim, index, src, *, reduce, out): reduce="add" natively."""
    if reduce != "add":
        return fallback(aten.scatter.reduce_out, self, dim, index, src, reduce=reduce, out=out)
    return _scatter(self, dim, index, src, out, True, aten.scatter.reduce_out, (self, dim, index, src))


@register("aten::scatter.value_reduce_out")
def scatter_value_reduce_out(self, dim, index, value, *, reduce, out):
    """aten::scatter.value_reduce_out(self, dim, index, value, *, reduce, out)."""
    if reduce != "add":
        return fallback(aten.scatter.value_reduce_out, self, dim, index, value, reduce=reduce, out=out)
    return _scatter(self, dim, index, value, out, True, aten.scatter.value_reduce_out, (self, dim, index, value))


# ---- index_put ------------------------------------------------------------------------------------------------------
def _check_indices_broadcast(indices) -> None:
    """torch's IndexError when the index tensors (a mask counting as one index of its True count per dim) cannot
    broadcast together. Counting a mask's True values waits for the device: called on error paths only."""
    shapes = []
    for index in indices:
        if index is None:
            continue
        if index.dtype in (torch.bool, torch.uint8):
            shapes.extend([[int(index.count_nonzero())]] * max(index.dim(), 1))
        else:
            shapes.append(list(index.shape))
    try:
        torch.broadcast_shapes(*shapes)
    except RuntimeError:
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together with shapes "
                         f"{', '.join(str(s) for s in shapes)}") from None


def _index_put(self, indices, values, accumulate: bool) -> torch.Tensor:
    """self[indices] = values (or += with accumulate), in place, by cnnlIndexPut."""
    if len(indices) > self.dim():  # torch_mlu's words and type (torch's CPU kernel: an IndexError)
        raise RuntimeError(f"indices have more indices than self dim: {len(indices)} indices for a tensor of "
                           f"dimension {self.dim()}")
    if values.dtype != self.dtype:
        _check_indices_broadcast(indices)  # torch checks the indices first (make_info before the iterator)
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{type_name(self.dtype)} for the destination and {type_name(values.dtype)} for the "
                           f"source.")
    usable = all(i is None or i.dtype in (torch.int32, torch.int64, torch.bool, torch.uint8) for i in indices)
    if not native(self) or not usable or not any(i is not None for i in indices) or \
            (accumulate and self.dtype == torch.bool):
        return fallback(aten._index_put_impl_.default, self, indices, values, accumulate, False)
    check_same_device(self, values)
    if self.numel() == 0:
        return self
    device = self.device
    moved = []
    for index in indices:
        if index is None:
            moved.append(None)
            continue
        if index.device != device:
            index = index.to(device)
        if index.dtype == torch.uint8:
            index = index.to(torch.bool)
        moved.append(index)
    value = values if values.device == device else values.to(device)
    h = handle(self)
    x_desc = desc(self)
    index_descs = [None if i is None else desc(i.reshape(1) if i.dim() == 0 else i) for i in moved]
    pointers = [None if i is None else i.data_ptr() for i in moved]
    v = value.reshape(1) if value.dim() == 0 else value
    size = cnnl.getIndexPutWorkspaceSize(h, x_desc, index_descs, desc(v), accumulate)
    ws, _keep = workspace(size, device)
    cnnl.indexPut(h, x_desc, self.data_ptr(), index_descs, pointers, desc(v), v.data_ptr(), ws, size, accumulate,
                  True, x_desc, self.data_ptr())
    return self


@register("aten::_index_put_impl_")
def index_put_impl_(self, indices, values, accumulate=False, unsafe=False):
    """aten::_index_put_impl_(self, indices, values, accumulate, unsafe)."""
    return _index_put(self, list(indices), values, accumulate)


@register("aten::index_put_")
def index_put_(self, indices, values, accumulate=False):
    """aten::index_put_(self, indices, values, accumulate) (x[i] = v)."""
    return _index_put(self, list(indices), values, accumulate)


# ---- index (x[indices]) ---------------------------------------------------------------------------------------------
def _integer_indices(indices, device) -> list:
    """The indices on `device`, bool/uint8 masks turned into the integer indices of their nonzero positions (one
    per dim the mask covers), as torch's expandTensors does."""
    found = []
    for index in indices:
        if index is None:
            found.append(None)
            continue
        if index.device != device:
            index = index.to(device)
        if index.dtype in (torch.bool, torch.uint8):
            found.extend(torch.nonzero(index).unbind(1))
        elif index.dtype not in INDEX_TYPES:
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        else:
            found.append(index)
    return found


def _index_shape(self: torch.Tensor, indices: list) -> tuple:
    """torch's result shape of self[indices] (integer indices), from the same op on the meta device."""
    meta = torch.empty(self.shape, dtype=self.dtype, device="meta")
    meta_indices = [None if i is None else torch.empty(i.shape, dtype=i.dtype, device="meta") for i in indices]
    return tuple(aten.index.Tensor(meta, meta_indices).shape)


@register("aten::index.Tensor_out")
def index_tensor_out(self, indices, *, out):
    """aten::index.Tensor_out(self, indices, *, out): numpy/torch advanced indexing (cnnlAdvancedIndex)."""
    indices = list(indices)
    check_same_device(self, out)
    zero_d_mask = any(i is not None and i.dim() == 0 and i.dtype in (torch.bool, torch.uint8) for i in indices)
    if not native(self) or not any(i is not None for i in indices) or self.dim() == 0 or zero_d_mask:
        return fallback(aten.index.Tensor_out, self, indices, out=out)
    if len(indices) > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()} (got {len(indices)})")
    chosen = _integer_indices(indices, self.device)
    h = handle(self)
    x_desc = desc(self)
    index_descs = [None if i is None else desc(i.reshape(1) if i.dim() == 0 else i) for i in chosen]
    shape = _index_shape(self, chosen)
    target = Destination(out, shape, self.dtype, (self, *[i for i in chosen if i is not None]))
    result = target.target
    if result.numel():
        staged = result if result.is_contiguous() else torch.empty(shape, dtype=self.dtype, device=self.device)
        view = staged.reshape(cnnl.getAdvancedIndexOutputDim(h, x_desc, index_descs)[1])  # 0-d indices: [1]
        size = cnnl.getAdvancedIndexWorkspaceSize(h, x_desc, index_descs)
        ws, _keep = workspace(size, self.device)
        cnnl.advancedIndex(h, x_desc, self.data_ptr(), index_descs, [None if i is None else i.data_ptr()
                                                                     for i in chosen], ws, size, desc(view),
                           view.data_ptr(), None, None)
        if staged is not result:
            copy_into(staged, result)
    return target.finish()


# ---- index_add / index_fill -----------------------------------------------------------------------------------------
@register("aten::index_add.out")
def index_add_out(self, dim, index, source, *, alpha=1, out):
    """aten::index_add.out(self, dim, index, source, *, alpha, out) (cnnlIndexAdd; alpha scales source first)."""
    check_same_device(self, index, source, out)
    if not native(self, source) or self.dtype == torch.bool or index.dtype not in INDEX_TYPES or \
            source.dtype != self.dtype:
        return fallback(aten.index_add.out, self, dim, index, source, alpha=alpha, out=out)
    axis = _axis(dim, self.dim())
    target = Destination(out, self.shape, self.dtype, (index, source))
    result = target.target
    if result.numel():
        if result is not self:
            copy_into(self, result)
        if index.numel():
            added = source if alpha == 1 else source * alpha
            x, s, i = at_least_1d(result, added, index.reshape(-1))
            cnnl.indexAdd(handle(x), axis, desc(x), x.data_ptr(), desc(i), i.data_ptr(), desc(s), s.data_ptr(),
                          desc(x), x.data_ptr())
    return target.finish()


def _index_fill(self, dim, index, value, overload):
    check_same_device(self, index)
    if isinstance(value, torch.Tensor) and value.dim() != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    if not native(self) or index.dtype not in INDEX_TYPES:
        return fallback(overload, self, dim, index, value)
    axis = _axis(dim, self.dim())
    if self.numel() and index.numel():
        x, i = at_least_1d(self, index.reshape(-1))
        if isinstance(value, torch.Tensor) and value.device.type == "mlu":
            fill = value if value.dtype == self.dtype else value.to(self.dtype)
            mode, number = cnnl.CNNL_POINTER_MODE_DEVICE, fill.data_ptr()
        else:
            mode, number = cnnl.CNNL_POINTER_MODE_HOST, converted(
                value.item() if isinstance(value, torch.Tensor) else value, self.dtype)
        cnnl.indexFill_v2(handle(x), axis, mode, number, desc(x), x.data_ptr(), desc(i), i.data_ptr(), desc(x),
                          x.data_ptr())
    return self


@register("aten::index_fill_.int_Scalar")
def index_fill_int_scalar_(self, dim, index, value):
    """aten::index_fill_.int_Scalar(self, dim, index, value) (cnnlIndexFill_v2)."""
    return _index_fill(self, dim, index, value, aten.index_fill_.int_Scalar)


@register("aten::index_fill_.int_Tensor")
def index_fill_int_tensor_(self, dim, index, value):
    """aten::index_fill_.int_Tensor(self, dim, index, value): a 0-d value, read on the device for mlu values."""
    return _index_fill(self, dim, index, value, aten.index_fill_.int_Tensor)
