"""The one way a kernel launch reaches a queue: `kernel[dim, ktype, queue](...)`, cnrt.invokeKernel in every form
(v6 `void **args`, v4 parameter buffers) and the C ABI's launches all call `submit`.

A launch runs a `Program`: a BANG kernel (mlusim.bang.Kernel), a kernel exported to C (neuware), a BANG C kernel;
any other Python callable runs once, as `fn(*args)` (`HostCallable`).

`submit` checks dim and ktype against the board's task model, prepares the program, holds every allocation a pointer
argument points into (from the pointer to the allocation's end, as read and written: what a kernel may touch through
it), and queues one command through the submission builder. The command's work runs the program and puts the
result's work counts into that command's own info: a launch's counts never come from another launch of the same
kernel.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence

from mlusim import cost
from mlusim import device as devices
from mlusim.command import Command, Kind
from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.submit import Submission
from mlusim.validate import as_enum, as_int, is_address

from .taskmodel import TaskLayout, layout

if TYPE_CHECKING:  # the BANG work counts need numba, which a C program's first cnrt call must not load
    from mlusim.bang.work import WorkCounts

#: The largest taskDimX, taskDimY, taskDimZ (cnrtDim3_t).
MAX_DIM = (2**31 - 1, 65535, 65535)
#: cnrtFunctionType_t values and their C names.
FUNCTION_TYPE_NAMES = {1: "cnrtFuncTypeBlock", 2: "cnrtFuncTypeBlock1", 4: "cnrtFuncTypeUnion1",
                       8: "cnrtFuncTypeUnion2", 16: "cnrtFuncTypeUnion4", 32: "cnrtFuncTypeUnion8",
                       64: "cnrtFuncTypeUnion16", -1: "cnrtFuncTypeMutable"}


@dataclass
class LaunchResult:
    """What a launch did: its modelled device time (None: the launch cost alone) and its work counts (None: not
    counted, e.g. a host callable)."""

    model_us: Optional[float] = None
    counts: Optional[WorkCounts] = None


class Program(abc.ABC):
    """What a launch runs. `name` names the kernel (errors, traces); subclasses define `run` and, when they need
    them, `decode` and `prepare`."""

    name: str = "kernel"

    def decode(self, args: tuple) -> tuple:
        """The arguments as values, when they arrive in another form (C's raw bytes): at the call."""
        return args

    def prepare(self, device, layout: TaskLayout, args: tuple, queue) -> None:
        """At the call, before the launch is queued: check the arguments, compile once, so that a bad argument or a
        kernel that does not compile fails at the launch (naming the kernel), not at the next sync."""

    @abc.abstractmethod
    def run(self, device, layout: TaskLayout, args: tuple) -> LaunchResult:
        """On the queue: run every task; the modelled µs and the work counts."""


class HostCallable(Program):
    """A plain Python callable launched as a kernel: it runs once, as `fn(*args)`, on the queue."""

    def __init__(self, fn):
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)

    def run(self, device, layout: TaskLayout, args: tuple) -> LaunchResult:
        self.fn(*args)
        return LaunchResult()


def as_program(kernel):
    """The program of a launch's kernel argument: a Program itself, or a callable wrapped in HostCallable."""
    if isinstance(kernel, Program):
        return kernel
    if callable(kernel):
        return HostCallable(kernel)
    raise ArgumentFault(f"expected a kernel (a BANG kernel or a callable), got {type(kernel).__name__}", "kernel")


def dims(dim, arg: str = "dim") -> tuple[int, int, int]:
    """(x, y, z) of a launch dimension: an object with x/y/z (cnrtDim3_t), a sequence of 1-3 ints, or an int."""
    if all(hasattr(dim, name) for name in ("x", "y", "z")):
        values = (dim.x, dim.y, dim.z)
    elif isinstance(dim, (tuple, list)) and 1 <= len(dim) <= 3:
        values = tuple(dim) + (1,) * (3 - len(dim))
    elif is_address(dim):
        values = (dim, 1, 1)
    else:
        raise ArgumentFault(f"expected a cnrtDim3_t or (x, y, z), got {type(dim).__name__}", arg)
    return tuple(as_int(v, f"{arg}.{name}", minimum=1, maximum=limit)
                 for v, name, limit in zip(values, "xyz", MAX_DIM))


def function_type(ktype, arg: str = "ktype") -> int:
    """A cnrtFunctionType_t value."""
    return as_enum(ktype, arg, tuple(FUNCTION_TYPE_NAMES), "cnrtFunctionType_t")


def task_layout(dim: tuple[int, int, int], value: int, spec, arg: str = "ktype") -> TaskLayout:
    """The task layout of a launch of `dim` tasks of function type `value` on a board, checked against it."""
    if value >= 4:
        clusters = value // 4
        if clusters > spec.max_union:
            raise NotSupportedFault(f"{FUNCTION_TYPE_NAMES[value]} needs {clusters} clusters per union task; "
                                    f"{spec.name} allows at most Union{spec.max_union}", arg)
        cores = clusters * spec.cores_per_cluster
        if dim[0] % cores:
            raise ArgumentFault(f"{FUNCTION_TYPE_NAMES[value]} needs dim.x to be a multiple of {cores} "
                                f"(Union{clusters} x {spec.cores_per_cluster} cores), got dim.x = {dim[0]}", "dim")
    return layout(dim, value, spec.cluster_count, spec.cores_per_cluster, spec.max_union)


def hold_pointer_arguments(submission: Submission, args: Sequence[Any]) -> None:
    """Hold every allocation a pointer argument points into, from the pointer to the allocation's end, as read and
    written, so that a free waits for the kernel. A pointer to no live allocation is left to the kernel, which
    faults when it uses it."""
    for index, value in enumerate(args):
        if is_address(value) and value:
            address = int(value)
            owner = devices.owner_of(address)
            block = owner.memory.find(address) if owner is not None else None
            if block is not None:
                submission.read_write(address, block.end - address, f"args[{index}]")


def submit(program, queue, dim, ktype, args: Sequence[Any]) -> Command:
    """Check and queue one launch of `program` on `queue` (a mlusim Queue): `kernel<<<dim, ktype, queue>>>(args)`."""
    device = queue.device
    checked_dims = dims(dim)
    value = function_type(ktype)
    task = task_layout(checked_dims, value, device.spec)
    if isinstance(args, (str, bytes)) or not isinstance(args, (tuple, list)):
        raise ArgumentFault(f"expected a sequence of kernel arguments, got {type(args).__name__}", "args")
    arguments = program.decode(tuple(args))
    program.prepare(device, task, arguments, queue)
    info = {"dim": checked_dims, "ktype": value}

    def run() -> Optional[float]:
        result = program.run(device, task, arguments)
        if result.counts is not None:
            info.update(bytes=result.counts.gdram_bytes, flops=2 * result.counts.total_macs,
                        work=result.counts.as_dict())
        return result.model_us

    with Submission(Kind.KERNEL, program.name) as submission:
        hold_pointer_arguments(submission, arguments)
        return submission.submit(queue, run, cost.launch_us(device.spec), info=info)


def on_default_queue(program, dim, ktype, args: Sequence[Any], queue=None) -> Command:
    """`kernel[dim, ktype](...)` / `kernel[dim, ktype, queue](...)`: `submit` on `queue`, or on the calling
    thread's current device's default queue when it is None."""
    from mlusim.queue import Queue
    if queue is None:
        queue = devices.current().default_queue
    elif not isinstance(queue, Queue):
        raise ArgumentFault(f"{queue!r:.60} is not a queue", "queue")
    queue.check_alive()
    return submit(program, queue, dim, ktype, args)
