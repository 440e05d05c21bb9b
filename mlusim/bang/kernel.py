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

import abc
import builtins
import dis
import inspect
import logging
import numbers
import re
import sys
import time
import types as pytypes
from collections import deque
from dataclasses import dataclass

import numba
import numpy as np
from numba.core.registry import CPUDispatcher

from mlusim import config
from mlusim import device as devices
from mlusim import launch
from mlusim.apicall import reported_as
from mlusim.errors import ArgumentFault, Fault, KernelFault, MemoryFault
from mlusim.taskmodel import TaskLayout

from . import watchdog
from .caching import jit
from .context import Ctx
from .dtypes import ElementType
from .execute import HOST_WORKERS, Launch, board_limits, gdram_pointer
from .pointer import GDRAM, INT64_MAX, INT64_MIN, Ptr

log = logging.getLogger("mlusim.bang")

#: Seconds a task may wait at a barrier before the launch is reported as deadlocked.
DEFAULT_BARRIER_TIMEOUT = float(config.environ().get("MLUSIM_BANG_BARRIER_TIMEOUT", "30"))
_BARRIER_NAMES = {"sync_cluster", "sync_all"}


def _env_flag(name: str) -> bool:
    return config.flag(config.environ().get(name))


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
    dispatcher = jit(fn, polls=True)
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


def _may_not_poll(fn) -> bool:
    """Whether the body (or a device function it reaches) calls compiled code that has no stop polls: a plain
    numba function (not a bang intrinsic or @bang.func) or an object-mode block. Such a launch may not stop when
    asked, so the main thread never runs its tasks itself (it could not take Ctrl-C)."""
    for function in [fn, *_device_functions(fn, {})]:
        names = _code_names(function.__code__)
        if "objmode" in names:
            return True
        for name in names:
            value = function.__globals__.get(name)
            if isinstance(value, CPUDispatcher) and not getattr(value, "bang_device_function", False):
                module = getattr(value.py_func, "__module__", "") or ""
                if not module.startswith("mlusim.bang"):
                    return True
    return False


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


def _undefined_names(fn) -> list[str]:
    """Globals and module attributes the body (or a device function it reaches) uses that do not exist, e.g. an
    intrinsic mlusim.bang does not have: found before numba would report them as a typing error."""
    problems = []
    for function in [fn, *_device_functions(fn, {})]:
        scope = function.__globals__
        previous = None
        for instruction in dis.get_instructions(function):
            if instruction.opname == "LOAD_GLOBAL":
                name = instruction.argval
                if name not in scope and not hasattr(builtins, name):
                    problems.append(f"'{name}' is not defined")
                previous = scope.get(name)
            elif instruction.opname in ("LOAD_ATTR", "LOAD_METHOD") and isinstance(previous, pytypes.ModuleType):
                if not hasattr(previous, instruction.argval):
                    module = previous.__name__
                    label = "mlusim.bang" if module.startswith("mlusim.bang") else module
                    problems.append(f"{label}.{instruction.argval} does not exist"
                                    + (" (no such intrinsic)" if label == "mlusim.bang" else ""))
                previous = None
            else:
                previous = None
    return problems


def _numba_error_summary(exc: Exception) -> str:
    """The first lines of a numba compile error that say what went wrong (not its dump of the IR)."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    ours = [line.split("[bang]", 1)[1].strip() for line in lines if "[bang]" in line]
    if ours:
        generic = ("an intrinsic:", "an activation:")  # a check that did not know the operand's name
        named = [message for message in ours if not message.startswith(generic)]
        if named:  # the innermost check of a chain of calls, where the name arrived as a constant
            return named[0]
        operand = re.search(r"Literal\[str\]\(([^)]*)\)", text)  # the intrinsic operand the check was about
        message = ours[0]
        for prefix in generic:
            if operand is not None and message.startswith(prefix):
                message = operand.group(1) + ":" + message[len(prefix):]
        return message
    kept = [line for line in lines if not line.startswith(("File ", "During:", "^", "raised from"))][:4]
    return " / ".join(kept)[:600]


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


class TaskKernel(launch.Program):
    """What every kernel that runs as tasks on the simulated cores shares, the DSL's (`Kernel`) and cncc's
    (neuware.bangc.program.BangCKernel): the watchdog's time limit and the record of its recent launches."""

    debug = False
    #: whether Union launches run a memory-core task per cluster beside the compute cores' (BANG C kernels that
    #: ask __is_mpu() / __is_ipu(); the DSL's kernels never do)
    runs_memory_cores = False

    def __init__(self, time_limit: float | str | None = "default"):
        self._time_limit = time_limit
        self.launches: deque[LaunchRecord] = deque(maxlen=64)

    @property
    def time_limit(self) -> float | None:
        """Seconds a launch may run before the watchdog stops it (None: no limit)."""
        if self._time_limit == "default":
            return watchdog.default_time_limit(self.debug)
        return watchdog.time_limit_from(self._time_limit)

    @time_limit.setter
    def time_limit(self, value) -> None:
        if value != "default":
            watchdog.time_limit_from(value)
        self._time_limit = value

    @property
    def last_launch(self) -> LaunchRecord | None:
        """The most recent completed launch (its work counts, modelled time and schedule)."""
        return self.launches[-1] if self.launches else None

    @abc.abstractmethod
    def task_body(self, running: Launch):
        """(body, host workers) of one launch: the function the engine calls once per task, on how many threads."""

    def bind_srams(self, args: tuple, srams: list) -> None:
        """The SRAM of each cluster of a Union launch's rounds (index: clusterId), before its tasks run: a kernel
        that copies into another cluster's SRAM (__memcpy SRAM2SRAM with a destination cluster) takes them here."""

    def run(self, device, layout: TaskLayout, args: tuple) -> launch.LaunchResult:
        """Run one launch on `device` (on its queue, mlusim.launch): its modelled device µs and work counts."""
        started = time.perf_counter()
        running = Launch(self, device, layout, tuple(args))
        body, workers = self.task_body(running)
        record = LaunchRecord(self.__name__, layout.dim, layout.ktype, None, 0.0, 0.0, running.schedule, self.debug)
        try:
            record.model_us = running.run(body, workers, self.barrier_timeout, self.time_limit)
        finally:
            record.counts, record.schedule = running.counts, running.schedule
            record.host_seconds = time.perf_counter() - started
            self.launches.append(record)
        return launch.LaunchResult(record.model_us, running.counts)

    def __getitem__(self, config):
        """`kernel[dim, ktype, queue](*args)` is `kernel<<<dim, ktype, queue>>>(args...)`: queued on `queue` (a
        cnrt queue), or on the current device's default queue when it is omitted (mlusim.launch)."""
        if not isinstance(config, tuple) or len(config) not in (2, 3):
            raise TypeError("use kernel[dim, ktype] or kernel[dim, ktype, queue]")
        dim, ktype = config[0], config[1]
        queue = config[2] if len(config) == 3 else None

        def launch_kernel(*args) -> None:  # kernel<<<...>>>(...) is the runtime's call: its errors are the runtime's
            reported_as("cnrtInvokeKernel", launch.on_default_queue)(self, dim, ktype, list(args), queue)

        return launch_kernel


class Kernel(TaskKernel):
    """A BANG kernel (`__mlu_global__ void name(...)`); launch with cnrt.invokeKernel or kernel[dim, ktype, queue]."""

    def __init__(self, fn, barriers: bool | None = None, debug: bool | None = None, workers: int | None = None,
                 barrier_timeout: float | None = None, time_limit: float | str | None = "default"):
        super().__init__(time_limit)
        self.py_func = fn
        self.__name__ = self.name = fn.__name__
        self.__qualname__ = fn.__qualname__
        self.__doc__ = fn.__doc__
        self.params = self._parameters(fn)
        self.uses_barriers = _reaches_barrier(fn, set()) if barriers is None else bool(barriers)
        self.may_not_poll = _may_not_poll(fn)
        self.debug = _env_flag("MLUSIM_BANG_DEBUG") if debug is None else bool(debug)
        self.workers = workers
        self.barrier_timeout = DEFAULT_BARRIER_TIMEOUT if barrier_timeout is None else float(barrier_timeout)
        self.jitted = jit(fn, salt=_device_function_code(fn), polls=True)
        self._python_body = None
        self._entries: dict = {}
        #: argument type keys already compiled for at a launch call; the static part of each parameter's key
        self._prepared: set = set()
        self._static_keys = tuple(("ptr", a.etype.kind) if isinstance(a, GdramParam) else
                                  (int if a is int else float if a is float else None) for _, a in self.params)
        self.compiles: list[CompileRecord] = []

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

    # ---- arguments -----------------------------------------------------------------------------------------------

    def check_arguments(self, device, args: tuple) -> None:
        """Check the launch's arguments against the parameters at the launch call (ArgumentFault naming the kernel,
        the parameter and the expected type)."""
        where = f"kernel '{self.__name__}'"
        if len(args) != len(self.params):
            names = ", ".join(n for n, _ in self.params)
            raise ArgumentFault(f"{where} takes {len(self.params)} argument(s) ({names}), got {len(args)}", "args")
        for index, ((name, annotation), value) in enumerate(zip(self.params, args)):
            arg = f"args[{index}]"
            if isinstance(annotation, GdramParam):
                if value is None:
                    continue
                if not _is_integer(value):
                    raise ArgumentFault(f"{where} parameter '{name}' is {annotation!r} and takes a device address "
                                        f"(int), got {_describe(value)}", arg)
                address = int(value)
                if address == 0:
                    continue
                owner = devices.owner_of(address)
                if owner is not device:
                    place = "no device" if owner is None else f"device {owner.index}"
                    raise ArgumentFault(f"{where} parameter '{name}' = 0x{address:x} is an address of {place}, not "
                                        f"of device {device.index}", arg)
                try:
                    block, offset = device.memory.resolve(address, 0, arg=name)
                except MemoryFault as fault:  # keeps its kind (use_after_free, unknown_address, ...)
                    named = type(fault)(f"{where} parameter '{name}': {fault.message}", arg, fault.address)
                    named.block = getattr(fault, "block", None)
                    raise named from None
                except Fault as fault:
                    raise ArgumentFault(f"{where} parameter '{name}': {fault.message}", arg) from None
                if offset % annotation.etype.itemsize:
                    raise ArgumentFault(f"{where} parameter '{name}' = 0x{address:x} is not aligned for "
                                        f"{annotation.etype.kind} ({annotation.etype.itemsize} bytes)", arg)
            elif annotation is int or annotation is None:
                expected = "an int (int64)" if annotation is int else "a number (the parameter has no annotation)"
                if _is_integer(value) or isinstance(value, (bool, np.bool_)):
                    if not INT64_MIN <= int(value) <= INT64_MAX:
                        raise ArgumentFault(f"{where} parameter '{name}' takes {expected}; {int(value)} does not "
                                            f"fit int64", arg)
                elif annotation is int or not isinstance(value, (numbers.Real, np.bool_)):
                    raise ArgumentFault(f"{where} parameter '{name}' takes {expected}, got {_describe(value)}",
                                        arg)
            elif annotation is float:
                if not isinstance(value, (numbers.Real, np.bool_)):
                    raise ArgumentFault(f"{where} parameter '{name}' takes a float, got {_describe(value)}", arg)

    def _sample_arguments(self, args: tuple) -> tuple:
        """Values with the numba types the launch's bound arguments will have (to compile before any task runs)."""
        sample = []
        for (name, annotation), value in zip(self.params, args):
            if isinstance(annotation, GdramParam):
                sample.append(Ptr(np.zeros(0, annotation.etype.storage), 0, GDRAM, name, annotation.etype))
            elif annotation is int:
                sample.append(int(value))
            elif annotation is float:
                sample.append(float(value))
            else:
                sample.append(value)
        return tuple(sample)

    def prepare(self, device, layout: TaskLayout, args: tuple, queue) -> None:
        """At the launch call, before the launch is queued (mlusim.launch): check the arguments and compile the
        body for their types, so that a wrong argument, a missing intrinsic or a typing error fails at the launch
        (naming the kernel), not at the next sync. Compile time spent while the queue had nothing else to do is
        kept out of its notifiers' host times (cnrtNotifierElapsedTime)."""
        self.check_arguments(device, tuple(args))
        if self.debug:
            return
        key = tuple(static if static is not None else _type_key(value)
                    for static, value in zip(self._static_keys, args))
        if key in self._prepared:
            return
        started = time.perf_counter()
        compiles = len(self.compiles)
        context = Ctx(0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, *([np.zeros(0, np.uint8)] * 3), np.zeros(1, np.int64),
                      board_limits(device.spec))
        self._compiled_body((context,) + self._sample_arguments(tuple(args)))
        self._prepared.add(key)
        if len(self.compiles) > compiles and queue is not None:
            queue.note_host_gap(started, time.perf_counter())

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
            missing = _undefined_names(self.py_func)
            if missing:
                raise KernelFault(f"kernel '{self.__name__}' cannot be compiled: {'; '.join(missing)}",
                                  kernel=self.__name__, reason="compile")
            hits_before = sum(self.jitted._cache_hits.values())
            started = time.perf_counter()
            try:
                self.jitted.compile(signature)
            except Exception as exc:
                types = ", ".join(f"{name}: {t}" for (name, _), t in zip(self.params, signature[1:]))
                raise KernelFault(f"kernel '{self.__name__}' does not compile for its arguments ({types}): "
                                  f"{_numba_error_summary(exc)}", kernel=self.__name__, reason="compile") from exc
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

    def task_body(self, running: Launch):
        """The Python body on one thread in debug mode, else the compiled body on the host's workers."""
        if self.debug:
            return self.python_body(), 1
        return self._compiled_body((running.sample_context(),) + running.args), self.workers or HOST_WORKERS

    def __call__(self, *args, **kwargs):
        raise TypeError(f"kernel {self.__name__} runs on the device: launch it with "
                        f"{self.__name__}[dim, ktype, queue](...) or cnrt.invokeKernel")


def kernel(fn=None, *, barriers: bool | None = None, debug: bool | None = None, workers: int | None = None,
           barrier_timeout: float | None = None, time_limit: float | str | None = "default"):
    """`__mlu_global__`: make `fn(ctx, ...)` a BANG kernel. Options: barriers (default: detected from the body),
    debug (run as plain Python; default env MLUSIM_BANG_DEBUG), workers (host threads; default one per host core),
    barrier_timeout (seconds before a barrier wait is a deadlock; default env MLUSIM_BANG_BARRIER_TIMEOUT or 30),
    time_limit (seconds a launch may run before the watchdog stops it; None for no limit; default env
    MLUSIM_BANG_TIME_LIMIT or 120, none in debug mode)."""
    def wrap(function):
        return Kernel(function, barriers=barriers, debug=debug, workers=workers, barrier_timeout=barrier_timeout,
                      time_limit=time_limit)
    return wrap if fn is None else wrap(fn)


def _is_integer(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _describe(value) -> str:
    return f"{type(value).__name__} {value!r:.40}"
