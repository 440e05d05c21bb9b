"""cncl/world.py: processes that no MPI launcher started become one MPI world when they span hosts (through the job's
store and cncl's PMI server), and stay without MPI on one host."""
import os
import socket
import subprocess
import sys
import textwrap

import pytest

from cncl import network, world
from cncl.errors import CNCL_RET_ERR_ARGUMENTS, CNCL_RET_ERR_INIT, CnclError


class DictStore:
    """The part of a torch.distributed Store that join uses, in one process."""

    def __init__(self, values: dict | None = None):
        self.values = dict(values or {})

    def set(self, key, value):
        self.values[key] = value.encode() if isinstance(value, str) else value

    def get(self, key):
        return self.values[key]


@pytest.fixture
def no_mpi_job(monkeypatch):
    for name in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_PORT", "PMI_ID", "PMI_SIZE"):
        monkeypatch.delenv(name, raising=False)


def test_ranks_on_one_host_need_no_mpi(no_mpi_job):
    key, _ = network.host_identity()
    store = DictStore({f"{world.STORE_PREFIX}/host/1": key.encode()})
    assert world.join(store, 0, 2, timeout=5) is False
    assert store.values[f"{world.STORE_PREFIX}/host/0"] == key.encode()
    assert "PMI_PORT" not in os.environ and f"{world.STORE_PREFIX}/pmi" not in store.values


def test_a_job_of_one_process_or_in_an_mpi_job_does_nothing(no_mpi_job, monkeypatch):
    store = DictStore()
    assert world.join(store, 0, 1, timeout=5) is False
    monkeypatch.setenv("PMI_RANK", "0")
    assert world.join(store, 0, 4, timeout=5) is False
    assert store.values == {}


def test_an_unreachable_server_is_an_init_error_naming_it(no_mpi_job):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there
    store = DictStore({f"{world.STORE_PREFIX}/host/0": b"another-host", f"{world.STORE_PREFIX}/pmi":
                       f"127.0.0.1:{port}".encode()})
    with pytest.raises(CnclError) as raised:
        world.join(store, 1, 2, timeout=5)
    assert raised.value.code == CNCL_RET_ERR_INIT and f"127.0.0.1:{port}" in raised.value.message
    assert "PMI_PORT" not in os.environ


@pytest.mark.parametrize("rank", [-1, 2, 1 << 40])
def test_a_rank_outside_the_job_is_an_argument_error(no_mpi_job, rank):
    with pytest.raises(CnclError) as raised:
        world.join(DictStore(), rank, 2, timeout=5)
    assert raised.value.code == CNCL_RET_ERR_ARGUMENTS and "'rank'" in raised.value.message


pytest.importorskip("mpi4py", reason="the cluster extra (mpi4py, MPICH) is not installed")

# Each process claims a host of its own (host_identity patched), so that the job spans "hosts" on this machine: join
# makes the MPI world, and a clique over it carries its messages over MPI.
RANK_PROGRAM = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    from cncl import network, world
    import cncl, cnrt

    directory, rank, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    network.host_identity = lambda: (f"host-{rank}", f"host-{rank}")

    class FileStore:
        def set(self, key, value):
            path = os.path.join(directory, key.replace("/", "_"))
            with open(path + ".tmp", "w") as out:
                out.write(value if isinstance(value, str) else value.decode())
            os.rename(path + ".tmp", path)
        def get(self, key):
            path = os.path.join(directory, key.replace("/", "_"))
            while not os.path.exists(path):
                time.sleep(0.01)
            with open(path) as found:
                return found.read().encode()

    store = FileStore()
    joined = world.join(store, rank, size, timeout=60)
    if rank == 0:
        store.set("clique", cncl.getCliqueId().hex())
    clique = cncl.cnclCliqueId.fromhex(store.get("clique").decode())
    comm, = cncl.initComms(1, [0], [rank], size, clique)
    data = np.arange(1000, dtype=np.float32) * (rank + 1)
    buffer = cnrt.malloc(data.nbytes)
    cnrt.memcpy(buffer, data, data.nbytes, cnrt.cnrtMemcpyHostToDev)
    cncl.allReduce(buffer, buffer, data.size, cncl.cnclFloat, cncl.cnclSum, comm, None)
    cnrt.syncDevice()
    out = np.empty_like(data)
    cnrt.memcpy(out, buffer, data.nbytes, cnrt.cnrtMemcpyDevToHost)
    expected = np.arange(1000, dtype=np.float32) * (size * (size + 1) // 2)
    print(joined, network.in_mpi_job(), comm.fabric.network is not None, np.array_equal(out, expected), flush=True)
    cncl.destroyComms([comm], 1)
""")


@pytest.mark.child_processes
def test_a_job_across_hosts_joins_one_mpi_world_and_its_cliques_use_it(tmp_path):
    env = {key: value for key, value in os.environ.items()
           if key not in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_PORT", "PMI_ID", "PMI_SIZE")}
    env.update(MLUSIM_CNCL_TIMEOUT="60", PYTHONPATH=os.getcwd())
    ranks = [subprocess.Popen([sys.executable, "-c", RANK_PROGRAM, str(tmp_path), str(rank), "3"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for rank in range(3)]
    outputs = [rank.communicate(timeout=180)[0] for rank in ranks]
    assert [rank.returncode for rank in ranks] == [0, 0, 0], outputs
    assert [output.split()[-4:] for output in outputs] == [["True", "True", "True", "True"]] * 3, outputs
