"""A turn of a queue (Queue.take_turn): the position a queued command would have had, taken by a thread that does
that command's work itself, on an idle queue, without queueing anything (a notifier reached at once, cncl's lean
small collectives). The turn ends in one of three ways, each exactly once:

    turn = queue.take_turn()          # None: the queue is not idle, or someone watches commands one by one
    if turn is not None:
        ...work...
        turn.done(model_end_us)       # it ran; the queue's modelled clock moves to model_end_us
        turn.failed(kind, name, exc)  # it failed: exc becomes the queue's sticky error, as queued work's would
        turn.hand_over(command)       # the rest is `command` (built by mlusim.submit.Submission, its blocks
                                      # pinned), which the queue runs at this position, before anything queued since

Work other threads submit while the turn is open runs after it, in order.
"""
from __future__ import annotations


class Turn:
    """One taken position of a queue."""

    __slots__ = ("queue", "position")

    def __init__(self, queue, position: int):
        self.queue = queue
        self.position = position

    def done(self, model_end_us: float) -> None:
        """The work ran in the calling thread and ended at `model_end_us` on the queue's modelled clock."""
        self.queue._end_turn(self.position, model_end_us)

    def failed(self, kind, name: str, exc: BaseException) -> None:
        """The work failed in the calling thread: `exc` becomes the queue's sticky error (reported at its next sync;
        a blocking queue's caller raises queue.take_fault() itself)."""
        self.queue._fail_turn(self.position, kind, name, exc)

    def hand_over(self, command) -> None:
        """The queue finishes the work by running `command` at this position (in blocking mode: now, raising its
        error here)."""
        self.queue._hand_over_turn(command)
