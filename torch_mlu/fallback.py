"""The CPU fallback's bookkeeping: aten ops with no native mlu kernel yet run on the CPU (their tensors are copied
to the host and the results back), with one warning per op name and a count per op name.

  MLUSIM_TORCH_FALLBACK   warn (default): one warning per op name; silent: no warnings;
                          error: every fallback raises NotImplementedError, so a CI run proves a model runs natively

    >>> torch_mlu.fallback.counts()          # {'aten::tanh': 3, ...}
    >>> with torch_mlu.fallback.mode("error"):
    ...     model(x)                         # raises at the first op that would fall back
"""
from __future__ import annotations

import os
import warnings
from collections import Counter
from contextlib import contextmanager

MODES = ("warn", "silent", "error")
ENVIRONMENT = "MLUSIM_TORCH_FALLBACK"

_counts: Counter = Counter()
_warned: set[str] = set()


def _mode_from_environment() -> str:
    value = os.environ.get(ENVIRONMENT, "warn").strip().lower() or "warn"
    if value not in MODES:
        raise ValueError(f"{ENVIRONMENT}={value!r}: expected one of {', '.join(MODES)}")
    return value


_mode = _mode_from_environment()


def on_fallback(name: str) -> None:
    """Called (by the C++ fallback) before op `name` runs on the CPU."""
    if _mode == "error":
        raise NotImplementedError(
            f"mlu: {name} has no native mlu kernel, and {ENVIRONMENT}=error forbids running it on the CPU")
    _counts[name] += 1
    if _mode == "warn" and name not in _warned:
        _warned.add(name)
        warnings.warn(f"mlu: {name} has no native mlu kernel yet and runs on the CPU (its tensors are copied to "
                      f"the host and back); torch_mlu.fallback.counts() counts such ops, {ENVIRONMENT}=error "
                      f"forbids them", UserWarning, stacklevel=2)


def counts() -> dict[str, int]:
    """{op name: how many times it ran through the CPU fallback} since the start or the last reset()."""
    return dict(_counts)


def reset() -> None:
    """Clear the counts (and let each op warn once more)."""
    _counts.clear()
    _warned.clear()


def get_mode() -> str:
    return _mode


def set_mode(value: str) -> None:
    """'warn', 'silent' or 'error' (see the module docstring)."""
    global _mode
    if value not in MODES:
        raise ValueError(f"fallback mode {value!r}: expected one of {', '.join(MODES)}")
    _mode = value


@contextmanager
def mode(value: str):
    """Run a block with another fallback mode."""
    previous = get_mode()
    set_mode(value)
    try:
        yield
    finally:
        set_mode(previous)
