"""Device ranges and the copy / fill work done on them.

A `DeviceRange` is a validated, pinned piece of GDRAM: it is resolved when the command is enqueued (so a bad pointer
fails at the call) and read when the command runs. Host sides are flat uint8 numpy views (see hostmem.host_bytes).
The `*_work` functions give the body of a queued copy or fill; mlusim.submit builds the command around it.
"""
from __future__ import annotations

from typing import Union

import numpy as np
from numpy.lib.stride_tricks import as_strided

from . import device as devices
from .errors import ArgumentFault, NullPointerFault, UnknownAddressFault
from .host.threads import host_cores, pool
from .memory import Block


class DeviceRange:
    """[address, address + nbytes) on one device, pinned until the command that holds it has run."""

    __slots__ = ("device", "block", "offset", "nbytes", "address")

    def __init__(self, device, block: Block, offset: int, nbytes: int, address: int):
        self.device = device
        self.block = block
        self.offset = offset
        self.nbytes = nbytes
        self.address = address

    def array(self) -> np.ndarray:
        """The bytes, as a writable uint8 view (valid while the range is pinned)."""
        return self.block.data[self.offset:self.offset + self.nbytes]

    def typed(self, dtype, shape=None) -> np.ndarray:
        flat = self.array().view(dtype)
        return flat if shape is None else flat.reshape(shape)


def owning_device(address: int, arg: str):
    """The device whose address range holds `address`; a fault naming `arg` when none does."""
    if address == 0:
        raise NullPointerFault("null device pointer", arg, 0)
    owner = devices.owner_of(address)
    if owner is None:
        raise UnknownAddressFault(f"0x{address:x} is not a device address", arg, address)
    return owner


def acquire(address: int, nbytes: int, arg: str) -> DeviceRange:
    """Resolve and pin [address, address + nbytes)."""
    owner = devices.owner_of(address) if address else None
    if owner is None:
        owner = owning_device(address, arg)  # raises the fault that names the argument
    block, offset = owner.memory.acquire(address, nbytes, arg)
    return DeviceRange(owner, block, offset, nbytes, address)


Side = Union[DeviceRange, np.ndarray]


def _bytes_of(side: Side) -> np.ndarray:
    return side.array() if isinstance(side, DeviceRange) else side


#: Copies of at least this many bytes are split over the host's cores (numpy's copy releases the GIL).
PARALLEL_COPY_BYTES = 8 << 20
def copy_bytes(dst: np.ndarray, src: np.ndarray) -> None:
    """dst[:] = src for flat byte arrays; large copies run on all host cores at once."""
    size = dst.nbytes
    cores = host_cores()
    if size < PARALLEL_COPY_BYTES or cores == 1:
        np.copyto(dst, src)
        return
    bounds = [size * i // cores for i in range(cores + 1)]
    futures = [pool().submit(np.copyto, dst[lo:hi], src[lo:hi]) for lo, hi in zip(bounds[1:-1], bounds[2:])]
    np.copyto(dst[:bounds[1]], src[:bounds[1]])
    for future in futures:
        future.result()


def copy_work(dst: Side, src: Side):
    """The work of a copy of src's bytes into dst (both the same length)."""

    def run() -> None:
        copy_bytes(_bytes_of(dst), _bytes_of(src))

    return run


def pitched(flat: np.ndarray, pitch: int, width: int, height: int) -> np.ndarray:
    """A (height, width) byte view of rows `pitch` bytes apart."""
    return as_strided(flat, shape=(height, width), strides=(pitch, 1), writeable=True)


def copy_2d_work(dst: Side, dpitch: int, src: Side, spitch: int, width: int, height: int):
    """The work of a copy of `height` rows of `width` bytes between pitched buffers."""

    def run() -> None:
        np.copyto(pitched(_bytes_of(dst), dpitch, width, height), pitched(_bytes_of(src), spitch, width, height))

    return run


def pitched_extent(pitch: int, width: int, height: int, pitch_arg: str) -> int:
    """Bytes spanned by a pitched 2-D region; checks width <= pitch."""
    if height == 0 or width == 0:
        return 0
    if width > pitch:
        raise ArgumentFault(f"pitch {pitch} is smaller than the row width {width}", pitch_arg)
    return (height - 1) * pitch + width


_FILL_TYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def fill_work(dst: DeviceRange, value: int, element_bytes: int):
    """The work of writing `value` into every `element_bytes`-wide element of dst."""
    dtype = _FILL_TYPES[element_bytes]

    def run() -> None:
        dst.array().view(dtype)[...] = dtype(value)

    return run
