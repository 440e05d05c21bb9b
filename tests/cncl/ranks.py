"""Running one task on every rank of a clique: in rank processes kept alive for a whole test module, or in threads
of this process with one simulated device per rank. A task is a function of `tasks.py` called as task(rank, *args);
the runner returns each rank's result, or fails the test with the rank's traceback."""
from __future__ import annotations

import multiprocessing
import os
import traceback
from concurrent.futures import ThreadPoolExecutor

import numpy as np

#: Small slots make even small tests cross message-window boundaries.
TEST_ENV = {"MLUSIM_CNCL_SLOT_BYTES": "4096", "MLUSIM_CNCL_TIMEOUT": "20", "MLUSIM_MEMORY": "256MiB",
            "MLUSIM_DEVICE_COUNT": "1"}
REPLY_TIMEOUT = 60.0



def collect_replies(connections, what: str, timeout: float) -> list:
    """Every rank's ("ok", value) reply to `what`, in rank order; AssertionError naming a rank that failed or did
    not answer within `timeout` seconds (shared with tests/torch_mlu/distributed/ranks.py)."""
    results = []
    for rank, connection in enumerate(connections):
        if not connection.poll(timeout):
            raise AssertionError(f"rank {rank} did not answer {what} within {timeout} s")
        status, value = connection.recv()
        if status != "ok":
            raise AssertionError(f"rank {rank} failed in {what}:\n{value}")
        results.append(value)
    return results

class Rank:
    """What a task sees: its rank, the clique size, its communicator, a queue, and buffer helpers."""

    def __init__(self, rank: int, world: int, comm, device: int):
        import cnrt

        self.rank, self.world, self.comm, self.device = rank, world, comm, device
        cnrt.setDevice(device)
        self.queue = cnrt.queueCreate()
        self.state: dict = {}

    def enter(self) -> None:
        import cnrt

        cnrt.setDevice(self.device)

    def upload(self, array: np.ndarray) -> int:
        import cnrt

        pointer = cnrt.malloc(max(array.nbytes, 1))
        if array.nbytes:
            cnrt.memcpy(pointer, np.ascontiguousarray(array), array.nbytes, cnrt.cnrtMemcpyHostToDev)
        return pointer

    def download(self, pointer: int, count: int, dtype) -> np.ndarray:
        import cnrt

        out = np.empty(count, dtype)
        if out.nbytes:
            cnrt.memcpy(out, pointer, out.nbytes, cnrt.cnrtMemcpyDevToHost)
        return out

    def sync(self) -> None:
        import cnrt

        cnrt.queueSync(self.queue)


def _call(rank: Rank, name: str, args: tuple):
    from tests.cncl import tasks

    rank.enter()
    return getattr(tasks, name)(rank, *args)


def _serve(rank: int, world: int, clique_hex: str, env: dict, connection) -> None:
    """The main function of one rank process."""
    os.environ.update(env)
    import cncl

    comm = None
    try:
        comm, = cncl.initComms(1, [0], [rank], world, cncl.cnclCliqueId.fromhex(clique_hex))
        context = Rank(rank, world, comm, 0)
        connection.send(("ok", None))
    except BaseException:
        connection.send(("error", traceback.format_exc()))
        return
    serve(lambda name, args: _call(context, name, args), connection)
    cncl.destroyComms([comm], 1)


def serve(call, connection) -> None:
    """Run the tasks the test sends over `connection`, each as `call(name, args)`, until it sends None."""
    while True:
        request = connection.recv()
        if request is None:
            break
        name, args = request
        try:
            connection.send(("ok", call(name, args)))
        except BaseException:
            connection.send(("error", traceback.format_exc()))


class Connected:
    """Rank processes the test talks to over `self.connections` (one per rank, in rank order)."""

    connections: list

    def send(self, name: str, *args) -> None:
        """Start a task on every rank without waiting."""
        for connection in self.connections:
            connection.send((name, args))

    def run(self, name: str, *args, timeout: float = REPLY_TIMEOUT) -> list:
        self.send(name, *args)
        return collect_replies(self.connections, name, timeout)

    def run_each(self, name: str, per_rank_args: list) -> None:
        for connection, args in zip(self.connections, per_rank_args):
            connection.send((name, args))

    def collect(self, what: str = "task") -> list:
        return collect_replies(self.connections, what, REPLY_TIMEOUT)

    def _say_goodbye(self) -> None:
        for connection in self.connections:
            try:
                connection.send(None)
            except (BrokenPipeError, OSError):
                pass


class ProcessClique(Connected):
    """`world` rank processes, one communicator each, kept for many tasks."""

    def __init__(self, world: int, env: dict | None = None):
        import cncl

        self.world = world
        context = multiprocessing.get_context("spawn")
        settings = dict(TEST_ENV, **(env or {}))
        clique = cncl.getCliqueId().hex()
        self.connections, self.processes = [], []
        for rank in range(world):
            mine, theirs = context.Pipe()
            process = context.Process(target=_serve, args=(rank, world, clique, settings, theirs), daemon=True)
            process.start()
            self.connections.append(mine)
            self.processes.append(process)
        self.collect("initComms")

    def close(self) -> None:
        self._say_goodbye()
        for process in self.processes:
            process.join(timeout=20)
            if process.is_alive():
                process.kill()
                process.join()


class ThreadClique:
    """`world` communicators of one process on devices 0..world-1, each rank's task in its own thread."""

    def __init__(self, world: int):
        import cncl
        from mlusim import device as devices

        self.world = world
        devices.configure(memory=256 << 20, device_count=world)
        self.comms = cncl.initComms(world, list(range(world)), list(range(world)), world, None)
        self.ranks = [None] * world
        with ThreadPoolExecutor(world) as pool:
            for rank, context in enumerate(pool.map(lambda r: Rank(r, world, self.comms[r], r), range(world))):
                self.ranks[rank] = context

    def run(self, name: str, *args) -> list:
        with ThreadPoolExecutor(self.world) as pool:
            futures = [pool.submit(_call, self.ranks[rank], name, args) for rank in range(self.world)]
            results = []
            for rank, future in enumerate(futures):
                try:
                    results.append(future.result(timeout=REPLY_TIMEOUT))
                except BaseException:
                    raise AssertionError(f"rank {rank} failed in {name}:\n{traceback.format_exc()}")
            return results

    def close(self) -> None:
        import cncl
        from mlusim import device as devices

        live = [comm for comm in self.comms if not comm.destroyed]
        cncl.destroyComms(live, len(live))
        devices.configure()


def shm_entries(mine_only: bool = True) -> set[str]:
    """Clique segments in /dev/shm: those of cliques whose id this process made (named after its pid, so that
    other test runs on the host do not disturb the check), or all of them."""
    prefix = f"mlusim-cncl-p{os.getpid()}-" if mine_only else "mlusim-cncl-"
    return {name for name in os.listdir("/dev/shm") if name.startswith(prefix)}




def several_ranks_per_process(process_index: int, processes: int, per_process: int, clique_hex: str, env: dict,
                              connection) -> None:
    """Main function of a process holding `per_process` ranks (one device each) of a multi-process clique:
    one allReduce and one allGather issued for all its ranks from one thread; sends back the failures."""
    os.environ.update(env, MLUSIM_DEVICE_COUNT=str(per_process))
    import cncl
    import cnrt

    try:
        world = processes * per_process
        ranks = [process_index * per_process + local for local in range(per_process)]
        comms = cncl.initComms(per_process, list(range(per_process)), ranks, world,
                               cncl.cnclCliqueId.fromhex(clique_hex))
        count = 3001
        buffers = []
        for device, rank in enumerate(ranks):
            cnrt.setDevice(device)
            buffers.append((cnrt.malloc(count * 4), cnrt.malloc(count * 4 * world)))
            cnrt.memcpy(buffers[-1][0], np.arange(count, dtype=np.float32) * (rank + 1), count * 4,
                        cnrt.cnrtMemcpyHostToDev)
        for device, comm in enumerate(comms):
            send, gathered = buffers[device]
            cncl.allGather(send, gathered, count, cncl.cnclFloat, comm, None)
            cncl.allReduce(send, send, count, cncl.cnclFloat, cncl.cnclSum, comm, None)
        failures = []
        for device, rank in enumerate(ranks):
            cnrt.setDevice(device)
            cnrt.syncDevice()
            total = np.empty(count, np.float32)
            cnrt.memcpy(total, buffers[device][0], count * 4, cnrt.cnrtMemcpyDevToHost)
            if not np.array_equal(total, np.arange(count, dtype=np.float32) * (world * (world + 1) // 2)):
                failures.append(f"allReduce on rank {rank}")
            gathered = np.empty(count * world, np.float32)
            cnrt.memcpy(gathered, buffers[device][1], gathered.nbytes, cnrt.cnrtMemcpyDevToHost)
            want = np.concatenate([np.arange(count, dtype=np.float32) * (r + 1) for r in range(world)])
            if not np.array_equal(gathered, want):
                failures.append(f"allGather on rank {rank}")
        cncl.destroyComms(comms, per_process)
        connection.send(("ok", failures))
    except BaseException:
        connection.send(("error", traceback.format_exc()))


class HostsClique(Connected):
    """A clique across simulated hosts (mlutools.hosts): `ranks_per_host[k]` rank processes on host k, started by
    mpiexec on host 0 (`launch="mpiexec"`) or by a torchrun on every host (`launch="torchrun"`), each with one
    device, running `program` (tests/cncl/host_rank.py: tasks run as with ProcessClique;
    tests/torch_mlu/distributed/host_rank.py: in a process group). A program connects to the test's socket, says
    (rank, host name, pid), then ("ok", None) or ("error", traceback), then serves tasks."""

    def __init__(self, hosts, ranks_per_host: list[int], env: dict | None = None, timeout: float = REPLY_TIMEOUT,
                 options: tuple = (), program: str = "tests.cncl.host_rank", arguments: tuple = (),
                 launch: str = "mpiexec"):
        import secrets
        import subprocess
        import sys
        import threading
        from multiprocessing.connection import Listener

        from cncl.clique import new_clique_id

        self.hosts, self.world, self.layout = hosts, sum(ranks_per_host), list(ranks_per_host)
        path = os.path.join(hosts.directory, f"clique-{secrets.token_hex(4)}.sock")
        key = secrets.token_hex(8)
        listener = Listener(path, family="AF_UNIX", authkey=key.encode())
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        settings = {**os.environ, **TEST_ENV, **(env or {}), "TEST_SOCKET": path, "TEST_KEY": key,
                    "CNCL_CLIQUE_ID": new_clique_id(mpi_root=0).hex(),
                    "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
        if launch == "mpiexec":
            commands = {0: hosts.mpiexec(ranks_per_host, [sys.executable, "-m", program, *arguments], options)}
        else:
            commands = {host: hosts.torchrun(ranks_per_host, host, [*options, "-m", program, *arguments])
                        for host in range(len(ranks_per_host))}
        self.launchers = [hosts.run(host, command, env=settings, cwd=root, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT) for host, command in commands.items()]
        self.launcher = self.launchers[0]
        self.output: list[bytes] = []
        for launcher in self.launchers:
            threading.Thread(target=lambda out=launcher.stdout: self.output.extend(iter(out.readline, b"")),
                             daemon=True).start()
        accepted: list = []

        def accept() -> None:
            for _ in range(self.world):
                accepted.append(listener.accept())

        acceptor = threading.Thread(target=accept, daemon=True)
        acceptor.start()
        acceptor.join(timeout)
        listener.close()
        if len(accepted) < self.world:
            for launcher in self.launchers:
                launcher.kill()
            raise AssertionError(f"only {len(accepted)} of {self.world} ranks connected:\n{self.text()}")
        by_rank = {}
        for connection in accepted:
            rank, hostname, pid = connection.recv()
            by_rank[rank] = (connection, hostname, pid)
        self.connections = [by_rank[rank][0] for rank in range(self.world)]
        self.hostnames = [by_rank[rank][1] for rank in range(self.world)]
        self.pids = [by_rank[rank][2] for rank in range(self.world)]
        collect_replies(self.connections, "initComms", timeout)

    def text(self) -> str:
        return b"".join(self.output).decode("utf-8", "replace")

    def close(self, timeout: float = 30.0) -> int:
        """Stop the ranks; the launchers' exit status (the first that is not 0)."""
        self._say_goodbye()
        statuses = []
        for launcher in self.launchers:
            try:
                statuses.append(launcher.wait(timeout))
            except Exception:
                for each in self.launchers:
                    each.kill()
                    each.wait()
                raise AssertionError(f"the ranks did not exit within {timeout} s:\n{self.text()}")
        return next((status for status in statuses if status), 0)
