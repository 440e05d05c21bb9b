"""cncl/pmi.py: the PMI-1 server that makes processes no MPI launcher started into one MPI job. Its protocol against
clients speaking the wire format as MPICH's simple PMI does, and two real MPI processes that form a world through
it."""
import os
import socket
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from cncl import pmi


class Client:
    """One process's PMI connection, as MPICH's simple PMI client uses it."""

    def __init__(self, port: int):
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buffered = b""

    def send(self, line: str) -> None:
        self.socket.sendall((line + "\n").encode())

    def read(self, timeout: float = 5.0) -> dict:
        self.socket.settimeout(timeout)
        while b"\n" not in self.buffered:
            data = self.socket.recv(65536)
            if not data:
                raise EOFError("the server closed the connection")
            self.buffered += data
        line, self.buffered = self.buffered.split(b"\n", 1)
        return pmi._parse(line.decode())

    def ask(self, line: str) -> dict:
        self.send(line)
        return self.read()

    def hello(self, pmi_id: int) -> list[dict]:
        self.send(f"cmd=initack pmiid={pmi_id}")
        return [self.read() for _ in range(4)]

    def close(self) -> None:
        self.socket.close()


@pytest.fixture
def job():
    """Start a server for `size` processes in a thread; yields a function making it."""
    made = []

    def start(size: int, timeout: float = 10.0):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        server = pmi.Server(size, "job_under_test", timeout)
        thread = threading.Thread(target=server.run, args=(listener,), daemon=True)
        thread.start()
        made.append((listener, thread))
        return server, listener.getsockname()[1], thread

    yield start
    for listener, thread in made:
        thread.join(timeout=15)
        listener.close()


def test_initack_gives_rank_and_size_as_hydra_does(job):
    _, port, thread = job(2, timeout=1.0)
    clients = [Client(port), Client(port)]
    replies = clients[1].hello(1)
    assert replies == [{"cmd": "initack"}, {"cmd": "set", "size": "2"}, {"cmd": "set", "rank": "1"},
                       {"cmd": "set", "debug": "0"}]
    assert clients[1].ask("cmd=init pmi_version=1 pmi_subversion=1") == {
        "cmd": "response_to_init", "pmi_version": "1", "pmi_subversion": "1", "rc": "0"}
    assert clients[1].ask("cmd=get_maxes")["vallen_max"] == str(pmi.VALUE_MAX)
    assert clients[1].ask("cmd=get_my_kvsname") == {"cmd": "my_kvsname", "kvsname": "job_under_test"}
    assert clients[1].ask("cmd=get_universe_size") == {"cmd": "universe_size", "size": "2"}
    assert clients[1].ask("cmd=get_appnum") == {"cmd": "appnum", "appnum": "0"}
    for client in clients:
        client.close()


def test_values_put_before_a_barrier_are_seen_after_it(job):
    _, port, thread = job(2)
    first, second = Client(port), Client(port)
    first.hello(0)
    second.hello(1)
    assert first.ask("cmd=put kvsname=job_under_test key=card[0] value=tcp://a:1") == {"cmd": "put_result", "rc": "0"}
    first.send("cmd=barrier_in")
    second.send("cmd=barrier_in")
    assert first.read() == {"cmd": "barrier_out"} and second.read() == {"cmd": "barrier_out"}
    assert second.ask("cmd=get kvsname=job_under_test key=card[0]") == {"cmd": "get_result", "rc": "0",
                                                                         "value": "tcp://a:1"}
    assert second.ask("cmd=get kvsname=job_under_test key=card[9]")["rc"] == "-1"
    for client in (first, second):
        assert client.ask("cmd=finalize") == {"cmd": "finalize_ack"}
    thread.join(timeout=5)
    assert not thread.is_alive(), "the server goes once every process left"


def test_a_barrier_waits_for_processes_that_have_not_connected_yet(job):
    _, port, thread = job(2)
    early = Client(port)
    early.hello(0)
    early.send("cmd=barrier_in")
    with pytest.raises(socket.timeout):
        early.read(timeout=0.6)
    late = Client(port)
    late.hello(1)
    late.send("cmd=barrier_in")
    assert early.read() == {"cmd": "barrier_out"} and late.read() == {"cmd": "barrier_out"}
    early.close()
    late.close()


def test_a_process_that_died_does_not_hold_the_barrier(job):
    _, port, thread = job(3)
    clients = [Client(port) for _ in range(3)]
    for pmi_id, client in enumerate(clients):
        client.hello(pmi_id)
    clients[2].close()  # dies without finalize
    for client in clients[:2]:
        client.send("cmd=barrier_in")
    assert [client.read() for client in clients[:2]] == [{"cmd": "barrier_out"}] * 2
    for client in clients[:2]:
        client.close()
    thread.join(timeout=5)
    assert not thread.is_alive()


def test_processes_that_never_connect_end_the_job_instead_of_a_hang(job):
    _, port, thread = job(2, timeout=0.5)
    alone = Client(port)
    alone.hello(0)
    alone.send("cmd=barrier_in")
    with pytest.raises(EOFError):
        alone.read(timeout=5)
    thread.join(timeout=5)
    assert not thread.is_alive()


def test_names_are_published_and_looked_up(job):
    _, port, _ = job(1)
    client = Client(port)
    client.hello(0)
    assert client.ask("cmd=lookup_name service=svc")["rc"] == "-1"
    assert client.ask("cmd=publish_name service=svc port=tag#0$x")["rc"] == "0"
    assert client.ask("cmd=lookup_name service=svc")["port"] == "tag#0$x"
    assert client.ask("cmd=unpublish_name service=svc")["rc"] == "0"
    assert client.ask("cmd=unpublish_name service=svc")["rc"] == "-1"
    client.close()


def test_spawn_and_unknown_commands_are_refused_with_an_answer(job):
    server, port, _ = job(1)
    client = Client(port)
    client.hello(0)
    assert client.ask("cmd=spawn nprocs=1 execname=x")["rc"] == "-1"
    assert client.ask("cmd=frobnicate") == {"cmd": "frobnicate_result", "rc": "-1", "msg": "unsupported"}
    client.send("cmd=abort exitcode=3 message=rank 0 gave up")
    time.sleep(0.2)
    assert server.aborted == "rank 0 gave up"
    client.close()


def test_an_id_outside_the_job_is_disconnected(job):
    _, port, _ = job(2, timeout=1.0)
    client = Client(port)
    client.send("cmd=initack pmiid=5")
    with pytest.raises(EOFError):
        client.read()


def test_parse_keeps_spaces_of_the_last_value():
    assert pmi._parse("cmd=abort exitcode=1 message=a b=c d") == {"cmd": "abort", "exitcode": "1",
                                                                   "message": "a", "b": "c d"}
    assert pmi._parse("cmd=abort exitcode=1 message=out of memory") == {"cmd": "abort", "exitcode": "1",
                                                                        "message": "out of memory"}


mpi4py = pytest.importorskip("mpi4py", reason="the cluster extra (mpi4py, MPICH) is not installed")

RANK_PROGRAM = textwrap.dedent("""
    import os, sys
    os.environ.update(PMI_PORT=sys.argv[1], PMI_ID=sys.argv[2], PMI_RANK=sys.argv[2], PMI_SIZE=sys.argv[3])
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    print(world.Get_rank(), world.Get_size(), world.allreduce(world.Get_rank() + 1), flush=True)
""")


@pytest.mark.child_processes
def test_processes_no_launcher_started_form_one_mpi_world():
    port, server = pmi.start_server(3, timeout=60)
    ranks = [subprocess.Popen([sys.executable, "-c", RANK_PROGRAM, f"127.0.0.1:{port}", str(rank), "3"],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for rank in range(3)]
    outputs = [rank.communicate(timeout=120)[0] for rank in ranks]
    assert [rank.returncode for rank in ranks] == [0, 0, 0], outputs
    assert sorted(output.split()[:3] for output in outputs) == [["0", "3", "6"], ["1", "3", "6"], ["2", "3", "6"]]
    assert server.wait(timeout=20) == 0, "the server ends when the job's processes finalized"
