"""How a failed C call is reported: the library's status code, the simulator's message kept per host thread, and a
line on stderr under MLUSIM_CAPI_VERBOSE=1 (always, with the traceback, for an internal error of the simulator)."""
from __future__ import annotations

import os
import sys
import threading
import traceback
from dataclasses import dataclass

from mlusim.apicall import ApiError, ApiFamily
from mlusim.errors import Fault

VERBOSE_ENV = "MLUSIM_CAPI_VERBOSE"


@dataclass(frozen=True)
class Family:
    """One library as the C side sees it: its Python API family, the C type of its status, and the status of an
    internal error."""

    name: str
    api: ApiFamily
    status_type: str
    internal_error: int

    def code_of(self, exc: BaseException) -> int:
        if isinstance(exc, self.api.error):
            return exc.code
        if isinstance(exc, (Fault, ApiError)):
            return self.api.translate(exc)
        return self.internal_error


class _Last(threading.local):
    family = ""
    code = 0
    message = ""


_last = _Last()


def verbose() -> bool:
    return os.environ.get(VERBOSE_ENV, "") not in ("", "0")


def record(family: Family, function: str, exc: BaseException) -> int:
    """The status that reports `exc` from C function `function`; remembers the message for this thread, sets the
    library's last error (cnrtGetLastError) and prints under MLUSIM_CAPI_VERBOSE."""
    code = family.code_of(exc)
    internal = not isinstance(exc, (Fault, ApiError))
    if isinstance(exc, Fault):
        message = f"{function}: {exc}"
    elif internal:
        message = f"{function}: internal error of the simulator: {type(exc).__name__}: {exc}"
    else:
        message = str(exc)
    if not message.startswith(function) and function not in message:
        message = f"{function}: {message}"
    _last.family, _last.code, _last.message = family.name, code, message
    try:
        family.api.on_error(code)
    except Exception:  # the last-error hook must never turn a failure into a crash
        pass
    if internal or verbose():
        sys.stderr.write(f"mlusim: {function} failed with status {code}: {message}\n")
        if internal:
            traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
        sys.stderr.flush()
    return code


def last_message() -> str:
    """The message of this thread's last failed C call ('' if none)."""
    return _last.message


def detail_for(family: Family, code: int) -> str:
    """The message of this thread's last failure if it was `code` from `family`, else ''."""
    if code and _last.family == family.name and _last.code == code:
        return _last.message
    return ""
