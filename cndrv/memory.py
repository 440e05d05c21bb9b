"""CNDrv memory calls over CNRT's: cnMalloc/cnFree on the device of this thread's context, synchronous copies,
cnMemGetInfo. An MLU address (CNaddr) is the simulator's device address, as CNRT's `void *`."""
from __future__ import annotations

import cnrt
from mlusim.validate import as_size

from .contexts import current_required
from .status import api, runtime_errors

_NAMES = {"dst": "dstAddr", "src": "srcAddr"}  # cnrtMemcpy's parameters -> CNDrv's


@api("cnMalloc")
def malloc(bytes: int) -> int:
    """cnMalloc(CNaddr *pmluAddr, cn_uint64_t bytes) -> a block of the current context's device memory."""
    current_required()
    return runtime_errors(cnrt.malloc, as_size(bytes, "bytes"))


@api("cnFree")
def free(mluAddr: int) -> None:
    """cnFree(CNaddr mluAddr): free a block from cnMalloc (a bad address: CN_MEMORY_ERROR_INVALID_ADDRESS)."""
    current_required()
    runtime_errors(cnrt.free, mluAddr, names={"ptr": "mluAddr"})


@api("cnMemcpyHtoD")
def memcpyHtoD(dstAddr: int, srcAddr, bytes: int) -> None:
    """cnMemcpyHtoD(CNaddr dstAddr, const void *srcAddr, cn_uint64_t bytes): host buffer -> device, synchronous."""
    current_required()
    runtime_errors(cnrt.memcpy, dstAddr, srcAddr, as_size(bytes, "bytes"), cnrt.cnrtMemcpyHostToDev, names=_NAMES)


@api("cnMemcpyDtoH")
def memcpyDtoH(dstAddr, srcAddr: int, bytes: int) -> None:
    """cnMemcpyDtoH(void *dstAddr, CNaddr srcAddr, cn_uint64_t bytes): device -> host buffer, synchronous."""
    current_required()
    runtime_errors(cnrt.memcpy, dstAddr, srcAddr, as_size(bytes, "bytes"), cnrt.cnrtMemcpyDevToHost, names=_NAMES)


@api("cnMemcpyDtoD")
def memcpyDtoD(dstAddr: int, srcAddr: int, bytes: int) -> None:
    """cnMemcpyDtoD(CNaddr dstAddr, CNaddr srcAddr, cn_uint64_t bytes): device -> device, synchronous."""
    current_required()
    runtime_errors(cnrt.memcpy, dstAddr, srcAddr, as_size(bytes, "bytes"), cnrt.cnrtMemcpyDevToDev, names=_NAMES)


@api("cnMemGetInfo")
def memGetInfo() -> tuple[int, int]:
    """cnMemGetInfo(cn_uint64_t *pfreeBytes, cn_uint64_t *ptotalBytes) -> (free, total) bytes of the current
    context's device."""
    current_required()
    return runtime_errors(cnrt.memGetInfo)
