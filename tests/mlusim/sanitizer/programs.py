"""Small buggy programs, one per kind of bug the sanitizer finds, each with its fixed form (`fixed=True`).

Every program frees what it allocates and destroys what it creates (unless leaking is its bug), so that its fixed
form is clean for every tool.
"""
import numpy as np

import cncl
import cnrt
from mlusim import device as devices
from cnrt.samples.vector_add import union1_dim

from .helpers import upload
from .kernels import SLOT, cluster_sum, scale_slices

N = 4096


def two_queues_missing_wait(fixed: bool) -> None:
    """q1 fills x; q2 copies x into y. The notifier placed after the fill is never waited for on q2."""
    q1, q2 = cnrt.queueCreate(), cnrt.queueCreate()
    notifier = cnrt.notifierCreate()
    x = upload(np.arange(N, dtype=np.float32), q1)
    y = cnrt.malloc(N * 4)
    cnrt.placeNotifier(notifier, q1)
    if fixed:
        cnrt.queueWaitNotifier(notifier, q2)
    cnrt.memcpyAsync(y, x, N * 4, q2, cnrt.cnrtMemcpyDevToDev)
    cnrt.queueSync(q2)
    cnrt.queueSync(q1)
    for pointer in (x, y):
        cnrt.free(pointer)
    cnrt.notifierDestroy(notifier)
    cnrt.queueDestroy(q1)
    cnrt.queueDestroy(q2)


def host_read_during_pending_write(fixed: bool) -> None:
    """A kernel on a queue writes y; cnrtMemcpy (the host) reads y without syncing that queue."""
    queue = cnrt.queueCreate()
    x, y = upload(np.ones(N, np.float32)), cnrt.malloc(N * 4)
    scale_slices[(4, 1, 1), cnrt.cnrtFuncTypeBlock, queue](x, y, N // 4)
    if fixed:
        cnrt.queueSync(queue)
    out = np.empty(N, np.float32)
    cnrt.memcpy(out, y, N * 4, cnrt.cnrtMemcpyDevToHost)
    cnrt.queueSync(queue)
    for pointer in (x, y):
        cnrt.free(pointer)
    cnrt.queueDestroy(queue)


def kernel_race_without_barrier(fixed: bool) -> None:
    """Core 0 of each cluster reads the SRAM slices of its neighbours: without sync_cluster, before they wrote."""
    queue = cnrt.queueCreate()
    dim = union1_dim()
    tasks = dim.x * dim.y
    x = upload(np.arange(tasks * SLOT, dtype=np.float32))
    out = cnrt.malloc(dim.y * SLOT * 4)
    cluster_sum[dim, cnrt.cnrtFuncTypeUnion1, queue](x, out, int(fixed))
    cnrt.queueSync(queue)
    cnrt.free(x)
    cnrt.free(out)
    cnrt.queueDestroy(queue)


def read_of_uninitialised_memory(fixed: bool) -> None:
    """The kernel reads x, which was allocated but never filled."""
    queue = cnrt.queueCreate()
    x, y = cnrt.malloc(N * 4), cnrt.malloc(N * 4)
    if fixed:
        cnrt.memset(x, 0, N * 4)
    scale_slices[(4, 1, 1), cnrt.cnrtFuncTypeBlock, queue](x, y, N // 4)
    cnrt.queueSync(queue)
    for pointer in (x, y):
        cnrt.free(pointer)
    cnrt.queueDestroy(queue)


def leak(fixed: bool) -> None:
    """A scratch buffer that is never freed."""
    scratch = cnrt.malloc(1000)
    cnrt.memset(scratch, 0, 1000)
    if fixed:
        cnrt.free(scratch)


def use_after_free(fixed: bool) -> None:
    """The result is copied out after its buffer was freed (the call fails, memcheck reports it)."""
    result = upload(np.arange(64, dtype=np.float32))
    out = np.empty(64, np.float32)
    if fixed:
        cnrt.memcpy(out, result, 256, cnrt.cnrtMemcpyDevToHost)
        cnrt.free(result)
        return
    cnrt.free(result)
    try:
        cnrt.memcpy(out, result, 256, cnrt.cnrtMemcpyDevToHost)
    except cnrt.CnrtError as error:
        assert error.kind == "use_after_free"
    else:
        raise AssertionError("the copy from freed memory succeeded")


def out_of_bounds_in_kernel(fixed: bool) -> None:
    """Each task scales per_task elements; with one element too many per task the last task reads past x."""
    queue = cnrt.queueCreate()
    tasks = 4
    per_task = 256
    x = upload(np.ones(tasks * per_task, np.float32))
    y = cnrt.malloc(tasks * (per_task + 16) * 4)
    scale_slices[(tasks, 1, 1), cnrt.cnrtFuncTypeBlock, queue](x, y, per_task if fixed else per_task + 16)
    try:
        cnrt.queueSync(queue)
    except cnrt.CnrtError as error:
        assert not fixed and error.code == cnrt.cnrtErrorKernelTrap
    cnrt.free(x)
    cnrt.free(y)
    cnrt.queueDestroy(queue)


def collective_buffer_overwritten(fixed: bool) -> None:
    """Two ranks allreduce; each then refills its send buffer on another queue without waiting for the collective
    (fixed: that queue waits for a notifier placed after the collective)."""
    devices.configure(memory=64 << 20, device_count=2)
    comms = cncl.initComms(2, [0, 1], [0, 1], 2, None)
    ranks = []
    for rank in range(2):
        cnrt.setDevice(rank)
        work, refill = cnrt.queueCreate(), cnrt.queueCreate()
        send = upload(np.full(N, rank + 1.0, np.float32))
        recv = cnrt.malloc(N * 4)
        ranks.append((work, refill, send, recv, cnrt.notifierCreate()))
    for rank, (work, refill, send, recv, notifier) in enumerate(ranks):
        cncl.allReduce(send, recv, N, cncl.cnclFloat, cncl.cnclSum, comms[rank], work)
    for rank, (work, refill, send, recv, notifier) in enumerate(ranks):
        cnrt.setDevice(rank)
        if fixed:
            cnrt.placeNotifier(notifier, work)
            cnrt.queueWaitNotifier(notifier, refill)
        cnrt.memcpyAsync(send, np.zeros(N, np.float32), N * 4, refill, cnrt.cnrtMemcpyHostToDev)
    for rank, (work, refill, send, recv, notifier) in enumerate(ranks):
        cnrt.setDevice(rank)
        cnrt.queueSync(work)
        cnrt.queueSync(refill)
        got = np.empty(N, np.float32)
        cnrt.memcpy(got, recv, N * 4, cnrt.cnrtMemcpyDevToHost)
        for pointer in (send, recv):
            cnrt.free(pointer)
        cnrt.notifierDestroy(notifier)
        cnrt.queueDestroy(work)
        cnrt.queueDestroy(refill)
    cnrt.setDevice(0)
    cncl.destroyComms(comms, 2)


#: name -> (program, tool, kind) of the error its buggy form must produce
CORPUS = {
    "race between two queues": (two_queues_missing_wait, "racecheck", "race"),
    "host read during a pending write": (host_read_during_pending_write, "racecheck", "host_race"),
    "race between the tasks of a kernel": (kernel_race_without_barrier, "racecheck", "kernel_race"),
    "read of uninitialised memory": (read_of_uninitialised_memory, "initcheck", "uninitialized_read"),
    "leak": (leak, "leakcheck", "memory_leak"),
    "use after free": (use_after_free, "memcheck", "use_after_free"),
    "out of bounds in a kernel": (out_of_bounds_in_kernel, "memcheck", "out_of_bounds"),
    "collective buffer overwritten in flight": (collective_buffer_overwritten, "racecheck", "race"),
}
