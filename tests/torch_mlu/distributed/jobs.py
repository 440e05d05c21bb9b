"""Main functions of standalone rank processes (the fault tests: a rank that dies or never comes) and the script
the launch tests start with `mlusim run` and `torchrun`."""
from __future__ import annotations

import os
import signal
import sys
import time
import traceback
from datetime import timedelta


def _init(rank: int, world: int, env: dict, timeout: float):
    os.environ.update(env, RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank))
    import torch
    import torch.distributed as dist
    import torch_mlu  # noqa: F401

    dist.init_process_group("cncl", timeout=timedelta(seconds=timeout))
    return torch, dist


def dead_rank(rank: int, world: int, env: dict, connection) -> None:
    """Train DDP; rank 1 is killed (SIGKILL) in the middle of a step. Rank 0 reports the error it got, how long
    after the kill, and whether destroy_process_group returned."""
    torch, dist = _init(rank, world, env, timeout=20.0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(16, 16).to("mlu"))
    x = torch.ones(4, 16, device="mlu")
    model(x).sum().backward()
    dist.barrier()
    if rank == 1:
        model(x)
        os.kill(os.getpid(), signal.SIGKILL)  # dies between forward and backward
    time.sleep(0.3)
    killed = time.monotonic()
    error = None
    try:
        for _ in range(5):
            model(x).sum().backward()
        dist.barrier()
    except Exception as exc:  # noqa: BLE001  (the test checks the type and message)
        error = (type(exc).__name__, str(exc))
    elapsed = time.monotonic() - killed
    dist.destroy_process_group()
    connection.send((error, elapsed))


def missing_rank(rank: int, world: int, env: dict, connection) -> None:
    """Rank 1 joins the process group but never comes to the first collective; rank 0's all_reduce must fail
    within the group's timeout (3 s)."""
    torch, dist = _init(rank, world, env, timeout=3.0)
    if rank == 1:
        time.sleep(8)
        connection.send(None)
        return
    started = time.monotonic()
    error = None
    try:
        dist.all_reduce(torch.ones(4, device="mlu"))
        torch.mlu.synchronize()
    except Exception as exc:  # noqa: BLE001
        error = (type(exc).__name__, str(exc))
    connection.send((error, time.monotonic() - started))
    dist.destroy_process_group()


def train_script() -> int:
    """What the launch tests run under `mlusim run -n 2` and `torchrun --nproc-per-node 2`: unchanged
    torch_mlu-style code (init_process_group("cncl"), all_reduce, DDP)."""
    import torch
    import torch.distributed as dist
    import torch_mlu  # noqa: F401

    backend = os.environ.get("TEST_BACKEND", "cncl")
    dist.init_process_group(backend or None)  # "": no backend named, mlu (the accelerator) picks cncl
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.mlu.set_device(int(os.environ.get("LOCAL_RANK", 0)) % torch.mlu.device_count())
    total = torch.full((3,), float(rank + 1), device="mlu")
    dist.all_reduce(total)
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 2).to("mlu"))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(rank)
    for _ in range(3):
        ((model(torch.randn(8, 4).to("mlu")) - 1) ** 2).mean().backward()
        optimizer.step()
        optimizer.zero_grad()
    weights = [torch.empty(2, 4, device="mlu") for _ in range(world)]
    dist.all_gather(weights, model.module.weight.detach())
    same = all(torch.equal(weights[0].cpu(), w.cpu()) for w in weights)
    print(f"rank {rank} of {world}: all_reduce {total.cpu().tolist()} ddp weights equal {same} "
          f"backend {type(dist.group.WORLD._get_backend(torch.device('mlu'))).__name__}", flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(train_script())
    except Exception:
        traceback.print_exc()
        sys.exit(1)
