"""Messages between ranks on different hosts, over MPI (mpi4py), beside each host's shared-memory channels.

A clique whose ranks live on several hosts has, in every process, a `Network`: an MPI communicator over the
clique's processes (made once, at cnclInitComms, by the processes that are in it only) and the table saying on which
host each rank lives. Ranks of one host still talk through their host's segment (fabric.py); a message to a rank on
another host goes on the tag (src * nrank + dst) as a 64-byte header (the call's signature, the payload's length,
the sender's device clock) with the payload behind it in the same MPI message up to INLINE_BYTES, or followed by a
second MPI message with the payload. MPI keeps messages of one (source, tag) in order, which is the order of a
channel.

Sends never wait (MPI_Isend of a copy of the payload, kept until the operation ends, because an operation in place
may overwrite what it sent before MPI has read it); a receive polls for the message
(MPI_Improbe, so that it learns its length and a mismatched call is reported, not truncated), first without
sleeping, then yielding the CPU, then with short sleeps, and between polls checks that its own rank was not
aborted, that the peer did not announce a failure (a control message on the tag nrank * nrank: its rank, state and
message, sent to every other process whenever a rank of this process fails, aborts or leaves) and that the
communicator's timeout has not passed. A peer on another host that stops answering therefore fails the wait after
the timeout with an error naming the rank and its host, never a hang.

mpi4py is imported only when a clique spans processes of an MPI job (`in_mpi_job()`): loading cncl loads no MPI.
"""
from __future__ import annotations

import os
import pickle
import threading
import time
from typing import Callable, Optional

import numpy as np

from .errors import CNCL_RET_ERR_INIT, CnclError
from .fabric import ABORTED, FAILED, GONE, STATE_NAMES, PeerLost

#: Tags of the bootstrap messages on MPI_COMM_WORLD live in [BOOT_TAG_BASE, BOOT_TAG_BASE + BOOT_TAG_SPAN): the
#: clique id's hash picks one, so concurrent set-ups of different cliques do not mix. (MPI guarantees tags up to
#: 32767 only; MPICH and Open MPI allow 2**29 and more, checked at run time.)
BOOT_TAG_BASE = 1 << 28
BOOT_TAG_SPAN = 1 << 20
HEADER_WORDS = 8
HEADER_BYTES = 8 * HEADER_WORDS
#: Payloads up to this size travel in the header's message (one MPI message, MPI's eager protocol); larger ones in a
#: message of their own.
INLINE_BYTES = 16 * 1024
#: A wait first polls SPIN_SECONDS without sleeping (a prompt peer costs no sleep's wake-up), then until YIELD_SECONDS
#: yielding the CPU between polls (the peer may need this core), then sleeps between polls, the sleep doubling from
#: POLL_SLEEP_MIN up to POLL_SLEEP_MAX (a rank waiting for a slow peer uses little CPU). Every poll also drives MPI's
#: progress, which large messages need from both sides (no progress thread): a sleeping rank stalls its transfers,
#: so the sleeps stay short.
SPIN_SECONDS = 20e-6
YIELD_SECONDS = 2e-3
POLL_SLEEP_MIN = 20e-6
POLL_SLEEP_MAX = 500e-6
#: How often a waiting rank looks for control messages and at its own state while it polls.
CHECK_SECONDS = 0.01
#: How long a process leaving a clique waits for the last word of its ranks on other hosts (Network.close).
LINGER_SECONDS = 2.0

_MPI = None
_import_lock = threading.Lock()
#: where MPI launchers (MPICH's hydra, Open MPI, PMIx launchers) put a process's MPI world rank
_WORLD_RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")


def in_mpi_job() -> bool:
    """Whether this process was started by an MPI launcher."""
    return any(name in os.environ for name in _WORLD_RANK_VARIABLES)


def mpi():
    """The mpi4py MPI module, initialised with MPI_THREAD_MULTIPLE (cncl's queue threads call MPI concurrently)."""
    global _MPI
    with _import_lock:
        if _MPI is None:
            try:
                import mpi4py
            except ImportError:
                raise CnclError(CNCL_RET_ERR_INIT, "this clique spans hosts, which needs mpi4py and an MPI library: "
                                                   "pip install 'mlusim[cluster]'") from None
            mpi4py.rc.thread_level = "multiple"
            from mpi4py import MPI
            if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
                raise CnclError(CNCL_RET_ERR_INIT, "the MPI library does not provide MPI_THREAD_MULTIPLE, which "
                                                   "cliques across hosts need")
            _MPI = MPI
    return _MPI


def world_rank() -> int:
    """This process's rank in MPI_COMM_WORLD, from the launcher's environment (no MPI call)."""
    for name in _WORLD_RANK_VARIABLES:
        if name in os.environ:
            return int(os.environ[name])
    raise CnclError(CNCL_RET_ERR_INIT, "this process was not started by an MPI launcher")


def poll_until(poll: Callable[[], tuple], deadline: float, what: str, check: Callable[[], None]):
    """Call `poll() -> (done, value)` (a request's `test`, a probe) until done, at the pace the module's docstring
    gives; returns the value. `check()` (which raises to stop waiting) runs every CHECK_SECONDS; TimeoutError at
    `deadline`."""
    now = time.perf_counter()
    stop_spinning, stop_yielding = now + SPIN_SECONDS, now + YIELD_SECONDS
    while True:
        done, value = poll()
        if done:
            return value
        now = time.perf_counter()
        if now >= stop_yielding:
            break
        if now >= stop_spinning:
            os.sched_yield()
    pause, next_check = POLL_SLEEP_MIN, time.monotonic()
    while True:
        now = time.monotonic()
        if now >= next_check:
            check()
            if now >= deadline:
                raise TimeoutError(what)
            next_check = now + CHECK_SECONDS
        time.sleep(pause)
        pause = min(pause * 2, POLL_SLEEP_MAX)
        done, value = poll()
        if done:
            return value


class Network:
    """The MPI side of one clique in this process (see the module's docstring)."""

    def __init__(self, comm, process_of: list[int], placement: "Placement", local_host: int):
        self.comm = comm
        self.nrank = nrank = len(process_of)
        self.process_of = process_of              # clique rank -> rank in `comm`
        self.host_of = placement.host_of          # clique rank -> host index (hosts numbered by their lowest rank)
        self.hostnames = placement.hostnames      # host index -> its name
        self.by_host = placement.by_host          # host index -> its ranks
        self.local_host = local_host
        self.remote = frozenset(rank for rank in range(nrank) if self.host_of[rank] != local_host)
        self.control_tag = nrank * nrank
        self.announced: dict[int, tuple[int, str]] = {}  # remote rank -> (state, message) it announced
        self._control_lock = threading.Lock()
        self.dead_processes: set[int] = set()  # processes (ranks in `comm`) known to be gone: nothing is sent there
        self.closed = False

    def lost(self, rank: int) -> None:
        """The process of `rank` died: send it nothing more (MPI may end a process that sends to a dead one)."""
        self.dead_processes.add(self.process_of[rank])

    def where(self, rank: int) -> str:
        return f"rank {rank} on host {self.hostnames[self.host_of[rank]]}"

    def loss(self, peer: int, me: int, what: str) -> Optional[PeerLost]:
        """The error for local rank `me`, which waited for `what`, when remote `peer` announced it failed, aborted
        or left; None when it did not."""
        announced = self.announced.get(peer)
        if announced is None:
            return None
        state, message = announced
        verb = f"is {STATE_NAMES[state]}" if state == GONE else STATE_NAMES.get(state, str(state))
        return PeerLost(f"{self.where(peer)} {verb} while rank {me} waited for it ({what})"
                        + (f": {message}" if message else ""))

    def tag(self, src: int, dst: int) -> int:
        return src * self.nrank + dst

    # ---- data --------------------------------------------------------------------------------------------------

    def isend(self, src: int, dst: int, header: np.ndarray, payload: np.ndarray) -> tuple[list, list]:
        """Post a message (the 8-word header and the payload) from local rank `src` to remote rank `dst`:
        (requests, buffers that must live until they complete)."""
        MPI = _MPI
        tag, process = self.tag(src, dst), self.process_of[dst]
        if payload.nbytes <= INLINE_BYTES:
            message = np.empty(HEADER_BYTES + payload.nbytes, np.uint8)
            message[:HEADER_BYTES] = header.view(np.uint8)
            message[HEADER_BYTES:] = payload
            return [self.comm.Isend([message, MPI.BYTE], process, tag)], [message]
        # A copy: the algorithms may overwrite what they sent (in place) before MPI has read it all.
        payload = payload.copy()
        return ([self.comm.Isend([header, MPI.BYTE], process, tag), self.comm.Isend([payload, MPI.BYTE], process, tag)],
                [header, payload])

    def probe(self, src: int, dst: int) -> Callable[[], tuple]:
        """A poll (for poll_until) for the next message from remote `src` to local `dst`: (True, (header, payload
        or None when the payload follows in a message of its own)) once it arrived."""
        MPI, comm, process, tag = _MPI, self.comm, self.process_of[src], self.tag(src, dst)
        status = MPI.Status()

        def poll() -> tuple:
            message = comm.Improbe(process, tag, status)
            if message is None:
                return False, None
            data = np.empty(status.Get_count(MPI.BYTE), np.uint8)
            message.Recv([data, MPI.BYTE])
            header = data[:HEADER_BYTES].view(np.int64)
            return True, (header, data[HEADER_BYTES:] if data.nbytes > HEADER_BYTES or header[6] == 0 else None)

        return poll

    def irecv_payload(self, src: int, dst: int, payload: np.ndarray):
        return self.comm.Irecv([payload, _MPI.BYTE], self.process_of[src], self.tag(src, dst))

    # ---- control messages --------------------------------------------------------------------------------------

    def announce(self, rank: int, state: int, message: str) -> None:
        """Tell every other process of the clique that local `rank` is now in `state` (failed, aborted, gone)."""
        if self.closed:
            return
        body = pickle.dumps((rank, state, message))
        mine = self.comm.Get_rank()
        requests = [self.comm.Isend([body, _MPI.BYTE], process, self.control_tag)
                    for process in sorted(set(self.process_of))
                    if process != mine and process not in self.dead_processes]
        # Buffered by the library (a few hundred bytes: MPI's eager protocol); waited for so the buffer may go.
        deadline = time.monotonic() + 1.0
        for request in requests:
            while not request.Test():
                if time.monotonic() >= deadline:
                    request.Cancel()
                    break
                time.sleep(0.0005)

    def poll_control(self) -> None:
        """Take in the control messages that arrived."""
        MPI = _MPI
        with self._control_lock:
            status = MPI.Status()
            while self.comm.Iprobe(MPI.ANY_SOURCE, self.control_tag, status):
                body = bytearray(status.Get_count(MPI.BYTE))
                self.comm.Recv([body, MPI.BYTE], status.Get_source(), self.control_tag)
                rank, state, message = pickle.loads(bytes(body))
                previous = self.announced.get(rank)
                if previous is None or previous[0] not in (FAILED, ABORTED):  # a failure's first message stays
                    self.announced[rank] = (state, message)

    def close(self, linger: float = LINGER_SECONDS) -> None:
        """Free the MPI communicator (after every local rank of the clique left). First waits up to `linger`
        seconds for every remote rank's last word (each announces it left, failed or aborted), so that no message
        is left behind unreceived."""
        if self.closed:
            return
        self.closed = True
        deadline = time.monotonic() + linger
        try:
            self.poll_control()
            while not self.remote <= self.announced.keys() and time.monotonic() < deadline:
                time.sleep(0.001)
                self.poll_control()
            self.comm.Free()
        except Exception:
            pass


# ---- clique set-up ---------------------------------------------------------------------------------------------

class Placement:
    """Who is where, as the clique's root decided: per rank its process's world rank and host index; per host its
    name."""

    def __init__(self, world_of: list[int], host_of: list[int], hostnames: list[str]):
        self.world_of = world_of
        self.host_of = host_of
        self.hostnames = hostnames
        self.by_host = [[rank for rank, on in enumerate(host_of) if on == host] for host in range(len(hostnames))]

    @property
    def hosts(self) -> int:
        return len(self.hostnames)


def _boot_tag(clique_hash: int) -> int:
    return BOOT_TAG_BASE + clique_hash % BOOT_TAG_SPAN


def _receive_object(comm, source: int, tag: int, deadline: float, what: str):
    """The next pickled message from `source` (matched probes: a polled MPI_Irecv from MPI_ANY_SOURCE was seen to
    miss messages)."""
    def poll() -> tuple:
        message = comm.improbe(source=source, tag=tag)
        return (False, None) if message is None else (True, message.recv())

    return poll_until(poll, deadline, what, lambda: None)


def exchange_placement(clique_hash: int, token: str, root_world: int, nrank: int, ranks: list[int],
                       host_key: str, hostname: str, timeout: float) -> Placement:
    """Every process of the clique tells the process of rank 0 (MPI world rank `root_world`) its ranks and host;
    that process checks the ranks cover 0..nrank-1 once each and sends everybody the placement."""
    MPI = mpi()
    world = MPI.COMM_WORLD
    if world.Get_attr(MPI.TAG_UB) < BOOT_TAG_BASE + BOOT_TAG_SPAN:
        raise CnclError(CNCL_RET_ERR_INIT, "the MPI library's largest tag is too small for cncl's set-up messages")
    if not 0 <= root_world < world.Get_size():
        raise CnclError(CNCL_RET_ERR_INIT, f"clique id {token} names MPI world rank {root_world} as its root, but "
                                           f"the MPI job has {world.Get_size()} processes")
    tag, me = _boot_tag(clique_hash), world.Get_rank()
    deadline = time.monotonic() + timeout
    entry = {"token": token, "nrank": nrank, "ranks": ranks, "world": me, "host": host_key, "hostname": hostname}
    if me != root_world:
        world.send(entry, dest=root_world, tag=tag)
        try:
            answer = _receive_object(world, root_world, tag, deadline, "the placement")
        except TimeoutError:
            raise CnclError(CNCL_RET_ERR_INIT, f"timed out after {timeout:g} s waiting for the process of rank 0 "
                                               f"(MPI world rank {root_world}) to set up clique {token}") from None
        if isinstance(answer, str):
            raise CnclError(CNCL_RET_ERR_INIT, answer)
        return Placement(*answer)
    entries, owner = [entry], {rank: me for rank in ranks}
    problem = None
    while len(owner) < nrank and problem is None:
        try:
            theirs = _receive_object(world, MPI.ANY_SOURCE, tag, deadline, "the ranks")
        except TimeoutError:
            missing = [rank for rank in range(nrank) if rank not in owner]
            problem = f"timed out after {timeout:g} s waiting for rank(s) {missing} to join clique {token}"
            break
        entries.append(theirs)
        if theirs["token"] != token or theirs["nrank"] != nrank:
            problem = (f"argument 'nrank': MPI world rank {theirs['world']} says {theirs['nrank']} ranks for "
                       f"clique {theirs['token']}, the process of rank 0 says {nrank}")
        for rank in theirs["ranks"]:
            if rank in owner:
                problem = (f"rank {rank} of clique {token} was claimed by MPI world ranks {owner[rank]} and "
                           f"{theirs['world']}")
            owner[rank] = theirs["world"]
    if problem is not None:
        for other in entries[1:]:
            world.send(problem, dest=other["world"], tag=tag)
        raise CnclError(CNCL_RET_ERR_INIT, problem)
    by_world = {e["world"]: e for e in entries}
    host_keys: list[str] = []
    hostnames: list[str] = []
    host_of = []
    for rank in range(nrank):
        key = by_world[owner[rank]]["host"]
        if key not in host_keys:
            host_keys.append(key)
            hostnames.append(by_world[owner[rank]]["hostname"])
        host_of.append(host_keys.index(key))
    answer = ([owner[rank] for rank in range(nrank)], host_of, hostnames)
    for other in entries[1:]:
        world.send(answer, dest=other["world"], tag=tag)
    return Placement(*answer)


def connect(clique_hash: int, placement: Placement, local_host: int) -> Network:
    """The clique's MPI communicator (collective over the clique's processes only) and its Network."""
    MPI = mpi()
    world = MPI.COMM_WORLD
    members = sorted(set(placement.world_of))
    group = world.Get_group().Incl(members)
    try:
        comm = world.Create_group(group, _boot_tag(clique_hash))
    finally:
        group.Free()
    comm.Set_errhandler(MPI.ERRORS_RETURN)
    process_of = [members.index(w) for w in placement.world_of]
    return Network(comm, process_of, placement, local_host)


def host_identity() -> tuple[str, str]:
    """(key, name) of the host this process runs on. Processes with the same key can share memory: the same
    kernel (boot id), the same host name and the same /dev/shm (its device number: hosts simulated as mount
    namespaces each have their own)."""
    import socket
    try:
        with open("/proc/sys/kernel/random/boot_id") as boot:
            boot_id = boot.read().strip()
    except OSError:
        boot_id = ""
    try:
        shm_device = os.stat("/dev/shm").st_dev
    except OSError:
        shm_device = 0
    name = socket.gethostname()
    return f"{name}/{boot_id}/{shm_device}", name
