"""The C ABI's start-up: what the first call of each library costs a fresh C process (starting the embedded
interpreter and importing what that library needs), with a warm and with a cold page cache.

A small C program (compiled with gcc against the cached libraries) makes one library's first call the first call
of the process and prints its time; for libcnnl it then times the first op on float32 data (no numba kernel) and
the first op on half data (imports numba and loads its cached kernel); for libcncl, a one-rank communicator and an
allReduce on it (imports numba and the zero-copy code). Each figure is the median over fresh
processes. The reference is the host's own floor: a Python process that only imports numpy, timed the same way.
Cold: before each run, every file the start-up reads (the Python modules and their caches, the shared objects,
the libraries) is dropped from the page cache with posix_fadvise(DONTNEED), which needs no privileges; pages
another running process maps stay cached, so on a busy host "cold" is a lower bound.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

from neuware import cdecl

LIBRARIES = ("cnrt", "cnnl", "cncl", "cndev", "cndrv")

_PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cnnl.h>
#include <cncl.h>
#include <cndev.h>
#include <cn_api.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int first_call(const char *library) {
  if (!strcmp(library, "cnrt")) { unsigned int count; return cnrtGetDeviceCount(&count); }
  if (!strcmp(library, "cnnl")) { cnnlHandle_t handle; return cnnlCreate(&handle); }
  if (!strcmp(library, "cncl")) { int major, minor, patch; return cnclGetLibVersion(&major, &minor, &patch); }
  if (!strcmp(library, "cndev")) return cndevInit(0);
  if (!strcmp(library, "cndrv")) return cnInit(0);
  return -1;
}

/* One 16-element cnnlOpTensor (add) of `dtype` and its queue sync, timed. */
static int timed_op(cnnlHandle_t handle, cnrtQueue_t queue, cnnlDataType_t dtype, double *seconds) {
  void *a, *b, *c;
  char zeros[64] = {0};
  int dims[1] = {16};
  float one = 1, zero = 0;
  cnnlTensorDescriptor_t desc;
  cnnlOpTensorDescriptor_t op;
  if (cnrtMalloc(&a, 64) || cnrtMalloc(&b, 64) || cnrtMalloc(&c, 64)) return 1;
  if (cnrtMemcpy(a, zeros, 64, cnrtMemcpyHostToDev) || cnrtMemcpy(b, zeros, 64, cnrtMemcpyHostToDev)) return 2;
  if (cnnlCreateTensorDescriptor(&desc) || cnnlSetTensorDescriptor(desc, CNNL_LAYOUT_ARRAY, dtype, 1, dims)) return 3;
  if (cnnlCreateOpTensorDescriptor(&op) ||
      cnnlSetOpTensorDescriptor(op, CNNL_OP_TENSOR_ADD, CNNL_DTYPE_FLOAT, CNNL_NOT_PROPAGATE_NAN)) return 4;
  double start = now();
  if (cnnlOpTensor(handle, op, &one, desc, a, &one, desc, b, NULL, 0, &zero, desc, c)) return 5;
  if (cnrtQueueSync(queue)) return 6;
  *seconds = now() - start;
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  double start = now();
  if (first_call(argv[1])) return 3;
  printf("first %.6f\n", now() - start);
  if (!strcmp(argv[1], "cnnl")) {
    cnnlHandle_t handle;
    cnrtQueue_t queue;
    double seconds;
    if (cnnlCreate(&handle) || cnrtQueueCreate(&queue) || cnnlSetQueue(handle, queue)) return 4;
    if (timed_op(handle, queue, CNNL_DTYPE_FLOAT, &seconds)) return 5;
    printf("first_op_float %.6f\n", seconds);
    if (timed_op(handle, queue, CNNL_DTYPE_HALF, &seconds)) return 6;
    printf("first_op_half %.6f\n", seconds);
  }
  if (!strcmp(argv[1], "cncl")) {  /* a one-rank clique of this process and an allReduce on it */
    cnclComm_t comm;
    cnrtQueue_t queue;
    int device = 0, rank = 0;
    void *buffer;
    double begin = now();
    if (cnclInitComms(&comm, 1, &device, &rank, 1, NULL) || cnrtQueueCreate(&queue) || cnrtMalloc(&buffer, 64)) return 7;
    if (cnclAllReduce(buffer, buffer, 16, cnclFloat32, cnclSum, comm, queue) || cnrtQueueSync(queue)) return 8;
    printf("first_comm %.6f\n", now() - begin);
    if (cnclDestroyComms(&comm, 1)) return 9;
  }
  return 0;
}
"""

#: what the embedded interpreter of a C program imports (to list the files a cold start reads)
_IMPORTS = ("import _cffi_backend, neuware.runtime, neuware.bindings, cnrt, cnnl, cncl, cndev, cndrv, "
            "cnnl.ops.binary, mlusim.numerics.float16, cncl.tiny, cncl.zerocopy")

_LIST_FILES = f"""
import importlib.util, sys
{_IMPORTS}
files = set()
for module in list(sys.modules.values()):
    source = getattr(module, "__file__", None)
    if not source:
        continue
    files.add(source)
    if source.endswith(".py"):
        try:
            files.add(importlib.util.cache_from_source(source))
        except (NotImplementedError, ValueError):
            pass
for line in open("/proc/self/maps"):
    fields = line.split()
    if len(fields) >= 6 and fields[5].startswith("/"):
        files.add(fields[5])
print("\\n".join(sorted(files)))
"""


def clean_environment() -> dict:
    """The environment of a C program that finds the installed packages by itself (no PYTHONPATH, no venv)."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}


def compile_program(directory: Path, libraries: Path) -> Path:
    compiler = os.environ.get("CC") or "gcc"
    if shutil.which(compiler) is None:
        raise RuntimeError(f"the C ABI benchmark needs a C compiler ({compiler} not found)")
    source, program = directory / "startup.c", directory / "startup"
    source.write_text(_PROGRAM)
    subprocess.run([compiler, "-O1", f"-I{cdecl.INCLUDE_DIR}", str(source), "-o", str(program), f"-L{libraries}",
                    f"-Wl,-rpath,{libraries}", "-lcnnl", "-lcncl", "-lcndev", "-lcndrv", "-lcnrt"], check=True, capture_output=True,
                   text=True)
    return program


def startup_files(libraries: Path) -> list:
    """Every file a C program's start-up reads: Python modules, their bytecode caches and the directory of each
    (numba's kernel caches), the shared objects, the libraries themselves."""
    listed = subprocess.run([sys.executable, "-c", _LIST_FILES], check=True, capture_output=True, text=True,
                            env=clean_environment(), timeout=300).stdout.split()
    files = set(listed)
    for path in listed:
        cache = Path(path).parent / "__pycache__"
        if cache.is_dir():
            files.update(str(p) for p in cache.iterdir())
    files.update(str(p) for p in Path(libraries).glob("*.so"))
    return sorted(files)


def evict(files) -> int:
    """Drop the files' pages from the page cache (posix_fadvise DONTNEED); the number of files it applied to."""
    done = 0
    for path in files:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            done += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    return done


def _run(command: list) -> dict:
    result = subprocess.run(command, capture_output=True, text=True, env=clean_environment(), timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited with {result.returncode}:\n{result.stdout}{result.stderr}")
    return {name: float(value) for name, value in (line.split() for line in result.stdout.splitlines())}


def _python_floor() -> dict:
    """A Python process that imports numpy and nothing else: the wall time from exec to that import's end."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import numpy"], check=True, env=clean_environment(), timeout=300)
    return {"first": time.perf_counter() - start}


def measure(program: Path, rounds: int, files: Optional[list] = None) -> dict:
    """Median over `rounds` fresh processes of each figure: {"python": {...}, "cnrt": {...}, ...}; `files` given:
    evicted before every process (a cold start)."""
    samples: dict = {name: [] for name in ("python", *LIBRARIES)}
    for _ in range(rounds):
        for name in samples:
            if files is not None:
                evict(files)
            samples[name].append(_python_floor() if name == "python" else _run([str(program), name]))
    return {name: {key: statistics.median(run[key] for run in runs) for key in runs[0]}
            for name, runs in samples.items()}
