"""Kernel launch: cnrtInvokeKernel (v6) and the v4 params-buffer form. Every form goes through the one launch path,
mlusim.launch.submit, which checks dim and ktype against the board, prepares the kernel (argument checks,
compilation) at the call and queues the launch.

A kernel is a BANG kernel of `mlusim.bang`, a kernel exported to C (neuware) or any other Python callable, which is
called once as `kernel(*args)` on the queue.
"""
from __future__ import annotations

from mlusim import launch
from mlusim.errors import ArgumentFault

from .errors import api
from .queues import queue_arg


def _launch(kernel, dim, ktype, args, queue) -> None:
    """Validate and queue one launch (shared by every launch form)."""
    program = launch.as_program(kernel)
    launch.submit(program, queue_arg(queue), dim, ktype, args)


@api("cnrtInvokeKernel")
def invokeKernel(kernel, dim, ktype: int, args, reserved=0, queue=None) -> None:
    """cnrtInvokeKernel(const void *kernel, cnrtDim3_t dim, cnrtFunctionType_t ktype, void **args,
    size_t reserved, cnrtQueue_t queue): `kernel<<<dim, ktype, queue>>>(*args)`."""
    if reserved not in (0, None):
        raise ArgumentFault("reserved must be 0", "reserved")
    _launch(kernel, dim, ktype, args, queue)


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
    _launch(kernel, dim, ktype, list(_params_arg(params).params), queue)

