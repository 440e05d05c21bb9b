"""Asynchronous like the real backend: a collective runs on the group's cncl queue; work.wait() makes the current
stream wait for it without blocking the host; async_op futures complete (then() chains run after it); the
caching allocator does not hand an input's memory out again while its collective is pending (record_stream)."""


def test_wait_orders_the_stream_without_blocking_the_host(two_ranks):
    delay = 1.0  # rank 1 joins the all_reduce this much later
    first, second = two_ranks.run("asynchronous", delay)
    assert not first["completed_at_once"]
    assert first["wait_seconds"] < delay / 2          # wait() returned while rank 1 was still away
    assert first["value"] == second["value"] == [3.0, 3.0]   # read on the current stream: after the collective
    assert first["then"] == second["then"] == [6.0, 6.0]
    assert not first["reused_while_pending"]          # the freed input's block was held back (record_stream)
    assert first["completed_after"] and second["completed_after"]
    assert first["address_kept"]


def test_a_small_collective_cncl_ran_in_the_host_thread_is_complete_at_once(two_ranks):
    first, second = two_ranks.run("small_collective_done_inline", 0.3)
    assert not first["completed_at_once"]             # rank 1 was away: queued, pending
    assert second["completed_at_once"]                # rank 0's message was there: done in the call
    for result in (first, second):
        assert result["future"] == result["value"] == [3.0, 3.0]
        assert result["chain"] == [2.0 ** 30] * 2
