"""Copies and fills: memcpy (+Async, Peer, 2D), memset (+Async, D8/D16/D32).

Every call checks its pointers when it is made (unknown, freed, out-of-range addresses fail at the call) and pins the
blocks it uses until the queued copy has run (mlusim.submit builds every command). Synchronous forms queue on the default queue of the device that owns
the device pointer and wait for it (so they also report that queue's sticky error).
"""
from __future__ import annotations

from typing import Union

import numpy as np

from mlusim import cost, ordering
from mlusim.errors import ArgumentFault, DirectionFault
from mlusim.hostmem import check_pointer_kind, describe_pointer, host_bytes
from mlusim.submit import Kind, Submission
from mlusim.transfer import DeviceRange, copy_2d_work, copy_work, fill_work, owning_device, pitched_extent
from mlusim.validate import as_int, as_size, is_address

from . import constants as C
from .device import device_arg
from .errors import api
from .queues import queue_arg

_DIRECTION_NAMES = {0: "cnrtMemcpyHostToDev", 1: "cnrtMemcpyDevToDev", 2: "cnrtMemcpyDevToHost",
                    3: "cnrtMemcpyHostToHost", 4: "cnrtMemcpyPeerToPeer", 5: "cnrtMemcpyNoDirection"}
# direction -> (dst is device, src is device)
_EXPECTED = {0: (True, False), 1: (True, True), 2: (False, True), 3: (False, False), 4: (True, True)}
_COST_KIND = {0: cost.HOST_TO_DEVICE, 1: cost.DEVICE_TO_DEVICE, 2: cost.DEVICE_TO_HOST, 3: cost.HOST_TO_HOST,
              4: cost.PEER_TO_PEER}

Side = Union[DeviceRange, np.ndarray]


def _kind(pointer) -> str:
    return describe_pointer(pointer)


def _direction(dst, src, direction) -> int:
    """The effective direction, checked against the pointer kinds."""
    value = as_int(direction, "dir")
    check_pointer_kind(dst, "dst")
    check_pointer_kind(src, "src")
    if value not in _DIRECTION_NAMES:
        raise DirectionFault(f"{value} is not a cnrtMemTransDir_t (valid: 0..5)", "dir")
    actual = (is_address(dst), is_address(src))
    if value == C.cnrtMemcpyNoDirection:
        if actual == (True, True):
            same = owning_device(int(dst), "dst") is owning_device(int(src), "src")
            return C.cnrtMemcpyDevToDev if same else C.cnrtMemcpyPeerToPeer
        return {(True, False): 0, (False, True): 2, (False, False): 3}[actual]
    if actual != _EXPECTED[value]:
        want_dst, want_src = ("a device address" if e else "a host buffer" for e in _EXPECTED[value])
        raise DirectionFault(f"{_DIRECTION_NAMES[value]} needs dst = {want_dst} and src = {want_src}, got dst = "
                             f"{_kind(dst)} and src = {_kind(src)}", "dir")
    return value


def _check_same_device(direction: int, dst_side, src_side) -> None:
    if direction == C.cnrtMemcpyDevToDev and dst_side.device is not src_side.device:
        raise DirectionFault("dst and src are on different devices: use cnrtMemcpyPeer or cnrtMemcpyPeerToPeer",
                             "dir")


def _host_side(buffer, nbytes: int, arg: str, writable: bool) -> np.ndarray:
    flat = host_bytes(buffer, arg, writable=writable)
    if flat.nbytes < nbytes:
        raise ArgumentFault(f"host buffer holds {flat.nbytes} bytes, the call needs {nbytes}", arg)
    return flat[:nbytes]


def _side(submission: Submission, pointer, nbytes: int, arg: str, writable: bool, layout=None) -> Side:
    """One side of a copy: a device range held by the submission (its access recorded, only the elements of
    `layout` for a pitched region), or a host buffer."""
    if is_address(pointer):
        if writable:
            return submission.write(int(pointer), nbytes, arg, layout)
        return submission.read(int(pointer), nbytes, arg, layout)
    return _host_side(pointer, nbytes, arg, writable)


def _host_call(synchronous: bool):
    """The info of a copy or fill: a synchronous one is the host thread's own access (for the sanitizer)."""
    return {"synchronous": True} if synchronous else None


def _device_of_copy(dst: Side, src: Side):
    for side in (dst, src):
        if isinstance(side, DeviceRange):
            return side.device
    return None


def _enqueue_copy(name: str, dst, src, nbytes, direction, queue, synchronous: bool) -> None:
    size = as_size(nbytes, "bytes")
    effective = _direction(dst, src, direction)
    target_queue = queue_arg(queue) if not synchronous else None
    if size == 0:
        return  # a 0-byte copy is a no-op (its pointers may be NULL), as in CNRT
    with Submission(Kind.MEMCPY, name) as submission:
        dst_side = _side(submission, dst, size, "dst", writable=True)
        src_side = _side(submission, src, size, "src", writable=False)
        _check_same_device(effective, dst_side, src_side)
        owner = _device_of_copy(src_side, dst_side) if effective == C.cnrtMemcpyDevToHost \
            else _device_of_copy(dst_side, src_side)
        if target_queue is None:
            target_queue = owner.default_queue if owner is not None else queue_arg(None)
        if synchronous:
            ordering.wait_for_conflicting_work(name, submission, target_queue)
        spec = target_queue.device.spec
        submission.submit(target_queue, copy_work(dst_side, src_side), cost.copy_us(spec, _COST_KIND[effective], size),
                           info=_host_call(synchronous))
    if synchronous:
        target_queue.sync()


@api("cnrtMemcpy")
def memcpy(dst, src, bytes: int, dir: int) -> None:
    """cnrtMemcpy(void *dst, void *src, size_t bytes, cnrtMemTransDir_t dir): synchronous copy.
    Device pointers are ints, host pointers are buffers (numpy arrays first)."""
    _enqueue_copy("cnrtMemcpy", dst, src, bytes, dir, None, synchronous=True)


@api("cnrtMemcpyAsync", "cnrtMemcpyAsync_V2")
def memcpyAsync(dst, src, bytes: int, queue, dir: int) -> None:
    """cnrtMemcpyAsync(void *dst, void *src, size_t bytes, cnrtQueue_t queue, cnrtMemTransDir_t dir); CNRT 6's
    cnrtMemcpyAsync_V2 has the same parameters and meaning."""
    _enqueue_copy("cnrtMemcpyAsync", dst, src, bytes, dir, queue, synchronous=False)


def _peer(name, dst, dstDev, src, srcDev, nbytes, queue, synchronous: bool) -> None:
    size = as_size(nbytes, "bytes")
    dst_device = device_arg(dstDev, "dstDev")
    src_device = device_arg(srcDev, "srcDev")
    if size == 0:
        if not synchronous:
            queue_arg(queue)
        return
    for pointer, arg in ((dst, "dst"), (src, "src")):
        if not is_address(pointer):
            raise ArgumentFault(f"expected a device address, got {describe_pointer(pointer)}", arg)
    if owning_device(int(dst), "dst") is not dst_device:
        raise ArgumentFault(f"0x{int(dst):x} is not on device {dst_device.index}", "dst")
    if owning_device(int(src), "src") is not src_device:
        raise ArgumentFault(f"0x{int(src):x} is not on device {src_device.index}", "src")
    target_queue = queue_arg(queue) if not synchronous else src_device.default_queue
    with Submission(Kind.MEMCPY, name) as submission:
        dst_side = submission.write(int(dst), size, "dst")
        src_side = submission.read(int(src), size, "src")
        kind = cost.PEER_TO_PEER if dst_device is not src_device else cost.DEVICE_TO_DEVICE
        if synchronous:
            ordering.wait_for_conflicting_work(name, submission, target_queue)
        submission.submit(target_queue, copy_work(dst_side, src_side), cost.copy_us(src_device.spec, kind, size),
                           info=_host_call(synchronous))
    if synchronous:
        target_queue.sync()


@api("cnrtMemcpyPeer")
def memcpyPeer(dst, dstDev: int, src, srcDev: int, bytes: int) -> None:
    """cnrtMemcpyPeer(void *dst, int dstDev, void *src, int srcDev, size_t bytes): synchronous copy between devices."""
    _peer("cnrtMemcpyPeer", dst, dstDev, src, srcDev, bytes, None, synchronous=True)


@api("cnrtMemcpyPeerAsync")
def memcpyPeerAsync(dst, dstDev: int, src, srcDev: int, bytes: int, queue) -> None:
    """cnrtMemcpyPeerAsync(void *dst, int dstDev, void *src, int srcDev, size_t bytes, cnrtQueue_t queue)."""
    _peer("cnrtMemcpyPeerAsync", dst, dstDev, src, srcDev, bytes, queue, synchronous=False)


@api("cnrtMemcpy2D")
def memcpy2D(dst, dpitch: int, src, spitch: int, width: int, height: int, dir: int) -> None:
    """cnrtMemcpy2D(dst, dpitch, src, spitch, width, height, dir): copy `height` rows of `width` bytes between
    buffers whose rows are dpitch / spitch bytes apart. Synchronous."""
    d_pitch, s_pitch = as_size(dpitch, "dpitch"), as_size(spitch, "spitch")
    row, rows = as_size(width, "width"), as_size(height, "height")
    effective = _direction(dst, src, dir)
    dst_extent = pitched_extent(d_pitch, row, rows, "dpitch")
    src_extent = pitched_extent(s_pitch, row, rows, "spitch")
    if dst_extent == 0:
        return
    with Submission(Kind.MEMCPY, "cnrtMemcpy2D") as submission:
        dst_side = _side(submission, dst, dst_extent, "dst", writable=True, layout=(1, (rows, row), (d_pitch, 1)))
        src_side = _side(submission, src, src_extent, "src", writable=False, layout=(1, (rows, row), (s_pitch, 1)))
        _check_same_device(effective, dst_side, src_side)
        owner = _device_of_copy(dst_side, src_side)
        queue = owner.default_queue if owner is not None else queue_arg(None)
        model = cost.copy_us(queue.device.spec, _COST_KIND[effective], row * rows)
        ordering.wait_for_conflicting_work("cnrtMemcpy2D", submission, queue)
        submission.submit(queue, copy_2d_work(dst_side, d_pitch, src_side, s_pitch, row, rows), model,
                           info=_host_call(True))
    queue.sync()


_FILL_LIMITS = {1: (-2**7, 2**8 - 1), 2: (-2**15, 2**16 - 1), 4: (-2**31, 2**32 - 1)}


def _fill(name: str, ptr, value, count, element_bytes: int, queue, synchronous: bool) -> None:
    low, high = _FILL_LIMITS[element_bytes]
    number = as_int(value, "value", minimum=low, maximum=high) % (1 << (8 * element_bytes))
    nbytes = as_size(count, "count" if element_bytes > 1 else "bytes") * element_bytes
    if nbytes == 0:
        if not synchronous:
            queue_arg(queue)
        return  # a 0-byte fill is a no-op (its pointer may be NULL)
    if not is_address(ptr):
        raise ArgumentFault(f"expected a device address, got {describe_pointer(ptr)}", "ptr")
    with Submission(Kind.MEMSET, name) as submission:
        target = submission.write(int(ptr), nbytes, "ptr")
        target_queue = target.device.default_queue if synchronous else queue_arg(queue)
        if synchronous:
            ordering.wait_for_conflicting_work(name, submission, target_queue)
        submission.submit(target_queue, fill_work(target, number, element_bytes),
                           cost.memset_us(target_queue.device.spec, nbytes), info=_host_call(synchronous))
    if synchronous:
        target_queue.sync()


@api("cnrtMemset")
def memset(ptr, value: int, bytes: int) -> None:
    """cnrtMemset(void *ptr, int value, size_t bytes): every byte = value (0..255, or -128..-1). Synchronous."""
    _fill("cnrtMemset", ptr, value, bytes, 1, None, True)


@api("cnrtMemsetAsync")
def memsetAsync(ptr, value: int, bytes: int, queue) -> None:
    """cnrtMemsetAsync(void *ptr, int value, size_t bytes, cnrtQueue_t queue)."""
    _fill("cnrtMemsetAsync", ptr, value, bytes, 1, queue, False)


@api("cnrtMemsetD8")
def memsetD8(ptr, value: int, count: int) -> None:
    """cnrtMemsetD8(void *ptr, uint8_t value, size_t count). Synchronous."""
    _fill("cnrtMemsetD8", ptr, value, count, 1, None, True)


@api("cnrtMemsetD8Async")
def memsetD8Async(ptr, value: int, count: int, queue) -> None:
    """cnrtMemsetD8Async(void *ptr, uint8_t value, size_t count, cnrtQueue_t queue)."""
    _fill("cnrtMemsetD8Async", ptr, value, count, 1, queue, False)


@api("cnrtMemsetD16")
def memsetD16(ptr, value: int, count: int) -> None:
    """cnrtMemsetD16(void *ptr, uint16_t value, size_t count): `count` 16-bit elements. Synchronous."""
    _fill("cnrtMemsetD16", ptr, value, count, 2, None, True)


@api("cnrtMemsetD16Async")
def memsetD16Async(ptr, value: int, count: int, queue) -> None:
    """cnrtMemsetD16Async(void *ptr, uint16_t value, size_t count, cnrtQueue_t queue)."""
    _fill("cnrtMemsetD16Async", ptr, value, count, 2, queue, False)


@api("cnrtMemsetD32")
def memsetD32(ptr, value: int, count: int) -> None:
    """cnrtMemsetD32(void *ptr, uint32_t value, size_t count) (v4): `count` 32-bit elements. Synchronous."""
    _fill("cnrtMemsetD32", ptr, value, count, 4, None, True)


@api("cnrtMemsetD32Async")
def memsetD32Async(ptr, value: int, count: int, queue) -> None:
    """cnrtMemsetD32Async(void *ptr, uint32_t value, size_t count, cnrtQueue_t queue)."""
    _fill("cnrtMemsetD32Async", ptr, value, count, 4, queue, False)
