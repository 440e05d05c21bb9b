"""One rank of `mlusim run --hosts` (started by mpiexec): the torchrun-style environment from the MPI launcher's,
then the target, as `python script args` or `python -m module args` would run it.

    mpiexec ... python -m mlutools.mpirank [-m] target args...

RANK / WORLD_SIZE come from the process manager's PMI_RANK / PMI_SIZE (MPICH; Open MPI's OMPI_COMM_WORLD_* too),
LOCAL_RANK / LOCAL_WORLD_SIZE from its ranks-on-this-node variables (MPI_LOCALRANKID / MPI_LOCALNRANKS).
"""
from __future__ import annotations

import io
import os
import runpy
import sys

_SOURCES = {
    "RANK": ("PMI_RANK", "OMPI_COMM_WORLD_RANK"),
    "WORLD_SIZE": ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE"),
    "LOCAL_RANK": ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK"),
    "LOCAL_WORLD_SIZE": ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE"),
}


#: set to 1 by `mlusim run --hosts`: the rank prefixes its output lines (mpiexec's own prefixes are per chunk it
#: forwards, which splits lines)
PREFIX_ENV = "MLUSIM_RUN_PREFIX"


class PrefixedLines(io.RawIOBase):
    """A file descriptor that gets whole lines, each with `prefix` (one write per line: lines of ranks that share a
    pipe never interleave)."""

    def __init__(self, fd: int, prefix: bytes):
        super().__init__()
        self.fd, self.prefix, self.pending = fd, prefix, b""

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        self.pending += bytes(data)
        *lines, self.pending = self.pending.split(b"\n")
        if lines:
            os.write(self.fd, b"".join(self.prefix + line + b"\n" for line in lines))
        return len(data)

    def close(self) -> None:
        if self.pending:
            os.write(self.fd, self.prefix + self.pending + b"\n")
            self.pending = b""
        super().close()


def rank_environment(environ) -> dict:
    """RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE from the MPI launcher's variables in `environ`."""
    found = {}
    for name, sources in _SOURCES.items():
        value = next((environ[source] for source in sources if source in environ), None)
        if value is None:
            raise SystemExit(f"mlutools.mpirank: {' or '.join(sources)} is not set: start this under mpiexec")
        found[name] = value
    return found


def main(argv: list[str]) -> None:
    os.environ.update(rank_environment(os.environ))
    if os.environ.get(PREFIX_ENV) == "1":
        prefix = f"[rank {os.environ['RANK']}] ".encode()
        sys.stdout, sys.stderr = (io.TextIOWrapper(io.BufferedWriter(PrefixedLines(fd, prefix)), encoding="utf-8",
                                                   errors="backslashreplace", line_buffering=True) for fd in (1, 2))
    as_module = argv[:1] == ["-m"]
    if as_module:
        argv = argv[1:]
    if not argv:
        raise SystemExit("usage: python -m mlutools.mpirank [-m] target args...")
    sys.argv = list(argv)
    if as_module:
        runpy.run_module(argv[0], run_name="__main__", alter_sys=True)
    else:
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
