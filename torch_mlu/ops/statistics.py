"""Statistics over dims, built on reduce.py's one cnnlReduce call: linalg_vector_norm (and so torch.norm; ord 2, 1,
+-inf, 0 and any p), count_nonzero, aminmax, and var / std / var_mean / std_mean (cnnlStdVarMean, with torch's
correction and its identities for empty reductions).
"""
from __future__ import annotations

import math

import torch

import cnnl
from mlusim.memo import BoundedMemo

from ._core import FLOATING, TORCH_TO_CNNL, aten, check_same_device, desc, fallback, handle, register, workspace
from ._iter import Destination
from .copy import copy_into
from .reduce import (ADD, MAX, MIN, NORM1, NORM2, extreme, native_extreme, normalize_dims, reduced_shape,
                     run_reduce)


# ---- norms ----------------------------------------------------------------------------------------------------------
@register("aten::linalg_vector_norm.out")
def linalg_vector_norm_out(self, ord=2, dim=None, keepdim=False, *, dtype=None, out):
    """aten::linalg_vector_norm.out(self, ord, dim, keepdim, *, dtype, out): ord 1 and 2 by cnnl's NORM1/NORM2,
    inf/-inf as amax/amin of |x|, 0 as the count of nonzeros, any other p as (sum |x|^p)^(1/p)."""
    check_same_device(self, out)
    compute = dtype if dtype is not None else self.dtype
    if self.device.type != "mlu" or compute not in FLOATING or self.dtype not in FLOATING:
        return fallback(aten.linalg_vector_norm.out, self, ord, dim, keepdim, dtype=dtype, out=out)
    axes = normalize_dims(dim, self.dim())
    shape = reduced_shape(self.shape, axes, keepdim)
    ord = float(ord)
    empty_axis = any(self.shape[d] == 0 for d in axes)
    if empty_axis and ord < 0:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord} norm on an empty tensor because the "
                           f"operation does not have an identity")
    if out.dtype != compute:
        raise RuntimeError(f"linalg.vector_norm expected out tensor dtype {compute} but got: {out.dtype}")
    destination = Destination(out, shape, compute, (self,))
    result = destination.target
    if result.numel() == 0:
        return destination.finish()
    x = self if self.dtype == compute else self.to(compute)
    if empty_axis or self.numel() == 0:
        result.zero_()
    elif ord == 2.0:
        run_reduce(NORM2, x, axes, result)
    elif ord == 1.0:
        run_reduce(NORM1, x, axes, result)
    elif math.isinf(ord):
        run_reduce(MAX if ord > 0 else MIN, x.abs(), axes, result)
    elif ord == 0.0:
        run_reduce(ADD, x.ne(0).to(compute), axes, result)
    else:
        run_reduce(ADD, x.abs().pow(ord), axes, result)
        result.pow_(1.0 / ord)
    return destination.finish()


@register("aten::count_nonzero.dim_IntList")
def count_nonzero(self, dim):
    """aten::count_nonzero.dim_IntList(self, dim): int64 counts of nonzero elements."""
    if self.device.type != "mlu" or self.dtype not in TORCH_TO_CNNL:
        return fallback(aten.count_nonzero.dim_IntList, self, dim)
    return self.ne(0).sum(dim=list(dim) if len(dim) else None, dtype=torch.int64) if len(dim) else \
        self.ne(0).sum(dtype=torch.int64)


@register("aten::aminmax.out")
def aminmax_out(self, *, dim=None, keepdim=False, min, max):
    """aten::aminmax.out(self, *, dim, keepdim, min, max)."""
    check_same_device(self, min, max)
    if not native_extreme(self):
        return fallback(aten.aminmax.out, self, dim=dim, keepdim=keepdim, min=min, max=max)
    dims = None if dim is None else [dim]
    if dim is None and self.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    extreme(MIN, "aminmax", self, dims, keepdim, min, None)
    extreme(MAX, "aminmax", self, dims, keepdim, max, None)
    if dim is None and keepdim:
        for t in (min, max):
            t.resize_((1,) * self.dim())
    return min, max


# ---- var / std ------------------------------------------------------------------------------------------------------
_moment_descriptors = BoundedMemo(4096)  # made cnnl descriptors, by what they were set to


def _moment_descriptor(op: int, axes: tuple, unbiased: bool):
    key = (op, axes, unbiased)
    found = _moment_descriptors.get(key)
    if found is None:
        found = cnnl.createStdVarMeanDescriptor()
        cnnl.setStdVarMeanDescriptor(found, op, list(axes), unbiased)
        _moment_descriptors.put(key, found)
    return found


def _moments(name: str, self: torch.Tensor, dim, correction, keepdim: bool, spread: torch.Tensor,
             mean: torch.Tensor | None, overload, args, kwargs):
    """var or std (and the mean) over dims by cnnlStdVarMean, into `spread` (and `mean`); corrections other than
    0 and 1 rescale the biased variance."""
    check_same_device(self, spread, *([mean] if mean is not None else []))
    correction = 1 if correction is None else correction
    if self.dtype not in FLOATING and not self.is_complex():
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if self.device.type != "mlu" or self.dtype not in FLOATING or spread.dtype != self.dtype or \
            (mean is not None and mean.dtype != self.dtype):
        return fallback(overload, *args, **kwargs)
    axes = normalize_dims(dim, self.dim())
    shape = reduced_shape(self.shape, axes, keepdim)
    targets = [Destination(spread, shape, self.dtype, (self,))]
    if mean is not None:
        targets.append(Destination(mean, shape, self.dtype, (self,)))
    results = [t.target if t.target.is_contiguous() else torch.empty(shape, dtype=self.dtype, device=self.device)
               for t in targets]
    if results[0].numel():
        if self.numel() == 0 or any(self.shape[d] == 0 for d in axes):
            for result in results:
                result.fill_(math.nan)
        else:
            x, axes = (self.reshape(1), (0,)) if self.dim() == 0 else (self, axes or (0,))
            exact = correction in (0, 1)  # cnnl's unbiased flag; another correction rescales the biased variance
            op = cnnl.CNNL_STD if name == "std" and exact else cnnl.CNNL_VAR
            descriptor = _moment_descriptor(op, axes, correction == 1)
            h = handle(x)
            x_desc = desc(x)
            size = cnnl.getStdVarMeanWorkspaceSize(h, descriptor, x_desc)
            ws, _keep = workspace(size, x.device)
            keep = reduced_shape(x.shape, axes, True)
            views = [r.reshape(keep) for r in results]
            spread_desc = desc(views[0])
            mean_desc, mean_ptr = (desc(views[1]), views[1].data_ptr()) if mean is not None else (None, None)
            std_args = (spread_desc, views[0].data_ptr(), None, None) if name == "std" else \
                (None, None, spread_desc, views[0].data_ptr())
            if not exact:
                std_args = (None, None, spread_desc, views[0].data_ptr())
            cnnl.stdVarMean(h, descriptor, x_desc, x.data_ptr(), ws, size, *std_args, mean_desc, mean_ptr)
            if not exact:  # torch: sum of squares / max(0, N - correction)
                count = math.prod(x.shape[a] for a in axes)
                remaining = max(0.0, count - correction)
                results[0].mul_(count / remaining if remaining else math.inf)
                if name == "std":
                    results[0].sqrt_()
    for target, result in zip(targets, results):
        if result is not target.target:
            copy_into(result, target.target)
        target.finish()
    return (spread, mean) if mean is not None else spread


def _register_moments(name: str) -> None:
    out_overload = getattr(aten, name).correction_out
    functional = getattr(aten, name).correction
    pair = getattr(aten, f"{name}_mean")

    def out_kernel(self, dim=None, *, correction=None, keepdim=False, out):
        return _moments(name, self, dim, correction, keepdim, out, None, out_overload, (self, dim),
                        {"correction": correction, "keepdim": keepdim, "out": out})

    def functional_kernel(self, dim=None, *, correction=None, keepdim=False):
        spread = torch.empty(0, dtype=self.dtype if self.dtype in FLOATING else torch.float32, device=self.device)
        return _moments(name, self, dim, correction, keepdim, spread, None, functional, (self, dim),
                        {"correction": correction, "keepdim": keepdim})

    def pair_kernel(self, dim=None, *, correction=None, keepdim=False):
        spread = torch.empty(0, dtype=self.dtype if self.dtype in FLOATING else torch.float32, device=self.device)
        mean = torch.empty(0, dtype=spread.dtype, device=self.device)
        return _moments(name, self, dim, correction, keepdim, spread, mean, pair.correction, (self, dim),
                        {"correction": correction, "keepdim": keepdim})

    for kernel, overload, doc in ((out_kernel, f"{name}.correction_out", "out= form"),
                                  (functional_kernel, f"{name}.correction", "the spread over dims"),
                                  (pair_kernel, f"{name}_mean.correction", "(spread, mean)")):
        kernel.__name__ = overload.replace(".", "_")
        kernel.__doc__ = f"aten::{overload}(self, dim, *, correction, keepdim): {doc} (cnnlStdVarMean)."
        register(f"aten::{overload}")(kernel)


_register_moments("var")
_register_moments("std")
