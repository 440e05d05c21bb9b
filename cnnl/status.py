"""cnnlStatus_t: every status of the reference, the error type, the fault translation and cnnlGetErrorString."""
from __future__ import annotations

from mlusim.apicall import ApiError, ApiFamily
from mlusim.errors import Fault, QueueFault

CNNL_STATUS_SUCCESS = 0
CNNL_STATUS_NOT_INITIALIZED = 1
CNNL_STATUS_ALLOC_FAILED = 2
CNNL_STATUS_BAD_PARAM = 3
CNNL_STATUS_INTERNAL_ERROR = 4
CNNL_STATUS_ARCH_MISMATCH = 5
CNNL_STATUS_EXECUTION_FAILED = 6
CNNL_STATUS_NOT_SUPPORTED = 7
CNNL_STATUS_NUMERICAL_OVERFLOW = 8

STATUS_NAMES: dict[int, str] = {value: name for name, value in globals().items()
                                if name.startswith("CNNL_STATUS_")}

_DESCRIPTIONS = {
    CNNL_STATUS_SUCCESS: "CNNL_STATUS_SUCCESS: the operation completed successfully.",
    CNNL_STATUS_NOT_INITIALIZED: "CNNL_STATUS_NOT_INITIALIZED: the library, a handle or a descriptor was not "
                                 "initialized (call cnnlCreate / cnnlSet*Descriptor first).",
    CNNL_STATUS_ALLOC_FAILED: "CNNL_STATUS_ALLOC_FAILED: a resource could not be allocated.",
    CNNL_STATUS_BAD_PARAM: "CNNL_STATUS_BAD_PARAM: an invalid value or parameter was passed (data type, layout, "
                           "dimensions, pointer, workspace, ...).",
    CNNL_STATUS_INTERNAL_ERROR: "CNNL_STATUS_INTERNAL_ERROR: an internal error occurred in the library.",
    CNNL_STATUS_ARCH_MISMATCH: "CNNL_STATUS_ARCH_MISMATCH: the MLU device does not support this function.",
    CNNL_STATUS_EXECUTION_FAILED: "CNNL_STATUS_EXECUTION_FAILED: the function failed to execute on the MLU.",
    CNNL_STATUS_NOT_SUPPORTED: "CNNL_STATUS_NOT_SUPPORTED: the requested functionality is not supported.",
    CNNL_STATUS_NUMERICAL_OVERFLOW: "CNNL_STATUS_NUMERICAL_OVERFLOW: a numerical overflow occurred.",
}


class CnnlError(ApiError):
    """A failed CNNL call; `.code` is the cnnlStatus_t value."""

    @property
    def name(self) -> str:
        return STATUS_NAMES.get(self.code, "CNNL_STATUS_INTERNAL_ERROR")

    def __str__(self) -> str:
        return f"[{self.name} {self.code}] {self.message}"


_FAULT_CODES = {
    "not_supported": CNNL_STATUS_NOT_SUPPORTED,
    "out_of_memory": CNNL_STATUS_ALLOC_FAILED,
    "host_out_of_memory": CNNL_STATUS_ALLOC_FAILED,
    "arch_mismatch": CNNL_STATUS_ARCH_MISMATCH,
}


def code_of(fault: BaseException) -> int:
    """The cnnlStatus_t that reports `fault`: bad arguments, handles and pointers are BAD_PARAM (as in CNNL, which
    validates every pointer and descriptor), unsupported requests NOT_SUPPORTED, failed queued work EXECUTION_FAILED."""
    if isinstance(fault, CnnlError):
        return fault.code
    if isinstance(fault, QueueFault):
        return CNNL_STATUS_EXECUTION_FAILED
    if isinstance(fault, Fault):
        return _FAULT_CODES.get(fault.kind, CNNL_STATUS_BAD_PARAM)
    return CNNL_STATUS_INTERNAL_ERROR


api = ApiFamily("cnnl", CnnlError, code_of)


@api("cnnlGetErrorString")
def getErrorString(status: int) -> str:
    """cnnlGetErrorString(cnnlStatus_t status) -> a description of the status."""
    from mlusim.validate import as_int
    return _DESCRIPTIONS.get(as_int(status, "status"), "CNNL_STATUS_UNKNOWN: unrecognized status code.")
