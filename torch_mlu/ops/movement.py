"""Data movement and creation over cnnl: flip (cnnlFlip), roll (cnnlRoll), tril / triu (cnnlTri), arange
(cnnlArange_v2), linspace (cnnlLinspace), and nan_to_num (cnnlMasked_v3 fills)."""
from __future__ import annotations

import math

import torch

import cnnl

from ._core import FLOATING, TORCH_TO_CNNL, aten, check_same_device, desc, fallback, handle, register, workspace
from ._iter import Destination, check_castable, resize_out

HIGH = cnnl.CNNL_COMPUTATION_HIGH_PRECISION


def _native(*tensors: torch.Tensor) -> bool:
    return all(t.device.type == "mlu" and t.dtype in TORCH_TO_CNNL for t in tensors)


def _axes(dims, ndim: int) -> list[int]:
    rank = max(ndim, 1)
    found = []
    for d in dims:
        if not -rank <= d < rank:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got "
                             f"{d})")
        d %= rank
        if d in found:
            raise RuntimeError(f"dims has duplicates, original flip dims size={len(dims)}, but unique flip dims "
                               f"size={len(set(x % rank for x in dims))}")
        found.append(d)
    return found


# ---- flip / roll ----------------------------------------------------------------------------------------------------
def _flip_into(self, dims, out):
    check_same_device(self, out)
    if not _native(self):
        return fallback(aten.flip.out, self, dims, out=out)
    axes = [a for a in _axes(dims, self.dim()) if a < self.dim()]
    target = Destination(out, self.shape, self.dtype, (self,))
    result = target.target
    if result.numel():
        if not axes or self.dim() == 0:
            result.copy_(self)
        else:
            cnnl.flip(handle(result), axes, desc(self), self.data_ptr(), desc(result), result.data_ptr())
    return target.finish()


@register("aten::flip")
def flip(self, dims):
    """aten::flip(self, dims) (cnnlFlip)."""
    return _flip_into(self, dims, torch.empty(self.shape, dtype=self.dtype, device=self.device))


@register("aten::flip.out")
def flip_out(self, dims, *, out):
    """aten::flip.out(self, dims, *, out)."""
    return _flip_into(self, dims, out)


def _roll_into(self, shifts, dims, out):
    check_same_device(self, out)
    shifts, dims = list(shifts), list(dims)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) != 1:
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if dims and len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    if not _native(self):
        return fallback(aten.roll.out, self, shifts, dims, out=out)
    target = Destination(out, self.shape, self.dtype, (self,))
    result = target.target
    if result.numel():
        x = self.reshape(1) if self.dim() == 0 else self
        y = result.reshape(1) if self.dim() == 0 else result
        axes = _axes(dims, self.dim()) if dims else None
        h = handle(y)
        x_desc = desc(x)
        size = cnnl.getRollWorkspaceSize(h, x_desc)
        ws, _keep = workspace(size, self.device)
        cnnl.roll(h, x_desc, x.data_ptr(), shifts, axes, ws, size, desc(y), y.data_ptr())
    return target.finish()


@register("aten::roll")
def roll(self, shifts, dims=()):
    """aten::roll(self, shifts, dims) (cnnlRoll; no dims: the flattened tensor)."""
    return _roll_into(self, shifts, dims, torch.empty(self.shape, dtype=self.dtype, device=self.device))


@register("aten::roll.out")
def roll_out(self, shifts, dims=(), *, out):
    """aten::roll.out(self, shifts, dims, *, out)."""
    return _roll_into(self, shifts, dims, out)


# ---- tril / triu ----------------------------------------------------------------------------------------------------
def _triangle(upper: bool, self, diagonal: int, out, overload):
    check_same_device(self, out)
    if self.dim() < 2:
        raise RuntimeError(f"{'triu' if upper else 'tril'}: input tensor must have at least 2 dimensions")
    if not _native(self):
        return fallback(overload, self, diagonal, out=out)
    check_castable(self.dtype, out)
    target = Destination(out, self.shape, self.dtype, (self,))
    result = target.target
    if result.numel():
        cnnl.tri(handle(result), diagonal, upper, desc(self), self.data_ptr(), desc(result), result.data_ptr())
    return target.finish()


@register("aten::tril.out")
def tril_out(self, diagonal=0, *, out):
    """aten::tril.out(self, diagonal, *, out) (cnnlTri, the lower triangle)."""
    return _triangle(False, self, diagonal, out, aten.tril.out)


@register("aten::triu.out")
def triu_out(self, diagonal=0, *, out):
    """aten::triu.out(self, diagonal, *, out) (cnnlTri, the upper triangle)."""
    return _triangle(True, self, diagonal, out, aten.triu.out)


@register("aten::tril_")
def tril_(self, diagonal=0):
    """aten::tril_(self, diagonal)."""
    return _triangle(False, self, diagonal, self, aten.tril.out)


@register("aten::triu_")
def triu_(self, diagonal=0):
    """aten::triu_(self, diagonal)."""
    return _triangle(True, self, diagonal, self, aten.triu.out)


# ---- arange / linspace ----------------------------------------------------------------------------------------------
def _int_range_size(start, end, step) -> int | None:
    """The length of arange(start, end, step) for Python ints below 2^53 whose step goes from start toward end (the
    ceiling of (end - start) / step, which torch's integer and double formulas both give there); None for anything
    else, whose size or error the meta device gives (the meta arange costs ~0.7 ms)."""
    if not all(type(v) is int and abs(v) < 2 ** 53 for v in (start, end, step)):
        return None
    if not ((step > 0 and end >= start) or (step < 0 and end <= start)):
        return None
    return (end - start + step - (1 if step > 0 else -1)) // step


@register("aten::arange.start_out")
def arange_start_out(start, end, step=1, *, out):
    """aten::arange.start_out(start, end, step, *, out) (cnnlArange_v2): torch's size rules and errors, taken from
    the same call on the meta device unless the bounds are plain integers (`_int_range_size`)."""
    size = _int_range_size(start, end, step)
    shape = (size,) if size is not None else torch.arange(start, end, step, dtype=out.dtype, device="meta").shape
    if out.device.type != "mlu" or out.dtype not in TORCH_TO_CNNL or out.dtype == torch.bool:
        return fallback(aten.arange.start_out, start, end, step, out=out)
    resize_out(out, shape)
    if out.numel():
        target = out if out.is_contiguous() else torch.empty(shape, dtype=out.dtype, device=out.device)
        first = start.item() if isinstance(start, torch.Tensor) else start
        stride = step.item() if isinstance(step, torch.Tensor) else step
        if not out.dtype.is_floating_point:
            first, stride = int(first), int(stride)
        cnnl.arange_v2(handle(target), HIGH, first, stride, desc(target), target.data_ptr())
        if target is not out:
            out.copy_(target)
    return out


@register("aten::linspace.out")
def linspace_out(start, end, steps, *, out):
    """aten::linspace.out(start, end, steps, *, out) (cnnlLinspace, float32/half/bfloat16 outputs)."""
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    values = [v.item() if isinstance(v, torch.Tensor) else v for v in (start, end)]
    if out.device.type != "mlu" or out.dtype not in (torch.float32, torch.float16, torch.bfloat16) or \
            any(isinstance(v, complex) or not math.isfinite(float(v)) for v in values):
        return fallback(aten.linspace.out, start, end, steps, out=out)
    resize_out(out, (steps,))
    if steps:
        target = out if out.is_contiguous() else torch.empty((steps,), dtype=out.dtype, device=out.device)
        cnnl.linspace(handle(target), float(values[0]), float(values[1]), desc(target), target.data_ptr())
        if target is not out:
            out.copy_(target)
    return out


# ---- nan_to_num -----------------------------------------------------------------------------------------------------
@register("aten::nan_to_num.out")
def nan_to_num_out(self, nan=None, posinf=None, neginf=None, *, out):
    """aten::nan_to_num.out(self, nan, posinf, neginf, *, out): NaN, +inf and -inf replaced (the dtype's largest and
    smallest finite values by default)."""
    check_same_device(self, out)
    if not _native(self):
        return fallback(aten.nan_to_num.out, self, nan, posinf, neginf, out=out)
    target = Destination(out, self.shape, self.dtype, ())
    result = target.target
    if result is not self:
        result.copy_(self)
    if self.dtype in FLOATING and result.numel():
        info = torch.finfo(self.dtype)
        masks = torch.isnan(self), self == math.inf, self == -math.inf  # all taken before the first fill
        for mask, value in zip(masks, (0.0 if nan is None else nan, info.max if posinf is None else posinf,
                                       info.min if neginf is None else neginf)):
            result.masked_fill_(mask, value)
    return target.finish()
