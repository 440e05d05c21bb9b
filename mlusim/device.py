"""Simulated devices: board spec + GDRAM + queues; the process-wide device table and its configuration.

Configuration comes from the environment (mlusim.config: read when the table is first used, and again by
`configure()` without a config) or from `configure()`'s arguments:

  MLUSIM_ARCH          board name (default MLU370-X4; see mlusim.arch.BOARDS)
  MLUSIM_DEVICE_COUNT  number of devices (default: the board's chips, 1; MLU370-X8 has 2)
  MLUSIM_MEMORY        simulated GDRAM per device: "board" (the board's real size, default), or a size such as
                       "4GiB", "512MiB", "1.5GB", "1073741824"
  MLUSIM_BLOCKING      1 runs each queued command at its call, so errors surface at the line that caused them
  MLUSIM_POISON        0 turns off poisoning of fresh allocations (default 1: bytes 0xFF)
  MLUSIM_SEED          seed for everything random in the simulator (default 0)
  MLU_VISIBLE_DEVICES  the devices this process sees, as the driver reads it: a comma-separated list of ordinals
                       of the machine's devices, in the order they get this process's ordinals 0, 1, ...; the list
                       ends at the first entry that is not a device ("" and "32" on a 2-device machine leave none)
"""
from __future__ import annotations

import atexit
import os
import re
import threading
import time
from dataclasses import dataclass, replace
from typing import Optional

from .arch import BOARDS, DEFAULT_BOARD, BoardSpec, board
from . import config as settings
from . import hostmem, memory, queue as queues
from .errors import DeviceIdFault, NoDeviceFault, QueueFault
from .memory import ADDRESS_BITS, ADDRESS_SPAN, AddressSpace
from .notifier import HostClock
from .queue import Queue, wait_all

_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1024, "m": 1000**2, "mb": 1000**2, "mib": 1024**2,
          "g": 1000**3, "gb": 1000**3, "gib": 1024**3, "t": 1000**4, "tb": 1000**4, "tib": 1024**4}


def parse_size(text: str) -> int:
    """Bytes from a size such as '4GiB', '512 MiB', '1.5GB' or '1073741824'."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise ValueError(f"cannot read {text!r} as a size (examples: 4GiB, 512MiB, 1073741824)")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


@dataclass(frozen=True)
class Config:
    """How the simulated machine is set up."""

    arch: str = DEFAULT_BOARD
    device_count: Optional[int] = None
    memory: Optional[int] = None
    blocking: bool = False
    poison: bool = True
    seed: int = 0
    #: the machine's device ordinals this process sees, in its own ordinals' order (None: all of them)
    visible: Optional[tuple[int, ...]] = None

    @property
    def spec(self) -> BoardSpec:
        return board(self.arch)

    @property
    def devices(self) -> int:
        return self.device_count if self.device_count is not None else self.spec.chips_per_board

    @property
    def visible_devices(self) -> tuple[int, ...]:
        """The machine's ordinals of the devices in the table (its entry i is the device of ordinal i)."""
        return tuple(range(self.devices)) if self.visible is None else self.visible

    @property
    def memory_per_device(self) -> int:
        return self.memory if self.memory is not None else self.spec.gdram_bytes


def config_from_env(environ=None) -> Config:
    """The configuration the MLUSIM_* environment variables describe (ValueError on a bad value); `environ`:
    a mapping to read instead of the environment's snapshot (mlusim.config)."""
    environ = settings.environ() if environ is None else environ
    config = Config()
    if "MLUSIM_ARCH" in environ:
        config = replace(config, arch=board(environ["MLUSIM_ARCH"]).name)
    if "MLUSIM_DEVICE_COUNT" in environ:
        config = replace(config, device_count=int(environ["MLUSIM_DEVICE_COUNT"]))
    memory = environ.get("MLUSIM_MEMORY", "board")
    if memory.strip().lower() != "board":
        config = replace(config, memory=parse_size(memory))
    if "MLUSIM_BLOCKING" in environ:
        config = replace(config, blocking=settings.flag(environ["MLUSIM_BLOCKING"]))
    if "MLUSIM_POISON" in environ:
        config = replace(config, poison=settings.flag(environ["MLUSIM_POISON"]))
    if "MLUSIM_SEED" in environ:
        config = replace(config, seed=int(environ["MLUSIM_SEED"]))
    if "MLU_VISIBLE_DEVICES" in environ:
        config = replace(config, visible=visible_from_text(environ["MLU_VISIBLE_DEVICES"], config.devices))
    _check(config)
    return config


def visible_from_text(text: str, count: int) -> tuple[int, ...]:
    """The ordinals MLU_VISIBLE_DEVICES=`text` leaves visible on a machine of `count` devices. As the driver (and
    CUDA's CUDA_VISIBLE_DEVICES) reads it, the list ends at its first entry that names no device: a number out of
    range, one already listed, or not a number."""
    visible: list[int] = []
    for entry in text.split(","):
        entry = entry.strip()
        if not entry.isdigit() or int(entry) >= count or int(entry) in visible:
            break
        visible.append(int(entry))
    return tuple(visible)


def _check(config: Config) -> None:
    if config.arch not in BOARDS:
        raise ValueError(f"unknown board {config.arch!r}")
    if not 1 <= config.devices <= 64:
        raise ValueError(f"device count must be 1..64, got {config.devices}")
    if not 4096 <= config.memory_per_device < ADDRESS_SPAN // 2:
        raise ValueError(f"memory per device must be 4 KiB .. 512 GiB, got {config.memory_per_device}")
    visible = config.visible_devices
    if len(set(visible)) != len(visible) or not all(0 <= ordinal < config.devices for ordinal in visible):
        raise ValueError(f"visible devices {list(visible)} must be distinct ordinals of the machine's "
                         f"{config.devices} device(s)")


class Device:
    """One simulated MLU: spec, GDRAM, queues, sticky error. `index` is the process's ordinal of it, `physical`
    the machine's (they differ under MLU_VISIBLE_DEVICES)."""

    def __init__(self, index: int, spec: BoardSpec, config: Config, physical: Optional[int] = None):
        self.index = index
        self.physical = index if physical is None else physical
        self.spec = spec
        self.config = config
        self.memory = AddressSpace(index, (index + 1) * ADDRESS_SPAN, config.memory_per_device, config.poison)
        self._lock = threading.Lock()
        self._queues: dict[int, Queue] = {}
        self._fault: Optional[QueueFault] = None
        self._retired: list[Queue] = []
        self.host_clock = HostClock()
        #: host seconds kept out of notifier host times (kernel compilation while the queues were idle)
        self.excluded_host_seconds = 0.0
        self.default_queue = self.create_queue(label="default queue")

    def __repr__(self) -> str:
        return f"<mlusim device {self.index}: {self.spec.name}>"

    def create_queue(self, priority: int = 0, label: str = "") -> Queue:
        queue = Queue(self, priority=priority, blocking=self.config.blocking, label=label)
        with self._lock:
            self._queues[queue.ident] = queue
        return queue

    def destroy_queue(self, queue: Queue) -> None:
        """Destroy `queue`; its queued work still runs and device syncs still wait for it."""
        queue.destroy()
        with self._lock:
            self._queues.pop(queue.ident, None)
            self._retired = [q for q in self._retired if q.busy()] + [queue]

    def queues(self) -> list[Queue]:
        with self._lock:
            return list(self._queues.values())

    def queues_with_work(self) -> list[Queue]:
        """Every queue that may still hold work: the live ones and the destroyed ones still running theirs."""
        with self._lock:
            return list(self._queues.values()) + [queue for queue in self._retired if queue.busy()]

    def record_fault(self, fault: QueueFault) -> None:
        with self._lock:
            if self._fault is None:
                self._fault = fault

    def take_fault(self) -> Optional[QueueFault]:
        with self._lock:
            fault, self._fault = self._fault, None
            return fault

    def wait_idle(self) -> None:
        with self._lock:
            pending = list(self._queues.values()) + self._retired
        wait_all(pending)

    def busy(self) -> bool:
        with self._lock:
            pending = list(self._queues.values()) + self._retired
        return any(queue.busy() for queue in pending)

    def synchronize(self) -> None:
        """Wait for every queue of the device, then raise the device's sticky error (cnrtSyncDevice)."""
        self.wait_idle()
        fault = self.take_fault()
        if fault is not None:
            raise fault

    def reset(self) -> None:
        """Drain and destroy every queue, free all memory, clear errors (cnrtDeviceReset)."""
        self.wait_idle()
        for queue in self.queues():
            self.destroy_queue(queue)
        self.memory.free_all()
        self.take_fault()
        self.default_queue = self.create_queue(label="default queue")

    def shutdown(self) -> None:
        self.wait_idle()
        for queue in self.queues():
            self.destroy_queue(queue)
        self.memory.free_all()


#: How long the interpreter's exit waits for queued work to finish.
EXIT_DRAIN_SECONDS = 10.0

_table_lock = threading.RLock()
_config: Optional[Config] = None
_devices: list[Device] = []
#: Increases at every configure(); API layers key their per-thread state on it.
generation = 0


def configure(config: Optional[Config] = None, **overrides) -> list[Device]:
    """Tear down the current devices and build new ones from `config` (default: the environment) + overrides."""
    global _config, _devices, generation
    with _table_lock:
        for device in _devices:
            device.shutdown()
        if config is None:
            settings.reread()
        base = config if config is not None else config_from_env()
        if "arch" in overrides:
            overrides["arch"] = board(overrides["arch"]).name
        new = replace(base, **overrides)
        _check(new)
        _config = new
        _devices = [Device(i, new.spec, new, physical) for i, physical in enumerate(new.visible_devices)]
        generation += 1
        return list(_devices)


def configured() -> bool:
    """Whether the device table exists (a runtime call brought up the devices)."""
    return _config is not None


def current_config() -> Config:
    with _table_lock:
        if _config is None:
            configure()
        return _config


def devices() -> list[Device]:
    if _config is not None:
        return _devices
    with _table_lock:
        if _config is None:
            configure()
        return _devices


_current = threading.local()


def current_index() -> int:
    """The ordinal of this host thread's current device (cnrtGetDevice: 0 until set_current, and again after the
    table was rebuilt); NoDeviceFault when no device is visible."""
    if not devices():
        raise _no_device()
    if getattr(_current, "generation", None) != generation:
        _current.generation = generation
        _current.index = 0
    return _current.index


def set_current(index: int) -> None:
    """Make device `index` (an existing ordinal) this host thread's current device (cnrtSetDevice)."""
    get(index)
    current_index()
    _current.index = index


def current() -> "Device":
    """This host thread's current device."""
    return get(current_index())


def get(index: int, arg: str = "device") -> Device:
    """The device with ordinal `index`; DeviceIdFault when there is none."""
    table = devices()
    if not table:
        raise _no_device(arg)
    if not 0 <= index < len(table):
        raise DeviceIdFault(f"device {index} does not exist ({len(table)} device(s): 0..{len(table) - 1})", arg)
    return table[index]


def _no_device(arg: Optional[str] = None) -> NoDeviceFault:
    return NoDeviceFault(f"no device is visible: MLU_VISIBLE_DEVICES leaves none of the machine's {_config.devices} "
                         f"device(s)", arg)


def owner_of(address: int) -> Optional[Device]:
    """The device whose address range holds `address`, or None."""
    index = (address >> ADDRESS_BITS) - 1
    table = _devices if _config is not None else devices()
    if 0 <= index < len(table):
        return table[index]
    return None


def _after_fork_in_child() -> None:
    """A forked child has only the thread that forked: every lock another thread held at the fork is made anew
    (memory first, since dropping the parent's queued work releases its pins), then the queues drop that work and
    report it at their next sync. The devices and their memory (a copy of the parent's) stay usable."""
    global _table_lock
    memory.reset_all_after_fork()
    hostmem.PINNED.reset_after_fork()
    queues.reset_all_after_fork()
    _table_lock = threading.RLock()
    for device in list(_devices):
        device._lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)


@atexit.register
def _drain_at_exit() -> None:
    # Let queued work finish before the interpreter tears down modules under the worker threads, but never hang the
    # exit on work that cannot finish (a host function waiting for an event nobody will set).
    deadline = time.monotonic() + EXIT_DRAIN_SECONDS
    while time.monotonic() < deadline and any(device.busy() for device in list(_devices)):
        time.sleep(0.01)

