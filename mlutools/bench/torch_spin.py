"""How long torch's OpenMP threads keep spinning after an op, for the suites that time torch's CPU ops beside ours.

torch's CPU wheel runs its ops on libgomp threads, which by default spin for ~9 ms of CPU after every op (measured
here: 8.5-9 ms of process CPU in the 10-50 ms of sleep after a torch relu). In a benchmark that alternates torch's
op with ours, the first 9 ms of our turn then have one core fewer: torch's idle thread holds it. GOMP_SPINCOUNT=2000
stops the spin within ~2 ms, which still spans the gaps between torch's own back-to-back ops (its CNN step and large
ops alone measured the same within noise). libgomp reads the setting once, when torch loads it: a suite imports this
module before torch. A value the user set is kept. Only the suites' processes (and what they start) see it.
"""
from __future__ import annotations

import os
import sys

#: the GOMP_SPINCOUNT the suites set
SPIN_COUNT = "2000"

os.environ.setdefault("GOMP_SPINCOUNT", SPIN_COUNT)
_TORCH_LOADED_FIRST = "torch" in sys.modules


def note() -> str:
    """What a suite prints about torch's OpenMP spin."""
    if _TORCH_LOADED_FIRST:
        return "torch's OpenMP spin: libgomp's own (torch was loaded before the benchmark)"
    return f"torch's OpenMP spin: GOMP_SPINCOUNT={os.environ['GOMP_SPINCOUNT']}"
