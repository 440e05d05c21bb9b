"""racecheck across queues: what orders two accesses (queue order, syncs, notifiers, queries, collectives) and
what does not; exact byte sets (disjoint ranges, strided tensors, pitched copies); the reports."""
import threading

import numpy as np
import pytest

import cncl
import cnnl
import cnrt
from mlusim import device as devices
from mlusim import sanitizer

from .helpers import kinds, upload

N = 1024


def _fill_then_read(order) -> list:
    """q1 fills x, `order(q1, q2)` runs, q2 copies x: the errors found."""
    with sanitizer.scope("racecheck") as found:
        q1, q2 = cnrt.queueCreate(), cnrt.queueCreate()
        x, y = cnrt.malloc(N * 4), cnrt.malloc(N * 4)
        cnrt.memsetAsync(x, 1, N * 4, q1)
        order(q1, q2)
        cnrt.memcpyAsync(y, x, N * 4, q2, cnrt.cnrtMemcpyDevToDev)
        cnrt.syncDevice()
        for pointer in (x, y):
            cnrt.free(pointer)
        for queue in (q1, q2):
            cnrt.queueDestroy(queue)
    return kinds(found)


def _wait_on_notifier(q1, q2):
    notifier = cnrt.notifierCreate()
    cnrt.placeNotifier(notifier, q1)
    cnrt.queueWaitNotifier(notifier, q2)


def _host_waits_on_notifier(q1, q2):
    notifier = cnrt.notifierCreate()
    cnrt.placeNotifier(notifier, q1)
    cnrt.waitNotifier(notifier)


def _poll_query(q1, q2):
    while cnrt.queueQuery(q1) != cnrt.cnrtSuccess:
        pass


def _poll_notifier(q1, q2):
    notifier = cnrt.notifierCreate()
    cnrt.placeNotifier(notifier, q1)
    while cnrt.queryNotifier(notifier) != cnrt.cnrtSuccess:
        pass


def _notifier_placed_too_early(q1, q2):
    pass  # see the test: the notifier precedes the fill


@pytest.mark.parametrize("order", [lambda q1, q2: cnrt.queueSync(q1), lambda q1, q2: cnrt.syncDevice(),
                                   _wait_on_notifier, _host_waits_on_notifier, _poll_query, _poll_notifier],
                         ids=["queueSync", "syncDevice", "queueWaitNotifier", "waitNotifier", "queueQuery",
                              "queryNotifier"])
def test_each_ordering_removes_the_race(order):
    assert _fill_then_read(order) == []


def test_without_ordering_it_is_a_race():
    assert _fill_then_read(lambda q1, q2: None) == [("racecheck", "race")]


def test_a_notifier_placed_before_the_write_does_not_order_it():
    with sanitizer.scope("racecheck") as found:
        q1, q2 = cnrt.queueCreate(), cnrt.queueCreate()
        x, y = cnrt.malloc(N * 4), cnrt.malloc(N * 4)
        notifier = cnrt.notifierCreate()
        cnrt.placeNotifier(notifier, q1)
        cnrt.memsetAsync(x, 1, N * 4, q1)
        cnrt.queueWaitNotifier(notifier, q2)
        cnrt.memcpyAsync(y, x, N * 4, q2, cnrt.cnrtMemcpyDevToDev)
        cnrt.syncDevice()
    assert kinds(found) == [("racecheck", "race")]


def test_the_same_queue_and_reads_alone_never_race():
    with sanitizer.scope("racecheck") as found:
        q1, q2 = cnrt.queueCreate(), cnrt.queueCreate()
        x, y, z = (cnrt.malloc(N * 4) for _ in range(3))
        cnrt.memsetAsync(x, 1, N * 4, q1)
        cnrt.memcpyAsync(y, x, N * 4, q1, cnrt.cnrtMemcpyDevToDev)  # after the fill: same queue
        cnrt.queueSync(q1)
        cnrt.memcpyAsync(z, x, N * 4, q2, cnrt.cnrtMemcpyDevToDev)  # two reads of x on two queues
        cnrt.memcpyAsync(y, x, N * 4, q1, cnrt.cnrtMemcpyDevToDev)
        cnrt.syncDevice()
    assert kinds(found) == []


def test_disjoint_bytes_of_one_allocation_do_not_race():
    with sanitizer.scope("racecheck") as found:
        q1, q2 = cnrt.queueCreate(), cnrt.queueCreate()
        x = cnrt.malloc(N * 4)
        cnrt.memsetAsync(x, 1, N * 2, q1)
        cnrt.memsetAsync(x + N * 2, 2, N * 2, q2)
        cnrt.memsetAsync(x + N * 2 - 4, 3, 8, q2)  # four bytes into q1's half: a race of 4 bytes
        cnrt.syncDevice()
    assert kinds(found) == [("racecheck", "race")]
    report = found.errors[0]
    assert (report.address, report.size, report.hazard) == (x + N * 2 - 4, 4, "write-write")


def test_host_calls_against_pending_work_are_host_races():
    with sanitizer.scope("racecheck") as found:
        queue = cnrt.queueCreate()
        x = cnrt.malloc(N * 4)
        cnrt.memsetAsync(x, 1, N * 4, queue)
        cnrt.memset(x, 0, 16)                     # the host writes what the queue writes
        out = np.empty(N, np.float32)
        cnrt.memcpy(out, x, N * 4, cnrt.cnrtMemcpyDevToHost)  # the host reads it
        cnrt.queueSync(queue)
    assert kinds(found) == [("racecheck", "host_race")] * 2
    assert all(any(access.host for access in r.accesses) for r in found.errors)


def _strided(handle, queue, base, dims, strides):
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptorEx(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, dims, strides)
    return desc


@pytest.mark.parametrize("columns,expected", [((0, 1), []), ((0, 0), [("racecheck", "race")])],
                         ids=["interleaved", "same columns"])
def test_strided_tensors_touch_only_their_elements(columns, expected):
    """Two ops on two queues write the even and the odd columns of one matrix: the gaps of each are the other's."""
    rows, cols = 64, 32
    with sanitizer.scope("racecheck") as found:
        source = upload(np.ones(rows * cols // 2, np.float32))
        dense = cnnl.createTensorDescriptor()
        cnnl.setTensorDescriptor(dense, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [rows, cols // 2])
        out = cnrt.malloc(rows * cols * 4)
        handles = []
        for column in columns:
            queue = cnrt.queueCreate()
            handle = cnnl.create()
            cnnl.setQueue(handle, queue)
            half = cnnl.createTensorDescriptor()
            cnnl.setTensorDescriptorEx(half, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [rows, cols // 2],
                                       [cols, 2])
            cnnl.copy(handle, dense, source, half, out + 4 * column)
            handles.append(handle)
        cnrt.syncDevice()
    assert kinds(found) == expected


def test_a_pitched_copy_leaves_its_gaps_alone():
    width, pitch, height = 48, 64, 16
    with sanitizer.scope("racecheck") as found:
        queue = cnrt.queueCreate()
        rows = cnrt.malloc(pitch * height)
        for row in range(height):  # the gaps between the rows, written by a queue that nobody syncs
            cnrt.memsetAsync(rows + row * pitch + width, 7, pitch - width, queue)
        cnrt.memcpy2D(rows, pitch, np.ones(width * height, np.uint8), width, width, height,
                      cnrt.cnrtMemcpyHostToDev)
        cnrt.queueSync(queue)
    assert kinds(found) == []


def test_work_queued_by_a_callable_kernel_is_part_of_it():
    def kernel(pointer):
        cnrt.memset(pointer, 3, 64)  # the kernel's own work, on the default queue

    with sanitizer.scope("racecheck") as found:
        queue = cnrt.queueCreate()
        x = cnrt.malloc(64)
        cnrt.invokeKernel(kernel, (1, 1, 1), cnrt.cnrtFuncTypeBlock, [x], 0, queue)
        cnrt.queueSync(queue)
    assert kinds(found) == []


@pytest.mark.parametrize("collective", [True, False], ids=["after a collective", "no collective"])
def test_the_ranks_of_a_collective_synchronise(collective):
    """Rank 0 fills a buffer of its device; rank 1's queue then reads it: ordered only through the collective
    both queues took part in."""
    devices.configure(memory=64 << 20, device_count=2)
    comms = cncl.initComms(2, [0, 1], [0, 1], 2, None)
    with sanitizer.scope("racecheck") as found:
        queues, buffers = [], []
        for rank in range(2):
            cnrt.setDevice(rank)
            queues.append(cnrt.queueCreate())
            buffers.append(upload(np.ones(N, np.float32)))
        filled = cnrt.malloc(N * 4)  # on device 1
        cnrt.setDevice(0)
        source = cnrt.malloc(N * 4)
        cnrt.memsetAsync(source, 1, N * 4, queues[0])
        if collective:
            for rank in range(2):
                cncl.allReduce(buffers[rank], buffers[rank], N, cncl.cnclFloat, cncl.cnclSum, comms[rank],
                               queues[rank])
        cnrt.memcpyPeerAsync(filled, 1, source, 0, N * 4, queues[1])
        for rank in range(2):
            cnrt.setDevice(rank)
            cnrt.syncDevice()
        cnrt.setDevice(0)
    cncl.destroyComms(comms, 2)
    assert kinds(found) == ([] if collective else [("racecheck", "race")])


@pytest.mark.parametrize("mode,expected", [("shared", []), ("separate", [("racecheck", "race")])])
def test_host_threads_share_their_syncs_unless_separate(process_sanitizer, mode, expected):
    sanitizer.enable(process_sanitizer.process.tools, host=mode)
    with sanitizer.scope("racecheck") as found:
        q1, q2 = cnrt.queueCreate(), cnrt.queueCreate()
        x, y = cnrt.malloc(N * 4), cnrt.malloc(N * 4)
        cnrt.memsetAsync(x, 1, N * 4, q1)
        synced = threading.Thread(target=cnrt.queueSync, args=(q1,))
        synced.start()
        synced.join()  # a Python-level handshake the sanitizer cannot see
        cnrt.memcpyAsync(y, x, N * 4, q2, cnrt.cnrtMemcpyDevToDev)
        cnrt.syncDevice()
    assert kinds(found) == expected


def test_a_race_in_a_loop_is_one_report_counted():
    with sanitizer.scope("racecheck") as found:
        q1, q2 = cnrt.queueCreate(), cnrt.queueCreate()
        x = cnrt.malloc(N * 4)
        for _ in range(5):  # a race per round, between the same two lines
            cnrt.memsetAsync(x, 1, N * 4, q1)
            cnrt.memsetAsync(x, 2, N * 4, q2)
            cnrt.syncDevice()
    assert kinds(found) == [("racecheck", "race")]
    assert found.errors[0].count == 5 and "[5 times]" in found.text()


def test_raise_first_makes_the_race_the_queues_error():
    with sanitizer.scope("racecheck", raise_first=True):
        q1, q2 = cnrt.queueCreate(), cnrt.queueCreate()
        x = cnrt.malloc(N * 4)
        cnrt.memsetAsync(x, 1, N * 4, q1)
        cnrt.queueSync(q1)
        cnrt.memsetAsync(x, 2, N * 4, q2)
        cnrt.memsetAsync(x, 3, N * 4, q1)  # races with q2's fill: whichever runs second finds it
        with pytest.raises(cnrt.CnrtError) as caught:
            cnrt.syncDevice()
    assert caught.value.code == cnrt.cnrtErrorIllegalState
    cause = caught.value.fault.cause  # the sticky error of the queue whose command found the race
    assert isinstance(cause, sanitizer.SanitizerFault) and cause.report.kind == "race"
    assert "RACECHECK" in str(caught.value)
