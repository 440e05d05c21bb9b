"""The sanitizer's switches: MLUSIM_SANITIZE and the exit summary, enable/disable, tool names, the raise mode, and
an off path that leaves every hook unset."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cnrt
from mlusim import sanitizer
from mlusim.observers import OBSERVERS

ROOT = Path(__file__).resolve().parents[3]

RACY = textwrap.dedent("""
    import numpy as np
    import cnrt
    queue = cnrt.queueCreate()
    x = cnrt.malloc(4096)
    cnrt.memsetAsync(x, 1, 4096, queue)
    out = np.empty(1024, np.float32)
    try:
        cnrt.memcpy(out, x, 4096, cnrt.cnrtMemcpyDevToHost)   # the host reads what the queue still writes
    except cnrt.CnrtError as error:
        print("raised", error.name)
    try:
        cnrt.queueSync(queue)
    except cnrt.CnrtError as error:  # in raise mode the error is the command's that found it, whichever ran last
        print("raised", error.name)
    cnrt.queueDestroy(queue)
    print("done")
""")


def _run(environment: dict) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLUSIM_SANITIZE")}
    env.update(environment)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", RACY], env=env, capture_output=True, text=True, timeout=240)


def test_the_environment_turns_it_on_and_the_summary_comes_at_exit():
    done = _run({"MLUSIM_SANITIZE": "racecheck,leakcheck", "MLUSIM_SANITIZE_EXITCODE": "7"})
    assert done.stdout.strip() == "done"
    assert "RACECHECK error: host_race (read-write) of 4096 bytes" in done.stderr
    assert "LEAKCHECK error: memory_leak of 4096 bytes" in done.stderr
    assert "<string>:9 in <module>" in done.stderr  # the line of the host read
    assert done.stderr.strip().endswith("ERROR SUMMARY: 2 errors (leakcheck 1, racecheck 1)")
    assert done.returncode == 7


def test_the_raise_mode_from_the_environment_fails_the_call():
    done = _run({"MLUSIM_SANITIZE": "racecheck", "MLUSIM_SANITIZE_RAISE": "1"})
    assert done.stdout.split() == ["raised", "cnrtErrorIllegalState", "done"], done.stderr
    assert done.returncode == 0


def test_tool_names():
    assert sanitizer.parse_tools("all") == frozenset(sanitizer.TOOLS)
    assert sanitizer.parse_tools(" racecheck , leakcheck") == {"racecheck", "leakcheck"}
    assert sanitizer.parse_tools(["memcheck"]) == {"memcheck"}
    assert sanitizer.parse_tools("0") == sanitizer.parse_tools(None) == frozenset()
    with pytest.raises(ValueError, match="unknown sanitizer tool.*'racechek'.*memcheck, racecheck"):
        sanitizer.parse_tools("racechek")


@pytest.mark.mlusim_sanitize("off")  # the pytest plugin's scope would keep the hooks set
def test_off_means_it_observes_nothing(process_sanitizer):
    sanitizer.enable("racecheck")
    assert OBSERVERS.command_starting == (process_sanitizer.command_starting,) and OBSERVERS.watching_commands
    assert OBSERVERS.kernel_launched == (process_sanitizer.kernel_launched,)
    assert OBSERVERS.api_fault == ()  # memcheck is off
    sanitizer.disable()
    assert sanitizer.enabled() == frozenset()
    assert not OBSERVERS.observing(process_sanitizer) and not OBSERVERS.watching_commands
    with sanitizer.scope("memcheck") as found:
        assert sanitizer.enabled() == {"memcheck"} and OBSERVERS.api_fault == (process_sanitizer.api_fault,)
        with pytest.raises(cnrt.CnrtError):
            cnrt.free(1)
    assert not OBSERVERS.observing(process_sanitizer) and [r.kind for r in found.errors] == ["unknown_address"]


@pytest.mark.mlusim_sanitize("off")  # the pytest plugin's scope would take the report
def test_process_reports_collect_outside_scopes(process_sanitizer):
    sanitizer.enable("memcheck")
    sanitizer.clear()
    with pytest.raises(cnrt.CnrtError):
        cnrt.free(1)
    assert [r.kind for r in sanitizer.reports()] == ["unknown_address"]
    assert "ERROR SUMMARY: 1 error (memcheck 1)" in sanitizer.format_reports(sanitizer.reports())
    sanitizer.clear()
    assert sanitizer.reports() == []
