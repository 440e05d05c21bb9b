"""Queues: asynchrony, order, overlap, cross-queue waits, sticky errors, blocking mode, special handles."""
import threading
import time

import numpy as np
import pytest

import cnrt

from .helpers import download, raises_code


def test_work_is_asynchronous_and_query_reports_not_ready():
    queue = cnrt.queueCreate()
    release = threading.Event()
    cnrt.invokeHostFunc(queue, lambda _: release.wait(10), None)
    assert cnrt.queueQuery(queue) == cnrt.cnrtErrorNotReady
    assert cnrt.getLastError() == cnrt.cnrtErrorNotReady
    release.set()
    cnrt.queueSync(queue)
    assert cnrt.queueQuery(queue) == cnrt.cnrtSuccess


def test_commands_of_one_queue_run_in_order():
    queue = cnrt.queueCreate()
    seen = []
    for index in range(500):
        cnrt.invokeHostFunc(queue, seen.append, index)
    cnrt.queueSync(queue)
    assert seen == list(range(500))


def test_host_function_gets_its_user_data():
    queue = cnrt.queueCreate()
    box = {}
    cnrt.invokeHostFunc(queue, lambda data: box.update(data), {"answer": 42})
    cnrt.queueSync(queue)
    assert box == {"answer": 42}


def test_different_queues_overlap():
    first, second = cnrt.queueCreate(), cnrt.queueCreate()
    handshake = threading.Event()
    met = []
    cnrt.invokeHostFunc(first, lambda _: met.append(handshake.wait(5)), None)
    cnrt.invokeHostFunc(second, lambda _: handshake.set(), None)
    cnrt.queueSync(first)
    assert met == [True], "the second queue never ran while the first was busy"


def test_queue_wait_notifier_orders_two_queues():
    producer, consumer = cnrt.queueCreate(), cnrt.queueCreate()
    notifier = cnrt.notifierCreate()
    release = threading.Event()
    order = []
    cnrt.invokeHostFunc(producer, lambda _: (release.wait(10), order.append("produce")), None)
    cnrt.placeNotifier(notifier, producer)
    cnrt.queueWaitNotifier(notifier, consumer, 0)
    cnrt.invokeHostFunc(consumer, lambda _: order.append("consume"), None)
    time.sleep(0.05)
    assert order == [] and cnrt.queueQuery(consumer) == cnrt.cnrtErrorNotReady
    release.set()
    cnrt.queueSync(consumer)
    assert order == ["produce", "consume"]


def test_waiting_on_a_notifier_never_placed_is_a_no_op():
    queue = cnrt.queueCreate()
    cnrt.queueWaitNotifier(cnrt.notifierCreate(), queue, 0)
    cnrt.queueSync(queue)
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.queueWaitNotifier, cnrt.notifierCreate(), queue, 1)


def test_error_in_queued_work_is_sticky_until_the_next_sync():
    queue = cnrt.queueCreate()
    pointer = cnrt.malloc(16)

    def explode(_):
        raise RuntimeError("host function exploded")

    cnrt.invokeHostFunc(queue, explode, None)
    cnrt.memsetAsync(pointer, 3, 16, queue)
    error = raises_code(cnrt.cnrtErrorUnknown, cnrt.queueSync, queue)
    assert "exploded" in str(error) and "1 later command" in str(error)
    assert (download(pointer, 16, np.uint8) == 0xFF).all(), "a command after the failure still ran"
    cnrt.queueSync(queue)  # reported once; the queue works again
    cnrt.memsetAsync(pointer, 3, 16, queue)
    cnrt.queueSync(queue)
    assert (download(pointer, 16, np.uint8) == 3).all()
    assert "exploded" in str(raises_code(cnrt.cnrtErrorUnknown, cnrt.syncDevice))
    cnrt.syncDevice()


def test_query_raises_a_sticky_error_without_clearing_it():
    queue = cnrt.queueCreate()
    cnrt.invokeHostFunc(queue, lambda _: 1 / 0, None)
    while True:
        try:
            if cnrt.queueQuery(queue) == cnrt.cnrtSuccess:
                raise AssertionError("query reported success for a failed queue")
        except cnrt.CnrtError:
            break
    raises_code(cnrt.cnrtErrorUnknown, cnrt.queueSync, queue)


def test_blocking_mode_reports_errors_at_the_call(blocking):
    queue = cnrt.queueCreate()
    with pytest.raises(cnrt.CnrtError, match="division by zero"):
        cnrt.invokeHostFunc(queue, lambda _: 1 / 0, None)
    data = np.arange(16, dtype=np.float32)
    pointer = cnrt.malloc(64)
    out = np.zeros_like(data)
    cnrt.memcpyAsync(pointer, data, 64, queue, cnrt.cnrtMemcpyHostToDev)
    cnrt.memcpyAsync(out, pointer, 64, queue, cnrt.cnrtMemcpyDevToHost)
    np.testing.assert_array_equal(out, data)  # no sync needed: each call ran when made
    cnrt.syncDevice()


def test_destroyed_and_foreign_handles_are_invalid_resource_handles():
    queue = cnrt.queueCreate()
    cnrt.queueDestroy(queue)
    error = raises_code(cnrt.cnrtErrorInvalidResourceHandle, cnrt.queueSync, queue)
    assert "destroyed" in str(error)
    raises_code(cnrt.cnrtErrorInvalidResourceHandle, cnrt.queueDestroy, queue)
    raises_code(cnrt.cnrtErrorInvalidResourceHandle, cnrt.queueSync, "queue")
    raises_code(cnrt.cnrtErrorInvalidResourceHandle, cnrt.queueDestroy, None)
    raises_code(cnrt.cnrtErrorInvalidResourceHandle, cnrt.memsetAsync, cnrt.malloc(4), 0, 4, queue)


def test_destroy_lets_queued_work_finish():
    queue = cnrt.queueCreate()
    done = []
    cnrt.invokeHostFunc(queue, lambda _: (time.sleep(0.05), done.append(1)), None)
    cnrt.queueDestroy(queue)
    cnrt.syncDevice()
    assert done == [1]


def test_special_queue_handles():
    default = cnrt.queues.queue_arg(None)
    assert cnrt.queues.queue_arg(cnrt.cnrtQueueLegacy) is default
    mine = cnrt.queues.queue_arg(cnrt.cnrtQueuePerThread)
    assert mine is not default and cnrt.queues.queue_arg(cnrt.cnrtQueuePerThread) is mine
    other = []
    thread = threading.Thread(target=lambda: other.append(cnrt.queues.queue_arg(cnrt.cnrtQueuePerThread)))
    thread.start()
    thread.join()
    assert other[0] is not mine
    cnrt.memsetAsync(cnrt.malloc(8), 0, 8, cnrt.cnrtQueuePerThread)
    cnrt.queueSync(cnrt.cnrtQueuePerThread)


def test_priorities_are_clamped_to_the_range():
    least, greatest = cnrt.deviceGetQueuePriorityRange()
    assert cnrt.queueGetPriority(cnrt.queueCreateWithPriority(0, -100)) == greatest
    assert cnrt.queueGetPriority(cnrt.queueCreateWithPriority(0, 100)) == least
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.queueCreateWithPriority, 7, 0)


def test_both_api_generations_name_the_same_functions():
    assert cnrt.createQueue is cnrt.queueCreate is cnrt.cnrtQueueCreate is cnrt.cnrtCreateQueue
    assert cnrt.syncQueue is cnrt.queueSync is cnrt.cnrtSyncQueue
    assert cnrt.destroyQueue is cnrt.queueDestroy
    queue = cnrt.createQueue()
    cnrt.syncQueue(queue)
    cnrt.destroyQueue(queue)


def test_a_host_function_that_syncs_its_own_queue_fails_instead_of_hanging():
    queue = cnrt.queueCreate()
    cnrt.invokeHostFunc(queue, cnrt.queueSync, queue)
    error = raises_code(cnrt.cnrtErrorIllegalState, cnrt.queueSync, queue)
    assert "its own queue" in str(error)


def test_work_queued_from_several_threads_while_another_syncs_keeps_its_order():
    queue = cnrt.queueCreate()
    seen = []
    barrier = threading.Barrier(3)

    def producer(tag):
        barrier.wait()
        for index in range(300):
            cnrt.invokeHostFunc(queue, seen.append, (tag, index))
            if index % 37 == 0:
                cnrt.queueSync(queue)

    threads = [threading.Thread(target=producer, args=(tag,)) for tag in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    cnrt.queueSync(queue)
    assert len(seen) == 900
    for tag in range(3):
        assert [i for t, i in seen if t == tag] == list(range(300))


def test_blocking_mode_host_functions_may_queue_work_but_not_wait_for_their_queue(blocking):
    queue = cnrt.queueCreate()
    seen = []
    cnrt.invokeHostFunc(queue, lambda q: cnrt.invokeHostFunc(q, seen.append, "inner"), queue)
    assert seen == ["inner"]
    with pytest.raises(cnrt.CnrtError, match="its own queue"):
        cnrt.invokeHostFunc(queue, cnrt.queueSync, queue)


def test_a_forked_child_can_use_the_queues_and_pools_its_parent_used():
    import os
    import signal
    from mlusim.transfer import PARALLEL_COPY_BYTES
    size = 2 * PARALLEL_COPY_BYTES  # large enough to use the host thread pool
    pointer = cnrt.malloc(size)
    cnrt.memset(pointer, 7, size)
    cnrt.invokeHostFunc(None, lambda _: None, None)
    cnrt.syncDevice()
    pid = os.fork()
    if pid == 0:  # the child: its parent's worker threads do not exist here
        try:
            out = np.zeros(size, np.uint8)
            cnrt.memcpy(out, pointer, size, cnrt.cnrtMemcpyDevToHost)
            queue = cnrt.queueCreate()
            cnrt.memsetAsync(pointer, 1, 16, queue)
            cnrt.queueSync(queue)
            os._exit(0 if (out == 7).all() else 1)
        except BaseException:
            os._exit(2)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        finished, status = os.waitpid(pid, os.WNOHANG)
        if finished:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError("the forked child hung")


def test_a_sync_never_waits_for_a_worker_that_gathers_a_stream_of_commands(monkeypatch):
    """A worker woken again soon after its previous batch sleeps a moment so that a stream of small commands runs
    in batches (mlusim.worker.GATHER_SECONDS); a sync runs the pending work itself instead of waiting for it."""
    from mlusim import worker

    monkeypatch.setattr(worker, "HOT_SECONDS", 60.0)  # every wake-up after the first counts as a stream
    monkeypatch.setattr(worker, "GATHER_SECONDS", 3.0)
    queue = cnrt.queueCreate()
    seen = []
    cnrt.invokeHostFunc(queue, seen.append, 0)
    cnrt.queueSync(queue)
    time.sleep(0.05)  # the worker has finished its batch (if it ran it) and waits for the next token
    cnrt.invokeHostFunc(queue, seen.append, 1)  # the worker now gathers for 3 s
    started = time.perf_counter()
    cnrt.queueSync(queue)
    assert time.perf_counter() - started < 1.5
    assert seen == [0, 1]


def _stream(queue, count, every):
    """Queue `count` host functions `every` seconds apart; (when each was queued, when each ran)."""
    queued, ran = [], []
    for _ in range(count):
        queued.append(time.perf_counter())
        cnrt.invokeHostFunc(queue, lambda _: ran.append(time.perf_counter()), None)
        time.sleep(every)
    return queued, ran


def _wait_for(ran, count, seconds=10.0):
    deadline = time.perf_counter() + seconds
    while len(ran) < count and time.perf_counter() < deadline:
        time.sleep(0.005)
    return len(ran) == count


def test_a_worker_runs_a_stream_once_the_host_pauses(monkeypatch):
    """While the host keeps queueing, the worker sleeps (the two would hand the GIL to each other at every numpy
    call); once the host pauses, the stream runs on its own, without a sync, in order. The first command after a
    quiet spell starts at once."""
    from mlusim import worker

    monkeypatch.setattr(worker, "HOT_SECONDS", 60.0)  # every wake-up after the first counts as a stream
    monkeypatch.setattr(worker, "GATHER_SECONDS", 0.25)
    monkeypatch.setattr(worker, "STREAM_WAIT_SECONDS", 30.0)
    queue = cnrt.queueCreate()
    cnrt.invokeHostFunc(queue, lambda _: None, None)
    cnrt.queueSync(queue)
    queued, ran = _stream(queue, 40, 0.01)  # 400 ms of queueing, never 250 ms without a new command
    assert _wait_for(ran, 40)
    assert min(ran[1:]) > queued[-1]  # after the first (at once: the queue was quiet) none before the host stopped
    assert ran == sorted(ran)
    cnrt.queueSync(queue)


def test_the_first_op_after_a_quiet_spell_waits_for_its_stream(monkeypatch):
    """Ops are what a framework's dispatch issues one after another: the first op after a quiet spell does not
    start beside the host's dispatch either (both would wait for the GIL); the stream runs once the host
    pauses. Other commands (a host function above) still start at once."""
    from mlusim import worker
    from mlusim.command import Command, Kind

    monkeypatch.setattr(worker, "GATHER_SECONDS", 0.25)
    monkeypatch.setattr(worker, "STREAM_WAIT_SECONDS", 30.0)
    queue = cnrt.queueCreate()
    cnrt.invokeHostFunc(queue, lambda _: None, None)
    cnrt.queueSync(queue)
    time.sleep(2 * worker.HOT_SECONDS + 0.05)  # a quiet spell: the worker is not following a stream
    queued, ran = [], []
    for _ in range(20):
        queued.append(time.perf_counter())
        queue.submit(Command(Kind.OP, "op", lambda: ran.append(time.perf_counter())))
        time.sleep(0.01)
    assert _wait_for(ran, 20)
    assert min(ran) > queued[-1]
    assert ran == sorted(ran)
    cnrt.queueSync(queue)


def test_a_worker_follows_a_stream_for_a_bounded_time(monkeypatch):
    """A host that never pauses does not starve its queue: the worker runs what is queued after
    STREAM_WAIT_SECONDS."""
    from mlusim import worker

    monkeypatch.setattr(worker, "HOT_SECONDS", 60.0)
    monkeypatch.setattr(worker, "GATHER_SECONDS", 0.1)
    monkeypatch.setattr(worker, "STREAM_WAIT_SECONDS", 0.2)
    queue = cnrt.queueCreate()
    cnrt.invokeHostFunc(queue, lambda _: None, None)
    cnrt.queueSync(queue)
    queued, ran = _stream(queue, 100, 0.01)  # ~1 s of queueing, never 100 ms without a new command
    assert _wait_for(ran, 100)
    assert min(ran[1:]) < queued[-1]
    cnrt.queueSync(queue)


def test_a_stream_of_commands_runs_without_a_sync():
    """Gathering only delays a worker: work queued back to back completes on its own, as on the device."""
    queue = cnrt.queueCreate()
    done = threading.Event()
    seen = []
    for index in range(300):
        cnrt.invokeHostFunc(queue, seen.append, index)
    cnrt.invokeHostFunc(queue, lambda _: done.set(), None)
    assert done.wait(10.0)
    assert seen == list(range(300))
    cnrt.queueSync(queue)


@pytest.mark.mlusim_sanitize("off")  # the sanitizer sees every command queued: it turns this path off
def test_a_small_command_on_an_idle_queue_runs_at_once_on_the_calling_thread():
    from mlusim.command import Command, Kind
    queue = cnrt.queueCreate()
    ran_on = []
    queue.submit(Command(Kind.OP, "small", lambda: ran_on.append(threading.current_thread()), nbytes=16))
    assert ran_on == [threading.current_thread()] and not queue.busy()
    cnrt.queueSync(queue)


@pytest.mark.mlusim_sanitize("all")
def test_with_the_sanitizer_on_a_small_command_is_queued_for_the_worker():
    from mlusim.command import Command, Kind
    queue = cnrt.queueCreate()
    ran_on = []
    queue.submit(Command(Kind.OP, "small", lambda: ran_on.append(threading.current_thread()), nbytes=16))
    ran_in_the_call = ran_on == [threading.current_thread()]
    cnrt.queueSync(queue)
    assert not ran_in_the_call and len(ran_on) == 1
    cnrt.queueDestroy(queue)


@pytest.mark.mlusim_sanitize("off")  # the sanitizer sees every command queued: it turns this path off
def test_a_host_that_syncs_after_each_op_runs_its_next_op_in_the_call(monkeypatch):
    """Queue.submit: a host that waited for the queue after each op runs its next op in the call (it would wait for it
    anyway); ops queued without a wait after each are queued (for the worker, which gathers them)."""
    from mlusim import worker
    from mlusim.command import Command, Kind
    release = threading.Event()
    monkeypatch.setattr(worker, "follow_stream", lambda queue: release.wait(10))  # the worker holds off
    queue = cnrt.queueCreate()
    ran_on = []

    def op(name):
        return Command(Kind.OP, name, lambda: ran_on.append((name, threading.current_thread())))

    def ran_in_the_call(name):
        queue.submit(op(name))
        return ran_on[-1:] == [(name, threading.current_thread())] and not queue.busy()

    cnrt.queueSync(queue)  # a wait with no op before it: no pattern yet
    assert not ran_in_the_call("never waited for") and queue.busy()
    cnrt.queueSync(queue)  # waited after one op
    assert ran_in_the_call("after a sync")
    assert not ran_in_the_call("next")  # no wait in between
    cnrt.queueSync(queue)  # waited after two ops: a stream
    cnrt.queueSync(queue)  # (a wait right after a wait changes nothing)
    assert not ran_in_the_call("first of the next stream")
    cnrt.queueSync(queue)  # after one
    assert ran_in_the_call("after a sync again")
    release.set()
    cnrt.queueSync(queue)
    assert [name for name, _ in ran_on] == ["never waited for", "after a sync", "next", "first of the next stream",
                                            "after a sync again"]
    cnrt.queueDestroy(queue)


@pytest.mark.mlusim_sanitize("all")
def test_with_the_sanitizer_on_the_op_after_a_sync_is_queued_for_the_worker():
    from mlusim.command import Command, Kind
    queue = cnrt.queueCreate()
    ran_on = []
    cnrt.queueSync(queue)
    queue.submit(Command(Kind.OP, "op", lambda: ran_on.append(threading.current_thread())))
    ran_in_the_call = ran_on == [threading.current_thread()]
    cnrt.queueSync(queue)
    assert not ran_in_the_call and len(ran_on) == 1
    cnrt.queueDestroy(queue)


def test_the_op_after_a_sync_behind_queued_work_waits_its_turn_and_fails_at_the_next_sync():
    """Queued work of another host thread comes first; an op that fails in the call is the queue's sticky error,
    reported at the next sync as for queued work, not raised at the call."""
    from mlusim.command import Command, Kind
    queue = cnrt.queueCreate()
    release = threading.Event()
    order = []
    cnrt.queueSync(queue)
    cnrt.invokeHostFunc(queue, lambda _: (release.wait(10), order.append("first")), None)
    queue.submit(Command(Kind.OP, "op", lambda: order.append("op")))
    assert order == [] and queue.busy()
    release.set()
    cnrt.queueSync(queue)
    assert order == ["first", "op"]

    def explode():
        raise RuntimeError("op exploded")

    queue.submit(Command(Kind.OP, "op", explode))
    assert "op exploded" in str(raises_code(cnrt.cnrtErrorUnknown, cnrt.queueSync, queue))
    cnrt.queueDestroy(queue)


def test_a_small_command_behind_queued_work_waits_its_turn():
    from mlusim.command import Command, Kind
    queue = cnrt.queueCreate()
    release = threading.Event()
    order = []
    cnrt.invokeHostFunc(queue, lambda _: (release.wait(10), order.append("first")), None)
    queue.submit(Command(Kind.OP, "small", lambda: order.append("small"), nbytes=16))
    assert order == [] and queue.busy()
    release.set()
    cnrt.queueSync(queue)
    assert order == ["first", "small"]


def _hold_worker_after_its_first_batch(monkeypatch, queue):
    """Patch `queue`'s worker so that, after its first batch, it follows the stream (sleeps beside the pending work)
    until released: (following, release) events. Other queues' workers (an earlier test's, still winding down) keep
    the real behaviour, so they cannot take the first batch's place."""
    from mlusim import worker
    following, release = threading.Event(), threading.Event()
    batches = []
    real_follow = worker.follow_stream

    def follow(woken):
        if woken is not queue:
            return real_follow(woken)
        if batches:
            following.set()
            release.wait(10)
        batches.append(True)

    monkeypatch.setattr(worker, "HOT_SECONDS", 1e9)  # every wake-up counts as a stream
    monkeypatch.setattr(worker, "follow_stream", follow)
    return following, release


def _recorded(name, order, threads, small=True):
    """An op (of 16 bytes: small; or of unknown size) that records its name and thread."""
    from mlusim.command import Command, Kind

    def run():
        order.append(name)
        threads[name] = threading.current_thread()
    return Command(Kind.OP, name, run, nbytes=16 if small else -1)


@pytest.mark.mlusim_sanitize("off")  # the sanitizer sees every command queued: it turns this path off
def test_small_commands_left_pending_run_in_order_at_the_next_small_commands_call(monkeypatch):
    """A stream of small ops that fell off the inline path (queued while the worker ran larger work) returns to
    it: the next small command's call runs the pending small ones and itself, in order, on the calling thread,
    instead of leaving every later one to a worker that follows the stream for as long as the host issues it."""
    queue = cnrt.queueCreate()
    following, release = _hold_worker_after_its_first_batch(monkeypatch, queue)
    started, busy = threading.Event(), threading.Event()
    order, threads = [], {}
    cnrt.invokeHostFunc(queue, lambda _: (started.set(), busy.wait(10), order.append("first")), None)
    assert started.wait(10)
    for name in ("s1", "s2", "s3"):
        queue.submit(_recorded(name, order, threads))  # the worker holds the queue: queued behind it
    assert order == []
    busy.set()
    assert following.wait(10)  # the worker ran its first batch and now sleeps beside what is left of the stream
    queue.submit(_recorded("s4", order, threads))
    assert order == ["first", "s1", "s2", "s3", "s4"]
    assert threads["s4"] is threading.current_thread()
    assert queue.completed == queue.submitted
    release.set()
    cnrt.queueSync(queue)
    cnrt.queueDestroy(queue)


@pytest.mark.mlusim_sanitize("off")  # (with the sanitizer every small command is queued anyway)
def test_a_small_command_behind_pending_larger_work_is_queued(monkeypatch):
    """With larger work pending (not running), a small command is queued behind it: the call never runs a
    larger command in the caller's thread."""
    queue = cnrt.queueCreate()
    following, release = _hold_worker_after_its_first_batch(monkeypatch, queue)
    order, threads = [], {}
    started = threading.Event()
    cnrt.invokeHostFunc(queue, lambda _: started.set(), None)
    assert started.wait(10)
    queue.submit(_recorded("large", order, threads, small=False))  # pending: the worker follows the stream beside it
    assert following.wait(10)
    queue.submit(_recorded("small", order, threads))
    assert order == [] and queue.busy()
    release.set()
    cnrt.queueSync(queue)
    assert order == ["large", "small"]
    cnrt.queueDestroy(queue)


def test_a_failing_small_command_is_the_queues_sticky_error_reported_at_sync():
    from mlusim.command import Command, Kind
    queue = cnrt.queueCreate()
    pointer = cnrt.malloc(16)

    def explode():
        raise RuntimeError("small op exploded")

    queue.submit(Command(Kind.OP, "small", explode, nbytes=16))  # not raised at the call, as queued work
    cnrt.memsetAsync(pointer, 3, 16, queue)
    error = raises_code(cnrt.cnrtErrorUnknown, cnrt.queueSync, queue)
    assert "small op exploded" in str(error) and "1 later command" in str(error)
    assert "small op exploded" in str(raises_code(cnrt.cnrtErrorUnknown, cnrt.syncDevice))
    cnrt.syncDevice()
