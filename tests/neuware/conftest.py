"""The C ABI tests: the libraries are built once per machine (cached on disk), the C/C++ programs once per session.

Programs run in a clean environment (no PYTHONPATH, no virtualenv variables): the libraries must find the
installed mlusim by themselves.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytest.importorskip("cffi", reason="the C ABI needs the capi extra: pip install -e '.[capi]'")

from neuware import build, cdecl  # noqa: E402

PROGRAMS = Path(__file__).parent / "programs"
REPOSITORY = Path(__file__).resolve().parents[2]
LINK_LIBRARIES = ("-lcnnl", "-lcncl", "-lcndev", "-lcndrv", "-lcnrt")


def compiler(cxx: bool) -> str:
    name = os.environ.get("CXX" if cxx else "CC") or ("g++" if cxx else "gcc")
    if shutil.which(name) is None:
        pytest.skip(f"no {name} on this machine")
    return name


def clean_environment(**extra: str) -> dict:
    """This process's environment without what would let a program find Python packages it should find itself."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV") and not key.startswith("MLUSIM_CAPI_VERBOSE")}
    env.update(extra)
    return env


def python_embedding_flags() -> list:
    """Compiler and linker flags of a program that embeds this Python (the mixed C++ test)."""
    if not sysconfig.get_config_var("Py_ENABLE_SHARED"):
        pytest.skip("this Python has no shared libpython to embed")
    libdir = sysconfig.get_config_var("LIBDIR")
    version = sysconfig.get_config_var("LDVERSION") or sysconfig.get_python_version()
    return [f"-I{sysconfig.get_paths()['include']}", f"-L{libdir}", f"-Wl,-rpath,{libdir}", f"-lpython{version}"]


@pytest.fixture(scope="session")
def library_dir() -> Path:
    return build.build_libraries()


class Programs:
    """Compiles the test programs once per session and runs them."""

    def __init__(self, library_dir: Path, out_dir: Path):
        self.library_dir = library_dir
        self.out_dir = out_dir
        self._built: dict = {}

    def build(self, source: str, extra_flags=()) -> Path:
        if source in self._built:
            return self._built[source]
        cxx = source.endswith(".cpp")
        target = self.out_dir / Path(source).stem
        command = [compiler(cxx), "-O1", "-g", "-Wall", "-Werror", f"-I{cdecl.INCLUDE_DIR}", str(PROGRAMS / source),
                   "-o", str(target), *extra_flags, f"-L{self.library_dir}", f"-Wl,-rpath,{self.library_dir}",
                   *LINK_LIBRARIES, "-lpthread", "-lm"]
        result = subprocess.run(command, capture_output=True, text=True, timeout=180)
        assert result.returncode == 0, f"{' '.join(command)}\n{result.stdout}{result.stderr}"
        self._built[source] = target
        return target

    def run(self, source: str, *args: str, extra_flags=(), env=None, timeout: float = 120,
            expect_success: bool = True) -> subprocess.CompletedProcess:
        program = self.build(source, extra_flags)
        result = subprocess.run([str(program), *args], capture_output=True, text=True, timeout=timeout,
                                env=env if env is not None else clean_environment(), cwd=self.out_dir)
        if expect_success:
            assert result.returncode == 0, f"{program.name} {' '.join(args)} exited with {result.returncode}:\n" \
                                           f"{result.stdout}\n{result.stderr}"
        return result


@pytest.fixture(scope="session")
def programs(library_dir, tmp_path_factory) -> Programs:
    return Programs(library_dir, tmp_path_factory.mktemp("capi-programs"))


def start(programs: Programs, source: str, *args: str, env=None) -> subprocess.Popen:
    """Start a built program without waiting (for several processes at once)."""
    return subprocess.Popen([str(programs.build(source)), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env if env is not None else clean_environment(), cwd=programs.out_dir)


__all__ = ["REPOSITORY", "clean_environment", "python_embedding_flags", "start", "sys"]
