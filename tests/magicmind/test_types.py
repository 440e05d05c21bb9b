"""Status codes, Dims, DataType <-> numpy, the import paths real programs use."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import magicmind.python.runtime as mm
from magicmind.python.cc._pywrap_runtime import ITensor  # noqa: F401
from magicmind.python.cc._pywrap_runtime.enums import DataType
from magicmind.python.common.types import get_datatype_by_numpy, get_numpy_dtype_by_datatype
from magicmind.python.runtime import Dims, Network  # noqa: F401
from magicmind.python.runtime.model import Model
from magicmind.python.runtime.parser import Parser


def test_import_paths_give_the_same_objects():
    assert DataType is mm.DataType and Model is mm.Model and Parser is mm.Parser
    assert mm.enums.ILogic is mm.ILogic and mm.parser.Parser is Parser


def test_status():
    assert mm.Status().ok() and mm.Status.OK().ok() and str(mm.Status()) == "OK"
    end = mm.Status(mm.Code.OUT_OF_RANGE, "no more data")
    assert not end.ok() and end.code() == mm.Code.OUT_OF_RANGE and "no more data" in str(end)
    with pytest.raises(mm.MagicMindError):
        mm.Status(99, "x")


def test_dims():
    d = mm.Dims([1, 3, 224, 224])
    assert d.GetDims() == [1, 3, 224, 224] and d.GetDimValue(1) == 3 and d.GetElementCount() == 150528
    assert d.GetDimsNum() == 4 and mm.Dims(np.zeros((2, 5)).shape).GetDims() == [2, 5]
    assert mm.Dims([]).GetElementCount() == 1 and mm.Dims([-1, 3]).GetElementCount() == -1
    for bad in ([1, -2], [1.5], "12", [True]):
        with pytest.raises(mm.MagicMindError) as caught:
            mm.Dims(bad)
        assert caught.value.code == mm.Code.INVALID_ARGUMENT
    with pytest.raises(mm.MagicMindError, match="2\\^60"):
        mm.Dims([1 << 31, 1 << 31, 1 << 31])
    with pytest.raises(mm.MagicMindError, match="out of range"):
        d.GetDimValue(4)


def test_datatypes_are_hashable_and_map_to_numpy():
    table = {mm.DataType.FLOAT32: 1, mm.DataType.INT32: 2}
    assert table[mm.DataType.FLOAT32] == 1 and [mm.DataType.FLOAT32] == [mm.DataType.FLOAT32]
    for dt, np_type in ((mm.DataType.FLOAT16, np.float16), (mm.DataType.UINT8, np.uint8),
                        (mm.DataType.BOOL, np.bool_), (mm.DataType.INT64, np.int64)):
        assert get_numpy_dtype_by_datatype(dt) == np.dtype(np_type)
        assert get_datatype_by_numpy(np_type) is dt
    with pytest.raises(mm.MagicMindError):
        get_datatype_by_numpy(np.complex64)
    with pytest.raises(mm.MagicMindError):
        get_numpy_dtype_by_datatype("FLOAT32")


@given(st.lists(st.integers(-1, 64), max_size=6))
def test_dims_round_trip(values):
    d = mm.Dims(values)
    assert d.GetDims() == values and mm.Dims(d) == d
    assert d.GetElementCount() == (-1 if -1 in values else int(np.prod(values, dtype=np.int64)))
