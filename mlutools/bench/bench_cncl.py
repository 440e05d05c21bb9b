"""CNCL benchmark, nccl-tests style: allReduce, allGather, reduceScatter and broadcast from 8 B to 256 MiB with 2 and
4 rank processes on this host (shared-memory transport), the host's memcpy bandwidth measured in the same run, and
the same allReduce through MPI (mpi4py, when installed: the cluster extra) on the same device buffers.

Columns follow nccl-tests: size (bytes), count (elements), type, redop, time (µs per call, the slowest rank's
average), algbw = size / time, busbw = algbw x the collective's bus factor (allReduce 2(n-1)/n, allGather and
reduceScatter (n-1)/n, broadcast 1), in GB/s. For allGather size is the received total, for reduceScatter the sent
total. The rank processes allocate their buffers after cnclInitComms, so the buffers are shareable device memory and
allReduce, allGather, reduceScatter and broadcast from 512 KiB up run zero-copy (docs/cncl.md). Every case is timed
in 5 rounds (the median counts); the target case (allReduce, 64 MiB, 2 ranks) in 7 rounds, with the host's memcpy
bandwidth measured in rank 0 between them (the reference of the ratio; the figure measured at the start of the run
is printed too): on a shared host, load from elsewhere then hits both alike.

Run as `python benchmarks/bench_cncl.py` (or `mlusim bench cncl`); `run(report=print)` returns the result rows.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

from mlutools.bench.common import median_time

KiB, MiB = 1024, 1024 * 1024
SIZES = [8, 64, 512, 4 * KiB, 32 * KiB, 256 * KiB, 1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB]
WORLDS = (2, 4)
COLLECTIVES = ("allReduce", "allGather", "reduceScatter", "broadcast")
BUS_FACTOR = {"allReduce": lambda n: 2 * (n - 1) / n, "allGather": lambda n: (n - 1) / n,
              "reduceScatter": lambda n: (n - 1) / n, "broadcast": lambda n: 1.0}
MEMCPY_TARGET = 0.5  # allReduce busbw at 64 MiB, 2 ranks, as a fraction of the host's memcpy bandwidth
MPI_FROM = 4 * KiB   # cncl should be no slower than MPI from this size up (issue 13)
LATENCY_TARGET_US = 20.0  # allReduce of 8 B, 2 ranks: µs per call (calls back to back, one queueSync)
TARGET_ROUNDS = 7    # rounds of the target case (median), each followed by a memcpy measurement in rank 0
ROUNDS = 5           # rounds of every other case (median): one stall of the shared host then moves no row


def iterations(size: int) -> int:
    return max(2, min(50, (32 * MiB) // max(size, 1)))


def host_memcpy_gbps(nbytes: int = 64 * MiB, repeats: int = 7) -> float:
    """numpy copy bandwidth of this host (bytes copied per second, GB/s), median of repeats."""
    source = np.ones(nbytes, np.uint8)
    target = np.zeros_like(source)
    return nbytes / median_time(lambda: np.copyto(target, source), repeats=repeats, warmup=1)[0] / 1e9


# ---- the rank side ----------------------------------------------------------------------------------------------

def _counts(collective: str, size: int, world: int) -> tuple[int, int, int]:
    """(count argument, send elements, recv elements) of one call moving `size` bytes of float32."""
    elements = max(size // 4, 1)
    if collective == "allGather":
        count = max(elements // world, 1)
        return count, count, count * world
    if collective == "reduceScatter":
        count = max(elements // world, 1)
        return count, count * world, count
    return elements, elements, elements


def _time_collective(cncl, cnrt, comm, queue, collective: str, size: int, world: int, rank: int = 0
                     ) -> tuple[float, int, list]:
    count, send_elements, recv_elements = _counts(collective, size, world)
    send, recv = cnrt.malloc(send_elements * 4), cnrt.malloc(recv_elements * 4)
    cnrt.memset(send, 0, send_elements * 4)
    cnrt.memset(recv, 0, recv_elements * 4)
    calls = {
        "allReduce": lambda: cncl.allReduce(send, recv, count, cncl.cnclFloat, cncl.cnclSum, comm, queue),
        "allGather": lambda: cncl.allGather(send, recv, count, cncl.cnclFloat, comm, queue),
        "reduceScatter": lambda: cncl.reduceScatter(send, recv, count, cncl.cnclFloat, cncl.cnclSum, comm, queue),
        "broadcast": lambda: cncl.broadcast(send, recv, count, cncl.cnclFloat, 0, comm, queue),
    }
    call = calls[collective]
    call()
    cnrt.queueSync(queue)
    repeats = iterations(size)
    # The target case is timed in rounds, and between rounds rank 0 measures the host's memcpy bandwidth while the
    # other ranks wait (asleep) for it in the next call: the load that other work puts on the host then hits both
    # figures alike.
    target = collective == "allReduce" and world == 2 and size == 64 * MiB
    rounds, memcpy = (TARGET_ROUNDS if target else ROUNDS), []
    samples = []
    for round_ in range(rounds):
        if round_ and target:  # line the ranks up again after rank 0's memcpy measurement (an untimed call)
            call()
            cnrt.queueSync(queue)
        start = time.perf_counter()
        for _ in range(repeats):
            call()
        cnrt.queueSync(queue)
        samples.append((time.perf_counter() - start) / repeats)
        if target and rank == 0:
            memcpy.append(host_memcpy_gbps(repeats=3))
    cnrt.free(send)
    cnrt.free(recv)
    return sorted(samples)[len(samples) // 2], count, memcpy


def _rank_main(rank: int, world: int, clique_hex: str, sizes: list, connection) -> None:
    import cncl
    import cnrt

    comm, = cncl.initComms(1, [0], [rank], world, cncl.cnclCliqueId.fromhex(clique_hex))
    queue = cnrt.queueCreate()
    results = []
    for collective in COLLECTIVES:
        for size in sizes:
            seconds, count, memcpy = _time_collective(cncl, cnrt, comm, queue, collective, size, world, rank)
            results.append((collective, size, count, seconds, memcpy))
    connection.send(results)
    cncl.destroyComms([comm], 1)


def measure_cncl(world: int, sizes: list) -> list[dict]:
    """One row per (collective, size): the slowest rank's time."""
    import cncl

    context = multiprocessing.get_context("spawn")
    clique = cncl.getCliqueId().hex()
    pipes, processes = [], []
    for rank in range(world):
        mine, theirs = context.Pipe()
        process = context.Process(target=_rank_main, args=(rank, world, clique, sizes, theirs))
        process.start()
        pipes.append(mine)
        processes.append(process)
    per_rank = [pipe.recv() for pipe in pipes]
    for process in processes:
        process.join()
    rows = []
    for entries in zip(*per_rank):
        collective, size, count, _, memcpy = entries[0]
        seconds = max(entry[3] for entry in entries)
        moved = count * 4 * (world if collective in ("allGather", "reduceScatter") else 1)
        algbw = moved / seconds / 1e9
        rows.append({"name": f"cncl {collective} {moved} B {world} ranks", "collective": collective,
                     "ranks": world, "size": moved, "count": count, "time_us": seconds * 1e6, "algbw": algbw,
                     "busbw": algbw * BUS_FACTOR[collective](world)})
        if memcpy:
            rows[-1]["memcpy_interleaved"] = sorted(memcpy)[len(memcpy) // 2]
    return rows


# ---- MPI ----------------------------------------------------------------------------------------------------------

def _mpi_worker(sizes: list, output: str, rounds: int = 5) -> None:
    """Run under mpirun: on the same device buffers, cnclAllReduce and MPI Allreduce (float32 sum) timed in
    alternation, so that load from elsewhere on the host hits both alike. Rank 0 writes one JSON line per size with
    the medians of the slowest rank to `output` (not stdout, where mpirun's own messages may land)."""
    from mpi4py import MPI

    import cncl
    import cnrt
    from mlusim.transfer import owning_device

    world = MPI.COMM_WORLD
    clique = world.bcast(bytes(cncl.getCliqueId()) if world.rank == 0 else None, root=0)
    comm, = cncl.initComms(1, [0], [world.rank], world.size, clique)
    queue = cnrt.queueCreate()
    lines = []
    for size in sizes:
        elements = max(size // 4, 1)
        send, recv = cnrt.malloc(elements * 4), cnrt.malloc(elements * 4)
        cnrt.memset(send, 0, elements * 4)
        cnrt.memset(recv, 0, elements * 4)
        send_view = owning_device(send, "send").memory.view(send, elements * 4).view(np.float32)
        recv_view = owning_device(recv, "recv").memory.view(recv, elements * 4).view(np.float32)
        repeats = iterations(size)

        def with_cncl():
            for _ in range(repeats):
                cncl.allReduce(send, recv, elements, cncl.cnclFloat, cncl.cnclSum, comm, queue)
            cnrt.queueSync(queue)

        def with_mpi():
            for _ in range(repeats):
                world.Allreduce(send_view, recv_view)

        samples = {"cncl": [], "mpi": []}
        for _ in range(rounds + 1):  # the first round warms up
            for name, function in (("cncl", with_cncl), ("mpi", with_mpi)):
                world.Barrier()
                start = time.perf_counter()
                function()
                samples[name].append(world.allreduce((time.perf_counter() - start) / repeats, op=MPI.MAX))
        if world.rank == 0:
            medians = {name: sorted(values[1:])[len(values[1:]) // 2] for name, values in samples.items()}
            lines.append(json.dumps({"size": elements * 4, **medians}))
        cnrt.free(send)
        cnrt.free(recv)
    cncl.destroyComms([comm], 1)
    if world.rank == 0:
        with open(output, "w") as results:
            results.write("\n".join(lines) + "\n")


def mpi_launch_command(world: int) -> list[str] | None:
    """`mpiexec -n world` for the MPI on the PATH (MPICH's hydra as the cluster extra installs it, or Open MPI, which
    needs to be told to oversubscribe and to run as root), or None without one."""
    launcher = shutil.which("mpiexec") or shutil.which("mpirun")
    if launcher is None:
        return None
    version = subprocess.run([launcher, "--version"], capture_output=True, text=True).stdout
    command = [launcher, "-n", str(world)]
    if "Open MPI" in version or "OpenRTE" in version:
        command[1:1] = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else [])
    return command


def measure_against_mpi(world: int, sizes: list) -> dict[int, dict] | None:
    """{size: {"cncl": s, "mpi": s}} for allReduce with `world` ranks started by mpirun, or None when mpi4py or
    mpirun is missing."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return None
    command = mpi_launch_command(world)
    if command is None:
        return None
    with tempfile.TemporaryDirectory() as folder:
        output = os.path.join(folder, "timings.jsonl")
        command += [sys.executable, "-m", "mlutools.bench.bench_cncl", "--mpi-worker", ",".join(map(str, sizes)), output]
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            raise RuntimeError(f"mpirun failed ({done.returncode}): {done.stderr[-2000:]}")
        with open(output) as results:
            timings = [json.loads(line) for line in results if line.strip()]
    return {entry["size"]: entry for entry in timings}


# ---- report -------------------------------------------------------------------------------------------------------

def _table(rows: list[dict]) -> list[str]:
    lines = [f"{'collective':<14}{'ranks':>6}{'size':>12}{'count':>11}{'type':>7}{'redop':>7}{'time(us)':>12}"
             f"{'algbw':>9}{'busbw':>9}"]
    for row in rows:
        redop = "sum" if row["collective"] in ("allReduce", "reduceScatter") else "none"
        lines.append(f"{row['collective']:<14}{row['ranks']:>6}{row['size']:>12}{row['count']:>11}{'float':>7}"
                     f"{redop:>7}{row['time_us']:>12.1f}{row['algbw']:>9.3f}{row['busbw']:>9.3f}")
    return lines


def run(report=print, sizes=None, worlds=WORLDS, with_mpi: bool = True) -> list[dict]:
    sizes = list(sizes or SIZES)
    memcpy = host_memcpy_gbps()
    report(f"host memcpy bandwidth (numpy copy of 64 MiB): {memcpy:.2f} GB/s")
    rows: list[dict] = []
    for world in worlds:
        measured = measure_cncl(world, sizes)
        for line in _table(measured):
            report(line)
        rows += measured
    checks: list[dict] = []
    tiny_row = next((r for r in rows if r["collective"] == "allReduce" and r["ranks"] == 2 and r["size"] == 8), None)
    if tiny_row is not None:
        report(f"allReduce 8 B, 2 ranks: {tiny_row['time_us']:.1f} us per call (calls back to back; target <= "
               f"{LATENCY_TARGET_US:g} us)")
        checks.append({"name": "allReduce 8 B, 2 ranks, us per call", "ours": tiny_row["time_us"], "reference": None,
                       "ratio": tiny_row["time_us"], "target": LATENCY_TARGET_US,
                       "pass": tiny_row["time_us"] <= LATENCY_TARGET_US})
    target_row = next((r for r in rows if r["collective"] == "allReduce" and r["ranks"] == 2
                       and r["size"] == 64 * MiB), None)
    if target_row is not None:
        interleaved = target_row.get("memcpy_interleaved", memcpy)
        report(f"allReduce 64 MiB, 2 ranks: busbw {target_row['busbw']:.2f} GB/s (median of {TARGET_ROUNDS} rounds); "
               f"host memcpy {interleaved:.2f} GB/s measured between those rounds (ratio "
               f"{target_row['busbw'] / interleaved:.2f}), {memcpy:.2f} GB/s at the start of the run (ratio "
               f"{target_row['busbw'] / memcpy:.2f})")
        ratio = target_row["busbw"] / interleaved
        checks.append({"name": "allReduce busbw / host memcpy bandwidth (64 MiB, 2 ranks)", "ours":
                       target_row["busbw"], "reference": interleaved, "ratio": ratio, "target": MEMCPY_TARGET,
                       "pass": ratio >= MEMCPY_TARGET})
    if with_mpi:
        paired = measure_against_mpi(2, sizes)
        if paired is None:
            report("MPI comparison skipped: mpi4py or mpirun is not installed")
        else:
            report("allReduce, 2 ranks started by mpirun, same device buffers, cncl and MPI timed in alternation "
                   "(median of 5)")
            report("cncl - MPI: what a cncl call costs beyond MPI's (alike from size to size: a fixed cost per call, "
                   "not the data path)")
            report(f"{'size':>12}{'cncl us':>12}{'MPI us':>12}{'MPI/cncl':>10}{'cncl - MPI':>12}")
            for size, entry in sorted(paired.items()):
                cncl_us, mpi_us = entry["cncl"] * 1e6, entry["mpi"] * 1e6
                ratio = mpi_us / cncl_us
                report(f"{size:>12}{cncl_us:>12.1f}{mpi_us:>12.1f}{ratio:>10.2f}{cncl_us - mpi_us:>12.1f}")
                counted = size >= MPI_FROM
                checks.append({"name": f"MPI time / cncl time, allReduce {size} B", "ours": cncl_us,
                               "reference": mpi_us, "ratio": ratio, "target": 1.0 if counted else None,
                               "pass": ratio >= 1.0 if counted else None})
    for check in checks:
        if check["pass"] is not None:
            relation = "<=" if check["name"].endswith("us per call") else ">="
            report(f"{check['name']}: {check['ratio']:.2f} (target {relation} {check['target']}) "
                   f"{'ok' if check['pass'] else 'BELOW TARGET'}")
    return rows + checks


def main(argv: list[str] | None = None) -> None:
    """Run the suite and print its table; `--mpi-worker SIZES OUTPUT` is one rank of the MPI comparison."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) > 1 and argv[0] == "--mpi-worker":
        _mpi_worker([int(s) for s in argv[1].split(",")], argv[2])
    else:
        run()


if __name__ == "__main__":
    main()
