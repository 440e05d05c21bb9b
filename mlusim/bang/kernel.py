"""The kernel decorator (`__mlu_global__`), device functions (`__mlu_func__`) and the launch entry point.

    @bang.kernel
    def vadd(ctx, x: bang.gdram(bang.float32), y: bang.gdram(bang.float32), z: bang.gdram(bang.float32), n: int):
        ...
    vadd[dim, cnrt.cnrtFuncTypeUnion1, queue](x_ptr, y_ptr, z_ptr, n)     # vadd<<<dim, Union1, queue>>>(...)

The body is compiled with numba (nopython, nogil, cached on disk). Parameters annotated with `bang.gdram(T)` take
device addresses and arrive as typed Ptr over their allocation; other parameters arrive as numbers. In debug mode
the body (and the device functions it calls) run as plain Python, with the same pointers, intrinsics and checks.
"""
from __future__ import annotations

import inspect
import logging
import os
import sys
import time
import types as pytypes
from collections import deque
from dataclasses import dataclass

import numba
from numba.core.registry import CPUDispatcher

from mlusim import launching
from mlusim.errors import KernelFault

from .caching import jit
from .context import Ctx
from .dtypes import ElementType
from .launcher import HOST_WORKERS, Launch, gdram_pointer
from .pointer import Ptr

log = logging.getLogger("mlusim.bang")

#: Seconds a task may wait at a barrier before the launch is reported as deadlocked.
DEFAULT_BARRIER_TIMEOUT = float(os.environ.get("MLUSIM_BANG_BARRIER_TIMEOUT", "30"))
_BARRIER_NAMES = {"sync_cluster", "sync_all"}


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


class GdramParam:
    """Annotation of a kernel parameter that is a GDRAM pointer to `etype` elements (`T *x` of a kernel)."""

    def __init__(self, etype: ElementType):
        if not isinstance(etype, ElementType):
            raise TypeError(f"bang.gdram takes a bang element type (bang.float32, ...), got {etype!r}")
        self.etype = etype

    def __repr__(self) -> str:
        return f"bang.gdram({self.etype!r})"


def gdram(etype: ElementType) -> GdramParam:
    """Annotation for a `__mlu_global__` kernel parameter `T *name` pointing into GDRAM."""
    return GdramParam(etype)


def func(fn=None):
    """`__mlu_func__`: a device function callable from kernels (compiled; plain Python in debug mode)."""
    if fn is None:
        return func
    dispatcher = jit(fn)
    dispatcher.bang_device_function = True
    return dispatcher


def _is_device_function(value) -> bool:
    return isinstance(value, CPUDispatcher) and getattr(value, "bang_device_function", False)


def _code_names(code) -> set:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _code_names(const)
    return names


def _reaches_barrier(fn, seen: set) -> bool:
    """Whether fn, or a device function it names, names sync_cluster / sync_all."""
    if fn in seen:
        return False
    seen.add(fn)
    names = _code_names(fn.__code__)
    if names & _BARRIER_NAMES:
        return True
    return any(_reaches_barrier(fn.__globals__[n].py_func, seen)
               for n in names if _is_device_function(fn.__globals__.get(n)))


def _device_functions(fn, found: dict) -> dict:
    """The Python functions of the device functions fn reaches (recursively), by identity."""
    for name in _code_names(fn.__code__):
        value = fn.__globals__.get(name)
        if _is_device_function(value) and value.py_func not in found:
            found[value.py_func] = None
            _device_functions(value.py_func, found)
    return found


def _device_function_code(fn) -> bytes:
    return b"".join(f.__code__.co_code for f in _device_functions(fn, {}))


def _as_python(fn, converted: dict):
    """fn with the device functions it names replaced by their Python versions (recursively): debug mode."""
    if fn in converted:
        return converted[fn]
    scope = dict(fn.__globals__)
    clone = pytypes.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__, fn.__closure__)
    converted[fn] = clone
    for name in _code_names(fn.__code__):
        value = scope.get(name)
        if _is_device_function(value):
            scope[name] = _as_python(value.py_func, converted)
    return clone


def _type_key(value):
    """What decides the numba type of a kernel argument, cheaply."""
    if isinstance(value, Ptr):
        return ("ptr", value.etype.kind)
    if isinstance(value, (int, float, bool)):
        return type(value)
    if isinstance(value, Ctx):
        return Ctx  # every context has the same field types
    return numba.typeof(value)


@dataclass
class LaunchRecord:
    """What one launch did: `counts` (WorkCounts), `model_us` (modelled device time), the task `schedule`."""

    kernel: str
    dim: tuple
    ktype: int
    counts: object
    model_us: float
    host_seconds: float
    schedule: list
    debug: bool


@dataclass
class CompileRecord:
    signature: str
    seconds: float
    from_cache: bool


class Kernel:
    """A BANG kernel (`__mlu_global__ void name(...)`); launch with cnrt.invokeKernel or kernel[dim, ktype, queue]."""

    def __init__(self, fn, barriers: bool | None = None, debug: bool | None = None, workers: int | None = None,
                 barrier_timeout: float | None = None):
        self.py_func = fn
        self.__name__ = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self.params = self._parameters(fn)
        self.uses_barriers = _reaches_barrier(fn, set()) if barriers is None else bool(barriers)
        self.debug = _env_flag("MLUSIM_BANG_DEBUG") if debug is None else bool(debug)
        self.workers = workers
        self.barrier_timeout = DEFAULT_BARRIER_TIMEOUT if barrier_timeout is None else float(barrier_timeout)
        self.jitted = jit(fn, salt=_device_function_code(fn))
        self._python_body = None
        self._entries: dict = {}
        self.compiles: list[CompileRecord] = []
        self.launches: deque[LaunchRecord] = deque(maxlen=64)

    def __repr__(self) -> str:
        return f"<bang kernel {self.__name__}>"

    @staticmethod
    def _parameters(fn) -> list[tuple[str, object]]:
        signature = inspect.signature(fn)
        names = list(signature.parameters)
        if not names:
            raise TypeError(f"kernel {fn.__name__} must take the task context as its first parameter")
        annotations = inspect.get_annotations(fn, eval_str=True)
        return [(name, annotations.get(name)) for name in names[1:]]

    @property
    def last_launch(self) -> LaunchRecord | None:
        """The most recent completed launch (its work counts, modelled time and schedule)."""
        return self.launches[-1] if self.launches else None

    # ---- arguments -----------------------------------------------------------------------------------------------

    def bind_arguments(self, device, args: tuple) -> tuple:
        if len(args) != len(self.params):
            raise KernelFault(f"kernel '{self.__name__}' takes {len(self.params)} argument(s) "
                              f"({', '.join(n for n, _ in self.params)}), got {len(args)}", kernel=self.__name__)
        bound = []
        for (name, annotation), value in zip(self.params, args):
            if isinstance(annotation, GdramParam):
                bound.append(gdram_pointer(device, value, name, annotation.etype, self.__name__))
            elif annotation is int:
                bound.append(int(value))
            elif annotation is float:
                bound.append(float(value))
            else:
                bound.append(value)
        return tuple(bound)

    # ---- compilation ---------------------------------------------------------------------------------------------

    def _compiled_body(self, sample_args: tuple):
        """The compiled body's entry point for these argument types (compiling or loading it the first time).

        Calling the entry point directly skips numba's per-call type dispatch, which would cost more than an
        empty task; the argument types are fixed by the key."""
        key = tuple(_type_key(a) for a in sample_args)
        entry = self._entries.get(key)
        if entry is not None:
            return entry
        signature = tuple(numba.typeof(a) for a in sample_args)
        if signature not in self.jitted.overloads:
            hits_before = sum(self.jitted._cache_hits.values())
            started = time.perf_counter()
            try:
                self.jitted.compile(signature)
            except Exception as exc:
                raise KernelFault(f"kernel '{self.__name__}' does not compile for {signature}: {exc}",
                                  kernel=self.__name__) from exc
            record = CompileRecord(str(signature), time.perf_counter() - started,
                                   sum(self.jitted._cache_hits.values()) > hits_before)
            self.compiles.append(record)
            how = "loaded from the on-disk cache" if record.from_cache else "compiled"
            log.info("kernel %s %s in %.3f s", self.__name__, how, record.seconds)
            if _env_flag("MLUSIM_BANG_VERBOSE"):
                print(f"mlusim.bang: kernel {self.__name__} {how} in {record.seconds:.3f} s", file=sys.stderr)
        entry = self.jitted.overloads[signature].entry_point
        self._entries[key] = entry
        return entry

    def python_body(self):
        """The body as plain Python (debug mode), device functions included."""
        if self._python_body is None:
            self._python_body = _as_python(self.py_func, {})
        return self._python_body

    # ---- launching -----------------------------------------------------------------------------------------------

    def __mlusim_launch__(self, device, dim, ktype, args) -> float:
        """Run one launch on `device` (called by cnrt on the queue's worker); returns modelled device µs."""
        started = time.perf_counter()
        launch = Launch(self, device, dim, ktype, tuple(args))
        debug = self.debug
        if debug:
            body, workers = self.python_body(), 1
        else:
            body = self._compiled_body((launch.sample_context(),) + launch.args)
            workers = self.workers or HOST_WORKERS
        try:
            model_us = launch.run(body, workers, self.barrier_timeout)
        finally:
            self.launches.append(LaunchRecord(self.__name__, (dim.x, dim.y, dim.z), ktype, launch.counts,
                                              0.0, time.perf_counter() - started, launch.schedule, debug))
        self.launches[-1].model_us = model_us
        return model_us

    def __getitem__(self, config):
        """`kernel[dim, ktype, queue](*args)` is `kernel<<<dim, ktype, queue>>>(args...)` (queue may be omitted)."""
        if not isinstance(config, tuple) or len(config) not in (2, 3):
            raise TypeError("use kernel[dim, ktype] or kernel[dim, ktype, queue]")
        dim, ktype = config[0], config[1]
        queue = config[2] if len(config) == 3 else None

        def launch(*args):  # through the runtime's own checks and queues (cnrtInvokeKernel)
            return launching.runtime_launch()(self, dim, ktype, list(args), 0, queue)

        return launch

    def __call__(self, *args, **kwargs):
        raise TypeError(f"kernel {self.__name__} runs on the device: launch it with "
                        f"{self.__name__}[dim, ktype, queue](...) or cnrt.invokeKernel")


def kernel(fn=None, *, barriers: bool | None = None, debug: bool | None = None, workers: int | None = None,
           barrier_timeout: float | None = None):
    """`__mlu_global__`: make `fn(ctx, ...)` a BANG kernel. Options: barriers (default: detected from the body),
    debug (run as plain Python; default env MLUSIM_BANG_DEBUG), workers (host threads; default one per host core),
    barrier_timeout (seconds before a barrier wait is a deadlock; default env MLUSIM_BANG_BARRIER_TIMEOUT or 30)."""
    def wrap(function):
        return Kernel(function, barriers=barriers, debug=debug, workers=workers, barrier_timeout=barrier_timeout)
    return wrap if fn is None else wrap(fn)
