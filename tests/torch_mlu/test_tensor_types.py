"""torch.mlu's legacy typed tensors (torch.mlu.FloatTensor, ...): instance checks by device and dtype, torch's legacy
constructor on mlu, and Tensor.type with the class or its name; cases of Cambricon's test/mlu/test_mlu.py and
test/storage/test_storage.py re-expressed."""
import numpy as np
import pytest
import torch

import torch_mlu  # noqa: F401
from torch_mlu.mlu.tensor_types import LEGACY_DTYPES


@pytest.mark.parametrize("name", sorted(LEGACY_DTYPES))
def test_each_type_is_the_mlu_tensors_of_its_dtype(name):
    cls = getattr(torch.mlu, name)
    dtype = LEGACY_DTYPES[name]
    x = cls(2, 3)
    assert (x.shape, x.dtype, x.device.type) == ((2, 3), dtype, "mlu")
    assert isinstance(x, cls) and x.type() == f"torch.mlu.{name}" and cls.__name__ == x.type()
    assert not isinstance(x.cpu(), cls)
    assert all(not isinstance(x, getattr(torch.mlu, other)) for other in LEGACY_DTYPES if other != name)
    assert cls.dtype == dtype and cls.is_mlu


def test_the_legacy_constructor_forms():
    F = torch.mlu.FloatTensor
    assert F().shape == (0,) and F(torch.Size([4, 1])).shape == (4, 1)
    data = F([[1.5, 2], [3, 4]])
    torch.testing.assert_close(data.cpu(), torch.tensor([[1.5, 2], [3, 4]]))
    assert F(data) is data
    torch.testing.assert_close(F(np.array([1.0, 2.0])).cpu(), torch.tensor([1.0, 2.0]))  # an array is data too
    with pytest.raises(TypeError, match=r"expected torch.mlu.FloatTensor \(got torch.mlu.IntTensor\)"):
        F(torch.mlu.IntTensor([1]))
    with pytest.raises(TypeError, match="data must be a sequence"):
        F(2.5)
    storage = torch.mlu.FloatStorage([1.0, 2.0, 3.0])
    over = F(storage)
    assert over.tolist() == [1.0, 2.0, 3.0] and over.untyped_storage().data_ptr() == storage.data_ptr()
    with pytest.raises(RuntimeError, match="device type: mlu"):
        F(2, device="cpu")


def test_tensor_type_converts_with_the_class_or_its_name():
    x = torch.tensor([1.7, -2.2]).mlu()
    as_int = x.type(torch.mlu.IntTensor)
    assert isinstance(as_int, torch.mlu.IntTensor) and as_int.tolist() == [1, -2]
    assert x.type("torch.mlu.DoubleTensor").dtype == torch.float64
    moved = torch.ones(2).type(torch.mlu.HalfTensor)
    assert moved.device.type == "mlu" and moved.dtype == torch.float16


def test_isinstance_is_by_value_not_by_subclass():
    assert not issubclass(torch.mlu.FloatTensor, torch.mlu.DoubleTensor)
    assert issubclass(torch.mlu.FloatTensor, torch.mlu.FloatTensor)
    assert repr(torch.mlu.FloatTensor) == "<class 'torch.mlu.FloatTensor'>"
