"""Cast between every pair of supported dtypes (the numerics of `cnnlCastDataType`).

Rules:
- float -> float rounds to nearest, ties to even, once: float64 -> float32 by the host FPU, anything -> float16 or
  bfloat16 through the device's conversions (`mlusim.numerics.float16`; float64 sources via round-to-odd, so
  still a single rounding).
  Overflow gives infinity, NaN stays NaN. Widening is exact.
- float -> integer truncates toward zero and saturates to the target's range; NaN -> 0; +-inf -> max/min.
- integer -> integer saturates to the target's range (e.g. int32 300 -> int8 127, int8 -1 -> uint8 0).
- integer -> float rounds to nearest even (int64 beyond 2**53 into a 16-bit float may round twice; no supported
  source reaches that case except int64).
- anything -> bool is `x != 0` (NaN -> True); bool -> anything is 0 or 1.
"""
import numpy as np

from .dtypes import (ALL_DTYPES, BFLOAT16, BOOL, FLOAT32, FLOAT64, WIDE_UNSIGNED_DTYPES, check_dtype, is_float,
                     is_half, is_int)
from .parallel import align_ndim, check_broadcast, detach_inputs, run_blocked


def readonly_flat(array):
    """A read-only 1-D C-contiguous view (or copy, when not contiguous) of `array`.

    numba compiles one specialisation per array type, and writability is part of the type, so every kernel input
    goes through here to keep one specialisation per dtype.
    """
    flat = array.reshape(-1) if array.flags.c_contiguous else np.ascontiguousarray(array).reshape(-1)
    flat = flat.view()
    flat.flags.writeable = False
    return flat


def _half_to_float32(src, into=None):
    """float16/bfloat16 `src` as float32, written into `into` when it is a C-contiguous float32 array."""
    from mlusim.numerics.float16 import widen_bits  # numba loads with the first 16-bit float (cnnl/__init__.py)
    result = into if into is not None and into.dtype == FLOAT32 and into.flags.c_contiguous else np.empty(src.shape, FLOAT32)
    widen_bits(readonly_flat(src.view(np.uint16)), result.reshape(-1).view(np.uint32), src.dtype == BFLOAT16)
    return result


def _float32_into_half(values, dst):
    """Round float32 `values` (same shape as dst) into the float16/bfloat16 array `dst`."""
    from mlusim.numerics.float16 import narrow_bits
    bits = readonly_flat(values).view(np.uint32)
    to_bfloat16 = dst.dtype == BFLOAT16
    if dst.flags.c_contiguous:
        narrow_bits(bits, dst.reshape(-1).view(np.uint16), to_bfloat16)
    else:
        staged = np.empty(dst.size, np.uint16)
        narrow_bits(bits, staged, to_bfloat16)
        np.copyto(dst.view(np.uint16), staged.reshape(dst.shape))


def _as_float32_for_half(src):
    """float32 values whose RNE rounding to a 16-bit float is the correct rounding of `src`."""
    from mlusim.numerics.float16 import float64_to_float32_round_to_odd
    if src.dtype == FLOAT32:
        return src
    if is_half(src.dtype):
        return _half_to_float32(src)
    if src.dtype == BOOL:
        return src.astype(FLOAT32)
    values = src if src.dtype == FLOAT64 else src.astype(FLOAT64)
    return float64_to_float32_round_to_odd(values)


def _float_to_int(src, dst):
    values = _half_to_float32(src) if is_half(src.dtype) else src
    truncated = np.array(values, dtype=FLOAT64)  # a real array even for 0-d blocks (ufuncs return scalars there)
    np.trunc(truncated, out=truncated)
    truncated[np.isnan(truncated)] = 0.0
    info = np.iinfo(dst.dtype)
    high = float(info.max)
    if high > info.max:  # int64: 2**63 - 1 is not a float64, clip just below and mend the overflow afterwards
        clipped_high = float(np.nextafter(high, 0.0))
        overflow = truncated > clipped_high
        np.clip(truncated, float(info.min), clipped_high, out=truncated)
        np.copyto(dst, truncated, casting="unsafe")
        np.copyto(dst, info.max, where=overflow)
    else:
        np.clip(truncated, float(info.min), high, out=truncated)
        np.copyto(dst, truncated, casting="unsafe")


def _int_to_int(src, dst):
    source, target = np.iinfo(src.dtype), np.iinfo(dst.dtype)
    if target.min <= source.min and source.max <= target.max:
        np.copyto(dst, src, casting="unsafe")
    else:
        low, high = max(source.min, target.min), min(source.max, target.max)
        np.copyto(dst, np.clip(src, low, high), casting="unsafe")


def cast_block(src, dst):
    """Cast `src` into `dst` (same shape, or broadcastable to it) on the calling thread; see the module rules."""
    if src.shape != dst.shape:
        src = np.broadcast_to(src, dst.shape)
    if src.dtype == dst.dtype:
        np.copyto(dst, src)
    elif dst.dtype == BOOL:
        np.not_equal(_half_to_float32(src) if is_half(src.dtype) else src, 0, out=dst)
    elif is_half(dst.dtype):
        _float32_into_half(_as_float32_for_half(src), dst)
    elif is_half(src.dtype):
        if is_float(dst.dtype):
            values = _half_to_float32(src, into=dst)
            if values is not dst:
                np.copyto(dst, values, casting="unsafe")
        else:
            _float_to_int(src, dst)
    elif is_int(dst.dtype) and is_float(src.dtype):
        _float_to_int(src, dst)
    elif is_int(dst.dtype) and is_int(src.dtype):
        _int_to_int(src, dst)
    else:  # into float32/float64 from float, int or bool: the host conversion rounds to nearest even
        np.copyto(dst, src, casting="unsafe")


def _writes_directly(src, dst):
    """True when the cast of these contiguous operands needs no temporaries (large blocks are then best)."""
    if not (src.flags.c_contiguous and dst.flags.c_contiguous and src.shape == dst.shape):
        return False
    pair = (src.dtype, dst.dtype)
    return src.dtype == dst.dtype or pair[0] == FLOAT32 and is_half(pair[1]) or (is_half(pair[0]) and pair[1] == FLOAT32)


def cast(src, dst):
    """Cast `src` into `dst` (`cnnlCastDataType`): any supported dtype pair, any strides, `src` may broadcast."""
    check_dtype("src", src, ALL_DTYPES + WIDE_UNSIGNED_DTYPES)
    check_dtype("dst", dst, ALL_DTYPES + WIDE_UNSIGNED_DTYPES)
    check_broadcast(dst.shape, src.shape)
    (src,) = detach_inputs(dst, src)
    run_blocked(cast_block, dst.shape, [align_ndim(src, dst.ndim), dst], staged=not _writes_directly(src, dst))


def cast_to_new(src, dtype):
    """A new C-contiguous array holding `src` cast to `dtype` (parallel; used to stage whole operands)."""
    result = np.empty(src.shape, dtype)
    cast(src, result)
    return result
