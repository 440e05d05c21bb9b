"""BANG C tests: cncc builds the sample and check kernels once per session (objects are cached on disk too)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mlusim import device as devices

SOURCES = Path(__file__).parent / "sources"
SAMPLES = Path(__file__).resolve().parents[3] / "neuware" / "bangc" / "samples"


def cncc(*args: str, cwd=None, check: bool = True) -> subprocess.CompletedProcess:
    """Run the driver as a build would (a separate process)."""
    done = subprocess.run([sys.executable, "-m", "mlutools.cli", "cncc", *map(str, args)], capture_output=True,
                          text=True, timeout=240, cwd=cwd)
    if check:
        assert done.returncode == 0, f"cncc {' '.join(map(str, args))}:\n{done.stdout}{done.stderr}"
    return done


@pytest.fixture(scope="session")
def built(tmp_path_factory, library_dir) -> Path:
    """One shared object with the samples and the check kernels."""
    out = tmp_path_factory.mktemp("bangc")
    library = out / "libkernels.so"
    cncc("-shared", "-O2", "--bang-mlu-arch=mtp_372", SAMPLES / "vector_add.mlu", SAMPLES / "sram_reduction.mlu",
         SAMPLES / "tiled_matmul.mlu", SOURCES / "checks.mlu", "-o", library)
    return library


@pytest.fixture(scope="session")
def kernels(built):
    from neuware import bangc
    return bangc.load(built)


@pytest.fixture(autouse=True)
def fresh_machine():
    """Each kernel test gets a fresh simulated machine, and leaves none behind: what a trapped launch left allocated
    goes with it (as a process that died holds no device memory)."""
    devices.configure()
    yield
    devices.configure()
