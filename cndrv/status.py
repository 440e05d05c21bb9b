"""CNresult: the CNDrv (cn_api.h) statuses mlusim reports, the error type, the fault translation,
cnGetErrorString / cnGetErrorName, and the driver's initialisation state."""
from __future__ import annotations

import threading

from mlusim.apicall import ApiError, ApiFamily
from mlusim.errors import Fault
from mlusim.validate import as_int

# values of Cambricon's public cn_api.h
CN_SUCCESS = 0
CN_ERROR_NOT_READY = 1
CN_ERROR_NOT_INITIALIZED = 100002
CN_ERROR_DEINITIALIZED = 100003
CN_ERROR_NO_DEVICE = 100004
CN_ERROR_INVALID_DEVICE = 100005
CN_ERROR_INVALID_VALUE = 100006
CN_ERROR_OPERATING_SYSTEM = 100007
CN_ERROR_SYSTEM_NOT_READY = 100008
CN_ERROR_SYSTEM_DRIVER_MISMATCH = 100009
CN_ERROR_SYSTEM_OUT_OF_MEMORY = 100010
CN_ERROR_INVALID_ADDRESS = 100011
CN_ERROR_FILE_NOT_FOUND = 100012
CN_ERROR_COMPAT_NOT_SUPPORT_ON_SYSTEM = 100013
CN_ERROR_INVALID_HANDLE = 100014
CN_ERROR_ILLEGAL_STATE = 100015
CN_ERROR_ECC_UNCORRECTABLE = 100016
CN_OPS_ERROR_NOT_SUPPORTED = 100050
CN_OPS_ERROR_NOT_PERMITTED = 100051
CN_OPS_ERROR_TIMEOUT = 100052
CN_OPS_ERROR_OUT_OF_RESOURCES = 100053
CN_QUEUE_ERROR_INVALID = 100060
CN_QUEUE_ERROR_OUT_OF_RESOURCES = 100061
CN_NOTIFIER_ERROR_INVALID = 100080
CN_NOTIFIER_ERROR_OUT_OF_RESOURCES = 100081
CN_MEMORY_ERROR_OUT_OF_MEMORY = 100100
CN_MEMORY_ERROR_OUT_OF_PROCESS_MAX_MEMORY = 100101
CN_MEMORY_ERROR_INVALID_ADDRESS = 100102
CN_INVOKE_ERROR = 100200
CN_CONTEXT_ERROR_INVALID = 100201
CN_CONTEXT_ERROR_OUT_OF_RESOURCES = 100202
CN_ERROR_NOT_FOUND = 100301
CN_ERROR_INVALID_KERNEL = 100302
CN_ERROR_UNKNOWN = 200000

STATUS_NAMES = {value: name for name, value in globals().items() if name.startswith("CN_")}

_DESCRIPTIONS = {
    CN_SUCCESS: "no error",
    CN_ERROR_NOT_READY: "asynchronous operations have not been completed",
    CN_ERROR_NOT_INITIALIZED: "CNDrv has not been initialized (cnInit)",
    CN_ERROR_DEINITIALIZED: "the MLU driver is deinitialized",
    CN_ERROR_NO_DEVICE: "no usable MLU device",
    CN_ERROR_INVALID_DEVICE: "invalid device",
    CN_ERROR_INVALID_VALUE: "invalid argument",
    CN_ERROR_OPERATING_SYSTEM: "an OS call failed",
    CN_ERROR_SYSTEM_NOT_READY: "the system is not ready",
    CN_ERROR_SYSTEM_DRIVER_MISMATCH: "CNDrv and the MLU driver mismatch",
    CN_ERROR_SYSTEM_OUT_OF_MEMORY: "out of host memory",
    CN_ERROR_INVALID_ADDRESS: "invalid host address",
    CN_ERROR_FILE_NOT_FOUND: "file not found",
    CN_ERROR_COMPAT_NOT_SUPPORT_ON_SYSTEM: "cross-generation MLU devices are not supported together",
    CN_ERROR_INVALID_HANDLE: "invalid resource handle",
    CN_ERROR_ILLEGAL_STATE: "the resource is not in a valid state for the operation",
    CN_ERROR_ECC_UNCORRECTABLE: "uncorrectable ECC error",
    CN_OPS_ERROR_NOT_SUPPORTED: "operation not supported",
    CN_OPS_ERROR_NOT_PERMITTED: "operation not permitted",
    CN_OPS_ERROR_TIMEOUT: "operation timed out",
    CN_OPS_ERROR_OUT_OF_RESOURCES: "out of resources",
    CN_QUEUE_ERROR_INVALID: "invalid queue",
    CN_QUEUE_ERROR_OUT_OF_RESOURCES: "out of queue resources",
    CN_NOTIFIER_ERROR_INVALID: "invalid notifier",
    CN_NOTIFIER_ERROR_OUT_OF_RESOURCES: "out of notifier resources",
    CN_MEMORY_ERROR_OUT_OF_MEMORY: "out of MLU memory",
    CN_MEMORY_ERROR_OUT_OF_PROCESS_MAX_MEMORY: "over the process's MLU memory limit",
    CN_MEMORY_ERROR_INVALID_ADDRESS: "invalid MLU address",
    CN_INVOKE_ERROR: "an exception occurred on the device",
    CN_CONTEXT_ERROR_INVALID: "invalid context (none bound to this thread, or destroyed)",
    CN_CONTEXT_ERROR_OUT_OF_RESOURCES: "out of context resources",
    CN_ERROR_NOT_FOUND: "not found",
    CN_ERROR_INVALID_KERNEL: "invalid kernel",
    CN_ERROR_UNKNOWN: "unknown error",
}
_OUT_OF_SCOPE = "This error code is not in the scope of the CNresult enumeration"


class CndrvError(ApiError):
    """A failed CNDrv call; `.code` is the CNresult value."""

    @property
    def name(self) -> str:
        return STATUS_NAMES.get(self.code, "CN_ERROR_UNKNOWN")

    def __str__(self) -> str:
        return f"[{self.name} {self.code}] {self.message}"


_FAULT_CODES = {
    "argument": CN_ERROR_INVALID_VALUE, "null_pointer": CN_ERROR_INVALID_VALUE, "direction": CN_ERROR_INVALID_VALUE,
    "device": CN_ERROR_INVALID_DEVICE, "no_device": CN_ERROR_NO_DEVICE, "handle": CN_ERROR_INVALID_HANDLE,
    "not_supported": CN_OPS_ERROR_NOT_SUPPORTED,
    "not_ready": CN_ERROR_NOT_READY, "illegal_state": CN_ERROR_ILLEGAL_STATE,
    "out_of_memory": CN_MEMORY_ERROR_OUT_OF_MEMORY, "host_out_of_memory": CN_ERROR_SYSTEM_OUT_OF_MEMORY,
    "queue": CN_INVOKE_ERROR, "kernel": CN_INVOKE_ERROR,
}


def code_of(fault: BaseException) -> int:
    """The CNresult that reports `fault`: bad values INVALID_VALUE, device ordinals INVALID_DEVICE, bad MLU
    addresses (unknown, freed, out of bounds, not a block's start) MEMORY_ERROR_INVALID_ADDRESS. A CNRT error met
    underneath reports the fault behind it."""
    if isinstance(fault, CndrvError):
        return fault.code
    if isinstance(fault, ApiError):
        return code_of(fault.fault) if isinstance(fault.fault, Fault) else CN_ERROR_UNKNOWN
    if isinstance(fault, Fault):
        code = _FAULT_CODES.get(fault.kind)
        if code is None:
            from mlusim.errors import MemoryFault
            code = CN_MEMORY_ERROR_INVALID_ADDRESS if isinstance(fault, MemoryFault) else CN_ERROR_UNKNOWN
        return code
    return CN_ERROR_UNKNOWN


api = ApiFamily("cn", CndrvError, code_of)


def runtime_errors(call, *args, names=None):
    """`call(*args)` of a cnrt function, its CnrtError raised as the fault behind it (then translated here), that
    fault's argument renamed by `names` (cnrt's parameter name -> the CNDrv one). A CNDrv call leaves CNRT's
    last error (cnrtGetLastError) as it was."""
    from cnrt import errors as cnrt_errors
    previous = cnrt_errors.last_error_code()
    try:
        return call(*args)
    except ApiError as error:
        cnrt_errors.set_last_error(previous)
        fault = error.fault
        if isinstance(fault, Fault):
            if names and fault.arg in names:
                fault.arg = names[fault.arg]
            raise fault from None
        raise CndrvError(CN_ERROR_UNKNOWN, str(error)) from None


@api("cnGetErrorString")
def getErrorString(error: int) -> str:
    """cnGetErrorString(CNresult error, const char **pStr) -> the description of a status."""
    return _DESCRIPTIONS.get(as_int(error, "error"), _OUT_OF_SCOPE)


@api("cnGetErrorName")
def getErrorName(error: int) -> str:
    """cnGetErrorName(CNresult error, const char **pStr) -> the status's enum name ("CN_ERROR_INVALID_VALUE")."""
    return STATUS_NAMES.get(as_int(error, "error"), _OUT_OF_SCOPE)


_init_lock = threading.Lock()
_initialized = False


def mark_initialized() -> None:
    global _initialized
    with _init_lock:
        _initialized = True


def require_init() -> None:
    """CN_ERROR_NOT_INITIALIZED unless cnInit ran, or the runtime (CNRT, which initialises CNDrv itself) has
    brought up the devices."""
    if _initialized:
        return
    from mlusim import device as devices
    if not devices.configured():
        raise CndrvError(CN_ERROR_NOT_INITIALIZED, "CNDrv is not initialized: call cnInit(0) first")
