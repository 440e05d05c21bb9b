"""The machinery shared by the API clones: turn simulator faults into the library's error, record the last error,
and register each Python function under its C name too (`cnrt.malloc` is also `cnrt.cnrtMalloc`)."""
from __future__ import annotations

import functools
import inspect
from typing import Callable, Optional

from .errors import ArgumentFault, Fault
from .observers import OBSERVERS


class ApiError(Exception):
    """Base of the libraries' errors: `.code` is the C status value, `.fault` the simulator fault behind it."""

    def __init__(self, code: int, message: str, fault: Optional[Fault] = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.fault = fault

    @property
    def kind(self) -> str:
        """What went wrong, independent of the library: 'use_after_free', 'out_of_bounds', 'argument', ..."""
        return self.fault.kind if self.fault is not None else "status"

    @property
    def cause(self):
        """For the error of a sync that reports failed queued work: the exception of that work (e.g. the CnclError
        of a failed collective, with its own status code); else None."""
        return getattr(self.fault, "cause", None)


#: The families made so far, by their C prefix ("cnrt", "cnnl", ...).
FAMILIES: dict[str, "ApiFamily"] = {}


class ApiFamily:
    """The public functions of one library, with their error type and fault translation."""

    def __init__(self, prefix: str, error: type, translate: Callable[[Fault], int],
                 on_error: Optional[Callable[[int], None]] = None):
        FAMILIES[prefix] = self
        self.prefix = prefix
        self.error = error
        self.translate = translate
        self.on_error = on_error or (lambda code: None)
        self._registered: dict[str, Callable] = {}
        #: a package that imports its modules on first use sets this (`defer`): load(name) imports the module that
        #: registers `name`, load(None) all of them
        self._load: Optional[Callable[[Optional[str]], None]] = None

    @property
    def functions(self) -> dict[str, Callable]:
        """Every function of the library under all its names (a deferring package imports all its modules first)."""
        if self._load is not None:
            self._load(None)
        return self._registered

    def lookup(self, name: str) -> Optional[Callable]:
        """The function registered under `name`, importing only the module that registers it; None if none does."""
        function = self._registered.get(name)
        if function is None and self._load is not None:
            self._load(name)
            function = self._registered.get(name)
        return function

    def defer(self, load: Optional[Callable[[Optional[str]], None]]) -> None:
        """Let a package import its modules on first use: `load(name)` registers the functions of the module that
        defines `name` (anything else: all modules), `load(None)` all; None once everything is registered."""
        self._load = load

    def __call__(self, c_name: str, *more_c_names: str):
        """Decorator: `@api("cnrtMalloc")` wraps a function and registers it under its C names and their Python
        forms (prefix dropped, next letter lower-cased: cnrtQueueSync -> queueSync)."""

        def wrap(function):
            call = self.reporting(c_name, function)
            names = {function.__name__}
            for name in (c_name, *more_c_names):
                names.update((name, self.python_name(name)))
            for name in names:
                if name in self._registered and self._registered[name] is not call:
                    raise RuntimeError(f"{name} registered twice")
                self._registered[name] = call
            return call

        return wrap

    def reporting(self, c_name: str, function: Callable) -> Callable:
        """`function` with its failures reported as this library's error of the C function `c_name` (its status
        code, the last error, the sanitizer's api_fault event), without registering it."""
        error, translate, on_error = self.error, self.translate, self.on_error

        @functools.wraps(function)
        def call(*args, **kwargs):
            try:
                return function(*args, **kwargs)
            except error as exc:
                on_error(exc.code)
                raise
            except Fault as fault:
                for hook in OBSERVERS.api_fault:
                    hook(c_name, fault)
                code = translate(fault)
                on_error(code)
                raise error(code, f"{c_name}: {fault}", fault) from None
            except TypeError:
                fault = arity_fault(function, c_name, args, kwargs)
                if fault is None:
                    raise
                code = translate(fault)
                on_error(code)
                raise error(code, f"{c_name}: {fault}", fault) from None

        call.c_name = c_name
        return call

    def python_name(self, c_name: str) -> str:
        if not c_name.startswith(self.prefix):
            raise ValueError(f"{c_name} lacks the prefix {self.prefix}")
        rest = c_name[len(self.prefix):]
        return rest[:1].lower() + rest[1:]

    def export(self, namespace: dict) -> None:
        """Put every function registered so far into a module namespace under all its names."""
        namespace.update(self._registered)


def reported_as(c_name: str, function: Callable) -> Callable:
    """`function` with its failures reported as the error of the C function `c_name` by the library of its prefix
    (`ApiFamily.reporting`), when that library is loaded; else `function` itself (its faults raised as they are).
    Core syntax that stands for a runtime call (`kernel[dim, ktype, queue](...)` is cnrtInvokeKernel) uses it."""
    prefixes = [prefix for prefix in FAMILIES if c_name.startswith(prefix)]
    if not prefixes:
        return function
    return FAMILIES[max(prefixes, key=len)].reporting(c_name, function)


def arity_fault(function, c_name: str, args: tuple, kwargs: dict) -> Optional[ArgumentFault]:
    """The error for a call whose arguments do not fit the function's parameters (None when they do: the TypeError
    came from inside). A C-style call that passes an array's count before the array gets the rule that explains it:
    in Python the array and its count are one sequence."""
    signature = inspect.signature(function)
    try:
        signature.bind(*args, **kwargs)
        return None
    except TypeError as exc:
        problem = str(exc)
    names = list(signature.parameters)
    message = f"{c_name} takes ({', '.join(names)}); {problem}"
    positional = list(args)
    for index in range(len(positional) - 1):
        count, array = positional[index], positional[index + 1]
        if (isinstance(count, int) and not isinstance(count, bool) and isinstance(array, (list, tuple))
                and len(positional) > len(names) and count == len(array)):
            return ArgumentFault(f"{message}. The Python form passes an array and its count as one sequence: drop "
                                 f"the count {count} before the array {list(array)!r:.60} (the C call's "
                                 f"'..., {count}, array' is '..., array' here)", names[min(index, len(names) - 1)])
    return ArgumentFault(message, None)
