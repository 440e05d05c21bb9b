"""Synchronous copies and fills wait for the earlier work of other queues they conflict with (mlusim.ordering), warn
once per call site that they depended on an ordering CNRT does not promise, and refuse in MLUSIM_STRICT mode; and a
queue's backlog is bounded (mlusim.queue.MAX_PENDING)."""
import threading
import time
import warnings

import numpy as np
import pytest

import cnnl
import cnrt
from mlusim import config, lenient, ordering, sanitizer
from mlusim import queue as queues
from mlusim.ordering import UnorderedAccessWarning

from .helpers import download, raises_code, upload

#: 64 elements: an op on the small path (run in its call when the queue is idle); 64 x 64 and up: the worker's.
SIZES = [64, 64 * 64, 256 * 1024]
#: The tests of an access CNRT does not order: the sanitizer reports it as the race it is on a device (the simulator
#: orders it and warns; what these tests check).
unordered_on_purpose = pytest.mark.mlusim_sanitize(exclude="racecheck")


@pytest.fixture(autouse=True)
def warn_again():
    lenient.reset()
    yield
    lenient.reset()


def _held_queue():
    """A queue whose next commands wait behind a host function until `release` is set."""
    queue = cnrt.queueCreate()
    release = threading.Event()
    cnrt.invokeHostFunc(queue, lambda _: release.wait(10), None)
    return queue, release


def _queued_add(queue, a, b, out, n):
    """out = a + b through cnnlOpTensor on `queue`."""
    handle = cnnl.create()
    cnnl.setQueue(handle, queue)
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [n])
    op = cnnl.createOpTensorDescriptor()
    cnnl.setOpTensorDescriptor(op, cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_NOT_PROPAGATE_NAN)
    cnnl.opTensor(handle, op, 1.0, desc, a, 1.0, desc, b, None, 0, 0.0, desc, out)
    return handle


def _release_after(release, seconds=0.2):
    threading.Timer(seconds, release.set).start()


@unordered_on_purpose
@pytest.mark.parametrize("n", SIZES)
def test_a_synchronous_copy_reads_what_an_op_of_a_destroyed_queue_wrote(n):
    """The pattern of a real operator test: queue cnnlOpTensor, destroy the queue without a sync, read the result
    with cnrtMemcpy: the copy gets the op's result (as on the device), with a warning naming the call."""
    x = np.arange(n, dtype=np.float32)
    a, b, out = upload(x), upload(2 * x), upload(np.zeros(n, np.float32))
    queue, release = _held_queue()
    handle = _queued_add(queue, a, b, out, n)
    cnrt.queueDestroy(queue)
    _release_after(release)
    with pytest.warns(UnorderedAccessWarning, match=r"cnrtMemcpy needs the result of op 'cnnlOpTensor'"):
        got = download(out, n, np.float32)
    np.testing.assert_array_equal(got, 3 * x)
    cnnl.destroy(handle)


@unordered_on_purpose
def test_the_warning_names_the_call_site_once():
    n = 64
    a, out = upload(np.ones(n, np.float32)), upload(np.zeros(n, np.float32))
    seen = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            queue, release = _held_queue()
            _queued_add(queue, a, a, out, n)
            _release_after(release, 0.05)
            got = np.zeros(n, np.float32)
            cnrt.memcpy(got, out, got.nbytes, cnrt.cnrtMemcpyDevToHost)
            seen.append(got[0])
    unordered = [w for w in caught if issubclass(w.category, UnorderedAccessWarning)]
    assert len(unordered) == 1 and unordered[0].filename == __file__
    assert seen == [2.0] * 3


@unordered_on_purpose
@pytest.mark.parametrize("fill", ["memset", "memsetD32"])
def test_a_synchronous_fill_comes_after_earlier_writes_of_another_queue(fill):
    """A fill of bytes an op of another queue still has to write comes after that op (else the op would overwrite
    the fill later)."""
    n = 4096
    a, out = upload(np.ones(n, np.float32)), upload(np.zeros(n, np.float32))
    queue, release = _held_queue()
    _queued_add(queue, a, a, out, n)
    _release_after(release)
    with pytest.warns(UnorderedAccessWarning, match=f"cnrt{fill[0].upper()}{fill[1:]}"):
        if fill == "memset":
            cnrt.memset(out, 0, n * 4)
        else:
            cnrt.memsetD32(out, 7, n)
    cnrt.queueSync(queue)  # the op ran before the fill: the fill's bytes stay
    want = np.zeros(n, np.uint32) if fill == "memset" else np.full(n, 7, np.uint32)
    np.testing.assert_array_equal(download(out, n, np.uint32), want)


@unordered_on_purpose
def test_the_2d_and_peer_copies_wait_too(two_devices):
    n = 1024
    a, out = upload(np.ones(n, np.float32)), upload(np.zeros(n, np.float32))
    queue, release = _held_queue()
    _queued_add(queue, a, a, out, n)
    _release_after(release)
    host = np.zeros(n, np.float32)
    with pytest.warns(UnorderedAccessWarning, match="cnrtMemcpy2D"):
        cnrt.memcpy2D(host, 64, out, 64, 64, n * 4 // 64, cnrt.cnrtMemcpyDevToHost)
    np.testing.assert_array_equal(host, 2.0)
    queue, release = _held_queue()
    _queued_add(queue, a, a, out, n)
    _release_after(release)
    cnrt.setDevice(1)
    peer = cnrt.malloc(n * 4)
    cnrt.setDevice(0)
    with pytest.warns(UnorderedAccessWarning, match="cnrtMemcpyPeer"):
        cnrt.memcpyPeer(peer, 1, out, 0, n * 4)
    cnrt.setDevice(1)
    np.testing.assert_array_equal(download(peer, n, np.float32), 2.0)
    cnrt.setDevice(0)


def test_no_warning_and_no_wait_when_nothing_overlaps():
    n = 4096
    a, out, other = upload(np.ones(n, np.float32)), upload(np.zeros(n, np.float32)), upload(np.full(n, 5, np.float32))
    queue, release = _held_queue()
    _queued_add(queue, a, a, out, n)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        started = time.perf_counter()
        np.testing.assert_array_equal(download(other, n, np.float32), 5.0)
        assert time.perf_counter() - started < 5  # the held queue is not waited for
    release.set()
    cnrt.queueSync(queue)


def test_a_sync_or_notifier_wait_first_is_not_warned():
    n = 4096
    a, out = upload(np.ones(n, np.float32)), upload(np.zeros(n, np.float32))
    queue, release = _held_queue()
    _queued_add(queue, a, a, out, n)
    release.set()
    cnrt.queueSync(queue)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(download(out, n, np.float32), 2.0)


def test_strict_mode_makes_it_an_error():
    n = 4096
    a, out = upload(np.ones(n, np.float32)), upload(np.zeros(n, np.float32))
    with config.overridden(MLUSIM_STRICT="1"):
        queue, release = _held_queue()
        _queued_add(queue, a, a, out, n)
        error = raises_code(cnrt.cnrtErrorIllegalState, download, out, n, np.float32)
        assert "nothing orders before it" in str(error) and "cnnlOpTensor" in str(error)
    release.set()
    cnrt.queueSync(queue)


def test_conflicts_are_read_after_write_write_after_read_and_write_after_write():
    from mlusim.command import Command, Kind
    writer = Command(Kind.OP, "w", writes=((100, 10),))
    reader = Command(Kind.OP, "r", reads=((100, 10),))
    assert ordering.conflicts(writer, reads=((105, 1),), writes=())
    assert ordering.conflicts(writer, reads=(), writes=((109, 4),))
    assert ordering.conflicts(reader, reads=(), writes=((90, 11),))
    assert not ordering.conflicts(reader, reads=((100, 10),), writes=())  # two reads never conflict
    assert not ordering.conflicts(writer, reads=((110, 5),), writes=((0, 100),))  # adjacent, not overlapping


def test_a_producer_never_queues_more_than_the_depth(monkeypatch):
    """Two threads queueing 4 KiB copies on one queue while a third syncs it: the backlog stays within the queue's
    depth, so each sync waits for a bounded number of commands."""
    monkeypatch.setattr(queues, "MAX_PENDING", 64)
    queue = cnrt.queueCreate()
    device, host = cnrt.malloc(4096), np.zeros(4096, np.uint8)
    stop = threading.Event()
    backlog = []

    def produce():
        while not stop.is_set():
            cnrt.memcpyAsync(device, host, 4096, queue, cnrt.cnrtMemcpyHostToDev)
            backlog.append(len(queue._pending))

    producers = [threading.Thread(target=produce) for _ in range(2)]
    for thread in producers:
        thread.start()
    longest = 0.0
    for _ in range(20):
        started = time.perf_counter()
        cnrt.queueSync(queue)
        longest = max(longest, time.perf_counter() - started)
    stop.set()
    for thread in producers:
        thread.join(10)
    cnrt.queueSync(queue)
    assert max(backlog) <= 64 + 2  # each producer may have found room just before the other filled it
    assert longest < 5.0


def test_a_full_queue_waits_for_its_worker_when_it_cannot_run_the_work_itself(monkeypatch):
    """While the worker runs (and holds the queue), a producer of a full queue waits; it goes on once there is
    room, and everything runs in order."""
    monkeypatch.setattr(queues, "MAX_PENDING", 8)
    queue, release = _held_queue()
    order = []
    done = threading.Event()

    def produce():
        for index in range(20):
            cnrt.invokeHostFunc(queue, order.append, index)
        done.set()

    thread = threading.Thread(target=produce)
    thread.start()
    assert not done.wait(0.3) and len(queue._pending) <= 8  # full: the producer waits
    release.set()
    assert done.wait(10)
    thread.join(10)
    cnrt.queueSync(queue)
    assert order == list(range(20))


@pytest.mark.mlusim_sanitize("off")  # the scope below is the test's own
def test_racecheck_still_reports_the_unordered_read_the_copy_waited_for():
    """The wait is not an ordering the program made: the host's read of the op's output stays a race."""
    n = 4096
    a, out = upload(np.ones(n, np.float32)), upload(np.zeros(n, np.float32))
    with sanitizer.scope("racecheck") as found:
        queue, release = _held_queue()
        handle = _queued_add(queue, a, a, out, n)
        _release_after(release, 0.05)
        with pytest.warns(UnorderedAccessWarning):
            got = download(out, n, np.float32)
        cnrt.queueSync(queue)
        cnnl.destroy(handle)
        cnrt.queueDestroy(queue)
    np.testing.assert_array_equal(got, np.full(n, 2.0, np.float32))
    assert [(report.tool, report.kind) for report in found.errors] == [("racecheck", "host_race")]
