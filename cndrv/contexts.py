"""CNDrv contexts over the simulator: a context belongs to one device, and binding it to a host thread makes that
device the thread's current device (CNRT's too, as CNRT runs on the driver's shared contexts).

Each device has one shared context (cnSharedContextAcquire/Release count its users). A thread that never bound a
context is bound to the shared context of its current CNRT device, as after CNRT's implicit initialisation: so
cnCtxGetCurrent after cnrtSetDevice returns the device's shared context, as on hardware. cnCtxSetCurrent(NULL)
unbinds (cnCtxGetCurrent then gives NULL).
"""
from __future__ import annotations

import threading
from typing import Optional

import cnrt
from mlusim import sanitizer
from mlusim.validate import as_int

from .devices import device_arg
from .status import CN_CONTEXT_ERROR_INVALID, CndrvError, api, require_init, runtime_errors

CN_CTX_SCHED_SYNC_SPIN, CN_CTX_SCHED_SYNC_WAIT, CN_CTX_SCHED_SYNC_YIELD, CN_CTX_SCHED_SYNC_AUTO = range(4)
SCHED_FLAGS = (CN_CTX_SCHED_SYNC_SPIN, CN_CTX_SCHED_SYNC_WAIT, CN_CTX_SCHED_SYNC_YIELD, CN_CTX_SCHED_SYNC_AUTO)


class Context:
    """CNcontext: a device's context; `shared` for the one per device that CNRT uses."""

    def __init__(self, device: int, flags: int, shared: bool = False):
        self.device = device
        self.flags = flags
        self.shared = shared
        self.users = 0
        self.destroyed = False

    def __repr__(self) -> str:
        kind = "shared context" if self.shared else "context"
        return f"<CNcontext: {kind} of device {self.device}{' (destroyed)' if self.destroyed else ''}>"


_lock = threading.Lock()
_shared: dict = {}
_UNBOUND = object()  # a thread that never bound a context: it follows its CNRT device
_local = threading.local()


def shared_context(device: int) -> Context:
    with _lock:
        context = _shared.get(device)
        if context is None:
            context = _shared[device] = Context(device, CN_CTX_SCHED_SYNC_AUTO, shared=True)
        return context


def _context_arg(context, arg: str = "context") -> Context:
    if not isinstance(context, Context) or context.destroyed:
        state = "destroyed" if isinstance(context, Context) else f"not a CNcontext: {context!r:.60}"
        raise CndrvError(CN_CONTEXT_ERROR_INVALID, f"argument '{arg}': {state}")
    return context


def current() -> Optional[Context]:
    """The context bound to this host thread (None if unbound)."""
    bound = getattr(_local, "context", _UNBOUND)
    if bound is _UNBOUND:
        return shared_context(cnrt.getDevice())
    if bound is not None and bound.destroyed:
        return None
    return bound


def current_required() -> Context:
    require_init()
    context = current()
    if context is None:
        raise CndrvError(CN_CONTEXT_ERROR_INVALID, "no context is bound to this thread (cnCtxSetCurrent)")
    return context


@api("cnCtxCreate")
def ctxCreate(flags: int, dev: int) -> Context:
    """cnCtxCreate(CNcontext *pcontext, unsigned int flags, CNdev dev) -> a new context, bound to this thread."""
    device = device_arg(dev).index
    context = Context(device, _flags(flags))
    sanitizer.track(context, "CNcontext")
    _bind(context)
    return context


def _flags(flags) -> int:
    value = as_int(flags, "flags")
    if value not in SCHED_FLAGS:
        from mlusim.errors import ArgumentFault
        raise ArgumentFault(f"{value} is not a CNCtxSched value (0..3)", "flags")
    return value


def _bind(context: Optional[Context]) -> None:
    if context is not None:
        runtime_errors(cnrt.setDevice, context.device)
    _local.context = context


@api("cnCtxDestroy")
def ctxDestroy(context) -> None:
    """cnCtxDestroy(CNcontext context): destroy a context made by cnCtxCreate (unbinding it from this thread)."""
    require_init()
    target = _context_arg(context)
    if target.shared:
        raise CndrvError(CN_CONTEXT_ERROR_INVALID, "argument 'context': a shared context is not destroyed (use "
                                                   "cnSharedContextRelease)")
    target.destroyed = True
    if getattr(_local, "context", None) is target:
        _local.context = None


@api("cnCtxGetCurrent")
def ctxGetCurrent() -> Optional[Context]:
    """cnCtxGetCurrent(CNcontext *pcontext) -> the context bound to this thread (NULL if none)."""
    require_init()
    return current()


@api("cnCtxSetCurrent")
def ctxSetCurrent(context) -> None:
    """cnCtxSetCurrent(CNcontext context): bind a context to this thread (its device becomes the current device);
    NULL unbinds."""
    require_init()
    _bind(None if context is None else _context_arg(context))


@api("cnCtxGetDevice")
def ctxGetDevice() -> int:
    """cnCtxGetDevice(CNdev *pdev) -> the device of this thread's context."""
    return current_required().device


@api("cnCtxGetFlags")
def ctxGetFlags() -> int:
    """cnCtxGetFlags(unsigned int *pflags) -> the schedule flags of this thread's context."""
    return current_required().flags


@api("cnCtxSync")
def ctxSync() -> None:
    """cnCtxSync(void): wait for all work of the current context's device; reports its failed work."""
    current_required()
    runtime_errors(cnrt.syncDevice)


@api("cnSharedContextAcquire")
def sharedContextAcquire(dev: int) -> Context:
    """cnSharedContextAcquire(CNcontext *pctx, CNdev dev) -> the device's shared context (one more user)."""
    context = shared_context(device_arg(dev).index)
    with _lock:
        context.users += 1
    return context


@api("cnSharedContextRelease")
def sharedContextRelease(dev: int) -> None:
    """cnSharedContextRelease(CNdev dev): one user fewer of the device's shared context (CN_CONTEXT_ERROR_INVALID
    when it has none)."""
    context = shared_context(device_arg(dev).index)
    with _lock:
        if context.users == 0:
            raise CndrvError(CN_CONTEXT_ERROR_INVALID, f"the shared context of device {context.device} was not "
                                                       "acquired")
        context.users -= 1
