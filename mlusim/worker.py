"""A queue's worker thread (for mlusim.queue.Queue): woken by a token, it runs what was pending when it woke.

A worker woken again within HOT_SECONDS of finishing its previous batch, or woken for an op, is being fed a stream of
commands (a host thread issuing ops one by one): it sleeps, without the GIL, for as long as commands keep arriving
(each sleep GATHER_SECONDS, at most STREAM_WAIT_SECONDS in all), so that the stream runs in batches once the host
pauses. Running commands while the host thread keeps queueing costs more than the overlap gains on a small host:
both threads run Python and hand the GIL to each other at every numpy call (docs/runtime.md gives the figures). A
sync never waits for this: the syncing thread runs what is pending itself.
"""
from __future__ import annotations

import threading
import time

from . import execution
from .command import Kind

HOT_SECONDS = 0.001
GATHER_SECONDS = 0.0005
STREAM_WAIT_SECONDS = 0.02


def start(queue) -> threading.Thread:
    """Start the worker of `queue` (a daemon thread named after it)."""
    thread = threading.Thread(target=_work, args=(queue,), name=f"mlusim-{queue.label}", daemon=True)
    thread.start()
    return thread


def _work(queue) -> None:
    tokens = queue._tokens
    last_batch_end = 0.0
    while True:
        token = tokens.get()
        if queue.lost is not None:
            return
        if token is not None and (time.perf_counter() - last_batch_end < HOT_SECONDS or _op_first(queue)):
            follow_stream(queue)
        with queue._submit_lock:  # what is queued from now on puts a new token; what came before runs below
            queue._wake_outstanding = False
            batch = len(queue._pending)
        if batch:  # (nothing left: a host thread ran it; the run lock is not taken, so its next small op runs too)
            with queue._run_lock:  # this batch only: what the host queues meanwhile waits for its stream to pause
                while batch > 0 and execution.run_next(queue):
                    batch -= 1
        last_batch_end = time.perf_counter()
        if token is None:  # destroyed, and nothing is left
            return


def _op_first(queue) -> bool:
    """Whether the oldest pending command is an op: a host thread issuing ops (a framework's dispatch) goes on issuing
    the next one within a fraction of GATHER_SECONDS, so the first op after a quiet spell is followed like the rest of
    its stream. Started at once, it ran beside the dispatch and both waited for the GIL (docs/runtime.md)."""
    try:
        return queue._pending[0].kind is Kind.OP
    except IndexError:
        return False


def follow_stream(queue) -> None:
    """Sleep while the host keeps queueing commands: until GATHER_SECONDS pass without a new one, or
    STREAM_WAIT_SECONDS in all."""
    give_up = time.perf_counter() + STREAM_WAIT_SECONDS
    seen = queue.submitted
    while True:
        time.sleep(GATHER_SECONDS)
        now_submitted = queue.submitted
        if now_submitted == seen or time.perf_counter() >= give_up or queue.lost is not None:
            return
        seen = now_submitted
