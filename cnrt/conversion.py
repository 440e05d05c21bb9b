"""The v4 host-side conversion helpers: cnrtConvertFloatToHalf / DoubleToHalf / HalfToFloat / HalfToDouble,
cnrtDataTypeSize and cnrtCastDataType (without quantization).

Half values travel as their uint16 bit patterns, as in C (`uint16_t *f16`). Conversions round to nearest even;
values beyond the half range become +-inf and NaN stays NaN, as the IEEE conversion does.
"""
from __future__ import annotations

import numpy as np

from mlusim.errors import ArgumentFault, NotSupportedFault
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


@api("cnrtCastDataType")
def castDataType(src_addr, src_data_type, dst_addr, dst_data_type, data_num, param=None) -> None:
    """cnrtCastDataType(void *src_addr, cnrtDataType_t src_data_type, void *dst_addr, cnrtDataType_t dst_data_type,
    int data_num, cnrtQuantizedParam_t param): convert `data_num` elements between host buffers. Floats round to
    nearest even; floats to integers truncate toward zero, and a NaN or a value outside the integer type is
    cnrtErrorArgsInvalid (C leaves it undefined). Quantization (`param`, FIX8, QUANT8) is not supported."""
    source_type = as_enum(src_data_type, "src_data_type", _DATA_TYPES, "cnrtDataType_t")
    target_type = as_enum(dst_data_type, "dst_data_type", _DATA_TYPES, "cnrtDataType_t")
    count = as_size(data_num, "data_num")
    if param is not None:
        raise NotSupportedFault("quantized conversions (cnrtQuantizedParam_t) are not supported; pass NULL", "param")
    for code, arg in ((source_type, "src_data_type"), (target_type, "dst_data_type")):
        if code not in _NUMPY:
            raise NotSupportedFault(f"cnrtDataType_t 0x{code:x} has no host conversion here", arg)
    source_dtype, target_dtype = _NUMPY[source_type], _NUMPY[target_type]
    source = host_bytes(src_addr, "src_addr", writable=False)
    target = host_bytes(dst_addr, "dst_addr", writable=True)
    for buffer, dtype, arg in ((source, source_dtype, "src_addr"), (target, target_dtype, "dst_addr")):
        if buffer.nbytes < count * dtype.itemsize:
            raise ArgumentFault(f"holds {buffer.nbytes} bytes, {count} elements of {dtype} need "
                                f"{count * dtype.itemsize}", arg)
    values = source[:count * source_dtype.itemsize].view(source_dtype)
    out = target[:count * target_dtype.itemsize].view(target_dtype)
    if source_dtype.kind == "f" and target_dtype.kind in "iu":
        info = np.iinfo(target_dtype)
        wide = values.astype(np.float64)
        bad = ~np.isfinite(wide) | (np.trunc(wide) < info.min) | (np.trunc(wide) > info.max)
        if bad.any():
            index = int(np.flatnonzero(bad)[0])
            raise ArgumentFault(f"element {index} = {values[index]} does not fit {target_dtype}", "src_addr")
    with np.errstate(over="ignore", invalid="ignore"):
        np.copyto(out, values.astype(target_dtype) if source_dtype != target_dtype else values, casting="unsafe")
