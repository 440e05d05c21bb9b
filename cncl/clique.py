"""cnclCliqueId: 128 bytes naming a clique plus their hash, serialisable as the C struct's 136 bytes.

The data holds a readable token, `mlusim-cncl:<session>:<random>`, and in a process of an MPI job also `:w<world rank>`,
the MPI world rank of the process that made it (the clique's root: the other processes tell it who and where they
are, network.py); the clique's shared-memory segments are named after it. The session is MLUSIM_CNCL_SESSION when a
launcher set it (so the launcher can sweep segments of ranks it had to kill), else this process's id.
"""
from __future__ import annotations

import hashlib
import os
import re
import secrets
import struct
from typing import Optional

from . import network
from .errors import CNCL_RET_ERR_ARGUMENTS, CnclError, api

CNCL_CLIQUE_ID_BYTES_SIZE = 128
_PREFIX = b"mlusim-cncl:"
SEGMENT_PREFIX = "mlusim-cncl-"
SESSION_ENV = "MLUSIM_CNCL_SESSION"
_TOKEN = re.compile(r"mlusim-cncl:[A-Za-z0-9]+:[0-9a-f]+(:w[0-9]+)?")


def _hash(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


class cnclCliqueId:
    """struct cnclCliqueId { char data[128]; uint64_t hash; }."""

    __slots__ = ("data", "hash")

    def __init__(self, data: bytes, hash: int):
        self.data = bytes(data)
        self.hash = int(hash)

    def __bytes__(self) -> bytes:
        return self.data + struct.pack("<Q", self.hash)

    def __eq__(self, other) -> bool:
        return isinstance(other, cnclCliqueId) and bytes(self) == bytes(other)

    def __hash__(self) -> int:
        return self.hash

    def __repr__(self) -> str:
        return f"<cnclCliqueId {self.token}>"

    def hex(self) -> str:
        """The 136 bytes as hex text, for the environment or a command line."""
        return bytes(self).hex()

    @classmethod
    def from_bytes(cls, raw, arg: str = "clique_id") -> "cnclCliqueId":
        """The id from its 136 serialised bytes (the layout of the C struct)."""
        raw = bytes(raw)
        if len(raw) != CNCL_CLIQUE_ID_BYTES_SIZE + 8:
            raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"argument '{arg}': a clique id is "
                                                    f"{CNCL_CLIQUE_ID_BYTES_SIZE + 8} bytes, got {len(raw)}")
        data = raw[:CNCL_CLIQUE_ID_BYTES_SIZE]
        return cls(data, struct.unpack("<Q", raw[CNCL_CLIQUE_ID_BYTES_SIZE:])[0])

    @classmethod
    def fromhex(cls, text: str, arg: str = "clique_id") -> "cnclCliqueId":
        try:
            raw = bytes.fromhex(text.strip())
        except ValueError:
            raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"argument '{arg}': not a hex clique id") from None
        return cls.from_bytes(raw, arg)

    @classmethod
    def from_env(cls, variable: str = "CNCL_CLIQUE_ID") -> "cnclCliqueId":
        """The id a launcher put in the environment (`mlusim run` sets CNCL_CLIQUE_ID)."""
        text = os.environ.get(variable)
        if text is None:
            raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"environment variable {variable} is not set")
        return cls.fromhex(text, variable)

    @property
    def token(self) -> str:
        return self.data.rstrip(b"\0").decode("ascii", "replace")

    @property
    def segment_name(self) -> str:
        """The /dev/shm name of the clique's segment (of a clique across hosts: the stem of its hosts' names)."""
        _, session, nonce = self.token.split(":")[:3]
        return f"{SEGMENT_PREFIX}{session}-{nonce}"

    @property
    def mpi_root(self) -> Optional[int]:
        """The MPI world rank of the process that made the id, when it was made in an MPI job."""
        fields = self.token.split(":")
        return int(fields[3][1:]) if len(fields) == 4 else None


def new_clique_id(mpi_root: Optional[int] = None) -> cnclCliqueId:
    """A fresh id; `mpi_root`, the MPI world rank of the clique's root process, is this process's own in an MPI job
    unless given (a launcher makes ids for the ranks it starts)."""
    session = "".join(c for c in os.environ.get(SESSION_ENV, "") if c.isalnum())[:32] or f"p{os.getpid()}"
    if mpi_root is None and network.in_mpi_job():
        mpi_root = network.world_rank()
    root = "" if mpi_root is None else f":w{int(mpi_root)}"
    token = _PREFIX + f"{session}:{secrets.token_hex(12)}{root}".encode()
    data = token.ljust(CNCL_CLIQUE_ID_BYTES_SIZE, b"\0")
    return cnclCliqueId(data, _hash(data))


def clique_arg(value, arg: str = "clique_id") -> cnclCliqueId:
    """A cnclCliqueId argument: the object, or its 136 bytes. Checks the hash and the format."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = cnclCliqueId.from_bytes(value, arg)
    if not isinstance(value, cnclCliqueId):
        raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"argument '{arg}': expected a cnclCliqueId or its bytes, got "
                                                f"{type(value).__name__}")
    if (value.hash != _hash(value.data) or not value.data.startswith(_PREFIX)
            or not _TOKEN.fullmatch(value.token)):
        raise CnclError(CNCL_RET_ERR_ARGUMENTS, f"argument '{arg}': not a clique id made by cnclGetCliqueId "
                                                f"(hash or format mismatch)")
    return value


@api("cnclGetCliqueId")
def getCliqueId() -> cnclCliqueId:
    """cnclGetCliqueId(cnclCliqueId_t clique_id) -> a new, unique clique id."""
    return new_clique_id()
