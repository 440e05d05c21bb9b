"""torch.mlu's storages, with torch_mlu's names: `UntypedStorage` (torch's own: an untyped storage knows its device,
so `x.untyped().mlu()` is one) and the legacy typed storages (`torch.mlu.FloatStorage(10)`, `IntStorage([1, 2])`,
...), each a TypedStorage of its dtype on the current mlu device, as torch.cuda's are on CUDA (torch.storage puts a
legacy storage on the device its class's module names: torch_mlu.mlu)."""
from __future__ import annotations

import torch
from torch._utils import classproperty
from torch.storage import _LegacyStorage, _warn_typed_storage_removal

#: torch_mlu's UntypedStorage is torch's
UntypedStorage = torch.UntypedStorage

#: name -> dtype of the legacy storages (torch.cuda's set)
LEGACY_DTYPES = {"ByteStorage": torch.uint8, "DoubleStorage": torch.double, "FloatStorage": torch.float,
                 "HalfStorage": torch.half, "LongStorage": torch.long, "IntStorage": torch.int,
                 "ShortStorage": torch.short, "CharStorage": torch.int8, "BoolStorage": torch.bool,
                 "BFloat16Storage": torch.bfloat16, "ComplexDoubleStorage": torch.cdouble,
                 "ComplexFloatStorage": torch.cfloat}


class _MluLegacyStorage(_LegacyStorage):
    """A legacy typed storage on mlu."""

    @classmethod
    def from_buffer(cls, *args, **kwargs):
        _warn_typed_storage_removal()
        raise RuntimeError("from_buffer: Not available for MLU storage")

    @classmethod
    def _new_with_weak_ptr(cls, *args, **kwargs):
        raise RuntimeError("_new_with_weak_ptr: Not available for MLU storage")

    @classmethod
    def _new_shared_filename(cls, manager, obj, size, *, device=None, dtype=None):
        raise RuntimeError("_new_shared_filename: Not available for MLU storage")


def _legacy_storage(name: str, dtype: torch.dtype) -> type:
    def public_dtype(cls):
        _warn_typed_storage_removal()
        return dtype

    return type(name, (_MluLegacyStorage,), {
        "dtype": classproperty(public_dtype), "_dtype": classproperty(lambda cls: dtype),
        "__module__": "torch_mlu.mlu", "__qualname__": name,
        "__doc__": f"torch.mlu.{name}: a legacy typed storage of {dtype} on the current mlu device."})


LEGACY_STORAGES = {name: _legacy_storage(name, dtype) for name, dtype in LEGACY_DTYPES.items()}
