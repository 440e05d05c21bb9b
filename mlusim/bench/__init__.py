"""The benchmark suites of `mlusim bench`, installed with the package (a front end: it drives cnrt/cnnl/cncl).

Each suite is a module with `run(report=print, ...) -> list[dict]`; `SUITES` maps the names the CLI takes to them.
The scripts in the repository's benchmarks/ folder run the same suites.
"""
from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

#: How long torch's OpenMP threads (libgomp, in torch's CPU wheel) keep spinning after an op of theirs, in libgomp's
#: GOMP_SPINCOUNT. By default they spin for ~9 ms of CPU after every op (measured here: 8.5-9 ms of process CPU in
#: the 10-50 ms of sleep after a torch relu), so in a benchmark that alternates torch's CPU op with ours, the first
#: 9 ms of our turn have one core fewer: torch's idle thread holds it. 2000 stops the spin within ~2 ms, which still
#: spans the gaps between torch's own back-to-back ops (its CNN step and large ops alone measured the same within
#: noise). libgomp reads it once, when torch loads it: set here, before a suite imports torch; a value the user set
#: is kept.
TORCH_OMP_SPINCOUNT = "2000"
os.environ.setdefault("GOMP_SPINCOUNT", TORCH_OMP_SPINCOUNT)
_TORCH_LOADED_FIRST = "torch" in sys.modules

#: Suite name -> module of this package. "ops" is the all-ops suite (the main job).
SUITES = {
    "ops": "suite",
    "runtime": "bench_runtime",
    "cnnl": "bench_cnnl",
    "nn": "bench_cnnl_nn",
    "kernels": "bench_cnnl_kernels",
    "bang": "bench_bang",
    "cncl": "bench_cncl",
    "nn-ext": "bench_cnnl_nn_ext",
    "capi": "bench_capi",
    "torch": "bench_torch",
    "ops-torch": "bench_ops_torch",
    "dist": "bench_dist",
    "sanitizer": "bench_sanitizer",
    "compile": "bench_compile",
}
DEFAULT_SUITES = ("ops",)


def torch_spin_note() -> str:
    """What the torch-comparing suites print about torch's OpenMP spin (see TORCH_OMP_SPINCOUNT)."""
    if _TORCH_LOADED_FIRST:
        return "torch's OpenMP spin: libgomp's own (torch was imported before mlusim.bench)"
    return f"torch's OpenMP spin: GOMP_SPINCOUNT={os.environ['GOMP_SPINCOUNT']}"


def suite_module(name: str) -> ModuleType:
    """The module of suite `name` (KeyError for an unknown name)."""
    return importlib.import_module(f"{__name__}.{SUITES[name]}")
