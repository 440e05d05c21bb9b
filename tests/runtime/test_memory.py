"""cnrt device and host memory: malloc/free, memGetInfo, pointer checks, pinned buffers, attributes."""
import threading

import numpy as np
import pytest

import cnrt
from mlusim import device as devices
from mlusim.memory import footprint

from .conftest import SMALL_MEMORY
from .helpers import download, raises_code, upload


def test_malloc_accounting_is_exact():
    assert cnrt.memGetInfo() == (SMALL_MEMORY, SMALL_MEMORY)
    pointers = [cnrt.malloc(n) for n in (1, 1000, 1 << 20)]
    free, total = cnrt.memGetInfo()
    assert total == SMALL_MEMORY
    assert free == SMALL_MEMORY - sum(footprint(n) for n in (1, 1000, 1 << 20))
    for pointer in pointers:
        cnrt.free(pointer)
    assert cnrt.memGetInfo() == (SMALL_MEMORY, SMALL_MEMORY)


def test_fresh_memory_reads_as_poison():
    pointer = cnrt.malloc(64)
    assert np.isnan(download(pointer, 16, np.float32)).all()
    assert (download(pointer, 16, np.int32) == -1).all()


def test_zero_bytes_is_the_null_pointer_and_a_negative_size_an_argument_error():
    before = cnrt.memGetInfo()
    assert cnrt.malloc(0) == 0 and cnrt.memAllocAsync(0, None) == 0
    assert cnrt.memGetInfo() == before
    cnrt.free(0)
    error = raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.malloc, -1)
    assert "cnrtMalloc" in str(error) and "'bytes'" in str(error)


def test_exhausting_the_device_is_no_mem_not_a_crash():
    devices.configure(memory=1 << 20)
    cnrt.malloc(600 * 1024)
    error = raises_code(cnrt.cnrtErrorNoMem, cnrt.malloc, 600 * 1024)
    assert "free" in str(error)
    raises_code(cnrt.cnrtErrorNoMem, cnrt.malloc, 1 << 40)


def test_free_of_null_is_a_no_op():
    cnrt.free(0)
    cnrt.free(None)


@pytest.mark.parametrize("case, kind", [
    ("null", "null_pointer"), ("unknown", "unknown_address"), ("freed", "use_after_free"),
    ("past_end", "out_of_bounds"), ("negative", "negative_offset")])
def test_every_bad_pointer_has_a_distinct_clear_error(case, kind):
    first = cnrt.malloc(1024)
    second = cnrt.malloc(1024)
    host = np.zeros(256, dtype=np.float32)
    pointer = {"null": 0, "unknown": second + (1 << 30), "freed": first, "past_end": second + 8,
               "negative": second - 16}[case]
    if case == "freed":
        cnrt.free(first)
    error = raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.memcpy, host, pointer, 1024, cnrt.cnrtMemcpyDevToHost)
    assert error.kind == kind
    assert "cnrtMemcpy" in str(error) and "'src'" in str(error)
    if pointer:
        assert f"0x{pointer:x}" in str(error)


def test_double_free_and_interior_free_are_reported():
    pointer = cnrt.malloc(1024)
    assert raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.free, pointer + 64).kind == "not_block_start"
    cnrt.free(pointer)
    error = raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.free, pointer)
    assert error.kind == "double_free" and "cnrtFree" in str(error)


def test_free_waits_for_queued_work_that_uses_the_block():
    queue = cnrt.queueCreate()
    release = threading.Event()
    pointer = upload(np.arange(256, dtype=np.float32))
    out = np.zeros(256, dtype=np.float32)
    cnrt.invokeHostFunc(queue, lambda _: release.wait(10), None)
    cnrt.memcpyAsync(out, pointer, 1024, queue, cnrt.cnrtMemcpyDevToHost)
    freer = threading.Thread(target=cnrt.free, args=(pointer,))
    freer.start()
    freer.join(0.2)
    assert freer.is_alive(), "free returned while a queued copy still needed the block"
    release.set()
    freer.join(10)
    assert not freer.is_alive()
    np.testing.assert_array_equal(out, np.arange(256, dtype=np.float32))


def test_pinned_host_memory_works_as_a_host_buffer():
    pinned = cnrt.hostMalloc(4096)
    assert pinned.nbytes == 4096
    pinned.view(np.float32)[:] = np.arange(1024)
    pointer = cnrt.malloc(4096)
    cnrt.memcpy(pointer, pinned, 4096, cnrt.cnrtMemcpyHostToDev)
    np.testing.assert_array_equal(download(pointer, 1024, np.float32), np.arange(1024))
    legacy = cnrt.mallocHost(128, cnrt.CNRT_MEMTYPE_LOCKED)
    cnrt.freeHost(legacy)
    cnrt.freeHost(pinned)
    assert raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.freeHost, pinned).kind == "double_free"
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.freeHost, np.zeros(4))
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.mallocHost, 16, 7)


def test_pointer_attributes_tell_device_host_and_unregistered():
    pointer = cnrt.malloc(256)
    attributes = cnrt.pointerGetAttributes(pointer + 100)
    assert attributes.type == cnrt.cnrtMemTypeDevice and attributes.device == 0
    pinned = cnrt.hostMalloc(256)
    assert cnrt.pointerGetAttributes(pinned).type == cnrt.cnrtMemTypeHost
    assert cnrt.pointerGetAttributes(pinned[16:32]).type == cnrt.cnrtMemTypeHost
    assert cnrt.pointerGetAttributes(np.zeros(4)).type == cnrt.cnrtMemTypeUnregistered
    assert cnrt.pointerGetAttributes(12345).type == cnrt.cnrtMemTypeUnregistered
    cnrt.free(pointer)
    assert cnrt.pointerGetAttributes(pointer).type == cnrt.cnrtMemTypeUnregistered


def test_async_alloc_and_free_follow_the_queue():
    queue = cnrt.queueCreate()
    pointer = cnrt.memAllocAsync(1024, queue)
    cnrt.memsetAsync(pointer, 7, 1024, queue)
    out = np.zeros(1024, dtype=np.uint8)
    cnrt.memcpyAsync(out, pointer, 1024, queue, cnrt.cnrtMemcpyDevToHost)
    cnrt.memFreeAsync(pointer, queue)
    cnrt.queueSync(queue)
    assert (out == 7).all()
    assert raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.free, pointer).kind == "double_free"
