"""cndevRet_t: the statuses of CNDev, its error type, the fault translation, cndevGetErrorString and the
per-thread last error (cndevGetLastError)."""
from __future__ import annotations

import threading

from mlusim.apicall import ApiError, ApiFamily
from mlusim.errors import Fault

CNDEV_SUCCESS = 0
CNDEV_ERROR_NO_DRIVER = 1
CNDEV_ERROR_LOW_DRIVER_VERSION = 2
CNDEV_ERROR_UNSUPPORTED_API_VERSION = 3
CNDEV_ERROR_UNINITIALIZED = 4
CNDEV_ERROR_INVALID_ARGUMENT = 5
CNDEV_ERROR_INVALID_DEVICE_ID = 6
CNDEV_ERROR_UNKNOWN = 7
CNDEV_ERROR_MALLOC = 8
CNDEV_ERROR_INSUFFICIENT_SPACE = 9
CNDEV_ERROR_NOT_SUPPORTED = 10
CNDEV_ERROR_INVALID_LINK = 11
CNDEV_ERROR_NO_DEVICES = 12
CNDEV_ERROR_NO_PERMISSION = 13
CNDEV_ERROR_NOT_FOUND = 14
CNDEV_ERROR_IN_USE = 15
CNDEV_ERROR_DUPLICATE = 16
CNDEV_ERROR_TIMEOUT = 17
CNDEV_ERROR_IN_PROBLEM = 18

STATUS_NAMES = {value: name for name, value in globals().items() if name.startswith("CNDEV_")}

_DESCRIPTIONS = {
    CNDEV_SUCCESS: "Success",
    CNDEV_ERROR_NO_DRIVER: "No driver",
    CNDEV_ERROR_LOW_DRIVER_VERSION: "Driver version is too low",
    CNDEV_ERROR_UNSUPPORTED_API_VERSION: "API version is not supported",
    CNDEV_ERROR_UNINITIALIZED: "CNDev is not initialized (call cndevInit)",
    CNDEV_ERROR_INVALID_ARGUMENT: "Invalid argument",
    CNDEV_ERROR_INVALID_DEVICE_ID: "Invalid device ID",
    CNDEV_ERROR_UNKNOWN: "Unknown error",
    CNDEV_ERROR_MALLOC: "Host memory allocation failed",
    CNDEV_ERROR_INSUFFICIENT_SPACE: "Insufficient space",
    CNDEV_ERROR_NOT_SUPPORTED: "Not supported",
    CNDEV_ERROR_INVALID_LINK: "Invalid link port",
    CNDEV_ERROR_NO_DEVICES: "No MLU devices",
    CNDEV_ERROR_NO_PERMISSION: "No permission",
    CNDEV_ERROR_NOT_FOUND: "Not found",
    CNDEV_ERROR_IN_USE: "Device in use",
    CNDEV_ERROR_DUPLICATE: "Duplicate",
    CNDEV_ERROR_TIMEOUT: "Timeout",
    CNDEV_ERROR_IN_PROBLEM: "Device in problem",
}


class CndevError(ApiError):
    """A failed CNDev call; `.code` is the cndevRet_t value."""

    @property
    def name(self) -> str:
        return STATUS_NAMES.get(self.code, "CNDEV_ERROR_UNKNOWN")

    def __str__(self) -> str:
        return f"[{self.name} {self.code}] {self.message}"


_FAULT_CODES = {"device": CNDEV_ERROR_INVALID_DEVICE_ID, "no_device": CNDEV_ERROR_NO_DEVICES,
                "not_supported": CNDEV_ERROR_NOT_SUPPORTED, "host_out_of_memory": CNDEV_ERROR_MALLOC}


def code_of(fault: BaseException) -> int:
    """The cndevRet_t that reports `fault`: a device ordinal that names no device is INVALID_DEVICE_ID, any other bad
    argument INVALID_ARGUMENT."""
    if isinstance(fault, CndevError):
        return fault.code
    if isinstance(fault, ApiError) and isinstance(fault.fault, Fault):
        return code_of(fault.fault)
    if isinstance(fault, Fault):
        return _FAULT_CODES.get(fault.kind, CNDEV_ERROR_INVALID_ARGUMENT)
    return CNDEV_ERROR_UNKNOWN


_last = threading.local()


def _set_last_error(code: int) -> None:
    _last.code = code


api = ApiFamily("cndev", CndevError, code_of, _set_last_error)


@api("cndevGetErrorString")
def getErrorString(errorId: int) -> str:
    """cndevGetErrorString(cndevRet_t errorId) -> the description of a status."""
    from mlusim.validate import as_int
    return _DESCRIPTIONS.get(as_int(errorId, "errorId"), "Cndev_ERROR not found!")


@api("cndevGetLastError")
def getLastError() -> int:
    """cndevGetLastError(void) -> the status of this host thread's last failed CNDev call (CNDEV_SUCCESS if none)."""
    return getattr(_last, "code", CNDEV_SUCCESS)
