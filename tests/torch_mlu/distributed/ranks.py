"""Rank processes for the torch.distributed tests: `world` spawned processes, each with torch_mlu imported and one
process group "cpu:gloo,mlu:cncl" (so a task can run a collective on mlu tensors through cncl and the same one on
cpu tensors through gloo, the reference), kept alive for many tasks. A task is a function of tasks.py called as
task(rank, world, *args) on every rank; every reply is awaited with a timeout, so a hung rank fails the test."""
from __future__ import annotations

import multiprocessing
import os
import socket
import traceback

from tests.cncl.ranks import collect_replies

#: what the rank processes run with: small cncl slots (so small tests cross message windows), short timeouts
ENV = {"MLUSIM_CNCL_SLOT_BYTES": "4096", "MLUSIM_CNCL_TIMEOUT": "30", "MLUSIM_DEVICE_COUNT": "1",
       "MLUSIM_MEMORY": "512MiB", "MLUSIM_TORCH_FALLBACK": "silent", "MASTER_ADDR": "127.0.0.1",
       "OMP_NUM_THREADS": "1"}
REPLY_TIMEOUT = 120.0
GROUP_TIMEOUT = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _serve(rank: int, world: int, env: dict, connection) -> None:
    os.environ.update(env, RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank))
    try:
        from datetime import timedelta

        import torch
        import torch.distributed as dist
        import torch_mlu  # noqa: F401

        from tests.torch_mlu.distributed import tasks

        torch.manual_seed(0)
        dist.init_process_group("cpu:gloo,mlu:cncl", timeout=timedelta(seconds=GROUP_TIMEOUT))
        connection.send(("ok", None))
    except BaseException:
        connection.send(("error", traceback.format_exc()))
        return
    while True:
        request = connection.recv()
        if request is None:
            break
        name, args = request
        try:
            connection.send(("ok", getattr(tasks, name)(rank, world, *args)))
        except BaseException:
            connection.send(("error", traceback.format_exc()))
    dist.destroy_process_group()


class Ranks:
    """`world` rank processes with an initialised process group."""

    def __init__(self, world: int, env: dict | None = None):
        self.world = world
        context = multiprocessing.get_context("spawn")
        settings = dict(ENV, MASTER_PORT=str(free_port()), **(env or {}))
        self.connections, self.processes = [], []
        for rank in range(world):
            mine, theirs = context.Pipe()
            process = context.Process(target=_serve, args=(rank, world, settings, theirs), daemon=True)
            process.start()
            self.connections.append(mine)
            self.processes.append(process)
        try:
            self._collect("init_process_group")
        except BaseException:
            self.close()
            raise

    def _collect(self, what: str) -> list:
        return collect_replies(self.connections, what, REPLY_TIMEOUT)

    def run(self, name: str, *args) -> list:
        """Run tasks.<name>(rank, world, *args) on every rank; their results in rank order."""
        for connection in self.connections:
            connection.send((name, args))
        return self._collect(name)

    def close(self) -> None:
        for connection in self.connections:
            try:
                connection.send(None)
            except (BrokenPipeError, OSError):
                pass
        for process in self.processes:
            process.join(timeout=30)
            if process.is_alive():
                process.kill()
                process.join()
