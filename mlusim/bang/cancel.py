"""Stopping kernels that run too long or are interrupted: a process-wide table of host threads whose tasks must stop.

Compiled task code cannot be interrupted from outside, so it polls: every bounds check (each intrinsic, copy and
`p[i]`), every on-chip allocation and every loop of a kernel body or device function (`caching.jit` inserts the
poll at each loop header) reads one word of the table. While no launch anywhere is being stopped the word is 0 and
the poll costs one load and a branch. When a launch is stopped (watchdog, Ctrl-C), the identities of the host
threads running its tasks go into the table and the word counts them; a poll that sees a non-zero word looks for
its own thread and, when it is listed, raises `TaskStopped`, which ends the task like any other fault.

The table lives at a fixed host address registered with LLVM under a symbol name, so that compiled code (also code
loaded from numba's on-disk cache) reads it without the address being baked into the code. Plain-Python task code
(debug mode) is stopped with an asynchronous exception instead.
"""
from __future__ import annotations

import ctypes
import threading

import numpy as np
from llvmlite import binding as llvm
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, register_jitable

from .faults import KernelTrap

#: Threads that can be stopped at the same time (one per host thread running tasks of a stopped launch).
SLOTS = 255
_SYMBOL = "mlusim_bang_stop_table"
#: word 0: number of listed threads; words 1..SLOTS: their identities (threading.get_ident(), i.e. pthread_self())
_TABLE = np.zeros(SLOTS + 1, np.uint64)
llvm.add_symbol(_SYMBOL, _TABLE.ctypes.data)
_lock = threading.Lock()
_pthread_self = types.ExternalFunction("pthread_self", types.uint64())


class TaskStopped(KernelTrap):
    """A task stopped because its launch was stopped (watchdog time limit, KeyboardInterrupt)."""


@intrinsic
def _table_word(typingctx, index):
    """Word `index` of the stop table, read with an atomic (monotonic) load: never cached in a register, so a loop
    that polls it sees a change made by another thread."""
    def codegen(context, builder, signature, args):
        module = builder.module
        table = module.globals.get(_SYMBOL)
        if table is None:
            table = ir.GlobalVariable(module, ir.ArrayType(ir.IntType(64), SLOTS + 1), _SYMBOL)
            table.linkage = "external"
        address = builder.gep(table, [ir.Constant(ir.IntType(32), 0), args[0]])
        return builder.load_atomic(address, "monotonic", 8)
    return types.uint64(types.intp), codegen


@register_jitable
def _listed() -> bool:
    me = _pthread_self()
    for slot in range(1, SLOTS + 1):
        if _table_word(slot) == me:
            return True
    return False


@register_jitable
def poll():
    """Raise TaskStopped when the launch this host thread runs tasks of is being stopped (cheap otherwise)."""
    if _table_word(0) != 0:
        if _listed():
            raise TaskStopped("stopped")


def list_threads(idents) -> None:
    """Make the tasks running on these host threads stop at their next poll."""
    with _lock:
        for ident in idents:
            free = np.flatnonzero(_TABLE[1:] == 0)
            if len(free) and not (_TABLE[1:] == np.uint64(ident)).any():
                _TABLE[1 + free[0]] = np.uint64(ident)
        _TABLE[0] = np.count_nonzero(_TABLE[1:])


def unlist_threads(idents) -> None:
    """These host threads no longer run tasks of a stopped launch."""
    with _lock:
        for ident in idents:
            _TABLE[1:][_TABLE[1:] == np.uint64(ident)] = 0
        _TABLE[0] = np.count_nonzero(_TABLE[1:])


def interrupt_python_thread(ident: int) -> None:
    """Raise TaskStopped in a thread that runs Python code (a debug-mode task) at its next bytecode."""
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), ctypes.py_object(TaskStopped))


def reset_after_fork() -> None:
    """A forked child has none of the parent's task threads."""
    global _lock
    _lock = threading.Lock()
    _TABLE[:] = 0
