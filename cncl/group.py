"""cnclGroupStart / cnclGroupEnd: calls made inside a group are queued at the outermost cnclGroupEnd.

Point-to-point calls (send, recv) of one communicator inside a group become one command whose transfers progress
concurrently (see p2p.py), so gather, scatter and all-to-all patterns built from them cannot deadlock. Other calls
are queued in call order; the point-to-point command of a communicator takes the place of its first send/recv.

A deferred item has `submit()` and `release()`; one that merges with the group's others of its communicator (a
point-to-point batch, p2p_calls.TransferBatch) also has `merges = True`, `comm`, `queue` and `absorb(other)`.
"""
from __future__ import annotations

import threading

from .errors import CNCL_RET_ERR_ARGUMENTS, CNCL_RET_ERR_UNSUPPORTED, CnclError, api

_state = threading.local()


def _pending() -> list:
    if not hasattr(_state, "items"):
        _state.items = []
        _state.depth = 0
    return _state.items


def active() -> bool:
    _pending()
    return _state.depth > 0


def defer(operation) -> None:
    """Keep an Operation (or a point-to-point Transfer batch entry) until the group ends."""
    _pending().append(operation)


@api("cnclGroupStart")
def groupStart() -> None:
    """cnclGroupStart(): start (or nest) a group of calls on this host thread."""
    _pending()
    _state.depth += 1


@api("cnclGroupEnd")
def groupEnd() -> None:
    """cnclGroupEnd(): end a group; the outermost end queues every call made in the group."""
    items = _pending()
    if _state.depth == 0:
        raise CnclError(CNCL_RET_ERR_ARGUMENTS, "cnclGroupEnd without a matching cnclGroupStart")
    _state.depth -= 1
    if _state.depth:
        return
    _state.items = []
    operations = _merge_point_to_point(items)
    for index, operation in enumerate(operations):
        try:
            operation.submit()
        except BaseException:
            for unsent in operations[index + 1:]:
                unsent.release()
            raise


def _merge_point_to_point(items: list) -> list:
    """One batch per communicator for its send/recv calls, at the position of the first of them."""
    merged: list = []
    batches: dict = {}
    try:
        for item in items:
            if not getattr(item, "merges", False):
                merged.append(item)
                continue
            batch = batches.get(id(item.comm))
            if batch is None:
                batches[id(item.comm)] = item
                merged.append(item)
            elif batch.queue is not item.queue:
                raise CnclError(CNCL_RET_ERR_UNSUPPORTED, f"send/recv calls of rank {item.comm.rank} in one group "
                                                          f"use different queues ({batch.queue.name}, "
                                                          f"{item.queue.name})")
            else:
                batch.absorb(item)
    except BaseException:
        for item in items:
            item.release()
        raise
    return merged
