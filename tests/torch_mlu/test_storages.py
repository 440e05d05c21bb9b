"""torch.mlu's storages with torch_mlu's names: UntypedStorage (torch's, on any device) and the legacy typed storages
(torch.mlu.FloatStorage, IntStorage, ...) on the current mlu device, their values, dtypes, copies and errors."""
import pytest
import torch

import torch_mlu  # noqa: F401


@pytest.mark.parametrize("name, dtype", [("FloatStorage", torch.float), ("IntStorage", torch.int),
                                         ("HalfStorage", torch.half), ("BoolStorage", torch.bool),
                                         ("ComplexFloatStorage", torch.cfloat), ("LongStorage", torch.long)])
def test_legacy_typed_storages_live_on_the_mlu(name, dtype):
    cls = getattr(torch.mlu, name)
    filled = cls(10).fill_(1)
    assert filled.device.type == "mlu" and filled.dtype == dtype and filled.size() == 10
    assert filled.tolist() == [dtype.is_complex and 1 + 0j or (True if dtype == torch.bool else 1)] * 10
    values = [0, 1, 1, 0] if dtype == torch.bool else [3, -1, 2, 5] if not dtype.is_floating_point else [1.5, -2.0]
    if dtype.is_complex:
        values = [1 + 2j, -3j]
    made = cls(values)
    assert made.tolist() == [type(made.tolist()[0])(v) for v in values]
    assert made.cpu().device.type == "cpu" and made.cpu().tolist() == made.tolist()
    assert isinstance(made, torch.TypedStorage)  # (as torch.cuda's legacy storages make)
    with pytest.raises(RuntimeError, match="Not available for MLU storage"):
        cls.from_buffer(b"abcd", "little")


def test_untyped_storage_is_torchs_on_any_device():
    assert torch.mlu.UntypedStorage is torch.UntypedStorage
    storage = torch.tensor([1, 2, 3], dtype=torch.int32).untyped_storage()
    on_mlu = storage.mlu()
    assert isinstance(on_mlu, torch.mlu.UntypedStorage) and on_mlu.device.type == "mlu" and on_mlu.nbytes() == 12
    made = torch.mlu.UntypedStorage([4, 5, 6], device="mlu")
    assert made.device.type == "mlu" and made.tolist() == [4, 5, 6]
    assert torch.mlu.IntStorage([-1, 7]).untyped().device.type == "mlu"
