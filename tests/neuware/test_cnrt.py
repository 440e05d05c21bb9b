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
