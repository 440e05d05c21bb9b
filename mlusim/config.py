"""The simulator's settings from the environment: every MLUSIM_* variable of the core, read in this one place, once
(at first use; `reread()` takes a new snapshot, which `mlusim.device.configure()` does when it builds a table from
the environment). Each part parses its own variables from the snapshot (`environ()`), so that a bad value is
reported by the part that knows what it means.

  device table (mlusim.device)    MLUSIM_ARCH, MLUSIM_DEVICE_COUNT, MLUSIM_MEMORY, MLUSIM_BLOCKING, MLUSIM_POISON,
                                  MLUSIM_SEED
  sanitizer (mlusim.sanitizer)    MLUSIM_SANITIZE, MLUSIM_SANITIZE_RAISE, MLUSIM_SANITIZE_HOST,
                                  MLUSIM_SANITIZE_EXITCODE, MLUSIM_SANITIZE_LOG
  trace (mlusim.trace)            MLUSIM_TRACE
  BANG kernels (mlusim.bang)      MLUSIM_BANG_DEBUG, MLUSIM_BANG_VERBOSE, MLUSIM_BANG_TIME_LIMIT,
                                  MLUSIM_BANG_BARRIER_TIMEOUT
  shared GDRAM (mlusim.host)      MLUSIM_SHARED_GDRAM
  visibility (mlusim.device)      MLU_VISIBLE_DEVICES: Neuware's own variable (the driver's), read with the
                                  MLUSIM_* ones when the device table is built
  strictness (mlusim.lenient)     MLUSIM_STRICT: what the real libraries accept but mlusim would refuse, and what a
                                  program relies on that CNRT does not promise (mlusim.ordering), become errors

The features that observe the device (the sanitizer, the trace recorder) are switched on from these settings when
the mlusim package is first imported (mlusim/__init__.py), not by importing their modules. The libraries above
read their own variables (MLUSIM_CNCL_*, MLUSIM_TORCH_*, MLUSIM_CAPI_*: docs of cncl, torch_mlu, neuware).
"""
from __future__ import annotations

import contextlib
import os
import threading
from types import MappingProxyType
from typing import Iterator, Mapping, Optional

_lock = threading.Lock()
_snapshot: Optional[Mapping[str, str]] = None


#: Neuware's variables the core reads besides its own MLUSIM_* ones.
NEUWARE_VARIABLES = frozenset({"MLU_VISIBLE_DEVICES"})


def reread() -> Mapping[str, str]:
    """Take a new snapshot of the MLUSIM_* environment variables (and NEUWARE_VARIABLES; read-only mapping) and
    return it."""
    global _snapshot
    with _lock:
        _snapshot = MappingProxyType({k: v for k, v in os.environ.items()
                                      if k.startswith("MLUSIM_") or k in NEUWARE_VARIABLES})
        return _snapshot


def environ() -> Mapping[str, str]:
    """The MLUSIM_* (and NEUWARE_VARIABLES) environment variables as they were at the first call (or the last
    `reread`)."""
    snapshot = _snapshot
    return snapshot if snapshot is not None else reread()


@contextlib.contextmanager
def overridden(**settings: Optional[str]) -> Iterator[Mapping[str, str]]:
    """Within the block, the snapshot holds `settings` (MLUSIM_STRICT="1", ...; None removes one) over the
    environment's values; afterwards the snapshot is as before."""
    global _snapshot
    before = environ()
    changed = dict(before)
    for name, value in settings.items():
        if value is None:
            changed.pop(name, None)
        else:
            changed[name] = str(value)
    with _lock:
        _snapshot = MappingProxyType(changed)
    try:
        yield _snapshot
    finally:
        with _lock:
            _snapshot = before


def flag(value: Optional[str]) -> bool:
    """A boolean switch: unset, "", "0", "false", "no" and "off" are off; anything else is on."""
    return value is not None and value.strip().lower() not in ("", "0", "false", "no", "off")
