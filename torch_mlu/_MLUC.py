"""torch_mlu._MLUC: the names of torch_mlu's extension module that programs and Cambricon's tests call directly
(`torch_mlu._MLUC._mlu_init()`, ...), each on the runtime the rest of torch_mlu uses. The C++ part of mlusim's
torch_mlu is another module (csrc/mlu.cpp); these are its Python-facing counterparts with the real module's names."""
from __future__ import annotations

from . import _state, backends, mlu
from .mlu._utils import checked_index
from .mlu.streams import current_stream


def _mlu_init() -> None:
    """torch_mlu._MLUC._mlu_init: initialise the mlu state now (RuntimeError when no device is visible)."""
    mlu.init()


def _mlu_getDeviceCount() -> int:
    """torch_mlu._MLUC._mlu_getDeviceCount: the number of visible devices (cnrtGetDeviceCount)."""
    return mlu.device_count()


def _mlu_hasPrimaryContext(device: int) -> bool:
    """torch_mlu._MLUC._mlu_hasPrimaryContext: whether this process has used `device` (a stream, a handle or memory
    on it; choosing it with set_device alone does not, as on the card)."""
    index = checked_index(device)
    runtime = _state.runtime
    return bool(runtime.streams.all_queues(index)) or runtime.allocator.memory_totals(index)[1] > 0


def _mlu_getCurrentRawStream(device: int):
    """torch_mlu._MLUC._mlu_getCurrentRawStream: the cnrt queue (cnrtQueue_t) of `device`'s current stream."""
    return current_stream(device).mlu_stream


def _mlu_setStream(stream_id: int = 0, device_index: int = -1, device_type: int = 0) -> None:
    """torch_mlu._MLUC._mlu_setStream(stream_id, device_index, device_type): make the stream with these fields (a
    torch.Stream's) its device's current stream."""
    _state.C.set_stream(stream_id, checked_index(device_index))


def _get_mlufusion_enabled() -> bool:
    """torch_mlu._MLUC._get_mlufusion_enabled: torch.backends.mlufusion.enabled."""
    return backends.mlufusion.enabled


def _set_mlufusion_enabled(enabled: bool) -> None:
    """torch_mlu._MLUC._set_mlufusion_enabled: set torch.backends.mlufusion.enabled."""
    backends.mlufusion.set_flags(enabled)


def __getattr__(name: str):
    # ProcessGroupCNCL lives in the distributed extension, which is built on first use: only a program that asks
    # for it pays for it
    if name == "ProcessGroupCNCL":
        from .distributed import native
        return native().ProcessGroupCNCL
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
