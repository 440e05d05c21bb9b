"""Reductions over cnnlReduce: sum, mean, prod, amax, amin, max/min (with and without dim), argmax, argmin, any,
all (norms, count_nonzero, aminmax, var/std: statistics.py, over `run_reduce` here).

torch's dtype rules: sum and prod of integers and bool give int64 (or the `dtype=` asked for), mean needs a
floating input (or dtype), argmax/argmin and the indices of max/min are int64, any/all give bool. Empty
reductions give torch's identities (sum 0, prod 1, mean NaN) or torch's errors (max/min/argmax). Half and bfloat16
accumulate in float32 (cnnl's computation type).
"""
from __future__ import annotations

import math

import torch

import cnnl
from mlusim.memo import BoundedMemo

from ._core import FLOATING, TORCH_TO_CNNL, aten, check_same_device, desc, fallback, handle, register, workspace
from ._iter import Destination, INTEGRAL, cpp_name, type_name
from .copy import copy_into

ADD, AVG, MUL, MAX, MIN = (cnnl.CNNL_REDUCE_ADD, cnnl.CNNL_REDUCE_AVG, cnnl.CNNL_REDUCE_MUL, cnnl.CNNL_REDUCE_MAX,
                           cnnl.CNNL_REDUCE_MIN)
NORM1, NORM2 = cnnl.CNNL_REDUCE_NORM1, cnnl.CNNL_REDUCE_NORM2
NUMERIC = frozenset(TORCH_TO_CNNL) - {torch.bool}
_descriptors = BoundedMemo(4096)  # made cnnl descriptors, by what they were set to


def _reduce_descriptor(op: int, axes: tuple, dtype: torch.dtype, indices: int):
    key = (op, axes, dtype, indices)
    found = _descriptors.get(key)
    if found is None:
        compute = cnnl.CNNL_DTYPE_FLOAT if dtype in (torch.float16, torch.bfloat16) else TORCH_TO_CNNL[dtype]
        found = cnnl.createReduceDescriptor()
        cnnl.setReduceDescriptor(found, list(axes), op, compute, cnnl.CNNL_PROPAGATE_NAN, indices,
                                 cnnl.CNNL_32BIT_INDICES)
        _descriptors.put(key, found)
    return found


# ---- dims -----------------------------------------------------------------------------------------------------------
def normalize_dims(dims, ndim: int, name: str = "dim") -> tuple:
    """Sorted, unique, non-negative reduction dims; None or [] means every dim (a 0-d tensor has dim 0 / -1)."""
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = (dims,)
    if len(dims) == 0:
        return tuple(range(ndim))
    rank = max(ndim, 1)
    seen = []
    for d in dims:
        if not -rank <= d < rank:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {d})")
        d = d % rank
        if d in seen:
            raise RuntimeError(f"{name} {d} appears multiple times in the list of dims")
        seen.append(d)
    return tuple(sorted(d for d in seen if d < ndim)) if ndim else ()


def reduced_shape(shape, axes: tuple, keepdim: bool) -> tuple:
    if keepdim:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


# ---- the one cnnlReduce call ---------------------------------------------------------------------------------------
def run_reduce(op: int, x: torch.Tensor, axes: tuple, values: torch.Tensor | None,
               indices: torch.Tensor | None = None) -> None:
    """cnnlReduce of `x` over `axes` (non-empty extents) into `values` (x's dtype; keepdim or squeezed shape, any
    strides) and/or `indices` (an int64 tensor of the same shape)."""
    if x.dim() == 0:
        x, axes = x.reshape(1), (0,)
    if not axes:  # nothing reduced: a copy
        if values is not None:
            copy_into(x.reshape(values.shape), values)
        if indices is not None:
            indices.zero_()
        return
    keep = reduced_shape(x.shape, axes, True)
    mode = cnnl.CNNL_REDUCE_NO_INDICES if indices is None else (
        cnnl.CNNL_REDUCE_FLATTENED_INDICES if values is not None else cnnl.CNNL_REDUCE_ONLY_INDICES)
    descriptor = _reduce_descriptor(op, axes, x.dtype, mode)
    target = torch.empty(keep, dtype=x.dtype, device=x.device) if values is None else _with_kept_dims(values, keep,
                                                                                                      axes)
    h = handle(x)
    x_desc, out_desc = desc(x), desc(target)
    size = cnnl.getReduceOpWorkspaceSize(h, x_desc, out_desc, descriptor)
    ws, _keep = workspace(size, x.device)
    index_buffer = None if indices is None else torch.empty(keep, dtype=torch.int32, device=x.device)
    cnnl.reduce(h, descriptor, ws, size, 1, x_desc, x.data_ptr(),
                0 if index_buffer is None else index_buffer.numel() * 4,
                None if index_buffer is None else index_buffer.data_ptr(), 0, out_desc, target.data_ptr())
    if indices is not None:
        copy_into(index_buffer.reshape(indices.shape), indices)


def _with_kept_dims(values: torch.Tensor, keep: tuple, axes: tuple) -> torch.Tensor:
    """`values` (keepdim or squeezed) as a view of the keepdim shape."""
    if tuple(values.shape) == keep:
        return values
    for axis in axes:
        values = values.unsqueeze(axis)
    return values


# ---- sum / mean / prod ----------------------------------------------------------------------------------------------
def _accumulated(kind: str, self: torch.Tensor, dims, keepdim: bool, dtype, out: torch.Tensor, overload, args):
    """sum / mean / prod into `out` (the shared body of their out= kernels)."""
    check_same_device(self, out)
    if kind == "mean" and (dtype or self.dtype) not in FLOATING:
        raise RuntimeError(f"mean(): could not infer output dtype. {'Optional' if dtype else 'Input'} dtype must be "
                           f"either a floating point or complex dtype. Got: {type_name(dtype or self.dtype)}")
    if dtype is not None and out.dtype != dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {cpp_name(dtype)}, but got {cpp_name(out.dtype)} "
                           f"instead")
    dtype = out.dtype
    axes = normalize_dims(dims, self.dim())
    shape = reduced_shape(self.shape, axes, keepdim)
    if dtype not in NUMERIC or self.device.type != "mlu" or self.dtype not in TORCH_TO_CNNL:
        return fallback(overload, *args, dtype=dtype, out=out)
    destination = Destination(out, shape, dtype, (self,))
    result = destination.target
    if result.numel() == 0:
        return destination.finish()
    x = self if self.dtype == dtype else self.to(dtype)
    if any(self.shape[d] == 0 for d in axes) or self.numel() == 0:
        result.fill_({"sum": 0, "prod": 1, "mean": math.nan}[kind])
        return destination.finish()
    run_reduce({"sum": ADD, "mean": AVG, "prod": MUL}[kind], x, axes, result)
    return destination.finish()


@register("aten::sum.IntList_out")
def sum_out(self, dim, keepdim=False, *, dtype=None, out):
    """aten::sum.IntList_out(self, dim, keepdim, *, dtype, out) (torch.sum in all forms)."""
    return _accumulated("sum", self, dim, keepdim, dtype, out, aten.sum.IntList_out, (self, dim, keepdim))


@register("aten::mean.out")
def mean_out(self, dim, keepdim=False, *, dtype=None, out):
    """aten::mean.out(self, dim, keepdim, *, dtype, out) (torch.mean in all forms)."""
    return _accumulated("mean", self, dim, keepdim, dtype, out, aten.mean.out, (self, dim, keepdim))


@register("aten::prod.int_out")
def prod_int_out(self, dim, keepdim=False, *, dtype=None, out):
    """aten::prod.int_out(self, dim, keepdim, *, dtype, out)."""
    return _accumulated("prod", self, [dim], keepdim, dtype, out, aten.prod.int_out, (self, dim, keepdim))


@register("aten::prod")
def prod(self, *, dtype=None):
    """aten::prod(self, *, dtype): the product of every element."""
    if dtype is None:
        dtype = torch.int64 if self.dtype in INTEGRAL else self.dtype
    if self.device.type != "mlu" or self.dtype not in TORCH_TO_CNNL or dtype not in NUMERIC:
        return fallback(aten.prod.default, self, dtype=dtype)
    out = torch.empty((), dtype=dtype, device=self.device)
    return _accumulated("prod", self, None, False, dtype, out, None, ())


@register("aten::sum")
def sum_all(self, *, dtype=None):
    """aten::sum(self, *, dtype): the sum of every element."""
    if dtype is None:
        dtype = torch.int64 if self.dtype in INTEGRAL else self.dtype
    if self.device.type != "mlu" or self.dtype not in TORCH_TO_CNNL or dtype not in NUMERIC:
        return fallback(aten.sum.default, self, dtype=dtype)
    out = torch.empty((), dtype=dtype, device=self.device)
    return _accumulated("sum", self, None, False, dtype, out, None, ())


# ---- max / min ------------------------------------------------------------------------------------------------------
def extreme(op: int, name: str, self: torch.Tensor, dims, keepdim: bool, out: torch.Tensor | None,
             indices_out: torch.Tensor | None, want_values: bool = True):
    """amax/amin (values only), max/min.dim (values and indices), argmax/argmin (indices only)."""
    axes = normalize_dims(dims, self.dim())
    empty = next((d for d in axes if self.shape[d] == 0), None)
    if empty is not None or (self.dim() == 0 and self.numel() == 0):
        raise IndexError(f"{name}(): Expected reduction dim {empty or 0} to have non-zero size.")
    shape = reduced_shape(self.shape, axes, keepdim)
    values = indices = None
    finishers = []
    if want_values:
        if out.dtype != self.dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {cpp_name(self.dtype)}, but got "
                               f"{cpp_name(out.dtype)} instead")
        target = Destination(out, shape, self.dtype, (self,))
        values, finishers = target.target, [target]
    if indices_out is not None:
        if indices_out.dtype != torch.int64:
            raise RuntimeError(f"Expected out tensor to have dtype long int, but got {cpp_name(indices_out.dtype)} "
                               f"instead")
        target = Destination(indices_out, shape, torch.int64, (self,))
        indices = target.target
        finishers.append(target)
    if (values is None or values.numel()) and (indices is None or indices.numel()):
        run_reduce(op, self, axes, values, indices)
    for finisher in finishers:
        finisher.finish()


def native_extreme(self: torch.Tensor) -> bool:
    return self.device.type == "mlu" and self.dtype in TORCH_TO_CNNL


@register("aten::amax.out")
def amax_out(self, dim=(), keepdim=False, *, out):
    """aten::amax.out(self, dim, keepdim, *, out)."""
    check_same_device(self, out)
    if not native_extreme(self):
        return fallback(aten.amax.out, self, dim, keepdim, out=out)
    extreme(MAX, "amax", self, dim, keepdim, out, None)
    return out


@register("aten::amin.out")
def amin_out(self, dim=(), keepdim=False, *, out):
    """aten::amin.out(self, dim, keepdim, *, out)."""
    check_same_device(self, out)
    if not native_extreme(self):
        return fallback(aten.amin.out, self, dim, keepdim, out=out)
    extreme(MIN, "amin", self, dim, keepdim, out, None)
    return out


def _dim_form(op: int, name: str, self, dim: int, keepdim: bool, values, indices, overload, out_names):
    check_same_device(self, values, indices)
    if not native_extreme(self):
        return fallback(overload, self, dim, keepdim, **dict(zip(out_names, (values, indices))))
    extreme(op, name, self, [dim], keepdim, values, indices)
    return values, indices


@register("aten::max.dim_max")
def max_dim_out(self, dim, keepdim=False, *, max, max_values):
    """aten::max.dim_max(self, dim, keepdim, *, max, max_values): values and (int64) indices."""
    return _dim_form(MAX, "max", self, dim, keepdim, max, max_values, aten.max.dim_max, ("max", "max_values"))


@register("aten::min.dim_min")
def min_dim_out(self, dim, keepdim=False, *, min, min_indices):
    """aten::min.dim_min(self, dim, keepdim, *, min, min_indices)."""
    return _dim_form(MIN, "min", self, dim, keepdim, min, min_indices, aten.min.dim_min, ("min", "min_indices"))


def _whole(op: int, name: str, self: torch.Tensor) -> torch.Tensor:
    if not native_extreme(self):
        return fallback(getattr(aten, name).default, self)
    if self.numel() == 0:
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           f"reduction dim with the 'dim' argument.")
    out = torch.empty((), dtype=self.dtype, device=self.device)
    extreme(op, name, self, None, False, out, None)
    return out


@register("aten::max")
def max_all(self):
    """aten::max(self): the largest element (NaN if any)."""
    return _whole(MAX, "max", self)


@register("aten::min")
def min_all(self):
    """aten::min(self): the smallest element (NaN if any)."""
    return _whole(MIN, "min", self)


def _arg(op: int, name: str, self: torch.Tensor, dim, keepdim: bool, out: torch.Tensor):
    check_same_device(self, out)
    if not native_extreme(self) or self.dtype == torch.bool:
        return fallback(getattr(aten, name).out, self, dim, keepdim, out=out)
    if self.numel() == 0:
        if dim is None:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
    if dim is None:
        flat = self.reshape(-1)
        extreme(op, name, flat, [0], False, None, out, want_values=False)
        if keepdim:
            out.resize_((1,) * self.dim())
        return out
    extreme(op, name, self, [dim], keepdim, None, out, want_values=False)
    return out


@register("aten::argmax.out")
def argmax_out(self, dim=None, keepdim=False, *, out):
    """aten::argmax.out(self, dim, keepdim, *, out): first index of the maximum (int64)."""
    return _arg(MAX, "argmax", self, dim, keepdim, out)


@register("aten::argmin.out")
def argmin_out(self, dim=None, keepdim=False, *, out):
    """aten::argmin.out(self, dim, keepdim, *, out)."""
    return _arg(MIN, "argmin", self, dim, keepdim, out)


# ---- any / all ------------------------------------------------------------------------------------------------------
def _truth(kind: str, self: torch.Tensor, dims, keepdim: bool, out: torch.Tensor, overload, args):
    """any = max of (x != 0), all = min of (x != 0), as bool (uint8 in, uint8 out as torch)."""
    check_same_device(self, out)
    if self.device.type != "mlu" or self.dtype not in TORCH_TO_CNNL:
        return fallback(overload, *args, out=out)
    axes = normalize_dims(dims, self.dim())
    shape = reduced_shape(self.shape, axes, keepdim)
    result_dtype = torch.uint8 if self.dtype == torch.uint8 else torch.bool
    destination = Destination(out, shape, result_dtype, (self,))
    result = destination.target
    if result.numel() == 0:
        return destination.finish()
    if self.numel() == 0 or any(self.shape[d] == 0 for d in axes):
        result.fill_(kind == "all")
        return destination.finish()
    truth = self if self.dtype == torch.bool else self.ne(0)
    if result.dtype == torch.bool:
        run_reduce(MAX if kind == "any" else MIN, truth, axes, result)
    else:
        flags = torch.empty(shape, dtype=torch.bool, device=self.device)
        run_reduce(MAX if kind == "any" else MIN, truth, axes, flags)
        copy_into(flags, result)
    return destination.finish()


@register("aten::any.all_out")
def any_all_out(self, *, out):
    """aten::any.all_out(self, *, out)."""
    return _truth("any", self, None, False, out, aten.any.all_out, (self,))


@register("aten::all.all_out")
def all_all_out(self, *, out):
    """aten::all.all_out(self, *, out)."""
    return _truth("all", self, None, False, out, aten.all.all_out, (self,))


@register("aten::any.dims_out")
def any_dims_out(self, dim=None, keepdim=False, *, out):
    """aten::any.dims_out(self, dim, keepdim, *, out)."""
    return _truth("any", self, dim, keepdim, out, aten.any.dims_out, (self, dim, keepdim))


@register("aten::all.dims_out")
def all_dims_out(self, dim=None, keepdim=False, *, out):
    """aten::all.dims_out(self, dim, keepdim, *, out)."""
    return _truth("all", self, dim, keepdim, out, aten.all.dims_out, (self, dim, keepdim))


@register("aten::any.out")
def any_out(self, dim, keepdim=False, *, out):
    """aten::any.out(self, dim, keepdim, *, out)."""
    return _truth("any", self, [dim], keepdim, out, aten.any.out, (self, dim, keepdim))


@register("aten::all.out")
def all_out(self, dim, keepdim=False, *, out):
    """aten::all.out(self, dim, keepdim, *, out)."""
    return _truth("all", self, [dim], keepdim, out, aten.all.out, (self, dim, keepdim))
