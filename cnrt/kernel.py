"""Kernel launch: cnrtInvokeKernel (v6) and the v4 params-buffer form, validated against the board.

A kernel is any Python callable. An object that implements `__mlusim_launch__(device, dim, ktype, args)` (the BANG
kernels of `mlusim.bang`) is launched through that method, which may return the launch's modelled device time in µs;
any other callable is called once as `kernel(*args)` on the queue's worker. `__mlusim_prepare__(device, dim, ktype,
args, queue)`, when the kernel has it, runs at the call (argument checks, compilation); before it,
`__mlusim_arguments__(args)` converts arguments that arrive in another form (a kernel exported to C gets raw bytes).
"""
from __future__ import annotations

from typing import Any, Sequence

from mlusim import cost, launching
from mlusim import device as devices
from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.command import current_command
from mlusim.submit import Kind, Submission
from mlusim.validate import as_enum, as_int, is_address

from . import constants as C
from .errors import api
from .queues import queue_arg

_KTYPE_NAMES = {1: "cnrtFuncTypeBlock", 2: "cnrtFuncTypeBlock1", 4: "cnrtFuncTypeUnion1", 8: "cnrtFuncTypeUnion2",
                16: "cnrtFuncTypeUnion4", 32: "cnrtFuncTypeUnion8", 64: "cnrtFuncTypeUnion16",
                -1: "cnrtFuncTypeMutable"}


def dim_arg(dim, arg: str = "dim") -> C.cnrtDim3_t:
    """A cnrtDim3_t from a cnrtDim3_t, an object with x/y/z, or a sequence of 1-3 ints."""
    if all(hasattr(dim, name) for name in ("x", "y", "z")):
        values = (dim.x, dim.y, dim.z)
    elif isinstance(dim, (tuple, list)) and 1 <= len(dim) <= 3:
        values = tuple(dim) + (1,) * (3 - len(dim))
    elif is_address(dim):
        values = (dim, 1, 1)
    else:
        raise ArgumentFault(f"expected a cnrtDim3_t or (x, y, z), got {type(dim).__name__}", arg)
    checked = tuple(as_int(v, f"{arg}.{name}", minimum=1, maximum=limit)
                    for v, name, limit in zip(values, "xyz", C.MAX_DIM))
    return C.cnrtDim3_t(*checked)


def ktype_arg(ktype, dim: C.cnrtDim3_t, spec, arg: str = "ktype") -> int:
    """A cnrtFunctionType_t valid for this dim on this board."""
    value = as_enum(ktype, arg, C.FUNCTION_TYPES, "cnrtFunctionType_t")
    if value >= C.cnrtFuncTypeUnion1:
        clusters = value // C.cnrtFuncTypeUnion1
        if clusters > spec.max_union:
            raise NotSupportedFault(f"{_KTYPE_NAMES[value]} needs {clusters} clusters per union task; "
                                    f"{spec.name} allows at most Union{spec.max_union}", arg)
        cores = clusters * spec.cores_per_cluster
        if dim.x % cores:
            raise ArgumentFault(f"{_KTYPE_NAMES[value]} needs dim.x to be a multiple of {cores} "
                                f"(Union{clusters} x {spec.cores_per_cluster} cores), got dim.x = {dim.x}", "dim")
    return value


def _hold_pointer_args(submission: Submission, args: Sequence[Any]) -> None:
    """Hold every allocation a pointer argument points into, from the pointer to the allocation's end, as read and
    written (what a kernel may touch through it), so that a free waits for the kernel. A pointer to no live
    allocation is left to the kernel, which faults when it uses it."""
    for index, value in enumerate(args):
        if is_address(value) and value:
            address = int(value)
            owner = devices.owner_of(address)
            block = owner.memory.find(address) if owner is not None else None
            if block is not None:
                submission.read_write(address, block.end - address, f"args[{index}]")


def launch(kernel, dim, ktype, args, queue) -> None:
    """Validate and queue one launch (shared by every launch form)."""
    if not callable(kernel) and not hasattr(kernel, "__mlusim_launch__"):
        raise ArgumentFault(f"expected a kernel (callable), got {type(kernel).__name__}", "kernel")
    target = queue_arg(queue)
    device = target.device
    checked_dim = dim_arg(dim)
    checked_type = ktype_arg(ktype, checked_dim, device.spec)
    if isinstance(args, (str, bytes)) or not isinstance(args, (tuple, list)):
        raise ArgumentFault(f"expected a sequence of kernel arguments, got {type(args).__name__}", "args")
    arguments = tuple(args)
    convert = getattr(kernel, "__mlusim_arguments__", None)
    if convert is not None:  # a kernel whose arguments arrive in another form (C's raw bytes) decodes them first
        arguments = convert(arguments)
    prepare = getattr(kernel, "__mlusim_prepare__", None)
    if prepare is not None:  # a BANG kernel checks its arguments and compiles here, so that errors name this call
        prepare(device, checked_dim, checked_type, arguments, target)
    name = getattr(kernel, "__name__", type(kernel).__name__)
    launcher = getattr(kernel, "__mlusim_launch__", None)
    if launcher is not None:
        def run():
            modelled = launcher(device, checked_dim, checked_type, arguments)
            _record_work(kernel)
            return modelled
    else:
        def run():
            kernel(*arguments)
    with Submission(Kind.KERNEL, name) as submission:
        _hold_pointer_args(submission, arguments)
        submission.submit(target, run, cost.launch_us(device.spec), info={"dim": checked_dim, "ktype": checked_type})


def _record_work(kernel) -> None:
    """Put a BANG launch's work counts into the info of the command running it (bytes and flops, for the bench
    and traces)."""
    record = getattr(kernel, "last_launch", None)
    counts = getattr(record, "counts", None)
    if counts is not None:
        current_command().info.update(bytes=counts.gdram_bytes, flops=2 * counts.total_macs, work=counts.as_dict())


@api("cnrtInvokeKernel")
def invokeKernel(kernel, dim, ktype: int, args, reserved=0, queue=None) -> None:
    """cnrtInvokeKernel(const void *kernel, cnrtDim3_t dim, cnrtFunctionType_t ktype, void **args,
    size_t reserved, cnrtQueue_t queue): `kernel<<<dim, ktype, queue>>>(*args)`."""
    if reserved not in (0, None):
        raise ArgumentFault("reserved must be 0", "reserved")
    launch(kernel, dim, ktype, args, queue)


class cnrtKernelParamsBuffer_t:
    """The v4 kernel parameter buffer: the arguments in order."""

    def __init__(self):
        self.params: list = []
        self.destroyed = False


def _params_arg(params) -> cnrtKernelParamsBuffer_t:
    if not isinstance(params, cnrtKernelParamsBuffer_t):
        raise ArgumentFault(f"expected a kernel params buffer, got {type(params).__name__}", "params")
    if params.destroyed:
        raise ArgumentFault("the params buffer was destroyed", "params")
    return params


@api("cnrtGetKernelParamsBuffer")
def getKernelParamsBuffer() -> cnrtKernelParamsBuffer_t:
    """cnrtGetKernelParamsBuffer(cnrtKernelParamsBuffer_t *params) -> params (v4)."""
    return cnrtKernelParamsBuffer_t()


@api("cnrtKernelParamsBufferAddParam")
def kernelParamsBufferAddParam(params, data, bytes: int = 0) -> None:
    """cnrtKernelParamsBufferAddParam(params, void *data, size_t bytes) (v4): append one argument by value."""
    _params_arg(params).params.append(data)


@api("cnrtDestroyKernelParamsBuffer")
def destroyKernelParamsBuffer(params) -> None:
    """cnrtDestroyKernelParamsBuffer(params) (v4)."""
    _params_arg(params).destroyed = True


@api("cnrtInvokeKernel_V2")
def invokeKernel_V2(kernel, dim, params, ktype: int, queue) -> None:
    """cnrtInvokeKernel_V2(const void *function, cnrtDim3_t dim, cnrtKernelParamsBuffer_t params,
    cnrtFunctionType_t type, cnrtQueue_t queue) (v4)."""
    launch(kernel, dim, ktype, list(_params_arg(params).params), queue)


launching.install_runtime_launch(invokeKernel)
