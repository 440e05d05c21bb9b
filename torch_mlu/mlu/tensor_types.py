"""torch.mlu's legacy typed tensors: `torch.mlu.FloatTensor`, `IntTensor`, `DoubleTensor`, ... (torch_mlu's names
for what torch makes for CUDA as torch.cuda.FloatTensor).

Each is a class whose instances are the strided mlu tensors of its dtype (`isinstance(x, torch.mlu.FloatTensor)`),
whose call is torch's legacy constructor on the current mlu device (`FloatTensor(2, 3)` uninitialised,
`FloatTensor([1, 2])` from data, `FloatTensor()` empty, `FloatTensor(storage)` over a storage, `FloatTensor(x)` x
itself when x is of the type), and whose name torch's `Tensor.type(...)` understands (`x.type(torch.mlu.IntTensor)`
converts, as `x.type("torch.mlu.IntTensor")` does).
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

#: class name -> dtype (torch.cuda's set)
LEGACY_DTYPES = {"ByteTensor": torch.uint8, "CharTensor": torch.int8, "ShortTensor": torch.int16,
                 "IntTensor": torch.int32, "LongTensor": torch.int64, "HalfTensor": torch.float16,
                 "FloatTensor": torch.float32, "DoubleTensor": torch.float64, "BoolTensor": torch.bool,
                 "BFloat16Tensor": torch.bfloat16, "ComplexFloatTensor": torch.complex64,
                 "ComplexDoubleTensor": torch.complex128}


def _device(device) -> torch.device:
    if device is None:
        return torch.device("mlu", torch.mlu.current_device())
    device = torch.device("mlu", device) if isinstance(device, int) else torch.device(device)
    if device.type != "mlu":
        raise RuntimeError(f"legacy constructor expects device type: mlu but device type: {device.type} was passed")
    return device


class MluTensorType(type):
    """The type of torch.mlu.<Name>Tensor: an instance check on device and dtype, the legacy constructor as its
    call. The class's __name__ is the full name (torch.mlu.FloatTensor), which Tensor.type reads."""

    dtype: torch.dtype

    def __instancecheck__(cls, value) -> bool:
        return (isinstance(value, torch.Tensor) and value.device.type == "mlu" and value.dtype == cls.dtype
                and value.layout == torch.strided)

    def __subclasscheck__(cls, other) -> bool:
        return other is cls

    def __repr__(cls) -> str:
        return f"<class '{cls.__name__}'>"

    def __call__(cls, *args, device=None):
        """torch's legacy tensor constructor, on mlu."""
        place = _device(device)
        if not args:
            return torch.empty(0, dtype=cls.dtype, device=place)
        if len(args) == 1 and isinstance(args[0], torch.Tensor):
            if not isinstance(args[0], cls):
                raise TypeError(f"expected {cls.__name__} (got {args[0].type()})")
            return args[0]
        if len(args) == 1 and isinstance(args[0], (torch.TypedStorage, torch.UntypedStorage)):
            storage = args[0]
            untyped = storage.untyped() if isinstance(storage, torch.TypedStorage) else storage
            if untyped.device.type != "mlu":
                raise TypeError(f"expected an mlu storage for {cls.__name__}, got one on {untyped.device}")
            return torch.empty(0, dtype=cls.dtype, device=untyped.device).set_(untyped)
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args) or (
                len(args) == 1 and isinstance(args[0], torch.Size)):
            return torch.empty(*args, dtype=cls.dtype, device=place)
        if len(args) == 1 and (isinstance(args[0], Sequence) or hasattr(args[0], "__array__")) and not isinstance(
                args[0], str):
            return torch.tensor(args[0], dtype=cls.dtype, device=place)
        if len(args) == 1:
            raise TypeError(f"new(): data must be a sequence (got {type(args[0]).__name__})")
        raise TypeError(f"{cls.__name__}() received an invalid combination of arguments: sizes are ints, got "
                        f"({', '.join(type(a).__name__ for a in args)})")


def _tensor_type(name: str, dtype: torch.dtype) -> MluTensorType:
    return MluTensorType(f"torch.mlu.{name}", (), {"dtype": dtype, "is_mlu": True, "is_sparse": False,
                                                   "__module__": "torch.mlu", "__qualname__": name,
                                                   "__doc__": f"torch.mlu.{name}: the strided {dtype} mlu tensors."})


LEGACY_TENSORS = {name: _tensor_type(name, dtype) for name, dtype in LEGACY_DTYPES.items()}
