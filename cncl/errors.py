"""cnclResult_t: every status code of cncl.h v1.25, the error type, and the translation of simulator faults."""
from __future__ import annotations

from mlusim.apicall import ApiError, ApiFamily
from mlusim.errors import Fault, QueueFault

CNCL_RET_SUCCESS = 0x0
CNCL_RET_ERR_INTERNAL = 0x01
CNCL_RET_ERR_UNSUPPORTED = 0x11
CNCL_RET_ERR_NULL_POINTER = 0x21
CNCL_RET_ERR_BUILD_RING = 0x31
CNCL_RET_ERR_BUILD_TREE = 0x41
CNCL_RET_ERR_INIT = 0x51
CNCL_RET_ERR_NOT_INIT = 0x61
CNCL_RET_ERR_REINIT = 0x71
CNCL_RET_ERR_NO_ALGO = 0x81
CNCL_RET_ERR_INVALID_VERSION = 0x91
CNCL_RET_ERR_SYSTEM = 0x02
CNCL_RET_ERR_SYS_MALLOC = 0x12
CNCL_RET_ERR_SYS_SOCKET = 0x22
CNCL_RET_ERR_SYS_IBV = 0x32
CNCL_RET_ERR_MLU_RUNTIME = 0x03
CNCL_RET_ERR_CNRT_DEVICE = 0x13
CNCL_RET_ERR_CNRT_MEMCOPY = 0x23
CNCL_RET_ERR_CNRT_MALLOC = 0x33
CNCL_RET_ERR_MLU_DEVICE = 0x04
CNCL_RET_ERR_CNDEV_NODE = 0x14
CNCL_RET_ERR_CNDEV_RELATIONSHIP = 0x24
CNCL_RET_ERR_MLU_INNETWORK_COMPUTE = 0x05
CNCL_RET_ERR_CNLINC_TASK = 0x15
CNCL_RET_ERR_CNLINC_WR = 0x25
CNCL_RET_ERR_CNLINC_KERNEL = 0x35
CNCL_RET_ASYNC_IN_PROGRESS = 0x06
CNCL_RET_ASYNC_ERROR = 0x16
CNCL_RET_ASYNC_UNKNOWN_ERROR = 0x26
CNCL_RET_ERR_ARGUMENTS = 0x07
CNCL_RET_ERR_MLU_ALLOCATE = 0x08
CNCL_RET_ERR_MLU_DEALLOCATE = 0x18
CNCL_RET_IB_RECV_NOTREADY = 0x09

_DESCRIPTIONS = {
    CNCL_RET_SUCCESS: "no error",
    CNCL_RET_ERR_INTERNAL: "CNCL internal error",
    CNCL_RET_ERR_UNSUPPORTED: "unsupported operation",
    CNCL_RET_ERR_NULL_POINTER: "null pointer argument",
    CNCL_RET_ERR_BUILD_RING: "the ring topology cannot be built",
    CNCL_RET_ERR_BUILD_TREE: "the tree topology cannot be built",
    CNCL_RET_ERR_INIT: "communicators cannot be initialized",
    CNCL_RET_ERR_NOT_INIT: "uninitialized communicator",
    CNCL_RET_ERR_REINIT: "communicators were initialized already",
    CNCL_RET_ERR_NO_ALGO: "connections cannot be built between communicators",
    CNCL_RET_ERR_INVALID_VERSION: "the CNCL version cannot be extracted",
    CNCL_RET_ERR_SYSTEM: "system error",
    CNCL_RET_ERR_SYS_MALLOC: "system memory allocation failure",
    CNCL_RET_ERR_SYS_SOCKET: "socket error",
    CNCL_RET_ERR_SYS_IBV: "InfiniBand verbs error",
    CNCL_RET_ERR_MLU_RUNTIME: "CNRT API error",
    CNCL_RET_ERR_CNRT_DEVICE: "the device handle cannot be obtained",
    CNCL_RET_ERR_CNRT_MEMCOPY: "memory cannot be copied between devices",
    CNCL_RET_ERR_CNRT_MALLOC: "memory cannot be allocated on the device",
    CNCL_RET_ERR_MLU_DEVICE: "CNDev API error",
    CNCL_RET_ERR_CNDEV_NODE: "the PCIe topology node cannot be obtained",
    CNCL_RET_ERR_CNDEV_RELATIONSHIP: "the PCIe relationship cannot be obtained",
    CNCL_RET_ERR_MLU_INNETWORK_COMPUTE: "in-network compute error",
    CNCL_RET_ERR_CNLINC_TASK: "in-network compute task cannot be created",
    CNCL_RET_ERR_CNLINC_WR: "in-network compute work request cannot be created",
    CNCL_RET_ERR_CNLINC_KERNEL: "in-network compute kernel cannot be invoked",
    CNCL_RET_ASYNC_IN_PROGRESS: "asynchronous operations in progress",
    CNCL_RET_ASYNC_ERROR: "asynchronous error",
    CNCL_RET_ASYNC_UNKNOWN_ERROR: "unknown asynchronous error",
    CNCL_RET_ERR_ARGUMENTS: "illegal arguments",
    CNCL_RET_ERR_MLU_ALLOCATE: "MLU memory pool allocation error",
    CNCL_RET_ERR_MLU_DEALLOCATE: "MLU memory pool deallocation error",
    CNCL_RET_IB_RECV_NOTREADY: "the receive side has not posted its request yet",
}

ERROR_NAMES = {value: name for name, value in reversed(list(globals().items()))
               if name.startswith("CNCL_RET_") and isinstance(value, int)}


#: the cnrtRet_t by which cnrtQueueSync reports a queued CNCL operation that failed with a cnclResult_t
#: (its message and `.cause` carry the CNCL error itself)
_CNRT_CODES = {CNCL_RET_ERR_ARGUMENTS: 100006, CNCL_RET_ERR_NULL_POINTER: 100006,   # cnrtErrorArgsInvalid
               CNCL_RET_ERR_SYSTEM: 100007,                                          # cnrtErrorSys
               CNCL_RET_ERR_UNSUPPORTED: 100050}                                     # cnrtErrorNotSupport
_CNRT_QUEUE_ERROR = 100060                                                          # cnrtErrorQueue


class CnclError(ApiError):
    """A failed CNCL call; `.code` is the cnclResult_t value."""

    @property
    def name(self) -> str:
        return ERROR_NAMES.get(self.code, "CNCL_RET_ERR_INTERNAL")

    @property
    def cnrt_code(self) -> int:
        """The cnrtRet_t with which cnrtQueueSync reports this error of a queued operation (not cnrtErrorUnknown:
        argument errors such as mismatched calls are cnrtErrorArgsInvalid, lost peers and timeouts cnrtErrorSys,
        the rest cnrtErrorQueue)."""
        return _CNRT_CODES.get(self.code, _CNRT_QUEUE_ERROR)

    def __str__(self) -> str:
        return f"[{self.name} {self.code:#x}] {self.message}"


_FAULT_CODES = {
    "null_pointer": CNCL_RET_ERR_NULL_POINTER,
    "not_supported": CNCL_RET_ERR_UNSUPPORTED,
    "out_of_memory": CNCL_RET_ERR_CNRT_MALLOC,
    "host_out_of_memory": CNCL_RET_ERR_SYS_MALLOC,
    "kernel": CNCL_RET_ERR_MLU_RUNTIME,
}


def code_of(fault: BaseException) -> int:
    """The cnclResult_t value that reports `fault`."""
    if isinstance(fault, CnclError):
        return fault.code
    if isinstance(fault, ApiError):
        return CNCL_RET_ERR_MLU_RUNTIME
    if isinstance(fault, QueueFault):
        return code_of(fault.cause) if isinstance(fault.cause, (Fault, ApiError)) else CNCL_RET_ERR_INTERNAL
    if isinstance(fault, Fault):
        return _FAULT_CODES.get(fault.kind, CNCL_RET_ERR_ARGUMENTS)
    return CNCL_RET_ERR_INTERNAL


api = ApiFamily("cncl", CnclError, code_of)


@api("cnclGetErrorStr")
def getErrorStr(ret: int) -> str:
    """cnclGetErrorStr(cnclResult_t ret) -> the message of a status code ("unknown" for a value that is none)."""
    if isinstance(ret, bool) or not isinstance(ret, int):
        return "unrecognized CNCL result"
    name = ERROR_NAMES.get(ret)
    if name is None:
        return f"unrecognized CNCL result {ret:#x}"
    return f"{name}: {_DESCRIPTIONS[ret]}"
