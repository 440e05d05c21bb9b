"""CNCL across hosts (`mlusim bench cncl --hosts`, or the suite cncl-hosts): on simulated hosts of this machine
(mlutools.hosts, network namespaces; needs root and the cluster extra).

1. allReduce on 2 hosts x 2 ranks against MPI's own MPI_Allreduce on the same device buffers and hosts, timed in
   alternation (bench_cncl's MPI worker): time per call and busbw (algbw x 2(n-1)/n). Targets: busbw at 64 MiB
   >= 0.9 x MPI's, 8 B within 1.5 x MPI's time.
2. Weak scaling: a DDP training step of a small CNN (torch_mlu, "cncl") with 16 ranks over 4 hosts against 4 ranks
   on 1 host (the same batch per rank), time per step, the slowest rank's median. Every rank is a process of this
   2-core machine, so the step time measures the simulator's host cost, not a cluster's.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

from mlutools import hosts as simulated
from mlutools.bench.bench_cncl import KiB, MiB

SIZES = [8, 4 * KiB, 256 * KiB, 1 * MiB, 16 * MiB, 64 * MiB]
LAYOUT = (2, 2)
BUSBW_TARGET = 0.9    # cncl busbw / MPI busbw at 64 MiB
LATENCY_TARGET = 1.5  # cncl time / MPI time at 8 B
SCALING = ((4,), (4, 4, 4, 4))  # ranks per host: 4 ranks on 1 host, 16 over 4
DDP_STEPS = 6


def _mpiexec(machines, layout, argv, timeout: float, env: dict | None = None) -> str:
    done = machines.run(0, machines.mpiexec(layout, argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                        text=True, env={**os.environ, "MLUSIM_CNCL_TIMEOUT": "300", **(env or {})})
    output = done.communicate(timeout=timeout)[0]
    if done.returncode != 0:
        raise RuntimeError(f"mpiexec failed ({done.returncode}):\n{output[-3000:]}")
    return output


def all_reduce_against_mpi(machines, sizes=SIZES, layout=LAYOUT) -> list[dict]:
    """[{size, cncl_us, mpi_us, cncl_busbw, mpi_busbw}] for allReduce across the hosts."""
    path = os.path.join(machines.directory, "timings.jsonl")
    _mpiexec(machines, layout, [sys.executable, "-m", "mlutools.bench.bench_cncl", "--mpi-worker",
                                ",".join(map(str, sizes)), path], timeout=1800)
    world = sum(layout)
    rows = []
    with open(path) as results:
        for line in results:
            entry = json.loads(line)
            factor = 2 * (world - 1) / world
            rows.append({"size": entry["size"], "cncl_us": entry["cncl"] * 1e6, "mpi_us": entry["mpi"] * 1e6,
                         "cncl_busbw": entry["size"] / entry["cncl"] / 1e9 * factor,
                         "mpi_busbw": entry["size"] / entry["mpi"] / 1e9 * factor})
    return rows


def ddp_step_seconds(machines, layout) -> float:
    """The slowest rank's median time of a DDP step of the small CNN with `layout` ranks per host."""
    path = os.path.join(machines.directory, f"ddp-{'x'.join(map(str, layout))}.json")
    argv = [sys.executable, "-m", "mlutools.mpirank", "-m", "mlutools.bench.bench_cncl_hosts", "--ddp-worker", path]
    # (the hosts' network is their own: any port is free there)
    _mpiexec(machines, layout, argv, timeout=1800, env={"MASTER_ADDR": machines.names[0], "MASTER_PORT": "29513"})
    with open(path) as result:
        return json.load(result)["step_seconds"]


def _ddp_worker(path: str) -> None:
    """One rank of the weak-scaling job (under mpiexec, through mlutools.mpirank)."""
    os.environ.setdefault("MLUSIM_TORCH_FALLBACK", "silent")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    import torch.distributed as dist
    import torch_mlu  # noqa: F401
    from torch.nn.parallel import DistributedDataParallel

    dist.init_process_group("cncl")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                                torch.nn.Flatten(), torch.nn.Linear(32, 10)).to("mlu")
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x, y = torch.randn(8, 3, 16, 16).to("mlu"), torch.randint(0, 10, (8,)).to("mlu")
    samples = []
    for step in range(DDP_STEPS + 2):  # two warm-up steps
        dist.barrier()
        start = time.perf_counter()
        torch.nn.functional.cross_entropy(ddp(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()
        torch.mlu.synchronize()
        if step >= 2:
            samples.append(time.perf_counter() - start)
    slowest = torch.tensor([statistics.median(samples)], dtype=torch.float32).to("mlu")
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    if dist.get_rank() == 0:
        with open(path, "w") as result:
            json.dump({"step_seconds": float(slowest.cpu()[0])}, result)
    dist.destroy_process_group()


def run(report=print, sizes=SIZES, scaling=SCALING) -> list[dict]:
    why_not = simulated.mpi_unavailable()
    if why_not is not None:
        report(f"cncl across hosts skipped: {why_not}")
        return []
    results: list[dict] = []
    with simulated.SimulatedHosts(max(len(layout) for layout in (LAYOUT, *scaling))) as machines:
        rows = all_reduce_against_mpi(machines, sizes)
        report(f"allReduce across {len(LAYOUT)} simulated hosts x {LAYOUT[0]} ranks (float32 sum), cncl and "
               f"MPI_Allreduce on the same device buffers, timed in alternation (median of 5)")
        report(f"{'size':>12}{'cncl us':>12}{'MPI us':>12}{'cncl busbw':>12}{'MPI busbw':>11}{'MPI/cncl':>10}")
        for row in rows:
            report(f"{row['size']:>12}{row['cncl_us']:>12.1f}{row['mpi_us']:>12.1f}{row['cncl_busbw']:>12.3f}"
                   f"{row['mpi_busbw']:>11.3f}{row['mpi_us'] / row['cncl_us']:>10.2f}")
            results.append({"name": f"cncl allReduce across hosts {row['size']} B", **row})
        by_size = {row["size"]: row for row in rows}
        if 64 * MiB in by_size:
            row = by_size[64 * MiB]
            ratio = row["cncl_busbw"] / row["mpi_busbw"]
            results.append({"name": "allReduce busbw across hosts / MPI's (64 MiB, 2x2)", "ratio": ratio,
                            "target": BUSBW_TARGET, "pass": ratio >= BUSBW_TARGET})
        if 8 in by_size:
            ratio = by_size[8]["cncl_us"] / by_size[8]["mpi_us"]
            results.append({"name": "allReduce 8 B time across hosts / MPI's (2x2)", "ratio": ratio,
                            "target": LATENCY_TARGET, "pass": ratio <= LATENCY_TARGET})
        steps = {}
        for layout in scaling:
            steps[layout] = ddp_step_seconds(machines, layout)
            report(f"DDP step of a small CNN, {sum(layout)} ranks on {len(layout)} host(s): "
                   f"{steps[layout] * 1e3:.1f} ms (the slowest rank's median of {DDP_STEPS})")
            results.append({"name": f"DDP step {sum(layout)} ranks on {len(layout)} hosts",
                            "time_us": steps[layout] * 1e6})
        if len(scaling) == 2:
            small, large = scaling
            report(f"weak scaling: {sum(large)} ranks over {len(large)} hosts take {steps[large] / steps[small]:.2f} "
                   f"x the step time of {sum(small)} ranks on 1 host (all ranks share this machine's cores)")
    for check in results:
        if "pass" in check:
            relation = "<=" if "time" in check["name"] else ">="
            report(f"{check['name']}: {check['ratio']:.2f} (target {relation} {check['target']}) "
                   f"{'ok' if check['pass'] else 'BELOW TARGET'}")
    return results


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) == 2 and argv[0] == "--ddp-worker":
        _ddp_worker(argv[1])
    else:
        run()


if __name__ == "__main__":
    main()
