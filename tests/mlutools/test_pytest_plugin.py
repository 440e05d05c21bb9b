"""The pytest plugin, as a CI user loads it (`pytest -p mlutools.pytest_plugin`): a test that races or leaks device
memory fails with the report in its message; markers choose the tools; the mlu_device and mlu_clique fixtures."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

TESTS = textwrap.dedent('''
    import numpy as np
    import pytest

    import cncl
    import cnrt


    def test_racy(mlu_device):
        q1, q2 = cnrt.queueCreate(), cnrt.queueCreate()
        x = cnrt.malloc(4096)
        cnrt.memsetAsync(x, 1, 4096, q1)
        cnrt.memsetAsync(x, 2, 4096, q2)
        cnrt.syncDevice()
        cnrt.free(x)
        cnrt.queueDestroy(q1)
        cnrt.queueDestroy(q2)


    def test_leaky(mlu_device):
        cnrt.malloc(128)


    def test_clean(mlu_device):
        x = cnrt.malloc(64)
        cnrt.memset(x, 0, 64)
        cnrt.free(x)
        assert mlu_device.index == 0 and mlu_device.memory.capacity == 256 << 20


    @pytest.mark.mlusim_sanitize("off")
    def test_off(mlu_device):
        cnrt.malloc(128)


    @pytest.mark.mlusim_sanitize(exclude="leakcheck")
    def test_leak_excluded(mlu_device):
        cnrt.malloc(128)


    def test_memcheck_is_shown_not_failed(mlu_device):
        with pytest.raises(cnrt.CnrtError):
            cnrt.free(12345)


    @pytest.mark.mlusim_ranks(3)
    def test_clique(mlu_clique):
        def body(rank):
            send, recv = cnrt.malloc(16), cnrt.malloc(16)
            cnrt.memcpy(send, np.full(4, rank.rank + 1, np.float32), 16, cnrt.cnrtMemcpyHostToDev)
            cncl.allReduce(send, recv, 4, cncl.cnclFloat, cncl.cnclSum, rank.comm, rank.queue)
            cnrt.queueSync(rank.queue)
            out = np.empty(4, np.float32)
            cnrt.memcpy(out, recv, 16, cnrt.cnrtMemcpyDevToHost)
            cnrt.free(send)
            cnrt.free(recv)
            return rank.device, out.tolist()
        assert mlu_clique.world == 3
        assert mlu_clique.run(body) == [(r, [6.0] * 4) for r in range(3)]
''')


def _pytest(tmp_path, *options) -> subprocess.CompletedProcess:
    (tmp_path / "test_ci.py").write_text(TESTS)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLUSIM_SANITIZE")}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # load it the documented way, by name
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "mlutools.pytest_plugin", "-rA", "-q",
                           "-p", "no:cacheprovider", *options, str(tmp_path / "test_ci.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=280)


def _outcomes(output: str) -> dict:
    outcomes = {}
    for line in output.splitlines():
        for word in ("PASSED", "FAILED", "ERROR"):
            if line.startswith(word + " "):
                name = line.split()[1].split("::")[-1]
                outcomes.setdefault(name, set()).add(word)
    return outcomes


def test_races_and_leaks_fail_their_tests_with_the_report(tmp_path):
    done = _pytest(tmp_path, "--mlusim-sanitize=all")
    outcomes = _outcomes(done.stdout)
    assert outcomes == {"test_racy": {"FAILED"}, "test_leaky": {"PASSED", "ERROR"}, "test_clean": {"PASSED"},
                        "test_off": {"PASSED"}, "test_leak_excluded": {"PASSED"},
                        "test_memcheck_is_shown_not_failed": {"PASSED"}, "test_clique": {"PASSED"}}, done.stdout
    assert "RACECHECK error: race (write-write) of 4096 bytes" in done.stdout
    assert "test_ci.py:12 in test_racy" in done.stdout and "test_ci.py:13 in test_racy" in done.stdout
    assert "LEAKCHECK error: memory_leak of 128 bytes" in done.stdout and "test_ci.py:21 in test_leaky" in done.stdout
    assert "MEMCHECK error: unknown_address" in done.stdout  # shown in the passing test's report section


def test_without_a_request_the_plugin_only_adds_fixtures(tmp_path):
    done = _pytest(tmp_path)
    assert done.returncode == 0, done.stdout
    assert all(outcome == {"PASSED"} for outcome in _outcomes(done.stdout).values())
    assert len(_outcomes(done.stdout)) == 7
    assert "SANITIZER" not in done.stdout


def test_the_library_is_not_assertion_rewritten():
    """pytest rewrites the modules of a distribution with a pytest11 plugin by parsing them into Python ast objects;
    on CPython 3.11 that raced numba's own parsing on a queue's thread (cnnl loads op modules on first use)."""
    import importlib
    for name in ("mlusim.device", "cnnl.ops.pooling", "cnnl.kernels.conv", "cnrt"):
        module = importlib.import_module(name)
        assert "@py_builtins" not in vars(module), f"{name} was rewritten by pytest"
