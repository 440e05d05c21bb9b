"""`mlusim run` (a front end, part of the CLI): start N ranks of a script on this host, the way torchrun does.

    mlusim run -n 4 train.py --epochs 1
    python -m mlutools.run -n 4 train.py --epochs 1

Each rank is `python script args...` (or `python -m module args...` with -m) with, in its environment:
  RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE   its place in the job
  CNCL_CLIQUE_ID        a fresh clique id (hex) shared by all ranks: cncl.cnclCliqueId.from_env()
  MLUSIM_CNCL_SESSION   the job's session, which names its shared-memory segments
  MLUSIM_DEVICE_COUNT   simulated devices per rank, with --devices-per-rank
  MLUSIM_SHARED_GDRAM=1 device memory the peers can map from the start (zero-copy collectives; unless already set)
  MASTER_ADDR, MASTER_PORT  where torch.distributed's env:// rendezvous finds rank 0's store (127.0.0.1 and a free
                        port, as torchrun; unless already set), so `init_process_group("cncl")` works unchanged
Output lines are forwarded with a "[rank k] " prefix. When a rank fails, the others are stopped (SIGTERM, then
SIGKILL after --grace seconds) and the launcher exits with the failed rank's status. Shared-memory segments that
ranks killed in the middle of setting up a clique could not remove are removed at the end.

With --hosts the ranks are spread over hosts by MPI's launcher (`mpiexec`, MPICH's hydra as the cluster extra
installs it; --launcher-exec names its ssh stand-in, as for the simulated hosts of mlutools.hosts):

    mlusim run -n 4 --hosts node0:2,node1:2 train.py

each rank gets the same environment (LOCAL_RANK from its host, MASTER_ADDR the first host, a clique id whose root is
rank 0's process), through mlutools.mpirank; when a rank fails, mpiexec ends the job, and the launcher exits with
its status.
"""
from __future__ import annotations

import argparse
import os
import queue
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from importlib.metadata import entry_points
from typing import IO, Optional

from mlutools import mpirank

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mlusim run", description="Run N ranks of a script on this host.")
    parser.add_argument("-n", "--nproc", type=int, required=True, help="number of ranks (processes)")
    parser.add_argument("--devices-per-rank", type=int, default=None,
                        help="simulated devices in each rank's process (sets MLUSIM_DEVICE_COUNT)")
    parser.add_argument("--grace", type=float, default=5.0,
                        help="seconds between SIGTERM and SIGKILL when stopping ranks (default 5)")
    parser.add_argument("--no-prefix", action="store_true", help="forward output without the rank prefix")
    parser.add_argument("--hosts", help="spread the ranks over hosts, MPI's way: host:count,host:count,... "
                                        "(started by mpiexec; cliques across hosts talk over MPI)")
    parser.add_argument("--launcher-exec", help="with --hosts: the program mpiexec runs instead of ssh to reach a host")
    parser.add_argument("-m", dest="module", action="store_true", help="run the target as a module (python -m)")
    parser.add_argument("target", help="script (or module with -m)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    return parser


def parse_hosts(text: str) -> list[tuple[str, int]]:
    """`host:count,host:count,...` (a host without a count takes one rank) as [(host, count)]."""
    hosts = []
    for item in text.split(","):
        name, _, count = item.strip().partition(":")
        if not name or (count and not count.isdigit()) or (count and int(count) < 1):
            raise SystemExit(f"mlusim run: --hosts {text!r}: expected host:count,host:count,...")
        hosts.append((name, int(count) if count else 1))
    return hosts


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now (for torch.distributed's store)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def rank_environment(rank: int, world: int, services_environment: dict, devices: Optional[int],
                     master_port: Optional[int] = None) -> dict:
    """The environment of one rank."""
    env = job_environment(services_environment, devices, "127.0.0.1", master_port)
    env.update(RANK=str(rank), WORLD_SIZE=str(world), LOCAL_RANK=str(rank), LOCAL_WORLD_SIZE=str(world),
               PYTHONUNBUFFERED="1")
    return env


def job_environment(services_environment: dict, devices: Optional[int], master_addr: str,
                    master_port: Optional[int]) -> dict:
    """What every rank of a job gets, wherever it runs: the services' variables, the devices, the store's address."""
    env = dict(os.environ, **services_environment)
    env.setdefault("MLUSIM_SHARED_GDRAM", "1")  # buffers allocated before cnclInitComms can go zero-copy too
    env.setdefault("MASTER_ADDR", master_addr)
    if master_port is not None:
        env.setdefault("MASTER_PORT", str(master_port))
    if devices is not None:
        env["MLUSIM_DEVICE_COUNT"] = str(devices)
    return env


def _forward(stream: IO[bytes], sink: IO[bytes], prefix: bytes, lock: threading.Lock) -> None:
    for line in iter(stream.readline, b""):
        with lock:
            sink.write(prefix + line if line.endswith(b"\n") else prefix + line + b"\n")
            sink.flush()
    stream.close()


def _exit_status(code: int) -> int:
    """A shell-style status: a rank killed by signal s reports 128 + s."""
    return 128 - code if code < 0 else code


#: entry-point group of the job services: classes whose instance gives every rank of a job some environment
#: (`rank_environment() -> dict`) and cleans up after the job (`finish()`); cncl registers its JobSession here, so
#: the launcher serves cncl jobs without importing cncl
JOB_SERVICES = "mlusim.job_services"


def job_services() -> list:
    """One fresh instance of every installed job service."""
    return [entry.load()() for entry in entry_points(group=JOB_SERVICES)]


class Job:
    """The ranks of one `mlusim run`."""

    def __init__(self, options: argparse.Namespace):
        self.options = options
        self.services = job_services()
        self.processes: list[subprocess.Popen] = []
        self.forwarders: list[threading.Thread] = []
        self.lock = threading.Lock()

    def start(self) -> None:
        if self.options.hosts:
            self._start_over_mpi()
            return
        options = self.options
        command = [sys.executable] + (["-m", options.target] if options.module else [options.target]) + options.args
        port = free_port()
        services_environment = {}
        for service in self.services:
            services_environment.update(service.rank_environment())
        for rank in range(options.nproc):
            env = rank_environment(rank, options.nproc, services_environment, options.devices_per_rank, port)
            process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            self.processes.append(process)
            prefix = b"" if options.no_prefix else f"[rank {rank}] ".encode()
            for stream, sink in ((process.stdout, sys.stdout.buffer), (process.stderr, sys.stderr.buffer)):
                thread = threading.Thread(target=_forward, args=(stream, sink, prefix, self.lock), daemon=True)
                thread.start()
                self.forwarders.append(thread)

    def _start_over_mpi(self) -> None:
        """One mpiexec that starts every rank (on the hosts of --hosts) through mlutools.mpirank."""
        options = self.options
        launcher = shutil.which("mpiexec")
        if launcher is None:
            raise SystemExit("mlusim run --hosts needs mpiexec: pip install 'mlusim[cluster]'")
        hosts = parse_hosts(options.hosts)
        services_environment = {}
        for service in self.services:
            services_environment.update(service.rank_environment(mpi_root=0))
        env = job_environment(services_environment, options.devices_per_rank, hosts[0][0], free_port())
        command = [launcher, "-hosts", ",".join(f"{host}:{count}" for host, count in hosts), "-n", str(options.nproc)]
        if options.launcher_exec:
            command += ["-launcher", "ssh", "-launcher-exec", options.launcher_exec]
        if not options.no_prefix:
            env[mpirank.PREFIX_ENV] = "1"
        command += [sys.executable, "-m", "mlutools.mpirank"] + (["-m"] if options.module else [])
        command += [options.target] + options.args
        self.processes.append(subprocess.Popen(command, env=env))

    def wait(self) -> int:
        """Wait for every rank; on the first failure stop the others. Returns the job's exit status (that of the
        rank that failed first)."""
        exits: "queue.SimpleQueue[tuple[int, int]]" = queue.SimpleQueue()
        for rank, process in enumerate(self.processes):
            threading.Thread(target=lambda r=rank, p=process: exits.put((r, p.wait())), daemon=True).start()
        failed: Optional[tuple[int, int]] = None
        for _ in self.processes:
            rank, code = exits.get()
            if code != 0 and failed is None:
                failed = (rank, code)
                self._say(f"rank {rank} exited with status {_exit_status(code)}; stopping the other ranks")
                threading.Thread(target=self.stop, daemon=True).start()
        for thread in self.forwarders:
            thread.join(timeout=5)
        return 0 if failed is None else _exit_status(failed[1])

    def stop(self) -> None:
        """SIGTERM every running rank, SIGKILL those still running after the grace period."""
        running = [process for process in self.processes if process.poll() is None]
        for process in running:
            process.terminate()
        deadline = time.monotonic() + self.options.grace
        for process in running:
            try:
                process.wait(timeout=max(deadline - time.monotonic(), 0))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def _say(self, text: str) -> None:
        with self.lock:
            sys.stderr.write(f"[mlusim run] {text}\n")
            sys.stderr.flush()


def main(argv: list[str]) -> int:
    """Entry point of `mlusim run` (argv without the subcommand). Returns the exit status."""
    argv = list(argv)
    if argv[:1] == ["--"]:  # `mlusim run -- -n 2 script.py`
        argv = argv[1:]
    options = _parser().parse_args(argv)
    if options.nproc < 1:
        _parser().error("-n must be at least 1")
    if options.hosts and options.nproc > sum(count for _, count in parse_hosts(options.hosts)):
        _parser().error(f"-n {options.nproc} ranks do not fit the hosts' {options.hosts!r} slots")
    job = Job(options)

    def on_signal(number, frame):
        job.stop()
        raise SystemExit(128 + number)

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        job.start()
        return job.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for service in job.services:
            service.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
