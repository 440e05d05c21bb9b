"""The main program of one rank of a torch.distributed job across simulated hosts (test_hosts.py), started by
mpiexec through mlutools.mpirank (RANK, LOCAL_RANK, ... from the process manager): one process group
"cpu:gloo,mlu:cncl" whose store is on the first host, then the tasks of tasks.py it is sent over the test's socket
(see tests/cncl/host_rank.py)."""
import os
import socket
import traceback
from datetime import timedelta
from multiprocessing.connection import Client

from tests.cncl.ranks import serve


def main() -> None:
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    connection = Client(os.environ["TEST_SOCKET"], family="AF_UNIX", authkey=os.environ["TEST_KEY"].encode())
    connection.send((rank, socket.gethostname(), os.getpid()))
    try:
        import torch
        import torch.distributed as dist
        import torch_mlu  # noqa: F401

        torch.manual_seed(0)
        dist.init_process_group("cpu:gloo,mlu:cncl", timeout=timedelta(seconds=60))
        connection.send(("ok", None))
    except BaseException:
        connection.send(("error", traceback.format_exc()))
        return
    from tests.torch_mlu.distributed import tasks

    serve(lambda name, args: getattr(tasks, name)(rank, world, *args), connection)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
