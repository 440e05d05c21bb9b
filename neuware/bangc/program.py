"""A compiled BANG C kernel as a launchable program on mlusim.bang's task engine.

The engine (mlusim.bang.execute.Launch) lays out the tasks (Block / UnionN rounds), runs them on host threads,
holds barriers, the watchdog and the fault collection; each task here is one call of the kernel's compiled entry
trampoline through ctypes (the GIL released) with a context row: task ids, the core's NRAM/WRAM and the cluster's
SRAM, the state row the work counters go to, the launch's limits and the stop table the kernel polls. A trap in
the kernel comes back as its kind and message and is raised as the engine's exception of that kind, so the sticky
error names kernel, task and ids as for a Python BANG kernel.

Pointer arguments are device addresses; the kernel gets the host address of the bytes behind them, and every
copy and every scalar load and store (mlusim_bang/access.h) is checked against the allocations the launch was given
(reported with device addresses).
"""
from __future__ import annotations

import ctypes
import itertools
import threading

import numpy as np

from mlusim import device as devices
from mlusim.bang import barriers
from mlusim.bang.arenas import aligned_bytes
from mlusim.bang.cancel import _TABLE as STOP_TABLE, TaskStopped
from mlusim.bang.faults import KernelAssert, KernelTrap, KernelUserTrap
from mlusim.bang.kernel import DEFAULT_BARRIER_TIMEOUT, TaskKernel
from mlusim.bang.execute import HOST_WORKERS, Launch
from mlusim.errors import ArgumentFault, Fault, KernelFault

from .registry import KernelInfo

# context row slots (mlusim_bang/core.h)
C_ENGINE_TASK = 0
C_TASK, C_NRAM, C_STATE, C_LIMITS, C_STOP, C_LAUNCH = 1, 13, 19, 20, 21, 22
C_ERROR, C_ERROR_SIZE, C_ERROR_KIND, C_SERIAL, C_PENDING, C_SLOTS = 23, 24, 25, 26, 62, 64
#: async copies a task may have pending (struct __mlu_pending: dst, src, size)
MAX_PENDING = 256
# launch row
L_ID, L_NBLOCKS, L_BLOCKS, L_BARRIER, L_DEVICE_BASE, L_DEVICE_SPAN, L_SRAMS, L_NSRAMS, L_SITES = \
    0, 1, 2, 3, 12, 13, 14, 15, 16
SITE_WORDS, MAX_SITES = 6, 1024
ERROR_BYTES = 2048
_FAULTS = {1: KernelTrap, 2: KernelAssert, 3: KernelUserTrap, 4: TaskStopped, 5: barriers.BarrierAborted}
_KIND_CODE = {barriers.BarrierAborted: 5, TaskStopped: 4, KernelUserTrap: 3, KernelAssert: 2}
_ENTRY = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p)
_BARRIER = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                            ctypes.c_void_p, ctypes.c_int64)
_serials = itertools.count(1)
_launch_ids = itertools.count(1)
#: C argument type of each parameter kind (for cnrtInvokeKernel's void **args)
_C_TYPES = {("p", 8): "void *", ("i", 1): "int8_t", ("u", 1): "uint8_t", ("b", 1): "bool", ("i", 2): "int16_t",
            ("u", 2): "uint16_t", ("h", 2): "half", ("i", 4): "int32_t", ("u", 4): "uint32_t", ("f", 4): "float",
            ("i", 8): "int64_t", ("u", 8): "uint64_t", ("f", 8): "double"}
_SPACE_NAMES = {}


def _write_message(buffer: int, size: int, message: str) -> None:
    data = message.encode(errors="replace")[:max(0, size - 1)]
    ctypes.memmove(buffer, data + b"\0", len(data) + 1)


def _arrive(key, task, cluster_dim, scope, error, size) -> int:
    """A task's barrier wait, from compiled code (mlusim.bang.barriers decides, and reports deadlocks)."""
    try:
        barriers.arrive(key, task, cluster_dim, scope)
        return 0
    except BaseException as exc:  # the task's fault: its kind and message go back to the kernel
        _write_message(error, size, str(exc))
        return next((code for cls, code in _KIND_CODE.items() if isinstance(exc, cls)), 1)


_ARRIVE = _BARRIER(_arrive)


class BoundArguments:
    """A launch's arguments as the trampoline reads them, the GDRAM blocks they point into and the launch row."""

    def __init__(self, kernel: "BangCKernel", device, args: tuple):
        self.values = np.zeros(max(1, len(args)), np.uint64)
        self.argv = (ctypes.c_void_p * max(1, len(args)))()
        names, blocks = [], []
        for index, ((kind, size), value) in enumerate(zip(kernel.info.params, args)):
            if kind == "p":
                self.values[index] = self._host_address(kernel, device, index, value, blocks, names)
            else:
                raw = np.zeros(8, np.uint8)
                raw[:size] = np.frombuffer(_raw_bytes(kind, size, value), np.uint8)
                self.values[index] = raw.view(np.uint64)[0]
            self.argv[index] = self.values.ctypes.data + 8 * index
        self.names = names
        self.blocks = np.array(blocks, np.int64).reshape(-1, 4) if blocks else np.zeros((1, 4), np.int64)
        self.device = device
        self.row = np.zeros(L_SITES + SITE_WORDS * MAX_SITES, np.int64)
        self.row[L_ID] = next(_launch_ids)
        self.row[L_NBLOCKS] = len(blocks)
        self.row[L_BLOCKS] = self.blocks.ctypes.data
        self.row[L_BARRIER] = ctypes.cast(_ARRIVE, ctypes.c_void_p).value
        self.row[L_DEVICE_BASE] = device.memory.base
        self.row[L_DEVICE_SPAN] = device.memory.span
        self.contexts: dict = {}

    def _host_address(self, kernel, device, index, value, blocks, names) -> int:
        address = int(value or 0)
        if address == 0:
            return 0
        block, offset = device.memory.resolve(address, 0, arg=kernel.param_name(index))
        host = block.data.ctypes.data
        name = ctypes.create_string_buffer(kernel.param_name(index).encode())
        names.append(name)
        blocks.append((host, host + block.size, block.start, ctypes.addressof(name)))
        return host + offset

    def context_row(self, ctx) -> np.ndarray:
        """The context row of the worker whose state row `ctx` carries (made once per worker and launch)."""
        key = ctx.state.ctypes.data
        row = self.contexts.get(key)
        if row is None:
            row = np.zeros(C_SLOTS, np.int64)
            error = np.zeros(ERROR_BYTES, np.uint8)
            nram = _full_nram(key, self.device.spec)
            row[C_NRAM:C_NRAM + 6] = (nram.ctypes.data, nram.size, ctx.wram.ctypes.data, ctx.wram.size,
                                      ctx.sram.ctypes.data, ctx.sram.size)
            row[C_STATE] = key
            row[C_LIMITS] = ctx.limits.ctypes.data
            row[C_STOP] = STOP_TABLE.ctypes.data
            row[C_LAUNCH] = self.row.ctypes.data
            row[C_ERROR] = error.ctypes.data
            row[C_ERROR_SIZE] = ERROR_BYTES
            pending = np.zeros(3 * MAX_PENDING, np.int64)
            row[C_PENDING] = pending.ctypes.data
            row = self.contexts[key] = (row, error, pending)
        return row


_nram_lock = threading.Lock()
_nrams: dict = {}


def _full_nram(key: int, spec) -> np.ndarray:
    """The whole NRAM of the core whose state row is at `key`: BANG C's stack is the host thread's, so static arrays
    may take all of the board's NRAM (mlusim.bang keeps 128 KiB back for a stack that lives in NRAM)."""
    with _nram_lock:
        nram = _nrams.get((key, spec.name))
        if nram is None:
            nram = _nrams[(key, spec.name)] = aligned_bytes(spec.nram_bytes)
        return nram


def _raw_bytes(kind: str, size: int, value) -> bytes:
    if kind in ("f", "h"):
        dtype = {2: np.float16, 4: np.float32, 8: np.float64}[size]
    elif kind == "b":
        dtype = np.bool_
    else:
        dtype = np.dtype(f"{'i' if kind == 'i' else 'u'}{size}")
    return np.array(value).astype(dtype).tobytes()


class BangCKernel(TaskKernel):
    """A `__mlu_global__` function of a cncc-built object; launch with cnrt.invokeKernel or kernel[dim, ktype, queue].
    """

    may_not_poll = False

    def __init__(self, info: KernelInfo):
        super().__init__()
        self.info = info
        self.__name__ = self.name = info.name
        self.entry = _ENTRY(info.entry)
        self.uses_barriers = info.uses_barriers
        self.runs_memory_cores = info.uses_memory_cores
        self.barrier_timeout = DEFAULT_BARRIER_TIMEOUT
        self.workers = HOST_WORKERS
        self.argtypes = tuple(_C_TYPES.get(p, f"struct of {p[1]} bytes") for p in info.params)

    def __repr__(self) -> str:
        return f"<BANG C kernel {self.__name__} ({', '.join(self.argtypes)}) of {self.info.path}>"

    def param_name(self, index: int) -> str:
        return f"args[{index}] ({self.argtypes[index]})"

    # ---- the launch protocol (mlusim.launch.Program) --------------------------------------------------
    def prepare(self, device, layout, args, queue) -> None:
        """At the launch call: the arguments against the kernel's parameters, the architecture it was built for."""
        where = f"kernel '{self.__name__}'"
        if self.info.arch and self.info.arch // 100 != device.spec.isa // 100:
            raise KernelFault(f"{where} was compiled for mtp_{self.info.arch}; {device.spec.name} is mtp_"
                              f"{device.spec.isa} (rebuild with --bang-mlu-arch=mtp_{device.spec.isa})",
                              kernel=self.__name__, reason="compile")
        if any(kind == "s" for kind, _ in self.info.params):
            raise KernelFault(f"{where} takes a struct by value ({', '.join(self.argtypes)}), which mlusim cannot "
                              f"pass to it", kernel=self.__name__, reason="compile")
        if len(args) != len(self.info.params):
            raise ArgumentFault(f"{where} takes {len(self.info.params)} argument(s) ({', '.join(self.argtypes)}), "
                                f"got {len(args)}", "args")
        for index, ((kind, _), value) in enumerate(zip(self.info.params, args)):
            if kind != "p" or not value:
                continue
            if not isinstance(value, (int, np.integer)):
                raise ArgumentFault(f"{where} argument {index} is a pointer and takes a device address, got "
                                    f"{type(value).__name__}", f"args[{index}]")
            owner = devices.owner_of(int(value))
            if owner is not device:
                place = "no device" if owner is None else f"device {owner.index}"
                raise ArgumentFault(f"{where} argument {index} = 0x{int(value):x} is an address of {place}, not of "
                                    f"device {device.index}", f"args[{index}]")
            try:
                device.memory.resolve(int(value), 0, arg=f"args[{index}]")
            except Fault as fault:
                raise ArgumentFault(f"{where} argument {index}: {fault.message}", f"args[{index}]") from None

    def bind_arguments(self, device, args: tuple) -> tuple:
        try:
            return (BoundArguments(self, device, tuple(args)),)
        except Fault as fault:
            raise KernelFault(f"kernel '{self.__name__}': {fault}", kernel=self.__name__) from None

    def run_task(self, ctx, bound: BoundArguments) -> None:
        """One task (the engine's body): the compiled trampoline on this host thread, the GIL released."""
        row, error, _ = bound.context_row(ctx)
        row[C_TASK:C_TASK + 12] = ctx[:12]
        row[C_ENGINE_TASK] = ctx.taskId
        # the taskId the kernel sees: from its x, y, z (a memory core's engine number is past taskDim)
        row[C_TASK + 6] = ctx.taskIdX + ctx.taskDimX * (ctx.taskIdY + ctx.taskDimY * ctx.taskIdZ)
        row[C_SERIAL] = next(_serials)
        kind = self.entry(row.ctypes.data, ctypes.addressof(bound.argv))
        if kind:
            message = bytes(error[:np.argmax(error == 0)]).decode(errors="replace")
            raise _FAULTS.get(kind, KernelTrap)(message)

    def bind_srams(self, args: tuple, srams: list) -> None:
        """The union's SRAMs in the launch row (L_SRAMS: their host addresses by clusterId, L_NSRAMS: how many)."""
        bound = args[0]
        bound.srams = np.array([sram.data.ctypes.data for sram in srams] or [0], np.int64)
        bound.row[L_SRAMS] = bound.srams.ctypes.data
        bound.row[L_NSRAMS] = len(srams)

    def task_body(self, running: Launch):
        """The compiled trampoline (`run_task`) on the host's workers."""
        return self.run_task, self.workers
