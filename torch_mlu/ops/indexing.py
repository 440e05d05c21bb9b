"""Indexing over cnnl: index_select (cnnlIndexSelect), gather (cnnlGather), scatter / scatter_add (cnnlScatter),
index (x[i], cnnlAdvancedIndex), index_put_ (cnnlIndexPut), index_add (cnnlIndexAdd), index_fill_
(cnnlIndexFill_v2), masked_fill_ (cnnlMasked_v3 FILL), masked_select (cnnlMasked_v3 SELECT), nonzero
(cnnlNumTrue_v2 + cnnlWhere_v2) and isnan (cnnlLogicOp x != x).

Indices are range-checked when the queued op runs (an out-of-range index fails at the next synchronisation, as on
the device). masked_select and nonzero need the number of selected elements on the host: they wait for the
stream, as on CUDA.
"""
from __future__ import annotations

import torch

import cnnl

from ._core import TORCH_TO_CNNL, aten, check_same_device, desc, fallback, handle, register, workspace
from ._iter import Destination, resize_out
from .copy import copy_into
from .fill import converted, device_scalar
from .logic import logic_op

INDEX_TYPES = (torch.int32, torch.int64)


def _axis(dim: int, ndim: int) -> int:
    rank = max(ndim, 1)
    if not -rank <= dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")
    return dim % rank


def _at_least_1d(*tensors: torch.Tensor):
    return tuple(t.reshape(1) if t.dim() == 0 else t for t in tensors)


def _native(*tensors: torch.Tensor) -> bool:
    return all(t.device.type == "mlu" and t.dtype in TORCH_TO_CNNL for t in tensors)


# ---- index_select ---------------------------------------------------------------------------------------------------
def _index_select_into(self, dim, index, out):
    check_same_device(self, index, out)
    if index.dtype not in INDEX_TYPES:
        raise IndexError("index_select(): Expected dtype int32 or int64 for index")
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if not _native(self, index):
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
        x, y = _at_least_1d(self, result)
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
    if not _native(self):
        return fallback(aten.gather.out, self, dim, index, sparse_grad=sparse_grad, out=out)
    axis = _axis(dim, self.dim())
    target = Destination(out, index.shape, self.dtype, (self, index))
    result = target.target
    if result.numel():
        x, i, y = _at_least_1d(self, index, result)
        cnnl.gather(handle(y), axis, desc(x), x.data_ptr(), desc(i), i.data_ptr(), desc(y), y.data_ptr())
    return target.finish()


def _scatter(self, dim, index, src, out, add: bool, overload, args):
    """out = self with src (a tensor, or a number broadcast over the index) scattered or added at index."""
    tensors = [self, index, out] + ([src] if isinstance(src, torch.Tensor) else [])
    check_same_device(*tensors)
    if index.numel():
        _check_index("scatter" if not add else "scatter_add", index)
    if not _native(self) or (add and self.dtype == torch.bool) or (
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
            x, i, s = _at_least_1d(result, index, source)
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
def _index_put(self, indices, values, accumulate: bool) -> torch.Tensor:
    """self[indices] = values (or += with accumulate), in place, by cnnlIndexPut."""
    if len(indices) > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()} (got {len(indices)})")
    if values.dtype != self.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got {self.dtype} for "
                           f"the destination and {values.dtype} for the source.")
    usable = all(i is None or i.dtype in (torch.int32, torch.int64, torch.bool, torch.uint8) for i in indices)
    if not _native(self) or not usable or not any(i is not None for i in indices) or \
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


# ---- masked fill / select -------------------------------------------------------------------------------------------
def _masked_fill(self, mask, value, overload) -> torch.Tensor:
    if mask.dtype != torch.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{str(mask.dtype).replace('torch.', '')}")
    if isinstance(value, torch.Tensor) and value.dim() != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    check_same_device(self, mask)
    if not _native(self):
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
    x, m, f = _at_least_1d(self, m, fill)
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
    if not _native(self):
        return fallback(aten.masked_select.out, self, mask, out=out)
    shape = torch.broadcast_shapes(self.shape, mask.shape)
    x = self.expand(shape) if tuple(self.shape) != tuple(shape) else self
    m = mask if mask.device == self.device else mask.to(self.device)
    x, m = _at_least_1d(x, m)
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
    if not _native(self):
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


# ---- isnan ----------------------------------------------------------------------------------------------------------
@register("aten::isnan")
def isnan(self):
    """aten::isnan(self): x != x (False for integers)."""
    if not _native(self):
        return fallback(aten.isnan.default, self)
    result = torch.empty(self.shape, dtype=torch.bool, device=self.device)
    if result.numel():
        if self.is_floating_point():
            logic_op(cnnl.CNNL_LOGIC_OP_NE, self, self, result)
        else:
            result.zero_()
    return result


@register("aten::isnan.out")
def isnan_out(self, *, out):
    """aten::isnan.out(self, *, out)."""
    check_same_device(self, out)
    result = isnan(self)
    resize_out(out, result.shape)
    return copy_into(result, out)



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
    if not _native(self) or not any(i is not None for i in indices) or self.dim() == 0 or zero_d_mask:
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
    if not _native(self, source) or self.dtype == torch.bool or index.dtype not in INDEX_TYPES or \
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
            x, s, i = _at_least_1d(result, added, index.reshape(-1))
            cnnl.indexAdd(handle(x), axis, desc(x), x.data_ptr(), desc(i), i.data_ptr(), desc(s), s.data_ptr(),
                          desc(x), x.data_ptr())
    return target.finish()


def _index_fill(self, dim, index, value, overload):
    check_same_device(self, index)
    if isinstance(value, torch.Tensor) and value.dim() != 0:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value.dim()} dimension(s).")
    if not _native(self) or index.dtype not in INDEX_TYPES:
        return fallback(overload, self, dim, index, value)
    axis = _axis(dim, self.dim())
    if self.numel() and index.numel():
        x, i = _at_least_1d(self, index.reshape(-1))
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


def _infinity_test(name: str, sign: float, self, out):
    check_same_device(self, out)
    if not _native(self):
        return fallback(getattr(aten, name).out, self, out=out)
    target = Destination(out, self.shape, torch.bool, (self,))
    result = target.target
    if result.numel():
        if self.is_floating_point():
            logic_op(cnnl.CNNL_LOGIC_OP_EQ, self, device_scalar(sign * float("inf"), self.dtype, self.device),
                     result)
        else:
            result.zero_()
    return target.finish()


@register("aten::isposinf.out")
def isposinf_out(self, *, out):
    """aten::isposinf.out(self, *, out): x == +inf."""
    return _infinity_test("isposinf", 1.0, self, out)


@register("aten::isneginf.out")
def isneginf_out(self, *, out):
    """aten::isneginf.out(self, *, out): x == -inf."""
    return _infinity_test("isneginf", -1.0, self, out)


# ---- embedding backward ---------------------------------------------------------------------------------------------
@register("aten::embedding_dense_backward")
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    """aten::embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq): the table's
    gradient, rows summed per index (cnnlEmbeddingBackward; padding_idx -1: none)."""
    check_same_device(grad_output, indices)
    if not _native(grad_output) or not grad_output.is_floating_point() or indices.dtype not in INDEX_TYPES or \
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
    if not _native(self) or not self.is_floating_point() or indices.dtype not in INDEX_TYPES or self.dim() != 2:
        return fallback(aten.embedding_renorm_.default, self, indices, max_norm, norm_type)
    flat = indices.reshape(-1)
    if flat.numel() == 0:
        return self
    rows = self.index_select(0, flat)
    norms = torch.linalg.vector_norm(rows, norm_type, dim=1, keepdim=True)
    scale = torch.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    self.index_put_((flat,), rows * scale)
    return self
