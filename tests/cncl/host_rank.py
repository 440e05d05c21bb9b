"""The main program of one rank of a clique across simulated hosts (tests/cncl/test_hosts.py), started by mpiexec:
joins the clique named by CNCL_CLIQUE_ID, connects to the test's Unix socket (TEST_SOCKET; such a socket is a file,
reachable from every network namespace), says its rank and host, then runs the tasks of tasks.py it is sent."""
import os
import socket
import traceback
from multiprocessing.connection import Client

import cncl
from tests.cncl.ranks import Rank, _call, serve


def main() -> None:
    rank, world = int(os.environ["PMI_RANK"]), int(os.environ["PMI_SIZE"])
    connection = Client(os.environ["TEST_SOCKET"], family="AF_UNIX", authkey=os.environ["TEST_KEY"].encode())
    try:
        comm, = cncl.initComms(1, [0], [rank], world, cncl.cnclCliqueId.from_env())
        context = Rank(rank, world, comm, 0)
        connection.send((rank, socket.gethostname(), os.getpid()))
        connection.send(("ok", None))
    except BaseException:
        connection.send((rank, socket.gethostname(), os.getpid()))
        connection.send(("error", traceback.format_exc()))
        return
    serve(lambda name, args: _call(context, name, args), connection)
    if not comm.destroyed:  # (a task may have aborted it)
        cncl.destroyComms([comm], 1)


if __name__ == "__main__":
    main()
