"""Point-to-point transfers (send, recv, alltoAllv): streams that progress independently.

The transfers of one grouped call are split into streams, one per (direction, peer), each keeping the order of the
calls. Streams run concurrently, so any pattern a group allows (everyone sends to everyone, then receives) completes
without deadlock however large the messages. Transfers to and from this rank itself are paired in order and copied.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .algorithms import windows
from .channel import Exchange, Signature
from .errors import CNCL_RET_ERR_ARGUMENTS, CnclError
from .fabric import AlreadyFailed

SEND, RECV = "send", "recv"


@dataclass
class Transfer:
    """One send or receive: `data` is the device memory as a typed numpy view."""

    direction: str
    peer: int
    data: np.ndarray
    signature: Signature


def _run_stream(ex: Exchange, transfers: list[Transfer]) -> None:
    for transfer in transfers:
        data = transfer.data
        per = max(ex.slot // data.itemsize, 1)
        for start, stop in windows(data.size, per):
            if transfer.direction == SEND:
                ex.send(transfer.peer, data[start:stop], transfer.signature)
            else:
                target = data[start:stop]
                np.copyto(target, ex.receive(transfer.peer, target.nbytes, transfer.signature).view(target.dtype))
                ex.release(transfer.peer)


def _copy_to_self(rank: int, transfers: list[Transfer]) -> None:
    sends = [t for t in transfers if t.direction == SEND]
    receives = [t for t in transfers if t.direction == RECV]
    if len(sends) != len(receives):
        raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"rank {rank} sends {len(sends)} message(s) to itself but receives "
                                                f"{len(receives)} from itself in the same group")
    for sent, received in zip(sends, receives):
        if sent.signature != received.signature:
            raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"mismatched calls: rank {rank} sends "
                                                    f"{sent.signature.describe()} to itself but receives "
                                                    f"{received.signature.describe()}")
        np.copyto(received.data, sent.data)


def run_transfers(ex: Exchange, transfers: list[Transfer], pool: Callable[[], ThreadPoolExecutor],
                  on_failure: Callable[[BaseException], None]) -> None:
    """Carry out `transfers`; `on_failure` is told at once when a stream fails, so that the streams still waiting
    stop waiting (the communicator is marked failed) instead of running into their timeout."""
    _copy_to_self(ex.rank, [t for t in transfers if t.peer == ex.rank])
    streams: dict[tuple[str, int], list[Transfer]] = {}
    for transfer in transfers:
        if transfer.peer != ex.rank:
            streams.setdefault((transfer.direction, transfer.peer), []).append(transfer)
    if len(streams) <= 1:
        for stream in streams.values():
            _run_stream(ex, stream)
        return

    def guarded(stream: list[Transfer]) -> None:
        try:
            _run_stream(ex, stream)
        except BaseException as exc:
            on_failure(exc)
            raise

    futures = [pool().submit(guarded, stream) for stream in streams.values()]
    errors = [future.exception() for future in futures]
    # Report the stream that failed first, not the ones that stopped because of it.
    causes = [error for error in errors if error is not None and not isinstance(error, AlreadyFailed)]
    consequences = [error for error in errors if error is not None]
    if causes or consequences:
        raise (causes or consequences)[0]
