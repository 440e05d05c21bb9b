"""Named POSIX shared-memory segments (/dev/shm) without Python's resource tracker.

`multiprocessing.shared_memory` registers every segment with a tracker process that unlinks it when *its* process
exits, which would both spawn an extra process per rank and unlink a clique's segment under the other ranks. The
clique manages the lifetime itself: every rank unlinks the name as soon as all ranks have mapped it, so nothing is
left in /dev/shm even if a rank is killed later.
"""
from __future__ import annotations

import mmap
import os

import _posixshmem


def create(name: str, size: int) -> mmap.mmap:
    """A new zero-filled segment; FileExistsError when the name is taken."""
    fd = _posixshmem.shm_open("/" + name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)
    try:
        os.ftruncate(fd, size)
        return mmap.mmap(fd, size)
    except BaseException:
        unlink(name)
        raise
    finally:
        os.close(fd)


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
    """Remove the name (mappings stay valid); a name already gone is fine."""
    try:
        _posixshmem.shm_unlink("/" + name)
    except FileNotFoundError:
        pass


def anonymous(size: int) -> mmap.mmap:
    """A private zero-filled mapping for a clique whose ranks all live in this process."""
    return mmap.mmap(-1, size)
