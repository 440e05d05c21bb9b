"""One MPI world for the processes of a job that no MPI launcher started (torchrun's workers, processes a test farm
starts by hand) when they span hosts: cliques across hosts carry their messages between hosts over MPI (network.py),
which needs every process to be part of one MPI job.

`join` is what torch_mlu's "cncl" backend does when its default process group is made: the processes tell each
other their host through the group's store; on one host nothing happens (the clique uses shared memory only, no MPI
is loaded). Across hosts the process of rank 0 starts a PMI server (pmi.py) and publishes its address in the store,
and every process initialises MPI against it with its rank as its MPI world rank. From then on the process is in an
MPI job (`network.in_mpi_job()`), so clique ids name their root's world rank and cnclInitComms finds the peers'
hosts as under mpiexec.
"""
from __future__ import annotations

import os
import socket
import subprocess

from . import network, pmi
from .errors import CNCL_RET_ERR_ARGUMENTS, CNCL_RET_ERR_INIT, CnclError

STORE_PREFIX = "mlusim_cncl_world"
#: the PMI servers this process started (kept so that they are reaped, not left as zombies)
_servers: list[subprocess.Popen] = []


def _text(value) -> str:
    return value.decode() if isinstance(value, (bytes, bytearray)) else str(value)


def join(store, rank: int, size: int, timeout: float) -> bool:
    """Make this process rank `rank` of an MPI world of `size` processes when the job's processes span hosts;
    `store` is the job's key-value store (set(key, value), get(key) waiting for the key: a torch.distributed Store).
    Every process of the job calls it once, with the same size. Returns whether an MPI world was joined (False
    when this process is already in an MPI job, alone, or on one host with all the others)."""
    if network.in_mpi_job() or size < 2:
        return False
    if not 0 <= rank < size:
        raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"argument 'rank': {rank} is outside 0..{size - 1}")
    host_key, _ = network.host_identity()
    store.set(f"{STORE_PREFIX}/host/{rank}", host_key)
    hosts = {_text(store.get(f"{STORE_PREFIX}/host/{other}")) for other in range(size)}
    if len(hosts) == 1:
        return False
    if rank == 0:
        for server in list(_servers):
            if server.poll() is not None:
                _servers.remove(server)
        port, server = pmi.start_server(size, timeout)
        _servers.append(server)
        store.set(f"{STORE_PREFIX}/pmi", f"{socket.gethostname()}:{port}")
    address = _text(store.get(f"{STORE_PREFIX}/pmi"))
    _check_reachable(address, timeout)
    os.environ.update(PMI_PORT=address, PMI_ID=str(rank), PMI_RANK=str(rank), PMI_SIZE=str(size))
    MPI = network.mpi()
    world = MPI.COMM_WORLD
    if world.Get_size() != size or world.Get_rank() != rank:
        raise CnclError(CNCL_RET_ERR_INIT, f"MPI was initialised before the job's world was made (it sees rank "
                                           f"{world.Get_rank()} of {world.Get_size()}, the job says {rank} of "
                                           f"{size}): do not initialise MPI before init_process_group")
    return True


def _check_reachable(address: str, timeout: float) -> None:
    """Fail with a CnclError naming the server when it cannot be reached (MPI_Init would end the process)."""
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host, int(port)), timeout=min(timeout, 30.0)).close()
    except (OSError, ValueError) as exc:
        raise CnclError(CNCL_RET_ERR_INIT, f"rank 0's PMI server at {address} cannot be reached from "
                                           f"{socket.gethostname()}: {exc}") from None
