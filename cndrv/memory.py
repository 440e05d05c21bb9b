"""CNDrv memory calls over CNRT's: cnMalloc/cnFree on the device of this thread's context, synchronous copies,
cnMemGetInfo. An MLU address (CNaddr) is the simulator's device address, as CNRT's `void *`."""
from __future__ import annotations

import cnrt
from mlusim.validate import as_size

from .contexts import current_required
from .status import api, require_init, runtime_errors

_NAMES = {"dst": "dstAddr", "src": "srcAddr"}  # cnrtMemcpy's parameters -> CNDrv's


@api("cnMalloc")
def malloc(bytes: int) -> int:
    """cnMalloc(CNaddr *pmluAddr, cn_uint64_t bytes) -> a block of the current context's device memory."""
    current_required()
    return runtime_errors(cnrt.malloc, as_size(bytes, "bytes"))


@api("cnMallocConstant")
def mallocConstant(bytes: int) -> int:
    """cnMallocConstant(CNaddr *pmluAddr, cn_uint64_t bytes) -> a block for data kernels only read: the same GDRAM
    as cnMalloc's (cnrtMallocConstant)."""
    current_required()
    return runtime_errors(cnrt.mallocConstant, as_size(bytes, "bytes"))


# CNmem_attribute values cnGetMemAttribute answers, with the bytes of the value each writes
CN_MEM_ATTRIBUTE_DEVICE_ORDINAL = 0x7
CN_MEM_ATTRIBUTE_RANGE_START_ADDR = 0x11
CN_MEM_ATTRIBUTE_RANGE_SIZE = 0x12
CN_MEM_ATTRIBUTE_ISLINEAR = 0x18
MEM_ATTRIBUTE_BYTES = {CN_MEM_ATTRIBUTE_DEVICE_ORDINAL: 4, CN_MEM_ATTRIBUTE_RANGE_START_ADDR: 8,
                       CN_MEM_ATTRIBUTE_RANGE_SIZE: 8, CN_MEM_ATTRIBUTE_ISLINEAR: 4}


@api("cnGetMemAttribute")
def getMemAttribute(attribute: int, ptr: int) -> int:
    """cnGetMemAttribute(void *data, CNmem_attribute attribute, CNaddr ptr) -> for an address inside a live block:
    its device (int), the block's start (CNaddr) and size (cn_uint64_t), or whether it is linear mapped (int: 0, the
    simulated GDRAM has no linear mapping window). Other attributes are CN_ERROR_INVALID_VALUE; an address in no
    block is CN_MEMORY_ERROR_INVALID_ADDRESS."""
    from mlusim import device as devices
    from mlusim.errors import ArgumentFault, UnknownAddressFault
    from mlusim.validate import as_int
    require_init()
    kind = as_int(attribute, "attribute")
    if kind not in MEM_ATTRIBUTE_BYTES:
        raise ArgumentFault(f"0x{kind:x} is not a CNmem_attribute cnGetMemAttribute answers here (DEVICE_ORDINAL, "
                            "RANGE_START_ADDR, RANGE_SIZE, ISLINEAR)", "attribute")
    address = as_int(ptr, "ptr", minimum=0)
    owner = devices.owner_of(address) if address else None
    block = owner.memory.find(address) if owner is not None else None
    if block is None:
        raise UnknownAddressFault(f"0x{address:x} is in no live block of device memory", "ptr", address)
    if kind == CN_MEM_ATTRIBUTE_DEVICE_ORDINAL:
        return owner.index
    if kind == CN_MEM_ATTRIBUTE_RANGE_START_ADDR:
        return block.start
    if kind == CN_MEM_ATTRIBUTE_RANGE_SIZE:
        return block.size
    return 0


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
