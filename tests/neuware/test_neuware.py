"""`mlusim neuware`: the Neuware-like tree a CMake project builds against (NEUWARE_HOME), and the flags a Makefile
uses."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlutools import cli

from .conftest import PROGRAMS, clean_environment, compiler

PROJECT = Path(__file__).parent / "cmake_project"


@pytest.fixture(scope="module")
def neuware(library_dir, tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("neuware")
    assert cli.main(["neuware", str(home)]) == 0
    return home


def test_tree_layout(neuware):
    for header in ("cnrt.h", "cnnl.h", "cncl.h", "mlusim.h", "cndev.h", "cn_api.h"):
        assert (neuware / "include" / header).is_file()
    for library in ("cnrt", "cnnl", "cncl", "cndev", "cndrv"):
        assert (neuware / "lib64" / f"lib{library}.so").is_file()
    version = (neuware / "version.txt").read_text()
    assert "cnrt 6.14.1" in version and "cncl 1.25.0" in version and "cndrv 2.15.5" in version


def test_cmake_project_builds_and_runs_against_the_tree(neuware, tmp_path):
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("no cmake on this machine")
    compiler(True)
    env = clean_environment(NEUWARE_HOME=str(neuware))
    configure = subprocess.run([cmake, "-S", str(PROJECT), "-B", str(tmp_path)], env=env, capture_output=True,
                               text=True, timeout=240)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    assert "Found CNRT 6, CNNL 1.x.0" in configure.stdout
    compiled = subprocess.run([cmake, "--build", str(tmp_path)], env=env, capture_output=True, text=True, timeout=240)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    run = subprocess.run([str(tmp_path / "neuware_user")], env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "0 failure(s)" in run.stdout


def test_flags_build_a_program(neuware, tmp_path, capsys):
    assert cli.main(["neuware", "--cflags", "--libs"]) == 0
    flags = capsys.readouterr().out.split()
    assert any(flag.startswith("-I") for flag in flags) and "-lcnrt" in flags
    program = tmp_path / "runtime"
    result = subprocess.run([compiler(False), str(PROGRAMS / "cnrt_runtime.c"), "-o", str(program), *flags, "-lm"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    run = subprocess.run([str(program)], env=clean_environment(), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "0 failure(s)" in run.stdout, run.stdout + run.stderr


def test_usage_errors(capsys):
    with pytest.raises(SystemExit):
        cli.main(["neuware"])
    assert "give a directory" in capsys.readouterr().err


def test_command_line_entry(neuware):
    out = subprocess.run([sys.executable, "-m", "mlutools.cli", "neuware", "--cflags", str(neuware)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"-I{neuware / 'include'}"
