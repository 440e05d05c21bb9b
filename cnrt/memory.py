"""Device and host memory: malloc/free, pinned host buffers, memGetInfo, pointer attributes."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from mlusim import device as devices
from mlusim.errors import ArgumentFault
from mlusim.hostmem import PINNED, describe_pointer
from mlusim.submit import Kind, Submission
from mlusim.transfer import owning_device
from mlusim.validate import as_enum, as_size, is_address

from . import constants as C
from .device import current_device
from .errors import api
from .queues import queue_arg


@api("cnrtMalloc")
def malloc(bytes: int) -> int:
    """cnrtMalloc(void **ptr, size_t bytes) -> ptr: a poisoned block of device memory on the current device.
    0 bytes succeeds with the NULL pointer (0), which cnrtFree accepts; running out of the simulated capacity is
    cnrtErrorNoMem."""
    size = as_size(bytes, "bytes")
    if size == 0:
        current_device()  # the call still needs a valid current device
        return 0
    return current_device().memory.allocate(size).start


@api("cnrtMallocConstant")
def mallocConstant(bytes: int) -> int:
    """cnrtMallocConstant(void **pPtr, size_t bytes) -> pPtr: device memory for data kernels only read. The
    simulated GDRAM has no separate constant region: the block comes from the same allocator as cnrtMalloc's (freed
    with cnrtFree), with the same checks."""
    return malloc(bytes)


@api("cnrtFree")
def free(ptr: int) -> None:
    """cnrtFree(void *ptr). cnrtFree(NULL) is a no-op. Waits for queued work that still uses the block."""
    if ptr is None or (is_address(ptr) and int(ptr) == 0):
        return
    if not is_address(ptr):
        raise ArgumentFault(f"expected a device address, got {describe_pointer(ptr)}", "ptr")
    address = int(ptr)
    owning_device(address, "ptr").memory.free(address, "ptr")


@api("cnrtMemAllocAsync")
def memAllocAsync(bytes: int, queue) -> int:
    """cnrtMemAllocAsync(void **ptr, size_t bytes, cnrtQueue_t queue) -> ptr, usable by work queued after it
    (0 bytes: NULL)."""
    target = queue_arg(queue)
    size = as_size(bytes, "bytes")
    return target.device.memory.allocate(size).start if size else 0


@api("cnrtMemFreeAsync")
def memFreeAsync(ptr: int, queue) -> None:
    """cnrtMemFreeAsync(void *ptr, cnrtQueue_t queue): the block is freed in the queue's order. Work queued before
    this call (on any queue) still runs on it; any use of `ptr` after the call is a use after free, reported at
    that call. NULL is a no-op."""
    target = queue_arg(queue)
    if ptr is None or (is_address(ptr) and int(ptr) == 0):
        return
    if not is_address(ptr):
        raise ArgumentFault(f"expected a device address, got {describe_pointer(ptr)}", "ptr")
    address = int(ptr)
    memory = owning_device(address, "ptr").memory
    memory.block_at(address, "ptr")
    position = target.submit(Submission(Kind.FREE, "cnrtMemFreeAsync").command(None))
    memory.free_async(address, target, position, "ptr")


@api("cnrtMemGetInfo")
def memGetInfo() -> tuple[int, int]:
    """cnrtMemGetInfo(size_t *free, size_t *total) -> (free, total) bytes of the current device, exact."""
    return current_device().memory.info()


def _pinned(nbytes):
    size = as_size(nbytes, "bytes")
    return PINNED.allocate(size) if size else None


@api("cnrtHostMalloc")
def hostMalloc(bytes: int):
    """cnrtHostMalloc(void **ptr, size_t bytes) -> a pinned host buffer (a uint8 numpy array), poisoned; 0 bytes
    gives NULL (None). Pinned memory counts in the host-wide memory budget (cnrtErrorSysNoMem beyond it)."""
    return _pinned(bytes)


@api("cnrtMallocHost")
def mallocHost(bytes: int, type: int = C.CNRT_MEMTYPE_LOCKED):
    """cnrtMallocHost(void **ptr, size_t bytes, cnrtMemType_t type) (v4) -> a pinned host buffer (0 bytes: None)."""
    as_enum(type, "type", (C.CNRT_MEMTYPE_DEFAULT, C.CNRT_MEMTYPE_LOCKED), "cnrtMemType_t")
    return _pinned(bytes)


@api("cnrtFreeHost")
def freeHost(ptr) -> None:
    """cnrtFreeHost(void *ptr): free a buffer from hostMalloc/mallocHost. NULL (None) is a no-op."""
    if ptr is None:
        return
    PINNED.free(ptr, "ptr")


@dataclass(frozen=True)
class cnrtPointerAttributes_t:
    """What a pointer is: type (cnrtMemTypeUnregistered/Host/Device), device, devicePointer, hostPointer."""

    type: int
    device: int
    devicePointer: Optional[int]
    hostPointer: Optional[Any]


@api("cnrtPointerGetAttributes")
def pointerGetAttributes(ptr) -> cnrtPointerAttributes_t:
    """cnrtPointerGetAttributes(cnrtPointerAttributes_t *attr, const void *ptr) -> attr.
    Device addresses inside a live allocation are Device; pinned host buffers (or views into them) are Host;
    anything else is Unregistered."""
    if is_address(ptr):
        address = int(ptr)
        owner = devices.owner_of(address) if address else None
        if owner is not None and owner.memory.find(address) is not None:
            return cnrtPointerAttributes_t(C.cnrtMemTypeDevice, owner.index, address, None)
        return cnrtPointerAttributes_t(C.cnrtMemTypeUnregistered, -1, None, None)
    if ptr is not None and PINNED.contains(ptr):
        return cnrtPointerAttributes_t(C.cnrtMemTypeHost, -1, None, ptr)
    return cnrtPointerAttributes_t(C.cnrtMemTypeUnregistered, -1, None, ptr)
