"""The host-wide memory budget: what all simulated devices and pinned host buffers of ALL processes of this user on
this host may hold together, so that N ranks of a job cannot commit N x the limit between them and meet the OOM
killer.

The limit is HOST_MEMORY_FRACTION of the memory the processes may really use: the host's physical memory, or the
cgroup's limit when it is lower (containers, CI runners). Processes share their accounting through a small table in
shared memory (`/dev/shm/mlusim-budget-<uid>`, locked with flock): one row per process (pid, start time, bytes it
reserved). A row whose process is gone (killed, crashed) is not counted and is reused, so a dead process never
leaks budget. To keep allocation fast, a process reserves from the table in chunks of CHUNK_BYTES and serves small
allocations from its reservation; it gives back what it no longer needs. Where the table cannot be made (no
/dev/shm), the accounting is per process.
"""
from __future__ import annotations

import fcntl
import mmap
import os
import threading
from typing import Optional

import numpy as np

#: Fraction of the memory available to this host's processes that all simulated memory together may hold.
HOST_MEMORY_FRACTION = 0.8
#: Bytes a process takes from the shared table at a time (and keeps, unused, at most twice that).
CHUNK_BYTES = 64 << 20
#: Rows of the shared table: processes that may hold simulated memory at the same time.
ROWS = 4096
_PID, _START, _BYTES = 0, 1, 2
_ROW_WORDS = 4
_UNLIMITED = 1 << 62


def _physical_memory() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return _UNLIMITED


def cgroup_memory_limit(proc_cgroup: str = "/proc/self/cgroup", root: str = "/sys/fs/cgroup") -> Optional[int]:
    """The memory limit of this process's cgroup (v2 memory.max, or v1 memory.limit_in_bytes), None if none."""
    candidates = []
    try:
        with open(proc_cgroup) as lines:
            for line in lines:
                parts = line.strip().split(":", 2)
                if len(parts) == 3 and (parts[0] == "0" or "memory" in parts[1].split(",")):
                    candidates.append((parts[0] == "0", parts[2]))
    except OSError:
        return None
    limits = []
    for unified, path in candidates:
        base = root if unified else os.path.join(root, "memory")
        name = "memory.max" if unified else "memory.limit_in_bytes"
        for directory in (os.path.join(base, path.lstrip("/")), base):
            try:
                with open(os.path.join(directory, name)) as handle:
                    text = handle.read().strip()
            except OSError:
                continue
            if text.isdigit() and int(text) < _UNLIMITED:
                limits.append(int(text))
            break
    return min(limits) if limits else None


def host_memory_limit() -> int:
    """Bytes all simulated memory of this host's processes may hold: HOST_MEMORY_FRACTION of the physical memory or
    of the cgroup limit, whichever is lower."""
    available = _physical_memory()
    cgroup = cgroup_memory_limit()
    if cgroup is not None:
        available = min(available, cgroup)
    return int(available * HOST_MEMORY_FRACTION)


def _start_time(pid: int) -> int:
    """The start time of process `pid` in clock ticks since boot (0 when it does not exist)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            text = handle.read()
        return int(text[text.rindex(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return 0


class SharedTable:
    """The per-user table of reservations in /dev/shm (see the module doc)."""

    def __init__(self, path: str):
        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        size = ROWS * _ROW_WORDS * 8
        if os.fstat(self.fd).st_size < size:
            os.ftruncate(self.fd, size)
        self.map = mmap.mmap(self.fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        self.rows = np.frombuffer(self.map, np.int64).reshape(ROWS, _ROW_WORDS)
        self.pid = os.getpid()
        self.start = _start_time(self.pid)
        self.row: Optional[int] = None

    def _alive(self, pid: int, start: int) -> bool:
        return _start_time(int(pid)) == int(start) and start != 0

    def reserve(self, nbytes: int, limit: int) -> bool:
        """Add `nbytes` to this process's row if all live rows together stay within `limit`."""
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        try:
            rows = self.rows
            total = 0
            mine = self._own_row()
            for index in np.flatnonzero(rows[:, _PID]):
                if index == mine:
                    total += int(rows[index, _BYTES])
                elif self._alive(rows[index, _PID], rows[index, _START]):
                    total += int(rows[index, _BYTES])
                else:
                    rows[index] = 0  # a process that is gone holds nothing
            if total + nbytes > limit:
                return False
            if mine is None:
                free = np.flatnonzero(rows[:, _PID] == 0)
                if not len(free):
                    return False
                mine = self.row = int(free[0])
                rows[mine] = (self.pid, self.start, 0, 0)
            rows[mine, _BYTES] += nbytes
            return True
        finally:
            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def release(self, nbytes: int) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        try:
            mine = self._own_row()
            if mine is not None:
                self.rows[mine, _BYTES] = max(0, int(self.rows[mine, _BYTES]) - nbytes)
        finally:
            fcntl.flock(self.fd, fcntl.LOCK_UN)

    def _own_row(self) -> Optional[int]:
        row = self.row
        if row is not None and self.rows[row, _PID] == self.pid and self.rows[row, _START] == self.start:
            return row
        self.row = None
        return None

    def close(self) -> None:
        try:
            self.map.close()
        except (BufferError, ValueError):
            pass  # a view is still alive; the mapping goes with the process
        os.close(self.fd)


def _table_path() -> str:
    return f"/dev/shm/mlusim-budget-{os.getuid()}"


class HostBudget:
    """Bytes of host memory held by simulated devices and pinned buffers of this process, within the host-wide limit.

    `used` is this process's own use; `reserved` what it holds in the shared table (>= used)."""

    def __init__(self, limit: Optional[int] = None, table_path: Optional[str] = "default"):
        self.limit = host_memory_limit() if limit is None else limit
        self.used = 0
        self.reserved = 0
        self.lock = threading.Lock()
        self._path = _table_path() if table_path == "default" else table_path  # None: per-process accounting
        self._table: Optional[SharedTable] = None
        self._table_failed = False

    def _shared_table(self) -> Optional[SharedTable]:
        if self._table is None and self._path is not None and not self._table_failed:
            try:
                self._table = SharedTable(self._path)
            except OSError:
                self._table_failed = True
        return self._table

    def take(self, nbytes: int) -> bool:
        """Account `nbytes` more; False (nothing taken) when the host-wide limit would be exceeded."""
        with self.lock:
            if self.used + nbytes <= self.reserved:
                self.used += nbytes
                return True
            table = self._shared_table()
            need = self.used + nbytes - self.reserved
            if table is None:
                if self.used + nbytes > self.limit:
                    return False
                self.reserved += need
            else:
                grant = max(need, CHUNK_BYTES)
                if not table.reserve(grant, self.limit):
                    grant = need
                    if not table.reserve(grant, self.limit):
                        return False
                self.reserved += grant
            self.used += nbytes
            return True

    def give(self, nbytes: int) -> None:
        """Give back `nbytes` taken earlier; keeps at most 2 CHUNK_BYTES reserved but unused."""
        with self.lock:
            self.used = max(0, self.used - nbytes)
            spare = self.reserved - self.used
            if spare > 2 * CHUNK_BYTES:
                back = spare - CHUNK_BYTES
                table = self._shared_table()
                if table is not None:
                    table.release(back)
                self.reserved -= back

    def shared_total(self) -> Optional[int]:
        """Bytes reserved by all live processes in the shared table (None without one); for reports and tests."""
        table = self._shared_table()
        if table is None:
            return None
        fcntl.flock(table.fd, fcntl.LOCK_EX)
        try:
            rows = table.rows
            return sum(int(rows[i, _BYTES]) for i in np.flatnonzero(rows[:, _PID])
                       if int(rows[i, _PID]) == table.pid or table._alive(rows[i, _PID], rows[i, _START]))
        finally:
            fcntl.flock(table.fd, fcntl.LOCK_UN)

    def reset_after_fork(self) -> None:
        """In a forked child: the parent's reservation is the parent's; the child starts its own row and counts
        only what it allocates itself (inherited blocks are the parent's copy-on-write memory)."""
        self.lock = threading.Lock()
        self.used = 0
        self.reserved = 0
        if self._table is not None:
            self._table.row = None
            self._table.pid = os.getpid()
            self._table.start = _start_time(self._table.pid)
            try:  # flock belongs to the open file: a new one, or the child would share the parent's lock
                os.close(self._table.fd)
                self._table.fd = os.open(self._table.path, os.O_RDWR | os.O_CLOEXEC)
            except OSError:
                self._table = None
                self._table_failed = True


#: What all simulated devices and pinned host buffers of this host's processes may hold together.
HOST_BUDGET = HostBudget()
