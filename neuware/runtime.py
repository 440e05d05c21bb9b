"""What runs inside a C library when it starts: attach a Python implementation to every exported C function.

The embedded initialisation code of libcnrt/libcnnl/libcncl (see `build.py`) calls `install(ffi, lib, library,
functions)`. Each C function first gets a small trampoline; its first call compiles the real wrapper (`marshal`)
and replaces the trampoline, so start-up costs nothing per function and only functions a program uses are
compiled. A failure anywhere is turned into the library's status (never an exception escaping into C).
"""
from __future__ import annotations

from typing import Callable

from . import bindings, failures, marshal
from .cdecl import CALLBACK_PREFIX, Function

def failure_value(function: Function, family: failures.Family, ffi, code: int):
    """What a C function returns when its Python side could not even run."""
    result = function.result
    if result.category == "void" and result.pointers == 0:
        return None
    if result.pointers:
        return ffi.NULL
    if result.spelling == family.status_type:
        return code
    return 0


def _attach(ffi, function: Function, python: Callable, family: failures.Family) -> None:
    fallback = failure_value(function, family, ffi, family.internal_error)

    def onerror(exception, value, traceback):  # an exception cffi met outside the wrapper (a result conversion)
        failures.record(family, function.name, value if value is not None else RuntimeError(str(exception)))
        return fallback

    ffi.def_extern(name=CALLBACK_PREFIX + function.name, onerror=onerror)(python)


def _trampoline(ffi, library: str, function: Function, helpers: marshal.Helpers, family: failures.Family):
    def first_call(*args):
        try:
            wrapper = marshal.generate(bindings.binding(library, function), helpers, family)
        except BaseException as exc:  # a bindings bug: report it as an internal error of this call
            return failure_value(function, family, ffi, failures.record(family, function.name, exc))
        _attach(ffi, function, wrapper, family)
        return wrapper(*args)

    first_call.__name__ = function.name
    return first_call


def install(ffi, lib, library: str, functions) -> None:
    """Attach every function of `library` (declarations as `Function.as_tuple()` values) to its Python side."""
    family = bindings.family(library)
    helpers = marshal.Helpers(ffi, family)
    for spec in functions:
        function = Function.from_tuple(spec)
        _attach(ffi, function, _trampoline(ffi, library, function, helpers, family), family)
