"""cnrtRet_t: every status code of the reference, the error type, and the per-thread last error."""
from __future__ import annotations

import threading

from mlusim.apicall import ApiError, ApiFamily
from mlusim.errors import Fault, KernelFault, QueueFault

cnrtSuccess = 0
cnrtErrorNotReady = 1
cnrtErrorInit = 100002
cnrtErrorNoDevice = 100004
cnrtErrorDeviceInvalid = 100005
cnrtErrorArgsInvalid = 100006
cnrtErrorSys = 100007
cnrtErrorSysNoMem = 100010
cnrtErrorInvalidResourceHandle = 100014
cnrtErrorIllegalState = 100015
cnrtErrorNotSupport = 100050
cnrtErrorOpsNotPermitted = 100051
cnrtErrorQueue = 100060
cnrtErrorNoMem = 100100
cnrtErrorAssert = 100128
cnrtErrorKernelTrap = 100132
cnrtErrorKernelUserTrap = 100133
cnrtErrorNotFound = 100301
cnrtErrorInvalidKernel = 100302
cnrtErrorNoKernel = 101312
cnrtErrorSetOnActiveProcess = 632002
cnrtErrorDevice = 632006
cnrtErrorNoAttribute = 632009
cnrtErrorMemcpyDirectionInvalid = 632013
cnrtErrorBusy = 632014
cnrtErrorNoCnrtContext = 632019
cnrtErrorInvalidSymbol = 632100
cnrtErrorUnknown = 999991

# Legacy (v4) macros.
CNRT_RET_SUCCESS = 0
CNRT_RET_ERR_INVALID = 632007
CNRT_RET_ERR_NOMEM = 632008
CNRT_RET_ERR_NODEV = 632009
CNRT_RET_ERR_SYS = 632011
CNRT_RET_ERR_BUSY = 632014
CNRT_RET_ERR_UNKNOWN = 999991

_DESCRIPTIONS = {
    cnrtSuccess: "The API call returns with no errors.",
    cnrtErrorNotReady: "The queued work has not completed yet.",
    cnrtErrorInit: "Failed to initialize the runtime.",
    cnrtErrorNoDevice: "No MLU device is available.",
    cnrtErrorDeviceInvalid: "The device ordinal is invalid.",
    cnrtErrorArgsInvalid: "Invalid argument.",
    cnrtErrorSys: "A system call failed.",
    cnrtErrorSysNoMem: "The host is out of memory.",
    cnrtErrorInvalidResourceHandle: "The resource handle is invalid or was destroyed.",
    cnrtErrorIllegalState: "The call is not allowed in the current state.",
    cnrtErrorNotSupport: "The operation is not supported.",
    cnrtErrorOpsNotPermitted: "The operation is not permitted.",
    cnrtErrorQueue: "A queue operation failed.",
    cnrtErrorNoMem: "The device is out of memory.",
    cnrtErrorAssert: "A kernel assertion failed.",
    cnrtErrorKernelTrap: "A kernel trapped (illegal memory access or capacity violation).",
    cnrtErrorKernelUserTrap: "A kernel executed a user trap.",
    cnrtErrorNotFound: "The requested item was not found.",
    cnrtErrorInvalidKernel: "The kernel is invalid.",
    cnrtErrorNoKernel: "No kernel image is available.",
    cnrtErrorSetOnActiveProcess: "The setting cannot change on an active process.",
    cnrtErrorDevice: "A device error occurred.",
    cnrtErrorNoAttribute: "The attribute does not exist.",
    cnrtErrorMemcpyDirectionInvalid: "The memcpy direction does not match the pointers.",
    cnrtErrorBusy: "The device is busy (deprecated).",
    cnrtErrorNoCnrtContext: "There is no CNRT context.",
    cnrtErrorInvalidSymbol: "The symbol is invalid.",
    cnrtErrorUnknown: "Unknown error.",
    CNRT_RET_ERR_INVALID: "Invalid argument (legacy).",
    CNRT_RET_ERR_NOMEM: "Out of memory (legacy).",
    CNRT_RET_ERR_SYS: "A system call failed (legacy).",
}

ERROR_NAMES: dict[int, str] = {}
for _name, _value in list(globals().items()):
    if _name.startswith("cnrt") and isinstance(_value, int):
        ERROR_NAMES.setdefault(_value, _name)
for _name, _value in list(globals().items()):
    if _name.startswith("CNRT_RET_") and isinstance(_value, int):
        ERROR_NAMES.setdefault(_value, _name)


class CnrtError(ApiError):
    """A failed CNRT call; `.code` is the cnrtRet_t value."""

    @property
    def name(self) -> str:
        return ERROR_NAMES.get(self.code, "cnrtErrorUnknown")

    def __str__(self) -> str:
        return f"[{self.name} {self.code}] {self.message}"


_FAULT_CODES = {
    "argument": cnrtErrorArgsInvalid,
    "not_supported": cnrtErrorNotSupport,
    "handle": cnrtErrorInvalidResourceHandle,
    "device": cnrtErrorDeviceInvalid,
    "no_device": cnrtErrorNoDevice,
    "direction": cnrtErrorMemcpyDirectionInvalid,
    "not_ready": cnrtErrorNotReady,
    "illegal_state": cnrtErrorIllegalState,
    "out_of_memory": cnrtErrorNoMem,
    "host_out_of_memory": cnrtErrorSysNoMem,
    "sanitizer": cnrtErrorIllegalState,  # mlusim.sanitizer's "raise at the first error" mode
}
_KERNEL_CODES = {"assert": cnrtErrorAssert, "user_trap": cnrtErrorKernelUserTrap, "compile": cnrtErrorInvalidKernel}


def code_of(fault: BaseException) -> int:
    """The cnrtRet_t value that reports `fault`."""
    if isinstance(fault, ApiError):
        return fault.code if isinstance(fault, CnrtError) else cnrtErrorUnknown
    if isinstance(fault, QueueFault):
        if isinstance(fault.cause, (Fault, CnrtError)):
            return code_of(fault.cause)
        if isinstance(fault.cause, ApiError):  # another library's error (CNCL) says how cnrt reports it
            return getattr(fault.cause, "cnrt_code", cnrtErrorQueue)
        return cnrtErrorKernelTrap if fault.command_kind == "kernel" else cnrtErrorUnknown
    if isinstance(fault, KernelFault):
        return _KERNEL_CODES.get(fault.reason, cnrtErrorKernelTrap)
    if isinstance(fault, Fault):
        return _FAULT_CODES.get(fault.kind, cnrtErrorArgsInvalid)
    return cnrtErrorUnknown


_last = threading.local()


def set_last_error(code: int) -> None:
    _last.code = code


def last_error_code() -> int:
    return getattr(_last, "code", cnrtSuccess)


api = ApiFamily("cnrt", CnrtError, code_of, set_last_error)


@api("cnrtGetLastError")
def getLastError() -> int:
    """cnrtGetLastError: the last error of this host thread; resets it to cnrtSuccess."""
    code = last_error_code()
    _last.code = cnrtSuccess
    return code


@api("cnrtPeekAtLastError")
def peekAtLastError() -> int:
    """cnrtPeekAtLastError: the last error of this host thread, without resetting it."""
    return last_error_code()


@api("cnrtGetLastErr")
def getLastErr() -> int:
    """cnrtGetLastErr (v4): the last error of this host thread; resets it."""
    return getLastError()


@api("cnrtGetErrorName")
def getErrorName(error: int) -> str:
    """cnrtGetErrorName: the enumerator name of a cnrtRet_t value."""
    from mlusim.validate import as_int
    return ERROR_NAMES.get(as_int(error, "error"), "cnrtErrorUnknown")


@api("cnrtGetErrorStr")
def getErrorStr(error: int) -> str:
    """cnrtGetErrorStr: a description of a cnrtRet_t value."""
    from mlusim.validate import as_int
    return _DESCRIPTIONS.get(as_int(error, "error"), "Unknown error.")


@api("cnrtCheck")
def check(result: int, func: str, file: str, line: int) -> None:
    """cnrtCheck(cnrtRet_t result, const char *const func, const char *const file, int const line), the function
    behind CNRT_CHECK(val): a failed status prints "CNRT error: <file>:<line>: <func> returned <name> (<code>):
    <description>" on stderr (the process goes on, as CNRT's documentation of cnrtCheck says: it prints)."""
    import sys
    from mlusim.validate import as_int
    code = as_int(result, "result")
    if code == cnrtSuccess:
        return
    where = f"{file or '?'}:{as_int(line, 'line')}"
    print(f"CNRT error: {where}: {func or '?'} returned {ERROR_NAMES.get(code, 'cnrtErrorUnknown')} ({code}): "
          f"{_DESCRIPTIONS.get(code, 'Unknown error.')}", file=sys.stderr, flush=True)
