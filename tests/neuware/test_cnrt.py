"""cnrt.h from C: devices, memory, copies, queues, notifiers, host functions, error codes (programs/cnrt_runtime.c)
and calls from several C threads at once (programs/threads.c)."""


def test_runtime_program(programs):
    result = programs.run("cnrt_runtime.c")
    assert "0 failure(s)" in result.stdout


def test_verbose_failures_go_to_stderr(programs):
    from .conftest import clean_environment
    quiet = programs.run("cnrt_runtime.c")
    loud = programs.run("cnrt_runtime.c", env=clean_environment(MLUSIM_CAPI_VERBOSE="1"))
    assert "failed with status" not in quiet.stderr
    assert "mlusim: cnrtFree failed with status 100006: [cnrtErrorArgsInvalid 100006] cnrtFree: argument 'ptr'" \
           in loud.stderr
    assert "double free" in loud.stderr


def test_threads(programs):
    result = programs.run("threads.c")
    assert "0 failure(s)" in result.stdout


def test_v6_spellings_conversions_and_check(programs):
    """programs/cnrt_v6.c: CNRT 5/6 names, cnrtCastDataType(_V2) through their host pointers (rounding modes,
    quantization), cnrtMemcpyAsync_V2, cnrtMallocConstant, cnrtDeviceGetPCIBusId, CNRT_CHECK; bad arguments."""
    result = programs.run("cnrt_v6.c")
    assert "0 failure(s)" in result.stdout, result.stdout
    check_lines = [line for line in result.stderr.splitlines() if line.startswith("CNRT error:")]
    assert len(check_lines) == 1, result.stderr
    assert "cnrt_v6.c:" in check_lines[0] and "cnrtFree((void *)0x1234)" in check_lines[0]
    assert "cnrtErrorArgsInvalid (100006)" in check_lines[0]
