"""Error codes, names, strings, the per-thread last error, and the C-name aliases of every function."""
import threading

import pytest

import cnrt
from cnrt.errors import api

from .helpers import raises_code

REFERENCE_CODES = {
    "cnrtSuccess": 0, "cnrtErrorNotReady": 1, "cnrtErrorInit": 100002, "cnrtErrorNoDevice": 100004,
    "cnrtErrorDeviceInvalid": 100005, "cnrtErrorArgsInvalid": 100006, "cnrtErrorSys": 100007,
    "cnrtErrorSysNoMem": 100010, "cnrtErrorInvalidResourceHandle": 100014, "cnrtErrorIllegalState": 100015,
    "cnrtErrorNotSupport": 100050, "cnrtErrorOpsNotPermitted": 100051, "cnrtErrorQueue": 100060,
    "cnrtErrorNoMem": 100100, "cnrtErrorAssert": 100128, "cnrtErrorKernelTrap": 100132,
    "cnrtErrorKernelUserTrap": 100133, "cnrtErrorNotFound": 100301, "cnrtErrorInvalidKernel": 100302,
    "cnrtErrorNoKernel": 101312, "cnrtErrorSetOnActiveProcess": 632002, "cnrtErrorDevice": 632006,
    "cnrtErrorNoAttribute": 632009, "cnrtErrorMemcpyDirectionInvalid": 632013, "cnrtErrorBusy": 632014,
    "cnrtErrorNoCnrtContext": 632019, "cnrtErrorInvalidSymbol": 632100, "cnrtErrorUnknown": 999991,
    "CNRT_RET_SUCCESS": 0, "CNRT_RET_ERR_INVALID": 632007, "CNRT_RET_ERR_NOMEM": 632008,
    "CNRT_RET_ERR_NODEV": 632009, "CNRT_RET_ERR_SYS": 632011, "CNRT_RET_ERR_BUSY": 632014,
    "CNRT_RET_ERR_UNKNOWN": 999991,
}


@pytest.mark.parametrize("name, value", sorted(REFERENCE_CODES.items()))
def test_every_code_has_its_reference_value_a_name_and_a_description(name, value):
    assert getattr(cnrt, name) == value
    assert cnrt.getErrorName(value).startswith(("cnrt", "CNRT_RET_"))
    assert cnrt.getErrorStr(value) != "Unknown error." or value == cnrt.cnrtErrorUnknown


def test_error_names():
    assert cnrt.getErrorName(100006) == "cnrtErrorArgsInvalid"
    assert cnrt.getErrorName(123) == "cnrtErrorUnknown"
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.getErrorStr, "x")


def test_last_error_is_per_thread_and_get_resets_while_peek_does_not():
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.malloc, -1)
    other = []
    thread = threading.Thread(target=lambda: other.append(cnrt.peekAtLastError()))
    thread.start()
    thread.join()
    assert other == [cnrt.cnrtSuccess]
    assert cnrt.peekAtLastError() == cnrt.cnrtErrorArgsInvalid
    assert cnrt.getLastError() == cnrt.cnrtErrorArgsInvalid
    assert cnrt.getLastError() == cnrt.cnrtSuccess
    raises_code(cnrt.cnrtErrorDeviceInvalid, cnrt.setDevice, 9)
    assert cnrt.getLastErr() == cnrt.cnrtErrorDeviceInvalid


def test_every_function_is_also_reachable_by_its_c_name():
    assert len(api.functions) > 80
    for name, function in api.functions.items():
        assert getattr(cnrt, name) is function
        assert getattr(cnrt, function.c_name) is function
        assert function.__doc__ and (function.c_name in function.__doc__ or name.startswith("cnrt")), name


def test_error_carries_code_kind_and_message():
    error = raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.free, 12345)
    assert error.name == "cnrtErrorArgsInvalid"
    assert error.kind == "unknown_address"
    assert str(error).startswith("[cnrtErrorArgsInvalid 100006] cnrtFree: argument 'ptr'")
