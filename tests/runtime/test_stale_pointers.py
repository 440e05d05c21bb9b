"""A stale pointer is caught in every cnrt call that takes a device pointer, even after malloc/free/malloc of the
same size (which, with addresses reused, would have handed the freed range straight back): the call fails with
cnrtErrorArgsInvalid, kind use_after_free, naming the block and the call that freed it."""
import numpy as np
import pytest

import cnrt
from mlusim import bang
from mlusim import sanitizer

from .helpers import download, raises_code

SIZE = 4096


def stale(size=SIZE, free=None):
    """(stale pointer, the live block allocated right after its free with the same size)."""
    pointer = cnrt.malloc(size)
    cnrt.memset(pointer, 0x11, size)
    (free or cnrt.free)(pointer)
    fresh = cnrt.malloc(size)
    assert fresh != pointer
    cnrt.memset(fresh, 0x22, size)
    return pointer, fresh


def refused(function, *args, freed_by="cnrtFree"):
    error = raises_code(cnrt.cnrtErrorArgsInvalid, function, *args)
    assert error.kind == "use_after_free", error
    assert f"which {freed_by}" in str(error) and function.c_name in str(error), error
    return error


@bang.kernel
def _scale(ctx, data: bang.gdram(bang.int32), count: int):
    for i in range(ctx.taskId, count, ctx.taskDim):
        data[i] = data[i] * 2


def _host_kernel(pointer):
    cnrt.memset(pointer, 0, 4)


def calls(old, live, queue):
    """(name, thunk) of every cnrt call that takes a device pointer, each given the stale pointer `old` (at its start
    or inside the block) where a valid one goes; `live` is a valid block of SIZE bytes for the other side."""
    host = np.zeros(SIZE, np.uint8)
    h2d, d2h, d2d = cnrt.cnrtMemcpyHostToDev, cnrt.cnrtMemcpyDevToHost, cnrt.cnrtMemcpyDevToDev
    params = cnrt.getKernelParamsBuffer()
    cnrt.kernelParamsBufferAddParam(params, old)
    cnrt.kernelParamsBufferAddParam(params, 16)
    return [
        ("memcpy dst", lambda: cnrt.memcpy(old, host, 64, h2d)),
        ("memcpy src", lambda: cnrt.memcpy(host, old + 128, 64, d2h)),
        ("memcpy d2d dst", lambda: cnrt.memcpy(old + 8, live, 64, d2d)),
        ("memcpy d2d src", lambda: cnrt.memcpy(live, old, 64, d2d)),
        ("memcpy dir", lambda: cnrt.memcpy(host, old, 64, cnrt.cnrtMemcpyNoDirection)),
        ("memcpyAsync dst", lambda: cnrt.memcpyAsync(old, host, 64, queue, h2d)),
        ("memcpyAsync src", lambda: cnrt.memcpyAsync(host, old, 64, queue, d2h)),
        ("memcpyAsync d2d", lambda: cnrt.memcpyAsync(live, old + SIZE - 64, 64, queue, d2d)),
        ("memcpyPeer dst", lambda: cnrt.memcpyPeer(old, 0, live, 0, 64)),
        ("memcpyPeer src", lambda: cnrt.memcpyPeer(live, 0, old, 0, 64)),
        ("memcpyPeerAsync", lambda: cnrt.memcpyPeerAsync(live, 0, old, 0, 64, queue)),
        ("memcpy2D dst", lambda: cnrt.memcpy2D(old, 256, live, 256, 64, 4, d2d)),
        ("memcpy2D src", lambda: cnrt.memcpy2D(host, 256, old, 256, 64, 4, d2h)),
        ("memset", lambda: cnrt.memset(old, 0, 64)),
        ("memsetAsync", lambda: cnrt.memsetAsync(old + 4, 0, 64, queue)),
        ("memsetD8", lambda: cnrt.memsetD8(old, 1, 64)),
        ("memsetD8Async", lambda: cnrt.memsetD8Async(old, 1, 64, queue)),
        ("memsetD16", lambda: cnrt.memsetD16(old, 1, 32)),
        ("memsetD16Async", lambda: cnrt.memsetD16Async(old, 1, 32, queue)),
        ("memsetD32", lambda: cnrt.memsetD32(old, 1, 16)),
        ("memsetD32Async", lambda: cnrt.memsetD32Async(old, 1, 16, queue)),
        ("invokeKernel (BANG)", lambda: cnrt.invokeKernel(_scale, (4, 1, 1), cnrt.cnrtFuncTypeBlock, [old, 16], 0,
                                                          queue)),
        ("invokeKernel_V2 (BANG)", lambda: cnrt.invokeKernel_V2(_scale, (4, 1, 1), params, cnrt.cnrtFuncTypeBlock,
                                                                queue)),
    ]


CASES = [name for name, _ in calls(0, 0, None)]


@pytest.mark.parametrize("case", CASES)
def test_a_stale_pointer_is_refused_in_every_call_that_takes_one(case):
    queue = cnrt.queueCreate()
    old, fresh = stale()
    thunk = dict(calls(old, cnrt.malloc(SIZE), queue))[case]
    error = raises_code(cnrt.cnrtErrorArgsInvalid, thunk)
    assert error.kind == "use_after_free" and "which cnrtFree freed" in str(error), error
    assert f"0x{old:x}" in str(error)
    cnrt.queueSync(queue)
    assert (download(fresh, SIZE, np.uint8) == 0x22).all()  # the block that took its capacity is untouched


def test_a_python_kernel_using_a_stale_pointer_fails_at_the_sync():
    """A callable kernel gets its arguments as they are; its own use of the stale pointer faults when it runs."""
    queue = cnrt.queueCreate()
    old, fresh = stale()
    cnrt.invokeKernel(_host_kernel, (1, 1, 1), cnrt.cnrtFuncTypeBlock, [old], 0, queue)
    with pytest.raises(cnrt.CnrtError, match="use after free"):
        cnrt.queueSync(queue)
    assert (download(fresh, SIZE, np.uint8) == 0x22).all()


def test_freeing_a_stale_pointer_again_is_a_double_free_not_a_free_of_the_new_block():
    queue = cnrt.queueCreate()
    old, fresh = stale()
    assert raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.free, old).kind == "double_free"
    assert raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.memFreeAsync, old, queue).kind == "double_free"
    assert (download(fresh, SIZE, np.uint8) == 0x22).all()
    assert cnrt.pointerGetAttributes(old).type == cnrt.cnrtMemTypeUnregistered
    assert cnrt.pointerGetAttributes(fresh).type == cnrt.cnrtMemTypeDevice


def test_the_error_names_the_asynchronous_free_and_its_queue():
    queue = cnrt.queueCreate()
    old, _ = stale(free=lambda p: cnrt.memFreeAsync(p, queue))
    cnrt.queueSync(queue)
    error = refused(cnrt.memset, old, 0, 4, freed_by="cnrtMemFreeAsync on queue")
    assert f"allocation #" in str(error)


def test_a_stale_pointer_of_a_device_reset_is_caught():
    old = cnrt.malloc(SIZE)
    cnrt.deviceReset()
    assert cnrt.malloc(SIZE) != old
    refused(cnrt.memset, old, 0, 4, freed_by="cnrtDeviceReset")


def test_the_whole_capacity_turns_over_many_times_without_reusing_an_address():
    capacity = cnrt.memGetInfo()[1]
    size = capacity // 4
    seen = []
    for _ in range(12):
        pointer = cnrt.malloc(size)
        seen.append(pointer)
        cnrt.free(pointer)
    assert len(set(seen)) == len(seen) and cnrt.memGetInfo()[0] == capacity
    for pointer in seen:
        refused(cnrt.memset, pointer + size // 2, 0, 4)


def test_memcheck_reports_the_stack_of_the_free():
    with sanitizer.scope("memcheck") as found:
        pointer = cnrt.malloc(SIZE)
        cnrt.free(pointer)  # the free memcheck names
        cnrt.malloc(SIZE)
        refused(cnrt.memset, pointer, 0, 4)
    report, = found.errors
    use, free = report.accesses
    assert report.kind == "use_after_free" and free.access == "free" and free.command == "cnrtFree"
    assert any("test_stale_pointers.py" in line for line in free.frames())
    text = report.text()
    assert "Free of 'cnrtFree'" in text and text.count("test_stale_pointers.py") >= 2
