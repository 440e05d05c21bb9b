"""magicmind.python.common.types: numpy dtype <-> DataType."""
from ...dtypes import get_datatype_by_numpy, get_numpy_dtype_by_datatype  # noqa: F401

__all__ = ["get_datatype_by_numpy", "get_numpy_dtype_by_datatype"]
