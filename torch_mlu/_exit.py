"""The exit of a process that ran backward passes on mlu: torch's autograd device thread must be done with Python
before the interpreter finalizes.

The engine's device thread (torch names it pt_autograd_<device>) drops its last reference to a graph task after
`backward()` has returned to the caller, and that drop takes the GIL (the task's thread-local state holds Python
objects). A script that ends right after a backward pass can reach interpreter finalization first; the thread then
asks for the GIL, CPython ends it with pthread_exit, and the unwinding through torch's noexcept destructors calls
std::terminate ("terminate called without an active exception", exit status 134: 5 of about 100 runs of such a
script). `settle_autograd_threads` runs at exit (before torch_mlu's quiesce hook), sleeping with the GIL let
go until each such thread has been seen asleep several checks in a row: what it still had to do with the GIL is
then done.
"""
from __future__ import annotations

import os
import time

#: the longest the exit waits for the autograd device threads
SETTLE_SECONDS = 0.2
#: a thread counts as settled when seen asleep in this many checks in a row ...
QUIET_CHECKS = 3
#: ... made this far apart (each after a sleep that lets go of the GIL)
CHECK_SECONDS = 0.002
_TASKS = "/proc/self/task"


def autograd_threads() -> list[str]:
    """The /proc stat files of this process's autograd device threads (none where /proc is missing)."""
    try:
        tasks = os.listdir(_TASKS)
    except OSError:
        return []
    found = []
    for tid in tasks:
        try:
            with open(f"{_TASKS}/{tid}/comm") as comm:
                if comm.read().startswith("pt_autograd"):
                    found.append(f"{_TASKS}/{tid}/stat")
        except OSError:
            continue  # a thread that has just ended
    return found


def _asleep(stat_path: str) -> bool:
    try:
        with open(stat_path) as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("S", "D", "Z", "X")
    except (OSError, IndexError):
        return True  # gone


def settle_autograd_threads(timeout: float = SETTLE_SECONDS) -> bool:
    """Sleep (the GIL let go) until every autograd device thread has been seen asleep QUIET_CHECKS checks in a row,
    at most `timeout` seconds; True when they all were (also when there are none)."""
    threads = autograd_threads()
    if not threads:
        return True
    quiet = 0
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        time.sleep(CHECK_SECONDS)
        quiet = quiet + 1 if all(_asleep(path) for path in threads) else 0
        if quiet >= QUIET_CHECKS:
            return True
    return False
