"""Tasks every rank runs (see ranks.py). Each returns a list of failure descriptions (empty when all is well) or
the values the test checks. Inputs are a function of (seed, rank), so every rank can compute the expected result
of the whole clique with numpy."""
from __future__ import annotations

import time
import zlib

import ml_dtypes
import numpy as np

import cncl
import cnrt

# The reference's own view of cnclDataType_t (independent of cncl's tables): storage type, accumulation type.
DTYPES = {
    cncl.cnclHalf: (np.float16, np.float32), cncl.cnclBfloat16: (ml_dtypes.bfloat16, np.float32),
    cncl.cnclFloat: (np.float32, np.float32), cncl.cnclInt8: (np.int8, np.int8),
    cncl.cnclInt16: (np.int16, np.int16), cncl.cnclInt32: (np.int32, np.int32),
    cncl.cnclInt64: (np.int64, np.int64), cncl.cnclUint8: (np.uint8, np.uint8),
    cncl.cnclUint16: (np.uint16, np.uint16), cncl.cnclUint32: (np.uint32, np.uint32),
    cncl.cnclUint64: (np.uint64, np.uint64),
}
OPS = {cncl.cnclSum: np.add, cncl.cnclProd: np.multiply, cncl.cnclMax: np.maximum, cncl.cnclMin: np.minimum}


def make_input(seed: int, rank: int, count: int, code: int) -> np.ndarray:
    """Deterministic data of one rank: normal floats, or integers over the type's whole range (so sums and
    products wrap)."""
    storage = np.dtype(DTYPES[code][0])
    rng = np.random.default_rng(seed * 7919 + rank)
    if storage.kind in "iu":
        info = np.iinfo(storage)
        return rng.integers(info.min, info.max, size=count, dtype=storage, endpoint=True)
    return (rng.standard_normal(count) * 2).astype(storage)


def reference(inputs: list, op: int, code: int, groups=None) -> np.ndarray:
    """Combine in rank order in the accumulation type, round once. With `groups` (lists of ranks: the hosts of an
    allReduce in stages), each group in rank order first, rounded, then the groups' results in group order."""
    if groups is not None:
        return reference([reference([inputs[rank] for rank in group], op, code) for group in groups], op, code)
    storage, wide = DTYPES[code]
    total = inputs[0].astype(wide)
    for item in inputs[1:]:
        total = OPS[op](total, item.astype(wide))
    return total.astype(storage)


def _seed(*parts) -> int:
    """The same seed in every rank process (str hashes differ between processes)."""
    return zlib.crc32(repr(parts).encode()) & 0xFFFF


def _compare(failures: list, label: str, got: np.ndarray, want: np.ndarray) -> None:
    if got.shape != want.shape or not np.array_equal(got.view(np.uint8), want.view(np.uint8)):
        where = np.flatnonzero(got.view(np.uint8) != want.view(np.uint8))[:3] if got.shape == want.shape else []
        failures.append(f"{label}: mismatch (first differing bytes {list(where)}; got {got[:4]}, want {want[:4]})")


def _all_inputs(ctx, seed: int, count: int, code: int) -> list:
    return [make_input(seed, rank, count, code) for rank in range(ctx.world)]


def reductions(ctx, kind: str, counts: list, in_place: bool, codes=None, ops=None, direct_limit=None) -> list:
    """allReduce / reduce / reduceScatter over every dtype and op; returns the failures."""
    from cncl import algorithms

    saved = algorithms.DIRECT_ALL_REDUCE_BYTES
    if direct_limit is not None:
        algorithms.DIRECT_ALL_REDUCE_BYTES = direct_limit
    try:
        return _reductions(ctx, kind, counts, in_place, codes, ops)
    finally:
        algorithms.DIRECT_ALL_REDUCE_BYTES = saved


def _reductions(ctx, kind, counts, in_place, codes, ops) -> list:
    failures: list = []
    for code in codes or DTYPES:
        storage = np.dtype(DTYPES[code][0])
        for op in ops or OPS:
            for count in counts:
                seed = _seed(kind, code, op, count)
                label = f"{kind} rank {ctx.rank} dtype {code:#x} op {op} count {count} in_place {in_place}"
                if kind == "reduceScatter":
                    data = [make_input(seed, r, count * ctx.world, code) for r in range(ctx.world)]
                    want = reference(data, op, code)[ctx.rank * count:(ctx.rank + 1) * count]
                    send = ctx.upload(data[ctx.rank])
                    recv = send + ctx.rank * count * storage.itemsize if in_place else ctx.upload(np.zeros(count, storage))
                    cncl.reduceScatter(send, recv, count, code, op, ctx.comm, ctx.queue)
                    ctx.sync()
                    _compare(failures, label, ctx.download(recv, count, storage), want)
                    cnrt.free(send)
                    if not in_place:
                        cnrt.free(recv)
                    continue
                data = _all_inputs(ctx, seed, count, code)
                want = reference(data, op, code, _stages(ctx, count * storage.itemsize, count)
                                 if kind == "allReduce" else None)
                send = ctx.upload(data[ctx.rank])
                recv = send if in_place else ctx.upload(np.zeros(count, storage))
                root = count % ctx.world
                if kind == "allReduce":
                    cncl.allReduce(send, recv, count, code, op, ctx.comm, ctx.queue)
                else:
                    cncl.reduce(send, recv if ctx.rank == root else 0, count, code, op, root, ctx.comm, ctx.queue)
                ctx.sync()
                if kind == "allReduce" or ctx.rank == root:
                    _compare(failures, label, ctx.download(recv, count, storage), want)
                if kind == "reduce" and ctx.rank != root and not in_place:
                    _compare(failures, label + " (non-root recv untouched)", ctx.download(recv, count, storage),
                             np.zeros(count, storage))
                cnrt.free(send)
                if not in_place:
                    cnrt.free(recv)
    return failures


def _stages(ctx, nbytes: int, count: int):
    """The hosts' ranks when an allReduce of `nbytes` combines each host's ranks first, then the hosts: in two
    rounds (cncl/netpath.py: up to its MAX_BYTES, one rank per process) or in stages (cncl/hierarchy.py: from
    MIN_BYTES), on several hosts with as many ranks each; else None."""
    from cncl import hierarchy, netpath

    network = ctx.comm.fabric.network
    if netpath.eligible(network, nbytes):
        return network.by_host
    if network is None or nbytes < hierarchy.MIN_BYTES or count < ctx.world:
        return None
    groups = network.by_host
    return groups if len(groups) > 1 and len({len(group) for group in groups}) == 1 else None


def movements(ctx, kind: str, counts: list, in_place: bool, codes=None) -> list:
    """broadcast / bcast / allGather / alltoAll over every dtype; returns the failures."""
    failures: list = []
    world, rank = ctx.world, ctx.rank
    for code in codes or DTYPES:
        storage = np.dtype(DTYPES[code][0])
        size = storage.itemsize
        for count in counts:
            seed = _seed(kind, code, count)
            label = f"{kind} rank {rank} dtype {code:#x} count {count} in_place {in_place}"
            if kind in ("broadcast", "bcast"):
                root = (count + 1) % world
                data = make_input(seed, root, count, code)
                mine = data if rank == root else np.zeros(count, storage)
                send = ctx.upload(mine)
                recv = send if in_place or kind == "bcast" else ctx.upload(np.zeros(count, storage))
                if kind == "bcast":
                    cncl.bcast(send, count, code, root, ctx.comm, ctx.queue)
                else:
                    cncl.broadcast(send, recv, count, code, root, ctx.comm, ctx.queue)
                ctx.sync()
                _compare(failures, label, ctx.download(recv, count, storage), data)
                pointers = {send, recv}
            elif kind == "allGather":
                data = _all_inputs(ctx, seed, count, code)
                recv = ctx.upload(np.zeros(count * world, storage))
                if in_place:
                    send = recv + rank * count * size
                    if count:
                        cnrt.memcpy(send, data[rank], count * size, cnrt.cnrtMemcpyHostToDev)
                else:
                    send = ctx.upload(data[rank])
                cncl.allGather(send, recv, count, code, ctx.comm, ctx.queue)
                ctx.sync()
                _compare(failures, label, ctx.download(recv, count * world, storage), np.concatenate(data))
                pointers = {recv} if in_place else {send, recv}
            else:  # alltoAll
                data = [make_input(seed, r, count * world, code) for r in range(world)]
                send = ctx.upload(data[rank])
                recv = send if in_place else ctx.upload(np.zeros(count * world, storage))
                cncl.alltoAll(send, recv, count, code, ctx.comm, ctx.queue)
                ctx.sync()
                want = np.concatenate([data[r][rank * count:(rank + 1) * count] for r in range(world)])
                _compare(failures, label, ctx.download(recv, count * world, storage), want)
                pointers = {send, recv}
            for pointer in pointers:
                cnrt.free(pointer)
    return failures


def _pair_count(src: int, dst: int, base: int) -> int:
    return (base + 3 * src + 5 * dst) % 7 * base // 3


def alltoallv(ctx, base: int, codes=None) -> list:
    """cnclAlltoAllv with a different count (and dtype per run) for every pair."""
    failures: list = []
    world, rank = ctx.world, ctx.rank
    for code in codes or DTYPES:
        storage = np.dtype(DTYPES[code][0])
        sends, recvs = [], []
        for peer in range(world):
            sends.append(ctx.upload(make_input(rank * 100 + peer, 0, _pair_count(rank, peer, base), code)))
            recvs.append(ctx.upload(np.zeros(_pair_count(peer, rank, base), storage)))
        cncl.alltoAllv(sends, [_pair_count(rank, p, base) for p in range(world)], [code] * world,
                       recvs, [_pair_count(p, rank, base) for p in range(world)], [code] * world,
                       ctx.comm, ctx.queue)
        ctx.sync()
        for peer in range(world):
            count = _pair_count(peer, rank, base)
            _compare(failures, f"alltoAllv rank {rank} from {peer} dtype {code:#x}",
                     ctx.download(recvs[peer], count, storage), make_input(peer * 100 + rank, 0, count, code))
        for pointer in sends + recvs:
            cnrt.free(pointer)
    return failures


def grouped_patterns(ctx, count: int) -> list:
    """Gather, scatter, ring and all-to-all built from grouped send/recv (as torch_mlu does)."""
    failures: list = []
    world, rank = ctx.world, ctx.rank
    code, storage = cncl.cnclFloat, np.dtype(np.float32)
    mine = make_input(11, rank, count, code)
    send = ctx.upload(mine)
    slots = [ctx.upload(np.zeros(count, storage)) for _ in range(world)]
    root = world - 1
    # gather to root
    cncl.groupStart()
    if rank == root:
        for peer in range(world):
            cncl.recv(slots[peer], count, code, peer, ctx.comm, ctx.queue)
    cncl.send(send, count, code, root, ctx.comm, ctx.queue)
    cncl.groupEnd()
    ctx.sync()
    if rank == root:
        for peer in range(world):
            _compare(failures, f"gather from {peer}", ctx.download(slots[peer], count, storage),
                     make_input(11, peer, count, code))
    # all-to-all: everyone sends to everyone (including itself), receives from everyone
    cncl.groupStart()
    for peer in range(world):
        cncl.send(send, count, code, peer, ctx.comm, ctx.queue)
        cncl.recv(slots[peer], count, code, peer, ctx.comm, ctx.queue)
    cncl.groupEnd()
    ctx.sync()
    for peer in range(world):
        _compare(failures, f"all-to-all from {peer}", ctx.download(slots[peer], count, storage),
                 make_input(11, peer, count, code))
    # ring without a group: even ranks send first, odd ranks receive first
    right, left = (rank + 1) % world, (rank - 1) % world
    order = [("send", right), ("recv", left)] if rank % 2 == 0 else [("recv", left), ("send", right)]
    for direction, peer in order:
        if direction == "send":
            cncl.send(send, count, code, peer, ctx.comm, ctx.queue)
        else:
            cncl.recv(slots[0], count, code, peer, ctx.comm, ctx.queue)
    ctx.sync()
    _compare(failures, "ring", ctx.download(slots[0], count, storage), make_input(11, left, count, code))
    for pointer in [send] + slots:
        cnrt.free(pointer)
    return failures


def soak(ctx, rounds: int, queues: int, count: int) -> list:
    """Many back-to-back collectives spread over several queues of one communicator, checked at the end."""
    failures: list = []
    extra = [cnrt.queueCreate() for _ in range(queues - 1)]
    all_queues = [ctx.queue] + extra
    code = cncl.cnclInt32
    buffers = [ctx.upload(np.full(count, rank_value, np.int32)) for rank_value in range(rounds)]
    for index, buffer in enumerate(buffers):
        queue = all_queues[index % queues]
        cncl.allReduce(buffer, buffer, count, code, cncl.cnclSum, ctx.comm, queue)
        cncl.allReduce(buffer, buffer, count, code, cncl.cnclMax, ctx.comm, queue)
    for queue in all_queues:
        cnrt.queueSync(queue)
    for index, buffer in enumerate(buffers):
        _compare(failures, f"soak round {index}", ctx.download(buffer, count, np.int32),
                 np.full(count, index * ctx.world, np.int32))
        cnrt.free(buffer)
    for queue in extra:
        cnrt.queueDestroy(queue)
    return failures


def modelled_duration(ctx, count: int) -> tuple:
    """(notifierDuration of one allReduce in µs, notifierElapsedTime in ms)."""
    start, end = cnrt.notifierCreate(), cnrt.notifierCreate()
    buffer = ctx.upload(np.ones(count, np.float32))
    cnrt.placeNotifier(start, ctx.queue)
    cncl.allReduce(buffer, buffer, count, cncl.cnclFloat, cncl.cnclSum, ctx.comm, ctx.queue)
    cnrt.placeNotifier(end, ctx.queue)
    ctx.sync()
    result = (cnrt.notifierDuration(start, end), cnrt.notifierElapsedTime(start, end))
    cnrt.free(buffer)
    return result


# ---- faults ---------------------------------------------------------------------------------------------------

def all_reduce_once(ctx, count: int) -> list:
    """One allReduce; returns the failures (an error is a failure)."""
    failures: list = []
    buffer = ctx.upload(np.full(count, ctx.rank + 1, np.float32))
    cncl.allReduce(buffer, buffer, count, cncl.cnclFloat, cncl.cnclSum, ctx.comm, ctx.queue)
    ctx.sync()
    _compare(failures, "allReduce", ctx.download(buffer, count, np.float32),
             np.full(count, ctx.world * (ctx.world + 1) / 2, np.float32))
    cnrt.free(buffer)
    return failures


def all_reduce_expecting_failure(ctx, count: int, data_type: int = cncl.cnclFloat) -> tuple:
    """One allReduce that is expected to fail: (seconds until it failed, error text, async error code)."""
    storage = np.dtype(DTYPES[data_type][0])
    buffer = ctx.upload(np.ones(count, storage))
    began = time.monotonic()
    cncl.allReduce(buffer, buffer, count, data_type, cncl.cnclSum, ctx.comm, ctx.queue)
    try:
        ctx.sync()
        text = "no error"
    except cnrt.CnrtError as error:
        text = str(error)
    return time.monotonic() - began, text, cncl.getCommAsyncError(ctx.comm)


def exit_now(ctx, code: int) -> None:
    import os

    os._exit(code)


def pid(ctx) -> int:
    import os

    return os.getpid()


def exit_like_the_interpreter(ctx) -> None:
    """Leave as a normal interpreter exit would: exit handlers (cncl's tells the peers), then exit."""
    import atexit
    import os

    atexit._run_exitfuncs()
    os._exit(0)


def idle(ctx, seconds: float) -> None:
    time.sleep(seconds)


def all_reduce_cpu_time(ctx, count: int, delay: float) -> tuple:
    """Wait `delay` seconds, then one allReduce: (wall seconds, CPU seconds of this process) of the call + sync."""
    import resource

    time.sleep(delay)
    buffer = ctx.upload(np.ones(count, np.float32))
    before, began = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
    cncl.allReduce(buffer, buffer, count, cncl.cnclFloat, cncl.cnclSum, ctx.comm, ctx.queue)
    ctx.sync()
    after = resource.getrusage(resource.RUSAGE_SELF)
    cnrt.free(buffer)
    return time.monotonic() - began, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def zero_copy_stats(ctx, reset: bool = False) -> dict:
    """How many allReduce calls of this rank went zero-copy / took the copy path (optionally reset)."""
    from cncl import zerocopy

    stats = dict(zerocopy.STATS)
    if reset:
        zerocopy.STATS.update(zero_copy=0, copy=0)
    return stats


def reallocated_buffers(ctx, count: int, rounds: int) -> list:
    """allReduce in place on a buffer that is freed and allocated again (same size, so most likely the same
    arena range, and a different size) between calls; returns the failures."""
    failures: list = []
    for step in range(rounds):
        size = count + (step % 2) * 4099
        data = [np.full(size, r + step, np.float32) + np.arange(size, dtype=np.float32) for r in range(ctx.world)]
        buffer = ctx.upload(data[ctx.rank])
        cncl.allReduce(buffer, buffer, size, cncl.cnclFloat, cncl.cnclSum, ctx.comm, ctx.queue)
        ctx.sync()
        _compare(failures, f"round {step}", ctx.download(buffer, size, np.float32),
                 reference(data, cncl.cnclSum, cncl.cnclFloat))
        cnrt.free(buffer)
    return failures


def unmappable_peers(ctx) -> None:
    """From now on this rank cannot map its peers' device memory (as if /proc/<pid>/fd were not accessible)."""
    from mlusim.host import sharedmem

    def refuse(identity):
        raise PermissionError("mapping refused by the test")

    sharedmem.map_peer = refuse
    ctx.comm.peer_memory.clear()


def all_reduce_loop_until_failure(ctx, count: int, seconds: float) -> tuple:
    """allReduce calls until one fails (a peer is killed meanwhile): (calls, error text, async error)."""
    buffer = ctx.upload(np.ones(count, np.float32))
    recv = ctx.upload(np.zeros(count, np.float32))
    calls, text = 0, "no error"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        cncl.allReduce(buffer, recv, count, cncl.cnclFloat, cncl.cnclSum, ctx.comm, ctx.queue)
        try:
            ctx.sync()
        except cnrt.CnrtError as error:
            text = str(error)
            break
        calls += 1
    return calls, text, cncl.getCommAsyncError(ctx.comm)


def lean_rounds(ctx, count: int, rounds: int, late_rank: int, delay: float) -> tuple:
    """`rounds` in-place int32 sums of the same buffer back to back (the lean path from the second call on), rank
    `late_rank` sleeping `delay` seconds before the middle call; (failures, how the calls went: fastpath.STATS)."""
    from cncl import fastpath

    failures: list = []
    buffer = ctx.upload(np.ones(count, np.int32))
    before = dict(fastpath.STATS)
    for index in range(rounds):
        if index == rounds // 2 and ctx.rank == late_rank:
            time.sleep(delay)
        cncl.allReduce(buffer, buffer, count, cncl.cnclInt32, cncl.cnclSum, ctx.comm, ctx.queue)
    ctx.sync()
    _compare(failures, "lean allReduce rounds", ctx.download(buffer, count, np.int32),
             np.full(count, ctx.world ** rounds, np.int32))
    cnrt.free(buffer)
    return failures, {key: fastpath.STATS[key] - before[key] for key in before}


def placement(ctx) -> tuple:
    """(host name, the ranks this rank reaches over MPI) as cncl set the clique up."""
    import socket

    network = ctx.comm.fabric.network
    return socket.gethostname(), sorted(network.remote) if network is not None else []


def abort_after(ctx, seconds: float) -> None:
    """cnclAbortComm after `seconds`."""
    time.sleep(seconds)
    cncl.abortComm(ctx.comm)
