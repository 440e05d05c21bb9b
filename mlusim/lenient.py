"""Accept what the real libraries accept: calls the simulator's checks would refuse but Cambricon's libraries run.

A back end that works on hardware must not be refused here. Where a check of ours is stricter than the library
(docs/capi.md lists each case), the API calls `tolerate(rule, fault)`: by default the call goes on and a
`LenientWarning` naming the rule and the reason is issued once per call site; with MLUSIM_STRICT=1 in the
settings (mlusim.config) the fault is raised instead (the call fails with its status, as before). A program that
relies on what the device does but the library does not promise (mlusim.ordering) is tolerated the same way.

A call site is the first stack frame outside mlusim's packages (a Python caller's file and line); a call from C
(through the neuware wrappers, which have no caller frame of their own) is one call site per C function and rule.
"""
from __future__ import annotations

import sys
import threading
import warnings

from . import config
from .errors import Fault

STRICT_ENV = "MLUSIM_STRICT"
#: the packages whose frames are not call sites
_OWN_PACKAGES = ("mlusim", "cnrt", "cnnl", "cncl", "cndev", "cndrv", "neuware", "torch_mlu", "magicmind")

_lock = threading.Lock()
_warned: set = set()


class LenientWarning(UserWarning):
    """A call the simulator ran although its own checks are stricter than the real library's."""


def strict() -> bool:
    """True when MLUSIM_STRICT=1 turns every tolerated case into its error."""
    return config.flag(config.environ().get(STRICT_ENV))


def _call_site(function: str) -> tuple:
    frame = sys._getframe(2)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.split(".")[0] not in _OWN_PACKAGES and not frame.f_code.co_filename.startswith("<neuware"):
            return (frame.f_code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return ("<C>", function)


def tolerate(rule: str, function: str, fault: Fault, category: type = LenientWarning) -> None:
    """Accept a call `function` makes that breaks our `rule` but not the real library's: raise `fault` under
    MLUSIM_STRICT=1, else warn (a `category` warning, once per call site and rule) and return."""
    if strict():
        raise fault
    site = _call_site(function)
    key = (rule, site)
    with _lock:
        if key in _warned:
            return
        _warned.add(key)
    message = (f"{function}: accepted as the real library accepts it, though {rule}: {fault}; {STRICT_ENV}=1 makes "
               f"this an error")
    if site[0] == "<C>":
        warnings.warn(message, category, stacklevel=2)
    else:  # at the caller's own line, where the program has to change
        warnings.warn_explicit(message, category, site[0], site[1])


def reset() -> None:
    """Forget which call sites were warned (tests)."""
    with _lock:
        _warned.clear()
