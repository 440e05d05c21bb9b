"""The opaque C handles of every C library of the process (queues, notifiers, cnnl handles and descriptors,
communicators, MagicMind's models and contexts, ...): one table, so that the C ABI of one front end (neuware's
libcnrt, MagicMind's libmagicmind_runtime) hands out handles every other one understands.

A handle the C side holds is an address in a range no host or device memory uses, `0xC0_0000_0000 + 16 n` with n
counting up, so an address is never reused: a handle of a destroyed object still names that object (kept for the
last 4096 destroyed), and Python reports "destroyed" instead of confusing it with a newer object. The table keeps
the Python objects alive while C holds them. All the libraries share it (they run in one interpreter), so a queue
made by libcnrt is the queue libcnnl and libcncl see, and Python code can exchange handles with C (`to_c`,
`from_c`). The special queue handles 1 (cnrtQueuePerThread) and 2 (cnrtQueueLegacy) pass through as ints.
"""
from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from typing import Any

BASE = 0xC0_0000_0000
STRIDE = 16
#: Handle values with a meaning of their own: the implicit queues cnrtQueuePerThread and cnrtQueueLegacy.
SPECIAL = {1: 1, 2: 2}
DESTROYED_KEPT = 4096

_lock = threading.Lock()
_numbers = itertools.count(1)
_live: dict[int, Any] = {}
_address_of: dict[int, int] = {}  # id(object) -> address, for objects in _live (which keeps them alive)
_destroyed: "OrderedDict[int, Any]" = OrderedDict()


class UnknownHandle:
    """What an address that no library handed out becomes on the Python side: every API rejects it, naming it."""

    __slots__ = ("address",)

    def __init__(self, address: int):
        self.address = address

    def __repr__(self) -> str:
        return f"<unknown C handle 0x{self.address:x}>"


def to_c(obj: Any) -> int:
    """The C handle (an address) of a Python object, registering it on first use; 0 for None."""
    if obj is None:
        return 0
    address = _address_of.get(id(obj))
    if address is not None and _live.get(address) is obj:
        return address
    with _lock:
        address = _address_of.get(id(obj))
        if address is not None and _live.get(address) is obj:
            return address
        address = BASE + STRIDE * next(_numbers)
        _live[address] = obj
        _address_of[id(obj)] = address
        return address


def from_c(address: int) -> Any:
    """The Python object a C handle names: None for NULL, the live or recently destroyed object, the special
    queue values as ints, else an UnknownHandle (which the API then rejects with its own status)."""
    obj = _live.get(address)
    if obj is not None:
        return obj
    if not address:
        return None
    obj = _destroyed.get(address)
    if obj is not None:
        return obj
    special = SPECIAL.get(address)
    return special if special is not None else UnknownHandle(address)


def release(address: int) -> None:
    """Forget a handle whose object was destroyed (keeping it in the recently destroyed ring)."""
    with _lock:
        obj = _live.pop(address, None)
        if obj is None:
            return
        _address_of.pop(id(obj), None)
        _destroyed[address] = obj
        while len(_destroyed) > DESTROYED_KEPT:
            _destroyed.popitem(last=False)
