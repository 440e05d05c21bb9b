"""Liveness: no sync starves, no free deadlocks, a forked child never hangs. A hang is a bug, so every wait here
has a bound and a test that would hang fails instead."""
import os
import select
import threading
import time

import numpy as np
import pytest

import cnrt

from .helpers import download, raises_code, upload

BOUND = 20.0  # seconds any single wait of these tests may take before it counts as a hang


def _in_thread(function, *args):
    """Run function(*args) on a thread; (thread, outcome list) where outcome gets the result or the exception."""
    outcome = []

    def run():
        try:
            outcome.append(function(*args))
        except BaseException as exc:  # handed to the test
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


# ---- syncs while other threads keep the queue busy ------------------------------------------------------------------

def test_sync_returns_once_its_work_ran_although_producers_keep_the_queue_busy():
    """Producers that keep the queue just about saturated used to hold the worker's run loop forever: a sync
    waited for the run lock, not for its own work."""
    queue = cnrt.queueCreate()
    stop = threading.Event()

    def produce():
        while not stop.is_set():
            cnrt.invokeHostFunc(queue, lambda _: time.sleep(0.001), None)
            time.sleep(0.0018)

    producers = [threading.Thread(target=produce, daemon=True) for _ in range(2)]
    for thread in producers:
        thread.start()
    try:
        time.sleep(0.1)
        done = []
        cnrt.invokeHostFunc(queue, done.append, "marker")
        thread, outcome = _in_thread(cnrt.queueSync, queue)
        thread.join(BOUND)
        assert not thread.is_alive(), "queueSync starved while producers kept the queue busy"
        assert outcome == [None] and done == ["marker"]
    finally:
        stop.set()
        for producer in producers:
            producer.join(BOUND)
    cnrt.queueSync(queue)


def test_soak_producers_and_syncing_threads():
    """Threads that enqueue copies and host functions, and threads that sync, all at once: every sync returns after
    the work queued before it, every byte ends where it should, and the queue is idle at the end."""
    queue = cnrt.queueCreate()
    size = 4096
    source = np.arange(size, dtype=np.uint8)
    buffers = [upload(source) for _ in range(4)]
    stop = threading.Event()
    failures, counts = [], {"host": 0, "syncs": 0}
    lock = threading.Lock()

    def producer(index):
        target = np.empty(size, np.uint8)
        while not stop.is_set():
            cnrt.memcpyAsync(buffers[index], source, size, queue, cnrt.cnrtMemcpyHostToDev)
            cnrt.memcpyAsync(target, buffers[index], size, queue, cnrt.cnrtMemcpyDevToHost)

            def count(_):
                with lock:
                    counts["host"] += 1
            cnrt.invokeHostFunc(queue, count, None)
            time.sleep(0.0005)  # about what the worker keeps up with: the queue stays busy without a backlog

    def syncer():
        while not stop.is_set():
            seen = []
            cnrt.invokeHostFunc(queue, seen.append, True)
            began = time.monotonic()
            cnrt.queueSync(queue)
            if seen != [True]:
                failures.append("a sync returned before the work queued before it ran")
            if time.monotonic() - began > BOUND / 2:
                failures.append(f"a sync took {time.monotonic() - began:.1f} s")
            with lock:
                counts["syncs"] += 1

    threads = [threading.Thread(target=producer, args=(i,), daemon=True) for i in range(4)]
    threads += [threading.Thread(target=syncer, daemon=True) for _ in range(2)]
    for thread in threads:
        thread.start()
    time.sleep(1.5)
    stop.set()
    for thread in threads:
        thread.join(BOUND)
        assert not thread.is_alive(), "a producer or syncing thread hung"
    cnrt.queueSync(queue)
    assert not failures, failures[:3]
    assert counts["syncs"] > 10 and counts["host"] > 10, counts
    assert not queue.busy()
    for pointer in buffers:
        assert (download(pointer, size, np.uint8) == source).all()


def test_sync_of_a_queue_fed_from_inside_its_own_commands_returns():
    queue = cnrt.queueCreate()
    seen = []

    def chain(depth):
        seen.append(depth)
        if depth < 50:
            cnrt.invokeHostFunc(queue, chain, depth + 1)

    cnrt.invokeHostFunc(queue, chain, 0)
    thread, outcome = _in_thread(cnrt.queueSync, queue)
    thread.join(BOUND)
    assert not thread.is_alive() and outcome == [None]
    # a sync waits for the work queued before it, not for what that work queues meanwhile: the chain may still be
    # going on (on the worker, or pending when a syncing thread ran its step); each sync runs it further
    deadline = time.monotonic() + BOUND
    while len(seen) < 51 and time.monotonic() < deadline:
        cnrt.queueSync(queue)
    assert seen == list(range(51))


# ---- frees ordered by a queue -------------------------------------------------------------------------------------

def test_use_after_an_async_free_fails_at_the_call_and_the_sync_returns():
    queue = cnrt.queueCreate()
    pointer = cnrt.malloc(1024)
    cnrt.memFreeAsync(pointer, queue)
    error = raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.memsetAsync, pointer, 0, 1024, queue)
    assert error.kind == "use_after_free"
    thread, outcome = _in_thread(cnrt.queueSync, queue)
    thread.join(BOUND)
    assert not thread.is_alive() and outcome == [None], "queueSync hung after a use of an async-freed pointer"
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.free, pointer)  # double free


def test_work_queued_before_an_async_free_still_runs_and_the_memory_comes_back():
    queue = cnrt.queueCreate()
    before = cnrt.memGetInfo()[0]
    release = threading.Event()
    pointer = upload(np.arange(256, dtype=np.float32))
    result = np.zeros(256, np.float32)
    cnrt.invokeHostFunc(queue, lambda _: release.wait(BOUND), None)
    cnrt.memcpyAsync(result, pointer, 1024, queue, cnrt.cnrtMemcpyDevToHost)
    cnrt.memFreeAsync(pointer, queue)
    assert cnrt.memGetInfo()[0] < before, "the block was handed back while queued work still reads it"
    release.set()
    cnrt.queueSync(queue)
    assert (result == np.arange(256, dtype=np.float32)).all()
    assert cnrt.memGetInfo()[0] == before


def test_free_inside_a_host_function_makes_a_later_use_on_its_queue_a_use_after_free():
    queue = cnrt.queueCreate()
    pointer = cnrt.malloc(4096)
    cnrt.invokeHostFunc(queue, lambda p: cnrt.free(p), pointer)
    cnrt.memsetAsync(pointer, 1, 4096, queue)  # accepted: the pointer is live at the call
    thread, outcome = _in_thread(cnrt.queueSync, queue)
    thread.join(BOUND)
    assert not thread.is_alive(), "queueSync deadlocked on a free inside a host function"
    error = outcome[0]
    assert isinstance(error, cnrt.CnrtError) and error.code == cnrt.cnrtErrorArgsInvalid
    assert "use after free" in str(error) and "cnrtMemsetAsync" in str(error)
    cnrt.queueSync(queue)  # reported once
    assert cnrt.memGetInfo()[0] == cnrt.memGetInfo()[1], "the freed block's memory did not come back"


def test_free_of_a_block_other_queues_still_use_waits_for_them():
    first = cnrt.queueCreate()
    release = threading.Event()
    pointer = upload(np.full(1024, 7, np.uint8))
    out = np.zeros(1024, np.uint8)
    cnrt.invokeHostFunc(first, lambda _: release.wait(BOUND), None)
    cnrt.memcpyAsync(out, pointer, 1024, first, cnrt.cnrtMemcpyDevToHost)
    thread, outcome = _in_thread(cnrt.free, pointer)
    time.sleep(0.05)
    assert thread.is_alive(), "cnrtFree did not wait for queued work that uses the block"
    release.set()
    thread.join(BOUND)
    assert outcome == [None] and (out == 7).all()


# ---- fork ---------------------------------------------------------------------------------------------------------

def _fork_and_report(child) -> tuple[int, str]:
    """Fork; the child runs child() and reports its text through a pipe. (exit status, text); fails on a hang."""
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        status = 0
        try:
            text = child()
        except BaseException as exc:
            text, status = f"child raised {type(exc).__name__}: {exc}", 1
        os.write(writer, text.encode()[:60000])
        os._exit(status)
    os.close(writer)
    ready, _, _ = select.select([reader], [], [], BOUND)
    text = os.read(reader, 65536).decode() if ready else ""
    os.close(reader)
    deadline = time.monotonic() + BOUND
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status), text
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail(f"the forked child hung; it said {text!r}")


def test_fork_with_work_in_flight_gives_the_child_a_clear_error_and_a_usable_device():
    queue = cnrt.queueCreate()
    pointer = upload(np.full(1 << 16, 3, np.uint8))
    release = threading.Event()
    cnrt.invokeHostFunc(queue, lambda _: release.wait(BOUND), None)  # in flight at the fork
    cnrt.memsetAsync(pointer, 9, 1 << 16, queue)                       # queued at the fork

    def child():
        lines = []
        try:
            cnrt.queueSync(queue)
            lines.append("sync: ok")
        except cnrt.CnrtError as error:
            lines.append(f"sync: {error.code} {error}")
        cnrt.queueSync(queue)              # the error is reported once
        lines.append(f"byte: {download(pointer, 1, np.uint8)[0]}")  # the parent's memory as it was at the fork
        cnrt.free(pointer)                 # the pin of the dropped memset is gone: no wait
        fresh = upload(np.arange(64, dtype=np.uint8))
        cnrt.memsetAsync(fresh, 5, 64, queue)
        cnrt.queueSync(queue)
        lines.append(f"new work: {int(download(fresh, 64, np.uint8).sum())}")
        return "\n".join(lines)

    status, text = _fork_and_report(child)
    release.set()
    cnrt.queueSync(queue)
    assert status == 0, text
    assert f"sync: {cnrt.cnrtErrorIllegalState}" in text and "2 command(s) queued before fork()" in text, text
    assert "byte: 3" in text and "new work: 320" in text, text
    assert (download(pointer, 16, np.uint8) == 9).all()  # the parent's own work ran in the parent


def test_fork_while_other_threads_hammer_memory_and_queues():
    """A thread may hold the allocator's or a queue's lock at the moment of fork(): the child must not inherit it
    locked."""
    stop = threading.Event()
    queue = cnrt.queueCreate()

    def churn():
        while not stop.is_set():
            pointer = cnrt.malloc(4096)
            cnrt.memsetAsync(pointer, 1, 4096, queue)
            cnrt.memFreeAsync(pointer, queue)

    threads = [threading.Thread(target=churn, daemon=True) for _ in range(2)]
    for thread in threads:
        thread.start()
    try:
        for _ in range(5):
            def child():
                pointer = cnrt.malloc(128)
                cnrt.memset(pointer, 2, 128)
                try:
                    cnrt.queueSync(queue)
                except cnrt.CnrtError:
                    pass  # the parent's dropped work
                cnrt.free(pointer)
                cnrt.syncDevice()
                return "ok"

            status, text = _fork_and_report(child)
            assert status == 0 and text == "ok", text
    finally:
        stop.set()
        for thread in threads:
            thread.join(BOUND)
    cnrt.queueSync(queue)
