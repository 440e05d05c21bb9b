"""Interpolation (resize) forward and backward, the numerics of `cnnlInterp_v3` / `cnnlInterpBackward_v2`, on
channel-last views x (N, *spatial, C) with 1 to 3 spatial axes.

Every mode is separable: output position o of an axis of input extent n reads input taps with weights computed
from a source coordinate src(o), in the compute dtype (float32 for half/bfloat16/float, float64 for double), the way
PyTorch's CPU upsampling kernels compute them:
  ratio  = (n - 1) / (o_n - 1) for ALIGN_CORNERS (0 when o_n == 1); 1 / scale when a scale factor is given;
           else n / o_n
  src(o) = ratio * o                       ALIGN_CORNERS, ASYMMETRIC
           ratio * (o + 0.5) - 0.5         HALF_PIXEL (PYTORCH_HALF_PIXEL: 0 when o_n == 1)
           ratio * (o + 0.5)               HALF_PIXEL_NEAREST (nearest-exact, tf_half_pixel_for_nn)
  nearest: index = round(src) by the round mode (floor, ceil, half down, half up), clamped to [0, n - 1];
           with PyTorch's shortcuts o_n == n (copy) and o_n == 2 n (o >> 1) for the asymmetric floor mode
  linear:  src clamped at 0 (not for align corners), i0 = min(floor(src), n - 1), i1 = i0 + (i0 < n - 1),
           lambda = clamp(src - i0, 0, 1), weights (1 - lambda, lambda); o_n == n copies
  cubic:   src unclamped, i = floor(src), t = src - i, taps i - 1 .. i + 2 clamped into the input, Keys weights
           with coefficient A (-0.75 as PyTorch); `exclude_outside` drops taps outside the input and renormalises
The products run through the separable tap kernel of `pool` (one nogil numba kernel, both cores); the backward is
the same kernel over the transposed tap tables (each input gathers the outputs that read it). Three spatial axes
run as two passes (depth, then rows and columns) through a float buffer of the compute dtype.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .dtypes import compute_dtype
from .pool import TapAxis, depth_sum, separable_sum

NEAREST, LINEAR, CUBIC = "nearest", "linear", "cubic"
#: coordinate rules (see the module doc)
HALF_PIXEL, PYTORCH_HALF_PIXEL, ALIGN_CORNERS, ASYMMETRIC, HALF_PIXEL_NEAREST = range(5)
#: nearest rounding rules
FLOOR, CEIL, ROUND_HALF_DOWN, ROUND_HALF_UP = range(4)


@dataclass(frozen=True)
class Interp:
    """One interpolation's rules: kind (NEAREST, LINEAR, CUBIC), coordinate rule, nearest rounding, cubic
    coefficient and whether cubic taps outside the input are excluded."""

    kind: str
    coordinate: int
    rounding: int = FLOOR
    cubic_a: float = -0.75
    exclude_outside: bool = False


def _ratio(spec: Interp, size: int, extent: int, scale, dtype):
    if spec.coordinate == ALIGN_CORNERS:
        return dtype.type(size - 1) / dtype.type(extent - 1) if extent > 1 else dtype.type(0)
    if scale is not None and scale > 0:
        return dtype.type(1.0 / scale)
    return dtype.type(size) / dtype.type(extent)


def _source(spec: Interp, ratio, extent: int, dtype):
    o = np.arange(extent, dtype=dtype)
    if spec.coordinate in (ALIGN_CORNERS, ASYMMETRIC):
        return ratio * o
    if spec.coordinate == HALF_PIXEL_NEAREST:
        return ratio * (o + dtype.type(0.5))
    src = ratio * (o + dtype.type(0.5)) - dtype.type(0.5)
    if spec.coordinate == PYTORCH_HALF_PIXEL and extent == 1:
        src[:] = 0
    return src


def _round(src, rounding):
    if rounding == FLOOR:
        return np.floor(src)
    if rounding == CEIL:
        return np.ceil(src)
    if rounding == ROUND_HALF_DOWN:
        return np.ceil(src - 0.5)
    return np.floor(src + 0.5)


def axis_taps(spec: Interp, size: int, extent: int, scale, dtype):
    """(taps (extent, k) int64, weights (extent, k)) of one axis of input extent `size`, output `extent`."""
    dtype = np.dtype(dtype)
    o = np.arange(extent)
    if extent == 0 or size == 0:
        return np.zeros((extent, 1), np.int64), np.zeros((extent, 1), dtype)
    ratio = _ratio(spec, size, extent, scale, dtype)
    if spec.kind == NEAREST:
        if spec.coordinate == ASYMMETRIC and spec.rounding == FLOOR and (extent == size or extent == 2 * size):
            index = o if extent == size else o >> 1
        else:  # nearest coordinates are float32 whatever the data type (PyTorch's rule)
            single = np.dtype(np.float32)
            src = _source(spec, _ratio(spec, size, extent, scale, single), extent, single)
            index = np.clip(_round(src, spec.rounding), 0, size - 1).astype(np.int64)
        return index[:, None], np.ones((extent, 1), dtype)
    if spec.kind == LINEAR:
        if extent == size:
            return np.stack([o, o], 1), np.stack([np.ones(extent, dtype), np.zeros(extent, dtype)], 1)
        src = _source(spec, ratio, extent, dtype)
        if spec.coordinate != ALIGN_CORNERS:
            src = np.maximum(src, dtype.type(0))
        first = np.minimum(np.floor(src).astype(np.int64), size - 1)
        second = first + (first < size - 1)
        lam = np.clip(src - first.astype(dtype), dtype.type(0), dtype.type(1)).astype(dtype)
        return np.stack([first, second], 1), np.stack([dtype.type(1) - lam, lam], 1)
    src = _source(spec, ratio, extent, dtype)
    base = np.minimum(np.floor(src), dtype.type(size - 1))
    t = np.clip(src - base, dtype.type(0), dtype.type(1)).astype(dtype)
    a = dtype.type(spec.cubic_a)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    one = dtype.type(1)
    weights = np.stack([far(t + one), near(t), near(one - t), far(one - t + one)], 1).astype(dtype)
    raw = base.astype(np.int64)[:, None] + np.arange(-1, 3)[None, :]
    if spec.exclude_outside:
        inside = (raw >= 0) & (raw < size)
        weights = np.where(inside, weights, 0)
        weights = weights / weights.sum(axis=1, keepdims=True)
    return np.clip(raw, 0, size - 1), weights


def _axes(spec, in_spatial, out_spatial, scales, dtype):
    scales = scales if scales is not None else (None,) * len(in_spatial)
    return [TapAxis.from_weights(*axis_taps(spec, n, o, s, dtype)) for n, o, s in zip(in_spatial, out_spatial,
                                                                                        scales)]


def _apply(src, out, axes):
    """out = the separable weighted sum of src over `axes` (one per spatial axis, 1 to 3)."""
    if len(axes) == 1:  # (N, L, C) as (N, 1, L, C)
        separable_sum(src[:, None], out[:, None], [TapAxis.identity(1), axes[0]])
        return
    if len(axes) == 2:
        separable_sum(src, out, axes)
        return
    middle = depth_sum(src, axes[0], out.shape[1], compute_dtype(src.dtype))
    for n in range(src.shape[0]):  # depth slices are the batch of the second pass
        separable_sum(middle[n], out[n], axes[1:])


def interpolate(x, out, spec: Interp, scales=None):
    """out (N, *spatial_out, C) = the interpolation of x (N, *spatial_in, C); `scales`: optional scale factor per
    spatial axis (used as ratio 1 / scale unless aligning corners)."""
    if out.size == 0:
        return
    if x.size == 0:
        out[...] = 0
        return
    axes = _axes(spec, x.shape[1:-1], out.shape[1:-1], scales, compute_dtype(x.dtype))
    _apply(x, out, axes)


def interpolate_backward(dy, dx, spec: Interp, scales=None):
    """dx (N, *spatial_in, C) = the gradient of `interpolate` for dy (N, *spatial_out, C): each input position
    sums the output gradients that read it, weighted as in the forward."""
    if dx.size == 0:
        return
    if dy.size == 0:
        dx[...] = 0
        return
    in_spatial = dx.shape[1:-1]
    axes = _axes(spec, in_spatial, dy.shape[1:-1], scales, compute_dtype(dy.dtype))
    _apply(dy, dx, [axis.transposed(n) for axis, n in zip(axes, in_spatial)])
