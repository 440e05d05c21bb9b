"""The generic marshalling on its own (no C compiler): bindings are checked against their Python functions, bad
output pointers and counts are the library's bad-argument status before the Python function runs, internal errors
are loud, and handles keep their identity."""
import cffi
import pytest

import cnnl
import cnrt
from mlusim import handles
from neuware import bindings, failures, marshal
from neuware.cdecl import CType, Function
from neuware.kinds import BindingError, Seq

STATUS = CType("cnrtRet_t", "cnrtRet_t", 0, False, "integer")
INT = CType("int", "int", 0, False, "integer")
INT_OUT = CType("int *", "int", 1, False, "integer")
CONST_INTS = CType("const int *", "int", 1, True, "integer")


@pytest.fixture(scope="module")
def cnrt_helpers():
    ffi = cffi.FFI()
    family = bindings.family("cnrt")
    return marshal.Helpers(ffi, family), family, ffi


def compile_wrapper(helpers_family, params, python, annotations=None):
    helpers, family, _ = helpers_family
    function = Function("cnrtTestFunction", STATUS, tuple(params))
    return marshal.generate(marshal.bind(function, python, annotations), helpers, family)


def test_a_c_parameter_without_a_python_counterpart_is_a_binding_error():
    function = Function("cnrtTestFunction", STATUS, (("count", INT),))
    with pytest.raises(BindingError, match="matches no parameter"):
        marshal.bind(function, lambda other: None)


def test_a_python_parameter_without_a_c_counterpart_is_a_binding_error():
    function = Function("cnrtTestFunction", STATUS, ())
    with pytest.raises(BindingError, match="has no C parameter"):
        marshal.bind(function, lambda needed: None)


def test_a_const_array_needs_an_annotation():
    function = Function("cnrtTestFunction", STATUS, (("dims", CONST_INTS),))
    with pytest.raises(BindingError, match="needs an annotation"):
        marshal.bind(function, lambda dims: None)


def test_null_output_fails_before_the_python_function_runs(cnrt_helpers):
    called = []
    wrapper = compile_wrapper(cnrt_helpers, [("value", INT_OUT)], lambda: called.append(1) or 5)
    assert wrapper(0) == cnrt.cnrtErrorArgsInvalid
    assert called == []
    assert "'value'" in failures.last_message() and "NULL pointer for an output" in failures.last_message()
    assert cnrt.getLastError() == cnrt.cnrtErrorArgsInvalid


def test_outputs_and_arrays(cnrt_helpers):
    _, _, ffi = cnrt_helpers
    seen = []
    wrapper = compile_wrapper(cnrt_helpers, [("total", INT_OUT), ("count", INT), ("values", CONST_INTS)],
                              lambda values: seen.append(list(values)) or sum(values), {"values": Seq("count")})
    values = ffi.new("int[]", [3, 4, 5])
    out = ffi.new("int *")
    address = lambda cdata: int(ffi.cast("intptr_t", cdata))  # noqa: E731
    assert wrapper(address(out), 3, address(values)) == 0 and out[0] == 12
    assert wrapper(address(out), -1, address(values)) == cnrt.cnrtErrorArgsInvalid
    assert "negative element count" in failures.last_message()
    assert wrapper(address(out), 2, 0) == cnrt.cnrtErrorArgsInvalid
    assert "NULL array of 2 elements" in failures.last_message()
    assert wrapper(address(out), 0, 0) == 0 and out[0] == 0  # an empty array may be NULL
    assert seen == [[3, 4, 5], []]


def test_an_internal_error_is_loud(cnrt_helpers, capfd):
    def broken():
        raise ZeroDivisionError("a bug in the simulator")

    wrapper = compile_wrapper(cnrt_helpers, [], broken)
    assert wrapper() == cnrt.cnrtErrorUnknown
    err = capfd.readouterr().err
    assert "internal error of the simulator: ZeroDivisionError: a bug in the simulator" in err
    assert "Traceback" in err


def test_an_api_error_is_quiet_unless_verbose(cnrt_helpers, capfd, monkeypatch):
    wrapper = compile_wrapper(cnrt_helpers, [("device", INT)], cnrt.setDevice)
    assert wrapper(99) == cnrt.cnrtErrorDeviceInvalid
    assert capfd.readouterr().err == ""
    monkeypatch.setenv("MLUSIM_CAPI_VERBOSE", "1")
    assert wrapper(99) == cnrt.cnrtErrorDeviceInvalid
    assert "mlusim: cnrtTestFunction failed with status 100005" in capfd.readouterr().err


def test_handles_keep_identity_and_remember_destroyed_objects():
    desc = cnnl.createTensorDescriptor()
    address = handles.to_c(desc)
    assert address >= handles.BASE and address % handles.STRIDE == 0
    assert handles.to_c(desc) == address and handles.from_c(address) is desc
    cnnl.destroyTensorDescriptor(desc)
    handles.release(address)
    assert handles.from_c(address) is desc  # still names it: the API says "destroyed"
    assert handles.to_c(desc) != address  # a new registration never reuses an address
    assert handles.from_c(0) is None
    assert handles.from_c(1) == 1 and handles.from_c(2) == 2  # cnrtQueuePerThread, cnrtQueueLegacy
    unknown = handles.from_c(0x1234)
    assert repr(unknown) == "<unknown C handle 0x1234>"
    with pytest.raises(cnnl.CnnlError, match="unknown C handle 0x1234"):
        cnnl.destroyTensorDescriptor(unknown)
