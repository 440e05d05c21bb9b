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
CONFIG_PROJECT = Path(__file__).parent / "cmake_config_project"


@pytest.fixture(scope="module")
def neuware(library_dir, tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("neuware")
    assert cli.main(["neuware", str(home)]) == 0
    return home


def test_tree_layout(neuware):
    for header in ("cnrt.h", "cnnl.h", "cnnl_extra.h", "cncl.h", "mlusim.h", "cndev.h", "cn_api.h", "cnmlrt.h"):
        assert (neuware / "include" / header).is_file()
    for library in ("cnrt", "cnnl", "cnnl_extra", "cncl", "cndev", "cndrv", "cnmlrt"):
        assert (neuware / "lib64" / f"lib{library}.so").is_file()
        assert (neuware / "lib64" / "pkgconfig" / f"{library}.pc").is_file()
    assert (neuware / "share" / "cmake" / "Neuware" / "NeuwareConfig.cmake").is_file()
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


def _needed(library: Path) -> list:
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("no readelf on this machine")
    dynamic = subprocess.run([readelf, "-d", str(library)], capture_output=True, text=True, timeout=60).stdout
    return [line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]


def test_companion_libraries_bring_in_the_library_behind_their_header(neuware):
    """libcnnl_extra.so and libcnmlrt.so (DIOPI links both) define nothing and depend on libcnnl / libcnrt, so a
    program linked with them alone resolves the functions their headers bring in."""
    assert "libcnnl.so" in _needed(neuware / "lib64" / "libcnnl_extra.so")
    assert "libcnrt.so" in _needed(neuware / "lib64" / "libcnmlrt.so")


def test_find_package_config_and_imported_targets(neuware, tmp_path):
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("no cmake on this machine")
    compiler(True)
    env = clean_environment()
    configure = subprocess.run([cmake, "-S", str(CONFIG_PROJECT), "-B", str(tmp_path), f"-DCMAKE_PREFIX_PATH={neuware}"],
                               env=env, capture_output=True, text=True, timeout=240)
    assert configure.returncode == 0, configure.stdout + configure.stderr
    assert f"Neuware 6.14.1 at {neuware.resolve()}: CNNL 1.26.0, CNCL 1.25.0" in configure.stdout
    compiled = subprocess.run([cmake, "--build", str(tmp_path)], env=env, capture_output=True, text=True, timeout=240)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    run = subprocess.run([str(tmp_path / "neuware_config_user")], env=env, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0 and "0 failure(s)" in run.stdout, run.stdout + run.stderr


def test_config_version_refuses_another_major(neuware, tmp_path):
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("no cmake on this machine")
    project = tmp_path / "project"
    project.mkdir()
    (project / "CMakeLists.txt").write_text("cmake_minimum_required(VERSION 3.10)\nproject(p NONE)\n"
                                            "find_package(Neuware 7 CONFIG REQUIRED)\n")
    configure = subprocess.run([cmake, "-S", str(project), "-B", str(tmp_path / "build"),
                                f"-DCMAKE_PREFIX_PATH={neuware}"], env=clean_environment(), capture_output=True,
                               text=True, timeout=240)
    assert configure.returncode != 0 and "6.14.1" in configure.stderr


def test_pkg_config_gives_the_flags(neuware, tmp_path):
    pkg_config = shutil.which("pkg-config")
    if pkg_config is None:
        pytest.skip("no pkg-config on this machine")
    env = clean_environment(PKG_CONFIG_PATH=str(neuware / "lib64" / "pkgconfig"))
    flags = subprocess.run([pkg_config, "--cflags", "--libs", "cnnl"], env=env, capture_output=True, text=True,
                           timeout=60)
    assert flags.returncode == 0, flags.stderr
    assert f"-I{neuware.resolve()}/include" in flags.stdout and "-lcnnl" in flags.stdout and "-lcnrt" in flags.stdout
    version = subprocess.run([pkg_config, "--modversion", "cncl"], env=env, capture_output=True, text=True,
                             timeout=60)
    assert version.stdout.strip() == "1.25.0"
    program = tmp_path / "runtime"
    built = subprocess.run([compiler(False), str(PROGRAMS / "cnrt_runtime.c"), "-o", str(program),
                            *flags.stdout.split(), "-lm"], capture_output=True, text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    run = subprocess.run([str(program)], env=clean_environment(), capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "0 failure(s)" in run.stdout, run.stdout + run.stderr
