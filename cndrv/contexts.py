"""CNDrv contexts over the simulator: a context belongs to one device, and binding it to a host thread makes that
device the thread's current device (CNRT's too, as CNRT runs on the driver's shared contexts).

Each device has one shared context (cnSharedContextAcquire/Release count its users). A thread that never bound a
context is bound to the shared context of its current CNRT device, as after CNRT's implicit initialisation: so
cnCtxGetCurrent after cnrtSetDevice returns the device's shared context, as on hardware. cnCtxSetCurrent(NULL)
unbinds (cnCtxGetCurrent then gives NULL).
"""
from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Optional

import cnrt
from mlusim import sanitizer
from mlusim.validate import as_int

from .devices import device_arg
from .status import CN_CONTEXT_ERROR_INVALID, CndrvError, api, require_init, runtime_errors

CN_CTX_SCHED_SYNC_SPIN, CN_CTX_SCHED_SYNC_WAIT, CN_CTX_SCHED_SYNC_YIELD, CN_CTX_SCHED_SYNC_AUTO = range(4)
# CNctxConfigParamType
CN_CTX_CONFIG_VISIBLE_CLUSTER, CN_CTX_CONFIG_VISIBLE_CLUSTER_NUM, CN_CTX_CONFIG_UNION_LIMIT = range(3)
# KernelClass: the value is the task's core count (a Union n task takes n clusters of four cores)
CN_KERNEL_CLASS_BLOCK = 1
CN_KERNEL_CLASS_UNION = 4
CN_KERNEL_CLASS_UNION2 = 8
CN_KERNEL_CLASS_UNION4 = 16
CN_KERNEL_CLASS_UNION8 = 32
CN_KERNEL_CLASS_UNION16 = 64
CN_KERNEL_CLASS_NONE = 0xFF
#: KernelClass -> the clusters one task of that class takes (0 for Block: one core)
KERNEL_CLASS_CLUSTERS = {CN_KERNEL_CLASS_BLOCK: 0, CN_KERNEL_CLASS_UNION: 1, CN_KERNEL_CLASS_UNION2: 2,
                         CN_KERNEL_CLASS_UNION4: 4, CN_KERNEL_CLASS_UNION8: 8, CN_KERNEL_CLASS_UNION16: 16}
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


class ContextConfig:
    """CNctxConfigParam's values for one (thread, context): the visible cluster bitmap and the union limit."""

    __slots__ = ("visible", "union_limit")

    def __init__(self, visible: int, union_limit: int):
        self.visible, self.union_limit = visible, union_limit


def _spec(context: Context):
    from mlusim import device as devices
    return devices.get(context.device).spec


def _default_config(context: Context) -> ContextConfig:
    """Every cluster visible; the union limit is the largest class the board runs (its clusters per union task)."""
    spec = _spec(context)
    largest = max(kind for kind, clusters in KERNEL_CLASS_CLUSTERS.items() if clusters <= spec.max_union)
    return ContextConfig((1 << spec.cluster_count) - 1, largest)


def _config(context: Context) -> ContextConfig:
    configs = getattr(_local, "configs", None)
    if configs is None:
        configs = _local.configs = {}
    config = configs.get(id(context))
    if config is None or config[0] is not context:
        config = configs[id(context)] = (context, _default_config(context))
    return config[1]


def _kernel_class(value, arg: str) -> int:
    from mlusim.errors import ArgumentFault
    kind = as_int(value, arg)
    if kind not in KERNEL_CLASS_CLUSTERS:
        raise ArgumentFault(f"{kind} is not a KernelClass (CN_KERNEL_CLASS_BLOCK, _UNION, _UNION2, ... _UNION16)", arg)
    return kind


@api("cnGetCtxConfigParam")
def getCtxConfigParam(context, type: int) -> SimpleNamespace:
    """cnGetCtxConfigParam(CNcontext context, CNctxConfigParamType type, CNctxConfigParam *param) -> param with the
    field of the union that `type` names (visibleCluster, visibleClusterNumber or unionLimit): the visible cluster bitmap (all of the board's clusters unless set), their number,
    or the union limit (the largest KernelClass the board runs unless set). Per host thread and context."""
    require_init()
    config = _config(_context_arg(context))
    kind = as_int(type, "type")
    if kind == CN_CTX_CONFIG_VISIBLE_CLUSTER:
        return SimpleNamespace(visibleCluster=config.visible)
    if kind == CN_CTX_CONFIG_VISIBLE_CLUSTER_NUM:
        return SimpleNamespace(visibleClusterNumber=bin(config.visible).count("1"))
    if kind == CN_CTX_CONFIG_UNION_LIMIT:
        return SimpleNamespace(unionLimit=config.union_limit)
    from mlusim.errors import ArgumentFault
    raise ArgumentFault(f"{kind} is not a CNctxConfigParamType", "type")


@api("cnSetCtxConfigParam")
def setCtxConfigParam(context, type: int, param) -> None:
    """cnSetCtxConfigParam(CNcontext context, CNctxConfigParamType type, CNctxConfigParam *param): set the visible
    cluster bitmap (nonzero, only the board's clusters) or the union limit, for this host thread and context. The
    two must agree: a union limit wider than the visible clusters, or a bitmap narrower than the union limit, is
    CN_ERROR_INVALID_VALUE. The visible cluster number is read-only. (Recorded and reported, as mlu-ops and DIOPI
    read it to size their launches; the simulator's launches do not consult it.)"""
    from mlusim.errors import ArgumentFault
    require_init()
    target = _context_arg(context)
    config = _config(target)
    spec = _spec(target)
    kind = as_int(type, "type")
    if param is None:
        raise ArgumentFault("NULL CNctxConfigParam", "param")
    visible, union_limit = config.visible, config.union_limit
    if kind == CN_CTX_CONFIG_VISIBLE_CLUSTER:
        visible = as_int(param.visibleCluster, "param", minimum=0, maximum=(1 << 64) - 1)
        if visible == 0 or visible >> spec.cluster_count:
            raise ArgumentFault(f"visible cluster bitmap 0x{visible:x} is empty or names clusters the "
                                f"{spec.name} lacks (it has {spec.cluster_count})", "param")
    elif kind == CN_CTX_CONFIG_UNION_LIMIT:
        union_limit = _kernel_class(param.unionLimit, "param")
        if KERNEL_CLASS_CLUSTERS[union_limit] > spec.max_union:
            raise ArgumentFault(f"the {spec.name} runs unions of at most {spec.max_union} clusters", "param")
    elif kind == CN_CTX_CONFIG_VISIBLE_CLUSTER_NUM:
        raise ArgumentFault("the visible cluster number is read-only (set CN_CTX_CONFIG_VISIBLE_CLUSTER)", "type")
    else:
        raise ArgumentFault(f"{kind} is not a CNctxConfigParamType", "type")
    if KERNEL_CLASS_CLUSTERS[union_limit] > bin(visible).count("1"):
        raise ArgumentFault(f"a union limit of {KERNEL_CLASS_CLUSTERS[union_limit]} clusters does not fit "
                            f"{bin(visible).count('1')} visible clusters", "param")
    config.visible, config.union_limit = visible, union_limit


@api("cnGetCtxMaxParallelUnionTasks")
def getCtxMaxParallelUnionTasks(context, c: int) -> int:
    """cnGetCtxMaxParallelUnionTasks(CNcontext context, KernelClass c, int *number) -> how many tasks of class `c`
    run at once on this thread's visible clusters: a core each for Block, n clusters each for Union n (0 when
    Union n is wider than the visible clusters)."""
    require_init()
    target = _context_arg(context)
    config = _config(target)
    clusters = KERNEL_CLASS_CLUSTERS[_kernel_class(c, "c")]
    visible = bin(config.visible).count("1")
    if clusters == 0:
        return visible * _spec(target).cores_per_cluster
    return visible // clusters


@api("cnQueueGetContext")
def queueGetContext(hqueue) -> Context:
    """cnQueueGetContext(CNqueue hqueue, CNcontext *pctx) -> the shared context of the queue's device (a CNqueue is
    a cnrtQueue_t; NULL and the implicit queues are those of the current device)."""
    require_init()
    from mlusim.queue import Queue
    if hqueue is None or isinstance(hqueue, int):
        return shared_context(cnrt.getDevice())
    if not isinstance(hqueue, Queue) or hqueue.destroyed:
        from .status import CN_QUEUE_ERROR_INVALID
        state = "destroyed" if isinstance(hqueue, Queue) else f"not a queue: {hqueue!r:.60}"
        raise CndrvError(CN_QUEUE_ERROR_INVALID, f"argument 'hqueue': {state}")
    return shared_context(hqueue.device.index)


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
