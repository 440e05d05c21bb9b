"""Building a clique's fabric: privately for a single process, or in /dev/shm for ranks in several processes.

Multi-process: the process that holds rank 0 creates the segment named after the clique id; the others map it when
it appears. A clique across hosts has one segment per host (created by the process of the host's lowest rank) and an
MPI communicator between its processes (network.py). Every rank then enters itself in the rank table and waits for
all the others (of its host). As soon as all ranks are in (or the wait failed), every process unlinks the name: from
then on the segment lives only as long as some rank maps it, so a killed rank cannot leave it behind.

Settings (environment, read at each cnclInitComms):
  MLUSIM_CNCL_TIMEOUT     seconds a rank waits for a peer that makes no progress before failing (default 120)
  MLUSIM_CNCL_SLOT_BYTES  bytes of one message slot of a channel (default 1 MiB; two slots per ordered pair)
"""
from __future__ import annotations

import os
import time

import numpy as np

from . import network, shm
from .clique import cnclCliqueId
from .errors import CNCL_RET_ERR_ARGUMENTS, CNCL_RET_ERR_INIT, CnclError
from .fabric import ALIVE, FAILED, MAGIC, Fabric, PeerLost, segment_bytes

DEFAULT_TIMEOUT = 120.0
DEFAULT_SLOT_BYTES = 1 << 20


def _env_number(name: str, default, parse, minimum, maximum):
    text = os.environ.get(name)
    if text is None:
        return default
    try:
        value = parse(text)
    except ValueError:
        raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"environment variable {name}={text!r} is not a number") from None
    if not minimum <= value <= maximum:
        raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"environment variable {name}={text!r} is outside "
                                                f"[{minimum}, {maximum}]")
    return value


def timeout_setting() -> float:
    return _env_number("MLUSIM_CNCL_TIMEOUT", DEFAULT_TIMEOUT, float, 0.01, 1e6)


def slot_setting() -> int:
    slot = _env_number("MLUSIM_CNCL_SLOT_BYTES", DEFAULT_SLOT_BYTES, int, 4096, 1 << 30)
    return slot // 64 * 64


def private_fabric(nrank: int, devices: list[int]) -> Fabric:
    """The fabric of a clique whose ranks all live in this process."""
    slot = slot_setting()
    fabric = Fabric(shm.anonymous(segment_bytes(nrank, slot)), nrank, slot)
    fabric.initialise()
    for rank, device in enumerate(devices):
        fabric.claim(rank, device)
    return fabric


def _map_when_ready(name: str, deadline: float) -> Fabric:
    pause = 0.0005
    while True:
        memory = shm.attach(name)
        if memory is not None:
            magic, nrank, slot, _ = (int(v) for v in np.frombuffer(memory, np.int64, count=4))
            if magic == MAGIC:
                return Fabric(memory, nrank, slot, name)
            memory.close()
        if time.monotonic() >= deadline:
            raise CnclError(CNCL_RET_ERR_INIT, f"timed out waiting for the process of rank 0 to create clique "
                                               f"segment {name}")
        time.sleep(pause)
        pause = min(pause * 2, 0.02)


def join(clique_id: cnclCliqueId, nrank: int, ranks: list[int], devices: list[int], timeout: float) -> Fabric:
    """Map the clique's segment, enter `ranks`, and wait until every rank of the clique is in. In a process of an
    MPI job whose clique has ranks in other processes, the placement comes first (network.py): ranks of one host
    share that host's segment, and the fabric gets a Network for the ranks on other hosts."""
    if clique_id.mpi_root is None or len(ranks) == nrank or not network.in_mpi_job():
        return _join_host(clique_id, clique_id.segment_name, nrank, ranks, devices, range(nrank), 0 in ranks,
                          time.monotonic() + timeout)
    deadline = time.monotonic() + timeout
    key, hostname = network.host_identity()
    placement = network.exchange_placement(clique_id.hash, clique_id.token, clique_id.mpi_root, nrank, ranks, key,
                                           hostname, timeout)
    if placement.hosts == 1:
        return _join_host(clique_id, clique_id.segment_name, nrank, ranks, devices, range(nrank), 0 in ranks,
                          deadline)
    host = placement.host_of[ranks[0]]
    neighbours = placement.by_host[host]
    fabric = _join_host(clique_id, f"{clique_id.segment_name}-h{host}", nrank, ranks, devices, neighbours,
                        min(neighbours) in ranks, deadline)
    try:
        fabric.network = network.connect(clique_id.hash, placement, host)
    except BaseException:
        fabric.close()
        raise
    return fabric


def _join_host(clique_id: cnclCliqueId, name: str, nrank: int, ranks: list[int], devices: list[int],
               neighbours, creator: bool, deadline: float) -> Fabric:
    """Map (the creator: create) the segment `name`, enter `ranks` and wait for the ranks `neighbours` (this
    host's ranks of the clique)."""
    fabric = None
    claimed: list[int] = []
    try:
        if creator:
            try:
                memory = shm.create(name, segment_bytes(nrank, slot_setting()))
            except FileExistsError:
                raise CnclError(CNCL_RET_ERR_INIT, f"clique id {clique_id.token} is already in use (a clique id "
                                                   f"initializes one clique, once)") from None
            fabric = Fabric(memory, nrank, slot_setting(), name)
            fabric.initialise()
        else:
            fabric = _map_when_ready(name, deadline)
            if fabric.nrank != nrank:
                raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"argument 'nrank': this process says {nrank} ranks, the "
                                                        f"process of rank 0 says {fabric.nrank}")
        for rank, device in zip(ranks, devices):
            if fabric.state(rank) != 0:
                raise CnclError(CNCL_RET_ERR_INIT, f"rank {rank} of clique {clique_id.token} was already claimed "
                                                   f"by process {fabric.pid(rank)}")
            fabric.claim(rank, device)
            claimed.append(rank)
        me = ranks[0]
        for peer in neighbours:
            remaining = max(deadline - time.monotonic(), 0.01)
            fabric.wait_until(fabric.state_offset(peer), ALIVE, me, peer, remaining, "to join the clique")
        return fabric
    except BaseException as exc:
        if fabric is not None:
            for rank in claimed:
                fabric.set_state(rank, FAILED, f"rank {rank} could not join the clique: {exc}")
            fabric.close()
        if isinstance(exc, PeerLost):
            raise CnclError(CNCL_RET_ERR_INIT, exc.message) from None
        raise
    finally:
        shm.unlink(name)
