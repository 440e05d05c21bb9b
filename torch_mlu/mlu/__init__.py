"""torch.mlu: the device module of the simulated MLU, with torch_mlu's names (device management, streams and
events, random number generators, memory, amp). Registered as `torch.mlu` by `import torch_mlu`."""
from __future__ import annotations

import os
import threading

import torch

import cnrt

from .. import _devices, _state
from ._utils import checked_index, device_index

OutOfMemoryError = torch.OutOfMemoryError

_initialized = False
_in_bad_fork = False  # a forked child of a process whose mlu state was initialised
_init_lock = threading.Lock()


def _is_compiled() -> bool:
    """True: this torch has an mlu backend."""
    return True


def _is_in_bad_fork() -> bool:
    """Whether this process is a forked child of one that had initialised its mlu state (torch_mlu's rule, as
    CUDA's: such a child may not use the device; mlusim itself could, but code must run on the real card)."""
    return _in_bad_fork


def is_available() -> bool:
    """torch.mlu.is_available: True when there is at least one (simulated) device."""
    return device_count() > 0


def device_count() -> int:
    """torch.mlu.device_count: the number of simulated devices (MLUSIM_DEVICE_COUNT)."""
    _devices.check()
    return _state.C.device_count()


def init() -> None:
    """torch.mlu.init: initialise the mlu state now (otherwise done by the first use of the device)."""
    _lazy_init()


def _lazy_init() -> None:
    """The first use of the device in this process (torch calls it before making the first mlu tensor; set_device
    and init call it): refused in a forked child of an initialised process, and when no device is visible."""
    global _initialized
    if _initialized:
        return
    with _init_lock:
        if _in_bad_fork:
            raise RuntimeError("Cannot re-initialize MLU in forked subprocess. To use MLU with multiprocessing, you "
                               "must use the 'spawn' start method")
        if device_count() == 0:
            raise RuntimeError("No MLU devices are available (MLU_VISIBLE_DEVICES leaves none)")
        _initialized = True


def _after_fork_in_child() -> None:
    global _initialized, _in_bad_fork, _init_lock
    _init_lock = threading.Lock()
    if _initialized:
        _initialized, _in_bad_fork = False, True
        _state.C.require_device_init()  # torch asks _lazy_init again before the child's first mlu tensor


os.register_at_fork(after_in_child=_after_fork_in_child)


def is_initialized() -> bool:
    """torch.mlu.is_initialized: whether this process has used the device (or called init)."""
    return _initialized


def current_device() -> int:
    """torch.mlu.current_device: this thread's current device index."""
    return _state.C.get_device()


def set_device(device) -> None:
    """torch.mlu.set_device: make `device` this thread's current device (no-op for a negative index)."""
    index = device_index(device)
    if index >= 0:
        _lazy_init()
        _state.C.set_device(checked_index(index))


class device:
    """torch.mlu.device(d): context manager that makes `d` the current device (no-op for None or -1)."""

    def __init__(self, device):
        self.idx = device_index(device, optional=True) if device is not None else -1
        self.prev_idx = -1

    def __enter__(self):
        self.prev_idx = _state.C.exchange_device(self.idx)

    def __exit__(self, *exc):
        if self.idx >= 0:
            _state.C.set_device(self.prev_idx)
        return False


Device = device


class device_of(device):
    """torch.mlu.device_of(tensor): the device context of a tensor (no-op for a cpu tensor)."""

    def __init__(self, obj):
        super().__init__(obj.get_device() if obj.device.type == "mlu" else -1)


def synchronize(device=None) -> None:
    """torch.mlu.synchronize: wait for all work on every stream of the device (cnrtSyncDevice); an error of queued
    work is raised here, as a RuntimeError."""
    from ..ops._core import DEVICE_ERRORS, device_error
    try:
        _state.runtime.sync_device(checked_index(device))
    except DEVICE_ERRORS as error:
        raise device_error(error) from error


class _MLUDeviceProperties:
    """torch.mlu.get_device_properties(d): name, major, minor, total_memory (bytes), multi_processor_count (cores),
    cluster_count, core_num_per_cluster, frequency (MHz), dram_bandwidth (GB/s), supports_linear_memory, uuid."""

    def __init__(self, prop):
        self.name = prop.name
        self.major, self.minor = prop.major, prop.minor
        self.total_memory = prop.totalGlobalMemSize
        self.cluster_count = prop.clusterCount
        self.core_num_per_cluster = prop.McorePerCluster
        self.multi_processor_count = prop.clusterCount * prop.McorePerCluster
        self.frequency = prop.ipuClockRate // 1000
        self.dram_bandwidth = round(prop.memClockRate * 1e3 * 2 * prop.GmemBusWidth / 8 / 1e9, 1)
        self.supports_linear_memory = True
        self.is_integrated = False
        self.uuid = prop.uuid.hex()
        self.L2_cache_size = prop.MaxL2CacheSize

    def __eq__(self, other) -> bool:  # the same device's properties asked for twice are equal, as torch.cuda's
        return isinstance(other, _MLUDeviceProperties) and vars(self) == vars(other)

    def __hash__(self) -> int:
        return hash(self.uuid)

    def __repr__(self) -> str:
        return (f"_MLUDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None) -> _MLUDeviceProperties:
    """torch.mlu.get_device_properties (cnrtGetDeviceProperties)."""
    return _MLUDeviceProperties(cnrt.getDeviceProperties(checked_index(device)))


def get_device_name(device=None) -> str:
    """torch.mlu.get_device_name: the board's name, e.g. MLU370-X4."""
    return get_device_properties(device).name


def get_device_capability(device=None) -> tuple[int, int]:
    """torch.mlu.get_device_capability: (major, minor) compute capability of the board."""
    properties = get_device_properties(device)
    return properties.major, properties.minor


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """torch.mlu.is_bf16_supported: whether the current board computes bfloat16."""
    return bool(cnrt.deviceGetAttribute(cnrt.cnrtAttrBF16ComputingSupported, current_device())) or \
        including_emulation


def can_device_access_peer(device, peer_device) -> bool:
    """torch.mlu.can_device_access_peer (cnrtGetPeerAccessibility)."""
    return bool(cnrt.getPeerAccessibility(checked_index(device), checked_index(peer_device)))


_generators: "tuple | None" = None


def _refresh_default_generators(*_ignored) -> None:
    """Forget the generators of the old device table (the next `default_generators` makes the new ones)."""
    global _generators
    _generators = None


def __getattr__(name: str):
    # torch.mlu.default_generators (one torch.Generator per device) is made at its first use, since counting the
    # devices builds mlusim's device table, which importing torch_mlu must not do (lazy initialization)
    global _generators
    if name == "default_generators":
        _devices.check()
        if _generators is None:
            _generators = tuple(_state.C.default_generator(i) for i in range(_state.C.device_count()))
        return _generators
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get_amp_supported_dtype() -> list[torch.dtype]:
    """The dtypes torch.autocast("mlu") accepts."""
    return [torch.float16, torch.bfloat16]


from . import amp  # noqa: E402
from .amp import (get_autocast_dtype, is_autocast_enabled, set_autocast_dtype,  # noqa: E402,F401
                  set_autocast_enabled)
from .memory import *  # noqa: E402,F401,F403
from .random import *  # noqa: E402,F401,F403
from .streams import (Event, ExternalStream, Stream, StreamContext, current_stream,  # noqa: E402,F401
                      default_stream, set_stream, stream)
from .storage import LEGACY_STORAGES, UntypedStorage  # noqa: E402,F401
from .tensor_types import LEGACY_TENSORS  # noqa: E402

globals().update(LEGACY_STORAGES)  # torch.mlu.FloatStorage, IntStorage, ... (torch_mlu's legacy typed storages)
globals().update(LEGACY_TENSORS)  # torch.mlu.FloatTensor, IntTensor, ... (and its legacy typed tensors)
