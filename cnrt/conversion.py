"""The host-side conversion helpers: cnrtConvertFloatToHalf / DoubleToHalf / HalfToFloat / HalfToDouble,
cnrtDataTypeSize, cnrtCastDataType (v4 types) and cnrtCastDataType_V2 (CNRT 5/6 types and rounding modes), and the
quantization parameters both take (cnrtCreateQuantizedParam / cnrtDestroyQuantizedParam).

Half values travel as their uint16 bit patterns, as in C (`uint16_t *f16`). Conversions round to nearest even
unless a rounding mode says otherwise; values beyond the half range become +-inf and NaN stays NaN, as the IEEE
conversion does.

Quantization follows the fixed-point convention of Cambricon's open sources (mlu-ops' castFloat32ToFixed /
castFixedToFloat32): float -> int is round(clamp(x * scale / 2^pos + offset)), int -> float is
(q - offset) * 2^pos / scale.
"""
from __future__ import annotations

import numpy as np

from mlusim.errors import ArgumentFault, HandleFault, NotSupportedFault
from mlusim.hostmem import host_bytes
from mlusim.validate import as_enum, as_int, as_number, as_size

from . import constants as C
from .errors import api

#: cnrtDataType_t -> numpy dtype, for the types with a byte size and a host representation
_NUMPY = {C.CNRT_FLOAT16: np.dtype(np.float16), C.CNRT_FLOAT32: np.dtype(np.float32),
          C.CNRT_FLOAT64: np.dtype(np.float64), C.CNRT_INT8: np.dtype(np.int8), C.CNRT_INT16: np.dtype(np.int16),
          C.CNRT_INT32: np.dtype(np.int32), C.CNRT_INT64: np.dtype(np.int64), C.CNRT_UINT8: np.dtype(np.uint8),
          C.CNRT_UINT16: np.dtype(np.uint16), C.CNRT_UINT32: np.dtype(np.uint32), C.CNRT_BOOL: np.dtype(np.bool_)}
#: quantized types: one byte each, but no conversion without quantization parameters
_QUANTIZED = {C.CNRT_FIX8: 1, C.CNRT_QUANT8: 1}
_DATA_TYPES = (C.CNRT_INVALID, C.CNRT_INT4, C.CNRT_AUTO, *_NUMPY, *_QUANTIZED)


def _half_bits(value: np.floating) -> int:
    return int(np.asarray(value, np.float16).view(np.uint16))


def _half_value(f16) -> np.float16:
    return np.asarray(as_int(f16, "f16", minimum=0, maximum=0xFFFF), np.uint16).view(np.float16)


@api("cnrtConvertFloatToHalf")
def convertFloatToHalf(d) -> int:
    """cnrtConvertFloatToHalf(uint16_t *f16, float d) -> f16: the half bits of the float `d` (d is a float32 first,
    as the C parameter is)."""
    with np.errstate(over="ignore"):
        return _half_bits(np.float32(as_number(d, "d")))


@api("cnrtConvertDoubleToHalf")
def convertDoubleToHalf(d) -> int:
    """cnrtConvertDoubleToHalf(uint16_t *f16, double d) -> f16: the half bits of `d`, rounded once."""
    with np.errstate(over="ignore"):
        return _half_bits(np.float64(as_number(d, "d")))


@api("cnrtConvertHalfToFloat")
def convertHalfToFloat(f16) -> float:
    """cnrtConvertHalfToFloat(float *d, uint16_t f16) -> d: the value of the half bits `f16` (exact)."""
    return float(np.float32(_half_value(f16)))


@api("cnrtConvertHalfToDouble")
def convertHalfToDouble(f16) -> float:
    """cnrtConvertHalfToDouble(double *d, uint16_t f16) -> d: the value of the half bits `f16` (exact)."""
    return float(_half_value(f16))


@api("cnrtDataTypeSize")
def dataTypeSize(dt) -> int:
    """cnrtDataTypeSize(cnrtDataType_t dt) -> bytes per element (0 for CNRT_INVALID, CNRT_INT4 and CNRT_AUTO,
    which have no whole-byte size)."""
    code = as_enum(dt, "dt", _DATA_TYPES, "cnrtDataType_t")
    if code in _NUMPY:
        return _NUMPY[code].itemsize
    return _QUANTIZED.get(code, 0)


#: cnrtDataType_V2_t -> numpy dtype (bfloat16 through ml_dtypes)
def _v2_types() -> dict:
    import ml_dtypes
    return {C.cnrtDouble: np.dtype(np.float64), C.cnrtFloat: np.dtype(np.float32), C.cnrtHalf: np.dtype(np.float16),
            C.cnrtBfloat: np.dtype(ml_dtypes.bfloat16), C.cnrtUlonglong: np.dtype(np.uint64),
            C.cnrtUint: np.dtype(np.uint32), C.cnrtUshort: np.dtype(np.uint16), C.cnrtUchar: np.dtype(np.uint8),
            C.cnrtLonglong: np.dtype(np.int64), C.cnrtInt: np.dtype(np.int32), C.cnrtShort: np.dtype(np.int16),
            C.cnrtChar: np.dtype(np.int8), C.cnrtBoolean: np.dtype(np.bool_)}


_V2_CODES = (C.cnrtUnknown, C.cnrtDouble, C.cnrtFloat, C.cnrtHalf, C.cnrtBfloat, C.cnrtUlonglong, C.cnrtUint,
             C.cnrtUshort, C.cnrtUchar, C.cnrtLonglong, C.cnrtInt, C.cnrtShort, C.cnrtChar, C.cnrtBoolean)
_ROUNDING_MODES = (C.cnrtRounding_rn, C.cnrtRounding_rz, C.cnrtRounding_rd, C.cnrtRounding_ru, C.cnrtRounding_ro,
                   C.cnrtRounding_rm)


class cnrtQuantizedParam_t:
    """The quantization of a float <-> integer conversion: position (a power of two), scale and offset."""

    __slots__ = ("pos", "scale", "offset", "destroyed")

    def __init__(self, pos: int, scale: float, offset: int):
        self.pos, self.scale, self.offset, self.destroyed = pos, scale, offset, False

    def __repr__(self) -> str:
        state = " (destroyed)" if self.destroyed else ""
        return f"<cnrtQuantizedParam_t pos={self.pos} scale={self.scale} offset={self.offset}{state}>"


@api("cnrtCreateQuantizedParam")
def createQuantizedParam(pos, scale, offset) -> cnrtQuantizedParam_t:
    """cnrtCreateQuantizedParam(cnrtQuantizedParam_t *param, int pos, float scale, int offset) -> param. The scale
    must be finite and nonzero (it divides on the way back)."""
    position = as_int(pos, "pos", minimum=-126, maximum=127)
    factor = float(np.float32(as_number(scale, "scale")))
    if not np.isfinite(factor) or factor == 0.0:
        raise ArgumentFault(f"scale {scale!r} must be finite and nonzero", "scale")
    return cnrtQuantizedParam_t(position, factor, as_int(offset, "offset", minimum=-(1 << 31), maximum=(1 << 31) - 1))


@api("cnrtDestroyQuantizedParam")
def destroyQuantizedParam(param) -> None:
    """cnrtDestroyQuantizedParam(cnrtQuantizedParam_t param). NULL is cnrtErrorArgsInvalid; a destroyed one is
    cnrtErrorInvalidResourceHandle."""
    _quantized(param, required=True).destroyed = True


def _quantized(param, required: bool = False):
    if param is None and not required:
        return None
    if param is None:
        raise ArgumentFault("NULL cnrtQuantizedParam_t", "param")
    if not isinstance(param, cnrtQuantizedParam_t):
        raise HandleFault(f"expected a cnrtQuantizedParam_t from cnrtCreateQuantizedParam, got {param!r}", "param")
    if param.destroyed:
        raise HandleFault(f"{param!r} was destroyed", "param")
    return param


@api("cnrtCastDataType")
def castDataType(src_addr, src_data_type, dst_addr, dst_data_type, data_num, param=None) -> None:
    """cnrtCastDataType(void *src_addr, cnrtDataType_t src_data_type, void *dst_addr, cnrtDataType_t dst_data_type,
    int data_num, cnrtQuantizedParam_t param): convert `data_num` elements between host buffers. Floats round to
    nearest even; floats to integers truncate toward zero (quantized: round half away from zero, saturating), and
    without quantization a NaN or a value outside the integer type is cnrtErrorArgsInvalid (C leaves it undefined).
    `param` applies to float <-> integer pairs; FIX8 and QUANT8 have no host conversion."""
    source_type = as_enum(src_data_type, "src_data_type", _DATA_TYPES, "cnrtDataType_t")
    target_type = as_enum(dst_data_type, "dst_data_type", _DATA_TYPES, "cnrtDataType_t")
    for code, arg in ((source_type, "src_data_type"), (target_type, "dst_data_type")):
        if code not in _NUMPY:
            raise NotSupportedFault(f"cnrtDataType_t 0x{code:x} has no host conversion here", arg)
    rounding = C.cnrtRounding_rm if param is not None else C.cnrtRounding_rz
    _cast(src_addr, _NUMPY[source_type], dst_addr, _NUMPY[target_type], data_num, _quantized(param), rounding,
          float_rounding=C.cnrtRounding_rn)


@api("cnrtCastDataType_V2")
def castDataType_V2(src_addr, src_data_type, dst_addr, dst_data_type, data_num, param, round_mode) -> None:
    """cnrtCastDataType_V2(void *src_addr, cnrtDataType_V2_t src_data_type, void *dst_addr,
    cnrtDataType_V2_t dst_data_type, int data_num, cnrtQuantizedParam_t param, cnrtRoundingMode_t round_mode):
    convert `data_num` elements between host buffers, rounding by `round_mode` (to nearest even, toward zero, down,
    up, away from zero, to nearest with ties away from zero) both into narrower floats and into integers; `param`
    quantizes float <-> integer pairs. Without quantization a NaN or a value outside the integer type is
    cnrtErrorArgsInvalid."""
    types = _v2_types()
    source_type = as_enum(src_data_type, "src_data_type", _V2_CODES, "cnrtDataType_V2_t")
    target_type = as_enum(dst_data_type, "dst_data_type", _V2_CODES, "cnrtDataType_V2_t")
    for code, arg in ((source_type, "src_data_type"), (target_type, "dst_data_type")):
        if code not in types:
            raise ArgumentFault("cnrtUnknown is not a data type", arg)
    mode = as_enum(round_mode, "round_mode", _ROUNDING_MODES, "cnrtRoundingMode_t")
    _cast(src_addr, types[source_type], dst_addr, types[target_type], data_num, _quantized(param), mode,
          float_rounding=mode)


def _cast(src_addr, source_dtype, dst_addr, target_dtype, data_num, param, int_rounding, float_rounding) -> None:
    count = as_size(data_num, "data_num")
    source = host_bytes(src_addr, "src_addr", writable=False)
    target = host_bytes(dst_addr, "dst_addr", writable=True)
    for buffer, dtype, arg in ((source, source_dtype, "src_addr"), (target, target_dtype, "dst_addr")):
        if buffer.nbytes < count * dtype.itemsize:
            raise ArgumentFault(f"holds {buffer.nbytes} bytes, {count} elements of {dtype} need "
                                f"{count * dtype.itemsize}", arg)
    values = source[:count * source_dtype.itemsize].view(source_dtype)
    out = target[:count * target_dtype.itemsize].view(target_dtype)
    source_float, target_float = _is_float(source_dtype), _is_float(target_dtype)
    if param is not None:
        if source_float == target_float or source_dtype.kind == "b" or target_dtype.kind == "b":
            raise ArgumentFault(f"quantization applies to float <-> integer conversions, not {source_dtype} -> "
                                f"{target_dtype}", "param")
        if source_float:
            info = np.iinfo(target_dtype)
            wide = values.astype(np.float64) * param.scale / 2.0 ** param.pos + param.offset
            wide = np.where(np.isnan(wide), 0.0, np.clip(wide, info.min, info.max))
            out[...] = _round_integral(wide, int_rounding).astype(target_dtype)
        else:
            wide = (values.astype(np.float64) - param.offset) * 2.0 ** param.pos / param.scale
            out[...] = _narrow(wide, target_dtype, float_rounding)
        return
    if source_float and target_dtype.kind in "iu":
        info = np.iinfo(target_dtype)
        wide = _round_integral(values.astype(np.float64), int_rounding)
        bad = ~np.isfinite(wide) | (wide < info.min) | (wide > info.max)
        if bad.any():
            index = int(np.flatnonzero(bad)[0])
            raise ArgumentFault(f"element {index} = {values[index]} does not fit {target_dtype}", "src_addr")
        out[...] = wide.astype(target_dtype)
    elif target_float and source_dtype != target_dtype and (source_dtype.kind != "f" or
                                                             source_dtype.itemsize > target_dtype.itemsize):
        out[...] = _narrow(values, target_dtype, float_rounding)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            np.copyto(out, values.astype(target_dtype) if source_dtype != target_dtype else values, casting="unsafe")


def _is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or dtype.name == "bfloat16"


def _round_integral(x: np.ndarray, mode: int) -> np.ndarray:
    """float64 values rounded to integers by a cnrtRoundingMode_t."""
    if mode == C.cnrtRounding_rn:
        return np.rint(x)
    if mode == C.cnrtRounding_rz:
        return np.trunc(x)
    if mode == C.cnrtRounding_rd:
        return np.floor(x)
    if mode == C.cnrtRounding_ru:
        return np.ceil(x)
    if mode == C.cnrtRounding_ro:
        return np.copysign(np.ceil(np.abs(x)), x)
    return np.copysign(np.floor(np.abs(x) + 0.5), x)  # rm: ties away from zero, as C's round()


def _step(y: np.ndarray, up: bool) -> np.ndarray:
    """The next representable value of a float array toward +inf (`up`) or -inf (NaN stays)."""
    if y.dtype.itemsize != 2:
        return np.nextafter(y, np.asarray(np.inf if up else -np.inf, y.dtype))
    bits = y.view(np.uint16).astype(np.int32)
    negative = (bits & 0x8000) != 0
    magnitude = bits & 0x7FFF
    grow = negative != up  # moving away from zero
    new = np.where(grow, magnitude + 1, magnitude - 1)
    zero = magnitude == 0
    new_bits = np.where(zero, np.where(up, 0x0001, 0x8001), (bits & 0x8000) | new)
    result = new_bits.astype(np.uint16).view(y.dtype)
    return np.where(np.isnan(y.astype(np.float32)), y, result)


def _narrow(values: np.ndarray, dtype: np.dtype, mode: int) -> np.ndarray:
    """values (any numeric array) converted to the float type `dtype` with a cnrtRoundingMode_t."""
    with np.errstate(over="ignore", invalid="ignore"):
        nearest = values.astype(dtype)
    if mode == C.cnrtRounding_rn or values.size == 0:
        return nearest
    x = values.astype(np.float64)
    back = nearest.astype(np.float64)
    down = np.where(back > x, _step(nearest, up=False), nearest)  # the largest value <= x
    up = np.where(back < x, _step(nearest, up=True), nearest)  # the smallest value >= x
    if mode == C.cnrtRounding_rd:
        return down
    if mode == C.cnrtRounding_ru:
        return up
    positive = x >= 0
    if mode == C.cnrtRounding_rz:
        return np.where(positive, down, up)
    if mode == C.cnrtRounding_ro:
        return np.where(positive, up, down)
    below, above = x - down.astype(np.float64), up.astype(np.float64) - x  # rm: nearest, ties away from zero
    with np.errstate(invalid="ignore"):
        pick_up = (above < below) | ((above == below) & positive)
    return np.where(np.isnan(x), nearest, np.where(pick_up, up, down))
