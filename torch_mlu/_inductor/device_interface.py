"""torch._dynamo's DeviceInterface for "mlu": what Dynamo and Inductor ask of a device (current device, streams,
events, synchronize, properties), answered by torch.mlu."""
from __future__ import annotations

from typing import Any

import torch
from torch._dynamo.device_interface import DeviceInterface, caching_worker_current_devices, \
    caching_worker_device_properties

from ..mlu._utils import device_index

_MLU = "mlu"


def _index(device) -> int:
    return device_index(device)


class MLUInterface(DeviceInterface):
    """The mlu device for Dynamo and Inductor (torch_mlu's torch.mlu module underneath)."""

    device = torch.mlu.device  # type: ignore[assignment]
    Event = torch.mlu.Event  # type: ignore[assignment]
    Stream = torch.mlu.Stream  # type: ignore[assignment]

    class Worker:
        """Device queries that work in Inductor's compile workers (values recorded in the main process)."""

        @staticmethod
        def set_device(device: int) -> None:
            caching_worker_current_devices[_MLU] = device

        @staticmethod
        def current_device() -> int:
            if _MLU in caching_worker_current_devices:
                return caching_worker_current_devices[_MLU]
            return torch.mlu.current_device()

        @staticmethod
        def get_device_properties(device: Any = None) -> Any:
            index = _index(device) if device is not None else MLUInterface.Worker.current_device()
            if _MLU not in caching_worker_device_properties:
                caching_worker_device_properties[_MLU] = [torch.mlu.get_device_properties(i)
                                                          for i in range(torch.mlu.device_count())]
            return caching_worker_device_properties[_MLU][index]

    current_device = staticmethod(torch.mlu.current_device)
    set_device = staticmethod(torch.mlu.set_device)
    device_count = staticmethod(torch.mlu.device_count)
    stream = staticmethod(torch.mlu.stream)  # type: ignore[assignment]
    current_stream = staticmethod(torch.mlu.current_stream)
    set_stream = staticmethod(torch.mlu.set_stream)  # type: ignore[assignment]
    synchronize = staticmethod(torch.mlu.synchronize)
    memory_allocated = staticmethod(torch.mlu.memory_allocated)

    @staticmethod
    def is_available() -> bool:
        return torch.mlu.is_available()

    @staticmethod
    def exchange_device(device: int) -> int:
        from .. import _state
        return _state.C.exchange_device(device)

    @staticmethod
    def maybe_exchange_device(device: int) -> int:
        from .. import _state
        return _state.C.exchange_device(device)

    @staticmethod
    def _set_stream_by_id(stream_id: int, device_index: int, device_type: int) -> None:
        torch.mlu.set_stream(torch.mlu.Stream(stream_id=stream_id, device_index=device_index,
                                              device_type=device_type))

    @staticmethod
    def get_raw_stream(device_idx: int) -> int:
        from .runtime.streams import get_raw_stream
        return get_raw_stream(device_idx)

    @classmethod
    def get_device_properties(cls, device: Any = None) -> Any:
        return cls.Worker.get_device_properties(device)

    @staticmethod
    def get_compute_capability(device: Any = None) -> int:
        major, minor = torch.mlu.get_device_capability(_index(device))
        return major * 10 + minor

    @staticmethod
    def is_bf16_supported(including_emulation: bool = False) -> bool:
        return True

    @classmethod
    def is_dtype_supported(cls, dtype: torch.dtype, including_emulation: bool = False) -> bool:
        from . import dtypes
        return dtypes.supported(dtype)

    @staticmethod
    def is_triton_capable(device: Any = None) -> bool:
        return False

    @staticmethod
    def raise_if_triton_unavailable(device: Any = None) -> None:
        raise RuntimeError("mlu (mlusim) compiles kernels with numba, not Triton")
