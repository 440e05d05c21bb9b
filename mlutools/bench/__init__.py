"""The benchmark suites of `mlusim bench`, installed with the package (a front end: it drives cnrt/cnnl/cncl).

Each suite is a module with `run(report=print, ...) -> list[dict]`; `SUITES` maps the names the CLI takes to them.
The scripts in the repository's benchmarks/ folder run the same suites.
"""
from __future__ import annotations

import importlib
from types import ModuleType

#: Suite name -> module of this package. "ops" is the all-ops suite (the main job).
SUITES = {
    "ops": "suite",
    "runtime": "bench_runtime",
    "cnnl": "bench_cnnl",
    "nn": "bench_cnnl_nn",
    "kernels": "bench_cnnl_kernels",
    "bang": "bench_bang",
    "cncl": "bench_cncl",
    "cncl-hosts": "bench_cncl_hosts",
    "nn-ext": "bench_cnnl_nn_ext",
    "capi": "bench_capi",
    "torch": "bench_torch",
    "ops-torch": "bench_ops_torch",
    "dist": "bench_dist",
    "sanitizer": "bench_sanitizer",
    "compile": "bench_compile",
    "magicmind": "bench_magicmind",
}
DEFAULT_SUITES = ("ops",)


def suite_module(name: str) -> ModuleType:
    """The module of suite `name` (KeyError for an unknown name)."""
    return importlib.import_module(f"{__name__}.{SUITES[name]}")
