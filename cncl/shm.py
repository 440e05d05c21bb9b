"""Named POSIX shared-memory segments (/dev/shm) without Python's resource tracker.

`multiprocessing.shared_memory` registers every segment with a tracker process that unlinks it when *its* process
exits, which would both spawn an extra process per rank and unlink a clique's segment under the other ranks. The
clique manages the lifetime itself: every rank unlinks the name as soon as all ranks have mapped it, so nothing is
left in /dev/shm even if a rank is killed later.

Until then the creator may die too (SIGKILL or SIGTERM while it waits in cnclInitComms for ranks that never come),
with nobody to unlink the name. So the creator first starts a tiny guard, a shell in its own session that waits on a
pipe only the creator holds open, then creates the name: when the creator closes the pipe (it unlinked the name) or
dies (the kernel closes it), the guard removes the name and exits; a creator that could not create the name (it was
taken) tells the guard to keep it. This holds however the ranks were started, not only under `mlusim run`.
"""
from __future__ import annotations

import mmap
import os
import subprocess
import threading

import _posixshmem

SHM_DIRECTORY = "/dev/shm"
_guards: dict[str, int] = {}
_guards_lock = threading.Lock()


def create(name: str, size: int) -> mmap.mmap:
    """A new zero-filled segment, guarded against this process dying before it unlinks the name; FileExistsError
    when the name is taken. The guard starts before the name exists: a creator killed the moment the name appears
    (a signal sent as soon as /dev/shm shows it) leaves nothing behind."""
    writer = _start_guard(name)
    try:
        fd = _posixshmem.shm_open("/" + name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)
    except BaseException:
        _dismiss_guard(writer)  # the name is another's (or was never made): the guard must not remove it
        raise
    if writer is not None:
        with _guards_lock:
            _guards[name] = writer
    try:
        os.ftruncate(fd, size)
        return mmap.mmap(fd, size)
    except BaseException:
        unlink(name)
        raise
    finally:
        os.close(fd)


def _start_guard(name: str) -> int | None:
    """Start the guard that removes /dev/shm/<name> when this process closes the write end of its pipe (returned)
    or dies, unless told "keep" first (`_dismiss_guard`); None when there is no /dev/shm or no shell."""
    path = os.path.join(SHM_DIRECTORY, name)
    if not os.path.isdir(SHM_DIRECTORY):
        return None
    reader, writer = os.pipe()  # both ends close-on-exec: no other child of this process holds the writer
    try:
        # the pipe is the shell's stdin, moved to fd 3 for the background guard (sh redirects only fds 0-9, and a
        # background list's stdin is /dev/null)
        script = 'exec 3<&0; (trap "" INT TERM HUP; read word <&3; [ "$word" = keep ] || rm -f "$1") ' \
                 '</dev/null >/dev/null 2>&1 &'
        shell = subprocess.Popen(["/bin/sh", "-c", script, "mlusim-shm-guard", path], stdin=reader,
                                 start_new_session=True, close_fds=True)
        shell.wait()  # the guard itself runs on in the background, adopted by init: no zombie is left here
    except OSError:
        os.close(writer)
        return None
    finally:
        os.close(reader)
    return writer


def _dismiss_guard(writer: int | None) -> None:
    """End a guard without its removing anything."""
    if writer is None:
        return
    try:
        os.write(writer, b"keep\n")
    finally:
        os.close(writer)


def _release_guard(name: str) -> None:
    with _guards_lock:
        writer = _guards.pop(name, None)
    if writer is not None:
        os.close(writer)


def _forget_guards_in_child() -> None:
    """A forked child closes its copies of the guards' pipes: only the creator keeps them open."""
    global _guards_lock
    _guards_lock = threading.Lock()
    for writer in _guards.values():
        try:
            os.close(writer)
        except OSError:
            pass
    _guards.clear()


os.register_at_fork(after_in_child=_forget_guards_in_child)


def attach(name: str) -> mmap.mmap | None:
    """Map an existing segment; None while it does not exist yet or is not sized yet."""
    try:
        fd = _posixshmem.shm_open("/" + name, os.O_RDWR, mode=0o600)
    except FileNotFoundError:
        return None
    try:
        size = os.fstat(fd).st_size
        return mmap.mmap(fd, size) if size else None
    finally:
        os.close(fd)


def unlink(name: str) -> None:
    """Remove the name (mappings stay valid); a name already gone is fine. The creator's guard ends."""
    try:
        _posixshmem.shm_unlink("/" + name)
    except FileNotFoundError:
        pass
    _release_guard(name)


def anonymous(size: int) -> mmap.mmap:
    """A private zero-filled mapping for a clique whose ranks all live in this process."""
    return mmap.mmap(-1, size)
