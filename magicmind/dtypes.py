"""numpy dtype <-> DataType (`magicmind.python.common.types`)."""
from __future__ import annotations

import numpy as np

from .enums import DataType
from .status import invalid

#: the numpy type each DataType is stored as (QINT8/QINT16 are int8/int16 with a scale)
NUMPY = {
    DataType.FLOAT32: np.dtype(np.float32), DataType.FLOAT16: np.dtype(np.float16),
    DataType.FLOAT64: np.dtype(np.float64),
    DataType.INT8: np.dtype(np.int8), DataType.INT16: np.dtype(np.int16), DataType.INT32: np.dtype(np.int32),
    DataType.INT64: np.dtype(np.int64), DataType.UINT8: np.dtype(np.uint8), DataType.UINT16: np.dtype(np.uint16),
    DataType.UINT32: np.dtype(np.uint32), DataType.UINT64: np.dtype(np.uint64), DataType.BOOL: np.dtype(np.bool_),
    DataType.QINT8: np.dtype(np.int8), DataType.QINT16: np.dtype(np.int16),
}
_BY_NUMPY = {dtype: data_type for data_type, dtype in NUMPY.items()
             if data_type not in (DataType.QINT8, DataType.QINT16)}
FLOATS = frozenset({DataType.FLOAT32, DataType.FLOAT16, DataType.FLOAT64})


def get_datatype_by_numpy(dtype) -> DataType:
    """magicmind.python.common.types.get_datatype_by_numpy: the DataType of a numpy dtype (or type, or array)."""
    try:
        found = _BY_NUMPY.get(dtype.dtype if isinstance(dtype, (np.ndarray, np.generic)) else np.dtype(dtype))
    except TypeError:
        found = None
    if found is None:
        raise invalid(f"get_datatype_by_numpy: dtype {dtype!r} has no MagicMind DataType")
    return found


def get_numpy_dtype_by_datatype(data_type: DataType) -> np.dtype:
    """magicmind.python.common.types.get_numpy_dtype_by_datatype: the numpy dtype a DataType is stored as."""
    found = NUMPY.get(data_type) if isinstance(data_type, DataType) else None
    if found is None:
        raise invalid(f"get_numpy_dtype_by_datatype: {data_type!r} has no numpy dtype")
    return found


def numpy_of(data_type: DataType, arg: str = "data_type") -> np.dtype:
    """The numpy dtype of `data_type`, an INVALID_ARGUMENT naming `arg` when it has none."""
    found = NUMPY.get(data_type) if isinstance(data_type, DataType) else None
    if found is None:
        raise invalid(f"{arg}: {data_type!r} is not a DataType with data (FLOAT32, FLOAT16, INT32, ...)")
    return found


def element_size(data_type: DataType) -> int:
    """Bytes of one element of `data_type`."""
    return numpy_of(data_type).itemsize
