"""A process manager's side of PMI-1, so that processes no MPI launcher started (torchrun's workers) can form one MPI
job: the MPI library (MPICH) of each process talks PMI to this server instead of to mpiexec's proxies.

MPI needs a process manager at MPI_Init: it tells each process its rank, the job's size and name, and carries the
processes' business cards (their network addresses) between them through a key-value space and barriers. MPICH's
singletons cannot stand in for that: every singleton names its job "singinit", so two of them can never connect
(MPI_Comm_connect finds both sides claim process 0 of the same job). `join_world` therefore starts this server in a
process of its own (MPI_Init holds the interpreter's lock while it waits for the server, so a thread could not answer)
on the host of rank 0, and every process points its MPI library at it (PMI_PORT, PMI_ID: MPICH's simple PMI client,
as hydra's `-pmi-port` mode starts it).

The server answers one job of `size` processes: initack (rank and size), init, get_maxes, get_appnum,
get_my_kvsname, get_universe_size, put, get, barrier_in, publish_name / lookup_name / unpublish_name, finalize and
abort; spawn is refused (it starts no processes). A barrier completes when every process that has not left is in it,
and not before all `size` processes connected; a process whose connection closes has left (it finalized or died), so
a dead process never keeps the others in a barrier. The server ends when every process that connected has left, or,
when not all of them connect within its timeout, tells the waiting ones so by closing their connections (their
MPI_Init fails instead of waiting).

Run as `python -m cncl.pmi SIZE KVSNAME TIMEOUT`: it prints the port it listens on (all addresses) and serves.
"""
from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from typing import Optional

from .errors import CNCL_RET_ERR_INIT, CnclError

#: lengths the server announces (MPICH splits longer values over several keys)
KVSNAME_MAX, KEY_MAX, VALUE_MAX = 256, 64, 1024


def _line(cmd: str, **fields) -> bytes:
    return ("cmd=" + cmd + "".join(f" {key}={value}" for key, value in fields.items()) + "\n").encode()


def _parse(line: str) -> dict:
    """PMI-1 wire: `cmd=name key=value ...`; a value runs to the next ` key=` (values have no spaces, except
    abort's message, which is last)."""
    fields: dict[str, str] = {}
    key = None
    for word in line.split(" "):
        name, equals, value = word.partition("=")
        if equals and name.isidentifier():
            key = name
            fields[key] = value
        elif key is not None:
            fields[key] += " " + word
    return fields


class Server:
    """The key-value space and barriers of one job (see the module's docstring)."""

    def __init__(self, size: int, kvsname: str, timeout: float):
        self.size, self.kvsname, self.timeout = size, kvsname, timeout
        self.values: dict[str, str] = {}
        self.names: dict[str, str] = {}
        self.connected: set[int] = set()  # pmi ids that said initack
        self.left: set[int] = set()
        self.in_barrier = 0
        self.barrier_generation = 0
        self.state = threading.Condition()
        self.clients: list[socket.socket] = []
        self.aborted: Optional[str] = None

    # ---- one client ----------------------------------------------------------------------------------------------

    def serve_client(self, client: socket.socket) -> None:
        pmi_id = None
        buffered = b""
        try:
            while True:
                data = client.recv(65536)
                if not data:
                    return
                buffered += data
                while b"\n" in buffered:
                    raw, buffered = buffered.split(b"\n", 1)
                    fields = _parse(raw.decode("utf-8", "replace").strip())
                    if fields.get("cmd") == "initack":
                        pmi_id = int(fields.get("pmiid", -1))
                        if not 0 <= pmi_id < self.size:
                            return
                        with self.state:
                            self.connected.add(pmi_id)
                            self.state.notify_all()
                    reply = self.answer(fields, pmi_id)
                    if reply:
                        client.sendall(reply)
                    if fields.get("cmd") == "finalize":
                        return
        except OSError:
            return
        finally:
            client.close()
            with self.state:
                if pmi_id is not None:
                    self.left.add(pmi_id)
                self.state.notify_all()

    def answer(self, fields: dict, pmi_id: Optional[int]) -> bytes:
        cmd = fields.get("cmd")
        if cmd == "initack":
            return (_line("initack") + _line("set", size=self.size) + _line("set", rank=pmi_id)
                    + _line("set", debug=0))
        if cmd == "init":
            return _line("response_to_init", pmi_version=1, pmi_subversion=1, rc=0)
        if cmd == "get_maxes":
            return _line("maxes", kvsname_max=KVSNAME_MAX, keylen_max=KEY_MAX, vallen_max=VALUE_MAX)
        if cmd == "get_appnum":
            return _line("appnum", appnum=0)
        if cmd == "get_my_kvsname":
            return _line("my_kvsname", kvsname=self.kvsname)
        if cmd == "get_universe_size":
            return _line("universe_size", size=self.size)
        if cmd == "put":
            with self.state:
                self.values[fields.get("key", "")] = fields.get("value", "")
            return _line("put_result", rc=0)
        if cmd == "get":
            with self.state:
                value = self.values.get(fields.get("key", ""))
            if value is None:
                return _line("get_result", rc=-1, msg="key_not_found")
            return _line("get_result", rc=0, value=value)
        if cmd == "barrier_in":
            self.barrier()
            return _line("barrier_out")
        if cmd == "publish_name":
            with self.state:
                self.names[fields.get("service", "")] = fields.get("port", "")
            return _line("publish_result", rc=0, info="ok")
        if cmd == "unpublish_name":
            with self.state:
                found = self.names.pop(fields.get("service", ""), None) is not None
            return _line("unpublish_result", rc=0 if found else -1, info="ok" if found else "not_found")
        if cmd == "lookup_name":
            with self.state:
                port = self.names.get(fields.get("service", ""))
            if port is None:
                return _line("lookup_result", rc=-1, info="not_found")
            return _line("lookup_result", rc=0, info="ok", port=port)
        if cmd == "finalize":
            return _line("finalize_ack")
        if cmd == "abort":
            self.aborted = fields.get("message", "")
            sys.stderr.write(f"cncl.pmi: process {pmi_id} aborted the job: {self.aborted}\n")
            return b""
        if cmd == "spawn":
            return _line("spawn_result", rc=-1, errmsg="cncl.pmi starts no processes")
        return _line(f"{cmd}_result", rc=-1, msg="unsupported")

    def barrier(self) -> None:
        with self.state:
            generation = self.barrier_generation
            self.in_barrier += 1
            while self.barrier_generation == generation:
                everyone = len(self.connected) == self.size
                if everyone and self.in_barrier >= self.size - len(self.left):
                    self.in_barrier = 0
                    self.barrier_generation += 1
                    self.state.notify_all()
                    break
                self.state.wait(0.5)

    # ---- the job -------------------------------------------------------------------------------------------------

    def run(self, listener: socket.socket) -> None:
        """Accept the processes and serve them until all have left (or not all connected in time)."""
        deadline = time.monotonic() + self.timeout
        listener.settimeout(0.2)
        while True:
            with self.state:
                if len(self.connected) == self.size and self.left >= self.connected:
                    return
                if len(self.connected) < self.size and time.monotonic() >= deadline:
                    missing = sorted(set(range(self.size)) - self.connected)
                    sys.stderr.write(f"cncl.pmi: process(es) {missing} did not connect within {self.timeout:g} s\n")
                    for client in self.clients:
                        client.close()
                    return
            try:
                client, _ = listener.accept()
            except socket.timeout:
                continue
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.clients.append(client)
            threading.Thread(target=self.serve_client, args=(client,), daemon=True).start()


def start_server(size: int, timeout: float) -> tuple[int, subprocess.Popen]:
    """Start the server of a job of `size` processes in a process of its own: (port, process)."""
    kvsname = f"mlusim_{secrets.token_hex(8)}"
    process = subprocess.Popen([sys.executable, "-m", __name__, str(size), kvsname, str(timeout)],
                               stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True)
    first = process.stdout.readline().strip()
    if not first.isdigit():
        process.kill()
        raise CnclError(CNCL_RET_ERR_INIT, f"the PMI server did not start (it said {first!r})")
    return int(first), process


def main(argv: list[str]) -> None:
    size, kvsname, timeout = int(argv[0]), argv[1], float(argv[2])
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("", 0))
    listener.listen(max(size, 16))
    print(listener.getsockname()[1], flush=True)
    os.close(sys.stdout.fileno())  # the starter stops reading after the port
    Server(size, kvsname, timeout).run(listener)


if __name__ == "__main__":
    main(sys.argv[1:])
