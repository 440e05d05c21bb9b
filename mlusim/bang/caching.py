"""numba compilation with an on-disk cache that also notices changes to mlusim.bang and to device functions.

numba keys a cached function on its own bytecode only; code it calls (intrinsics, device functions) is linked in,
so a cached kernel would keep running old intrinsics after an upgrade. The key here adds a hash of this package's
sources and of the bytecode of the device functions a kernel reaches.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numba
from numba.core.caching import FunctionCache

_PACKAGE_HASH = hashlib.sha256(b"".join(path.read_bytes() for path in sorted(Path(__file__).parent.glob("*.py"))))


class _SaltedCache(FunctionCache):
    def __init__(self, py_func, salt: bytes):
        super().__init__(py_func)
        self._salt = hashlib.sha256(_PACKAGE_HASH.digest() + salt).hexdigest()

    def _index_key(self, sig, codegen):
        return super()._index_key(sig, codegen) + (self._salt,)


def jit(fn=None, *, salt: bytes = b"", nogil: bool = True):
    """numba.njit(nogil=True) with the salted on-disk cache (the decorator of every compiled bang function)."""
    if fn is None:
        return lambda f: jit(f, salt=salt, nogil=nogil)
    dispatcher = numba.njit(nogil=nogil)(fn)
    dispatcher._cache = _SaltedCache(fn, salt)
    return dispatcher
