"""torch.distributed benchmark: the "cncl" backend against the bare cncl call it makes, and DDP against gloo.

Two rank processes (spawned, process group "cpu:gloo,mlu:cncl"), everything timed in alternation in the same run
(median of rounds; the slowest rank's time):
- all_reduce of a float32 tensor (1 KiB and 64 MiB) through `torch.distributed.all_reduce` on mlu, against
  `cncl.allReduce` called directly on the same device memory with the same communicator and queue, both pipelined
  (calls back to back, one device synchronize at the end) and one call + synchronize at a time. Each sample
  follows a barrier and one untimed call of its own kind (the ranks leave a barrier apart; that call lines them up).
  Targets (issue 13): torch / bare <= 1.3 at 1 KiB, <= 1.05 at 64 MiB (pipelined). For scale, the same
  all_reduce on a cpu tensor through gloo (torch.distributed's own cost per call with a C++ backend) is printed.
- one DistributedDataParallel training step (forward, backward with the gradient all-reduce, SGD) of the same
  small MLP on mlu through cncl and on cpu through gloo: the ratio is printed (no target).

torch.distributed's own cost per call is measured too: the same `dist.all_reduce` on a group of torch's
FakeProcessGroup (a C++ backend that does nothing). No backend can make torch / bare lower than
(bare + that cost) / bare, which is printed beside the ratio. The ranks run as torchrun starts them
(OMP_NUM_THREADS=1).

Run as `python benchmarks/bench_dist.py` (or `mlusim bench dist`); `run(report=print)` returns the result rows.
Needs torch (the [torch] extra).
"""
from __future__ import annotations

import multiprocessing
import os
import socket
import statistics
import sys
import time

from mlutools.bench.common import row

KiB, MiB = 1024, 1024 * 1024
SIZES = (1 * KiB, 64 * MiB)
TARGETS = {1 * KiB: 1.3, 64 * MiB: 1.05}
ROUNDS = 7


def _calls(size: int) -> int:
    return max(3, min(100, (64 * MiB) // size))


def _time(function, rounds: int = ROUNDS) -> list[float]:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    return samples


def _all_reduce_rows(rank: int, sizes) -> list:
    import torch
    import torch.distributed as dist

    import cncl
    import cnrt

    from torch.testing._internal.distributed import fake_pg  # noqa: F401  (registers the backend "fake")

    backend = dist.group.WORLD._get_backend(torch.device("mlu")).impl
    nothing = dist.new_group(backend="fake")
    results = []
    for size in sizes:
        count = size // 4
        tensor = torch.zeros(count, device="mlu")  # zeros: repeated in-place sums stay finite
        dist.all_reduce(tensor)  # makes the communicator
        connection = backend.connect(0)
        calls = _calls(size)
        address = tensor.data_ptr()

        def through_torch(n=calls):
            for _ in range(n):
                dist.all_reduce(tensor)
            torch.mlu.synchronize()

        def bare(n=calls):
            for _ in range(n):
                cncl.allReduce(address, address, count, cncl.cnclFloat, cncl.cnclSum, connection.comm,
                               connection.queue)
            cnrt.syncDevice()

        def torch_each(n=max(calls // 4, 3)):
            for _ in range(n):
                dist.all_reduce(tensor)
                torch.mlu.synchronize()

        def bare_each(n=max(calls // 4, 3)):
            for _ in range(n):
                cncl.allReduce(address, address, count, cncl.cnclFloat, cncl.cnclSum, connection.comm,
                               connection.queue)
                cnrt.syncDevice()

        on_cpu = torch.zeros(count)

        def gloo(n=calls):  # the same call on a cpu tensor: torch.distributed's own cost with gloo
            for _ in range(n):
                dist.all_reduce(on_cpu)

        def torch_alone(n=calls):  # on a backend that does nothing: what torch.distributed itself costs
            for _ in range(n):
                dist.all_reduce(on_cpu, group=nothing)

        through_torch(2)
        bare(2)
        gloo(2)
        torch_alone(2)
        samples = {"torch": [], "bare": [], "torch_each": [], "bare_each": [], "gloo": [], "torch_alone": []}
        for _ in range(ROUNDS):
            for name, function, n in (("torch", through_torch, calls), ("bare", bare, calls),
                                      ("torch_each", torch_each, max(calls // 4, 3)),
                                      ("bare_each", bare_each, max(calls // 4, 3)), ("gloo", gloo, calls),
                                      ("torch_alone", torch_alone, calls)):
                dist.barrier()
                function(1)  # the ranks leave the barrier apart: one call (synchronized) lines them up again
                samples[name].append(_time(function, 1)[0] / n)
        results.append((size, {name: statistics.median(values) for name, values in samples.items()}))
    return results


def _ddp_step_times(rank: int, steps: int = 12) -> dict:
    import torch
    from torch.nn.parallel import DistributedDataParallel

    times = {}
    for device in ("cpu", "mlu"):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512),
                                    torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(device)
        ddp = DistributedDataParallel(model)
        optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
        x, y = torch.randn(64, 256).to(device), torch.randn(64, 10).to(device)

        def step():
            loss = ((ddp(x) - y) ** 2).mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if device == "mlu":
                torch.mlu.synchronize()

        for _ in range(3):
            step()
        samples = []
        for _ in range(steps):
            start = time.perf_counter()
            step()
            samples.append(time.perf_counter() - start)
        times[device] = statistics.median(samples)
    return times


def _rank_main(rank: int, world: int, port: int, sizes, connection) -> None:
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port),
                      MLUSIM_TORCH_FALLBACK="silent", MLUSIM_SHARED_GDRAM="1", MLUSIM_DEVICE_COUNT="1",
                      OMP_NUM_THREADS="1")  # as torchrun starts ranks
    import torch.distributed as dist
    import torch_mlu  # noqa: F401

    dist.init_process_group("cpu:gloo,mlu:cncl")
    try:
        connection.send((_all_reduce_rows(rank, sizes), _ddp_step_times(rank)))
    finally:
        dist.destroy_process_group()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def measure(sizes=SIZES, world: int = 2) -> tuple[list, dict]:
    """([(size, {timing: seconds per call})], {device: seconds per DDP step}), the slowest rank's figures."""
    context = multiprocessing.get_context("spawn")
    port = _free_port()
    pipes, processes = [], []
    for rank in range(world):
        mine, theirs = context.Pipe()
        process = context.Process(target=_rank_main, args=(rank, world, port, list(sizes), theirs))
        process.start()
        pipes.append(mine)
        processes.append(process)
    replies = [pipe.recv() for pipe in pipes]
    for process in processes:
        process.join()
    rows = []
    for entries in zip(*(reply[0] for reply in replies)):
        size = entries[0][0]
        rows.append((size, {name: max(entry[1][name] for entry in entries) for name in entries[0][1]}))
    ddp = {device: max(reply[1][device] for reply in replies) for device in replies[0][1]}
    return rows, ddp


def run(report=print, sizes=SIZES) -> list[dict]:
    try:
        import torch  # noqa: F401
    except ImportError:
        report("dist benchmark skipped: torch is not installed (pip install 'mlusim[torch]')")
        return []
    rows, ddp = measure(sizes)
    results = []
    report("all_reduce of float32 on mlu, 2 ranks: torch.distributed (backend cncl) vs cncl.allReduce called "
           "directly (same memory, communicator, queue); us per call, median of rounds")
    report("torch alone: torch.distributed's own cost per call (a group of FakeProcessGroup, which does nothing); "
           "lowest: the lowest ratio any backend could reach, (bare + torch alone) / bare")
    report(f"{'size':>10} {'torch piped':>12} {'bare piped':>11} {'ratio':>6} {'torch alone':>12} {'lowest':>7} "
           f"{'torch+sync':>11} {'bare+sync':>10} {'ratio':>6} {'gloo cpu':>9}")
    for size, timing in rows:
        piped = timing["torch"] / timing["bare"]
        lowest = (timing["bare"] + timing["torch_alone"]) / timing["bare"]
        each = timing["torch_each"] / timing["bare_each"]
        report(f"{size:>10} {timing['torch'] * 1e6:>12.1f} {timing['bare'] * 1e6:>11.1f} {piped:>6.2f} "
               f"{timing['torch_alone'] * 1e6:>12.1f} {lowest:>7.2f} "
               f"{timing['torch_each'] * 1e6:>11.1f} {timing['bare_each'] * 1e6:>10.1f} {each:>6.2f} "
               f"{timing['gloo'] * 1e6:>9.1f}")
        results.append(row(f"all_reduce {size} B: torch.distributed / bare cncl (pipelined)", timing["torch"] * 1e6,
                           timing["bare"] * 1e6, TARGETS.get(size), unit="us"))
        results.append(row(f"all_reduce {size} B: torch.distributed / bare cncl (call + sync)",
                           timing["torch_each"] * 1e6, timing["bare_each"] * 1e6, None, unit="us"))
    ratio = ddp["mlu"] / ddp["cpu"]
    report(f"DDP step (MLP 256-512-512-10, batch 64, 2 ranks): mlu/cncl {ddp['mlu'] * 1e3:.2f} ms, cpu/gloo "
           f"{ddp['cpu'] * 1e3:.2f} ms, ratio {ratio:.2f}")
    results.append(row("DDP step time: mlu/cncl / cpu/gloo", ddp["mlu"] * 1e3, ddp["cpu"] * 1e3, None))
    for result in results:
        if result["pass"] is not None:
            report(f"{result['name']}: {result['ratio']:.2f} (target <= {result['target']}) "
                   f"{'ok' if result['pass'] else 'BELOW TARGET'}")
    return results


def main(argv: list[str] | None = None) -> None:
    run()


if __name__ == "__main__":
    main(sys.argv[1:])
