"""The lean path of small allReduces (fastpath.py): a call repeated with the same arguments runs in the calling
thread on an idle queue, or hands the rest of the call to its queue when a peer is not there yet. Its results are
bitwise those of the general path whatever path each rank takes, and everything that can change between calls
(freed memory, a failed communicator, an open group, tracing, a busy queue) still behaves as on the general path.

Two devices of one process; the calls of both ranks are made from this one thread in a chosen order, so that which
path each rank takes is certain: the rank that calls first finds no message from its peer and hands its call over
(ranks of one process do not wait for each other); the rank that calls second finds its peer's message and runs
inline."""
import threading
import time

import numpy as np
import pytest

import cncl
import cnrt
from cncl import fastpath
from mlusim import device as devices
from mlusim.observers import OBSERVERS
from mlusim.trace import Recorder
from tests.cncl.tasks import DTYPES, OPS, make_input, reference


def _upload(rank: int, values: np.ndarray) -> int:
    cnrt.setDevice(rank)
    pointer = cnrt.malloc(max(values.nbytes, 1))
    cnrt.memcpy(pointer, np.ascontiguousarray(values), values.nbytes, cnrt.cnrtMemcpyHostToDev)
    return pointer


def _download(rank: int, pointer: int, like: np.ndarray) -> np.ndarray:
    cnrt.setDevice(rank)
    out = np.empty_like(like)
    cnrt.memcpy(out, pointer, out.nbytes, cnrt.cnrtMemcpyDevToHost)
    return out


def _sync(*ranks: int) -> None:
    for rank in ranks:
        cnrt.setDevice(rank)
        cnrt.syncDevice()


class Calls:
    """One allReduce call per rank, with fixed arguments (so that the second call on finds its plan)."""

    def __init__(self, comms, count: int, code: int, op: int, inputs: list, in_place: bool = False):
        self.comms, self.count, self.code, self.op = comms, count, code, op
        self.sends = [_upload(r, inputs[r]) for r in range(2)]
        self.recvs = self.sends if in_place else [_upload(r, np.zeros_like(inputs[r])) for r in range(2)]

    def call(self, rank: int) -> None:
        cnrt.setDevice(rank)
        cncl.allReduce(self.sends[rank], self.recvs[rank], self.count, self.code, self.op, self.comms[rank], None)

    def round(self, order=(0, 1)) -> None:
        for rank in order:
            self.call(rank)
        _sync(0, 1)

    def results(self, like: np.ndarray) -> list:
        return [_download(r, self.recvs[r], like) for r in range(2)]


#: tests of the lean path's own workings: the sanitizer turns the path off (it must see every call as a queued
#: command), so these run without it even in a sanitized run
LEAN_PATH_ON = pytest.mark.mlusim_sanitize("off")


def _stats() -> dict:
    return dict(fastpath.STATS)


def _delta(before: dict) -> dict:
    return {key: fastpath.STATS[key] - before[key] for key in before}


@pytest.mark.parametrize("first", [0, 1])
@LEAN_PATH_ON
def test_every_type_and_op_gives_the_general_paths_bits_on_either_path(pair, first, monkeypatch):
    count = 37
    for code in DTYPES:
        for op in OPS:
            inputs = [make_input(code * 10 + op, r, count, code) for r in range(2)]
            in_place = code in (cncl.cnclHalf, cncl.cnclInt64) and op == cncl.cnclSum
            calls = Calls(pair, count, code, op, inputs, in_place)
            monkeypatch.setattr(fastpath, "enabled", False)
            before = _stats()
            calls.round()  # the general path
            assert _delta(before) == {"inline": 0, "handed_over": 0, "declined": 0}
            monkeypatch.setattr(fastpath, "enabled", True)
            general = calls.results(inputs[0])
            want = reference(inputs, op, code)
            for got in general:
                assert np.array_equal(got.view(np.uint8), want.view(np.uint8)), (code, op)
            if in_place:
                for r in range(2):
                    _upload_into(r, calls.sends[r], inputs[r])
            before = _stats()
            calls.round(order=(first, 1 - first))  # planned now: the first caller hands over, the second runs inline
            assert _delta(before) == {"inline": 1, "handed_over": 1, "declined": 0}
            for got in calls.results(inputs[0]):
                assert np.array_equal(got.view(np.uint8), general[0].view(np.uint8)), (code, op)


def _upload_into(rank: int, pointer: int, values: np.ndarray) -> None:
    cnrt.setDevice(rank)
    cnrt.memcpy(pointer, values, values.nbytes, cnrt.cnrtMemcpyHostToDev)


def test_calls_from_two_threads_back_to_back_are_right_every_time(pair):
    import threading

    count, rounds = 300, 200
    inputs = [np.arange(count, dtype=np.float32) * (r + 1) for r in range(2)]
    calls = Calls(pair, count, cncl.cnclFloat, cncl.cnclSum, inputs)
    calls.round()
    errors = []

    def rank(r):
        try:
            for _ in range(rounds):
                calls.call(r)
            _sync(r)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    before = _stats()
    threads = [threading.Thread(target=rank, args=(r,)) for r in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert sum(_delta(before).values()) == 2 * rounds
    for got in calls.results(inputs[0]):
        np.testing.assert_array_equal(got, inputs[0] + inputs[1])


def test_only_small_calls_get_a_plan(pair):
    largest = fastpath.MAX_BYTES // 4
    for count, planned in ((largest, True), (largest + 1, False)):
        inputs = [np.ones(count, np.float32)] * 2
        calls = Calls(pair, count, cncl.cnclFloat, cncl.cnclSum, inputs)
        calls.round()
        key = fastpath.plan_key(calls.sends[0], calls.recvs[0], count, cncl.cnclFloat, cncl.cnclSum, None)
        assert (key in pair[0].fast_plans) is planned
        calls.round(order=(1, 0))
        for got in calls.results(inputs[0]):
            np.testing.assert_array_equal(got, 2 * inputs[0])


def test_a_float_count_is_still_rejected_after_the_int_call_was_planned(pair):
    calls = Calls(pair, 4, cncl.cnclFloat, cncl.cnclSum, [np.ones(4, np.float32)] * 2)
    calls.round()
    cnrt.setDevice(0)
    with pytest.raises(cncl.CnclError) as error:
        cncl.allReduce(calls.sends[0], calls.recvs[0], 4.0, cncl.cnclFloat, cncl.cnclSum, pair[0], None)
    assert error.value.code == cncl.CNCL_RET_ERR_ARGUMENTS and "count" in error.value.message


@LEAN_PATH_ON
def test_a_freed_buffer_fails_as_on_the_general_path_and_a_reallocated_one_is_used(pair):
    inputs = [np.full(8, r + 1, np.float32) for r in range(2)]
    calls = Calls(pair, 8, cncl.cnclFloat, cncl.cnclSum, inputs)
    calls.round()
    calls.round(order=(1, 0))
    old = calls.sends[0]
    cnrt.setDevice(0)
    cnrt.free(old)
    with pytest.raises(cncl.CnclError) as error:
        calls.call(0)
    assert "send_buffer" in error.value.message
    # the same address allocated again (as when the device's address span is spent and the allocator wraps to the
    # lowest free range): a new block, a new plan
    cnrt.setDevice(0)
    devices.get(0).memory.rewind()
    again = cnrt.malloc(inputs[0].nbytes)
    if again != old:
        pytest.skip("the allocator did not give the same address again")
    _upload_into(0, again, np.full(8, 10, np.float32))
    calls.round()  # the general path again (the old plan is stale); a new plan
    plan = pair[0].fast_plans[fastpath.plan_key(again, calls.recvs[0], 8, cncl.cnclFloat, cncl.cnclSum, None)]
    assert not plan.send_block.freed
    _upload_into(0, again, np.full(8, 20, np.float32))
    before = _stats()
    calls.round(order=(1, 0))
    assert _delta(before)["inline"] == 1
    for got in calls.results(inputs[0]):
        np.testing.assert_array_equal(got, np.full(8, 22, np.float32))


def test_an_aborted_communicator_is_refused_as_on_the_general_path(pair):
    calls = Calls(pair, 2, cncl.cnclFloat, cncl.cnclSum, [np.ones(2, np.float32)] * 2)
    calls.round()
    calls.round()
    cncl.abortComm(pair[0])
    with pytest.raises(cncl.CnclError) as error:
        calls.call(0)
    assert error.value.code == cncl.CNCL_RET_ERR_ARGUMENTS and "destroyed" in error.value.message


@LEAN_PATH_ON
def test_a_handed_over_call_times_out_like_a_queued_one(pair):
    pair[0].set_timeout(0.5)
    calls = Calls(pair, 2, cncl.cnclFloat, cncl.cnclSum, [np.ones(2, np.float32)] * 2)
    calls.round()
    before = _stats()
    calls.call(0)  # rank 1 never calls
    assert _delta(before)["handed_over"] == 1
    queue = next(iter(pair[0].fast_plans.values())).queue
    assert cnrt.queueQuery(queue) == cnrt.cnrtErrorNotReady
    cnrt.setDevice(0)
    with pytest.raises(cnrt.CnrtError, match="timed out after 0.5 s waiting for rank 1"):
        cnrt.syncDevice()
    assert cncl.getCommAsyncError(pair[0]) == cncl.CNCL_RET_ASYNC_ERROR
    before = _stats()
    with pytest.raises(cncl.CnclError) as error:  # the failed communicator: the next call fails at once
        calls.call(0)
    assert error.value.code == cncl.CNCL_RET_ASYNC_ERROR
    assert _delta(before) == {"inline": 0, "handed_over": 0, "declined": 1}


def test_mismatched_planned_calls_are_reported_on_both_ranks(pair):
    sends = [_upload(r, np.ones(4, np.int32)) for r in range(2)]

    def call(rank, count):
        cnrt.setDevice(rank)
        cncl.allReduce(sends[rank], sends[rank], count, cncl.cnclInt32, cncl.cnclSum, pair[rank], None)

    for count in (3, 4):  # plans for count 3 and 4 on both ranks (matched calls)
        call(0, count)
        call(1, count)
        _sync(0, 1)
    call(0, 3)
    call(1, 4)  # rank 1's plan finds rank 0's message for another count: hands over, the queue reports it
    failures = []
    for rank in range(2):
        cnrt.setDevice(rank)
        with pytest.raises(cnrt.CnrtError) as error:
            cnrt.syncDevice()
        failures.append(str(error.value))
    assert all("mismatched calls" in text for text in failures), failures


def test_calls_in_a_group_are_queued_at_its_end(pair):
    inputs = [np.full(3, r + 1, np.int32) for r in range(2)]
    calls = Calls(pair, 3, cncl.cnclInt32, cncl.cnclSum, inputs)
    calls.round()
    before = _stats()
    cncl.groupStart()
    calls.call(0)
    calls.call(1)
    assert _delta(before) == {"inline": 0, "handed_over": 0, "declined": 2}
    cncl.groupEnd()
    _sync(0, 1)
    for got in calls.results(inputs[0]):
        np.testing.assert_array_equal(got, np.full(3, 3, np.int32))


@LEAN_PATH_ON
def test_queue_order_notifiers_and_clock_of_inline_and_handed_over_calls(pair):
    inputs = [np.full(4, r + 1, np.float32) for r in range(2)]
    calls = Calls(pair, 4, cncl.cnclFloat, cncl.cnclSum, inputs)
    calls.round()
    plan = pair[1].fast_plans[fastpath.plan_key(calls.sends[1], calls.recvs[1], 4, cncl.cnclFloat, cncl.cnclSum,
                                                None)]
    device_queue = [pair[r].fast_plans[fastpath.plan_key(calls.sends[r], calls.recvs[r], 4, cncl.cnclFloat,
                                                         cncl.cnclSum, None)].queue for r in range(2)]
    notifiers = []
    clocks = [q.model_clock_us for q in device_queue]
    submitted = [q.submitted for q in device_queue]
    calls.call(0)  # handed over: rank 1 has not called yet
    cnrt.setDevice(0)
    notifiers.append(cnrt.notifierCreate())
    cnrt.placeNotifier(notifiers[0], None)
    assert cnrt.queryNotifier(notifiers[0]) == cnrt.cnrtErrorNotReady  # behind the waiting call
    assert device_queue[0].busy()
    calls.call(1)  # inline: done when the call returns
    assert not device_queue[1].busy()
    assert device_queue[1].submitted == submitted[1] + 1
    assert device_queue[1].model_clock_us >= clocks[1] + plan.model_us
    cnrt.setDevice(1)
    assert cnrt.queueQuery(device_queue[1]) == cnrt.cnrtSuccess
    notifiers.append(cnrt.notifierCreate())
    cnrt.placeNotifier(notifiers[1], None)
    _sync(0, 1)
    assert all(cnrt.queryNotifier(n) == cnrt.cnrtSuccess for n in notifiers)
    assert device_queue[0].model_clock_us >= clocks[0] + plan.model_us
    assert all(q.completed == q.submitted for q in device_queue)
    for got in calls.results(inputs[0]):
        np.testing.assert_array_equal(got, np.full(4, 3, np.float32))
    # a copy queued after an inline call sees its result (the call ended before it returned)
    calls.round(order=(1, 0))
    calls.call(1)
    calls.call(0)
    cnrt.setDevice(0)
    np.testing.assert_array_equal(_download(0, calls.recvs[0], inputs[0]), np.full(4, 3, np.float32))
    _sync(0, 1)


@pytest.mark.mlusim_sanitize("all")
def test_with_the_sanitizer_on_every_call_is_a_queued_command(pair):
    calls = Calls(pair, 2, cncl.cnclFloat, cncl.cnclSum, [np.ones(2, np.float32)] * 2)
    before = _stats()
    for _ in range(4):
        calls.round(order=(1, 0))
    assert _delta(before)["inline"] == _delta(before)["handed_over"] == 0
    assert [r.tolist() for r in calls.results(np.ones(2, np.float32))] == [[2.0, 2.0]] * 2


def test_with_tracing_on_every_call_is_a_queued_command(pair):
    calls = Calls(pair, 2, cncl.cnclFloat, cncl.cnclSum, [np.ones(2, np.float32)] * 2)
    calls.round()
    watched_before = OBSERVERS.watching_commands  # (the sanitizer, when it is on, watches too)
    recorder = Recorder().start()
    try:
        before = _stats()
        for _ in range(3):
            calls.round(order=(1, 0))
    finally:
        recorder.stop()
    assert _delta(before) == {"inline": 0, "handed_over": 0, "declined": 6}
    assert sum(1 for record in recorder.records if record.name == "cnclAllReduce") == 6
    assert OBSERVERS.watching_commands == watched_before  # the recorder unregistered


def test_rank_processes_run_back_to_back_calls_inline_and_get_past_a_late_peer():
    from tests.cncl.ranks import ProcessClique

    runner = ProcessClique(2)
    try:
        late = runner.run("lean_rounds", 100, 24, 1, 0.05)
        prompt = runner.run("lean_rounds", 100, 24, -1, 0.0)
    finally:
        runner.close()
    for failures, stats in late + prompt:
        assert failures == []
        # every call had a plan, the first one made by the call itself (the buffer of the second run never gets the
        # freed address of the first one, so no stale plan is found)
        assert sum(stats.values()) == 24
    # the rank that met its peer 50 ms late did not wait for it in its own thread: the queue took the call over
    # (rank 0 at the middle call, or either rank earlier when the rank processes began the task that far apart)
    assert sum(stats["handed_over"] for _, stats in late) >= 1, late
    assert all(stats["inline"] >= 1 for _, stats in prompt), prompt


@LEAN_PATH_ON
def test_after_a_wait_for_a_busy_queue_runs_out_a_few_calls_are_queued_then_a_call_waits_again(pair):
    inputs = [np.full(4, r + 1, np.float32) for r in range(2)]
    calls = Calls(pair, 4, cncl.cnclFloat, cncl.cnclSum, inputs)
    calls.round()
    plan = next(iter(pair[0].fast_plans.values()))
    plan.drain_seconds = 0.2  # as when the peer is in another process (one process's ranks never wait)
    held = threading.Event()
    cnrt.setDevice(0)
    cnrt.invokeHostFunc(plan.queue, lambda _: held.wait(30))  # rank 0's queue is busy until released
    before = _stats()
    seconds = []
    for _ in range(fastpath.DRAIN_SKIP_CALLS + 2):
        start = time.perf_counter()
        calls.call(0)
        seconds.append(time.perf_counter() - start)
    held.set()
    # the first call waited for the queue and gave up; the next DRAIN_SKIP_CALLS were queued at once; the last waited
    assert seconds[0] >= 0.2 and seconds[-1] >= 0.2, seconds
    assert max(seconds[1:-1]) < 0.2, seconds
    assert _delta(before) == {"inline": 0, "handed_over": 0, "declined": fastpath.DRAIN_SKIP_CALLS + 2}
    for _ in range(fastpath.DRAIN_SKIP_CALLS + 2):
        calls.call(1)
    _sync(0, 1)
    for got in calls.results(inputs[0]):
        np.testing.assert_array_equal(got, np.full(4, 3, np.float32))
