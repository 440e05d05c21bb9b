"""C ABI benchmark: what a call costs from C (libcnrt/libcnnl over the Python clones) and how long the first call
of each library takes in a fresh C process (starting the interpreter and importing the packages; capi_startup.py),
with a warm and a cold page cache.

Run: `python benchmarks/bench_capi.py` or `mlusim bench capi` (needs the capi extra and gcc). A small C program (compiled here with gcc against the cached libraries)
times each call in batches; the same calls are timed from Python in this process, in alternation with the C runs,
so the ratio C / Python is the marshalling's share. Enqueues are timed on a queue held up behind a host function
(what the call itself costs) and on a running queue, where every C call returns the GIL and the queue's worker
thread runs the previous command before the next call gets it back (what a tight C loop sees). Targets (issue 15): cnrtGetDeviceCount and an idle
cnrtQueueSync <= 5 µs, a cnrtMemcpyAsync enqueue <= 15 µs, a small cnnlOpTensor within 1.2x of the Python call,
first call of each library <= 0.5 s.
"""
from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

import cnnl
import cnrt
from mlutools.bench import capi_startup
from mlutools.bench.common import format_rows, row
from neuware import build, cdecl

ROUNDS = 5  # C program runs, each in alternation with the Python measurement
STARTUP_ROUNDS = 5  # fresh processes per start-up figure (warm page cache)
COLD_ROUNDS = 3  # the same with the start-up's files evicted from the page cache
BATCHES = 7  # per measurement and run; the median batch is reported

_PROGRAM = r"""
#include <stdio.h>
#include <time.h>
#include <cnnl.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define BATCHES %(batches)d
#define MEASURE(name, count, setup, call, teardown)                        \
  do {                                                                     \
    double per_call[BATCHES];                                              \
    for (int b = 0; b < BATCHES; b++) {                                    \
      setup;                                                               \
      double start = now();                                                \
      for (int i = 0; i < (count); i++) call;                              \
      per_call[b] = (now() - start) / (count);                             \
      teardown;                                                            \
    }                                                                      \
    qsort(per_call, BATCHES, sizeof(double), compare);                     \
    printf("%%s %%.9f\n", name, per_call[BATCHES / 2]);                    \
  } while (0)

#include <stdlib.h>
#include <unistd.h>

/* A host function that holds its queue until released: work queued behind it only piles up, so the timed loop
 * measures the enqueue alone (no worker thread executing the previous command meanwhile). */
static volatile int released = 0;
static void hold(void *data) { (void)data; while (!released) usleep(100); }

static void stall(cnrtQueue_t queue, cnrtQueue_t holder, cnrtNotifier_t notifier) {
  released = 0;
  cnrtInvokeHostFunc(holder, hold, NULL);
  cnrtPlaceNotifier(notifier, holder);
  cnrtQueueWaitNotifier(notifier, queue, 0);
}

static void release(cnrtQueue_t queue, cnrtQueue_t holder) {
  released = 1;
  cnrtQueueSync(holder);
  cnrtQueueSync(queue);
}

int main(void) {
  unsigned int count = 0;
  cnnlHandle_t handle;
  cnnlCreate(&handle);

  cnrtQueue_t queue;
  cnrtQueueCreate(&queue);
  cnnlSetQueue(handle, queue);
  void *a, *b, *c;
  cnrtMalloc(&a, 64); cnrtMalloc(&b, 64); cnrtMalloc(&c, 64);
  float host[16] = {0};
  cnrtMemcpy(a, host, 64, cnrtMemcpyHostToDev);
  cnrtMemcpy(b, host, 64, cnrtMemcpyHostToDev);
  cnnlTensorDescriptor_t d;
  cnnlCreateTensorDescriptor(&d);
  int dims[1] = {16};
  cnnlSetTensorDescriptor(d, CNNL_LAYOUT_ARRAY, CNNL_DTYPE_FLOAT, 1, dims);
  cnnlOpTensorDescriptor_t op;
  cnnlCreateOpTensorDescriptor(&op);
  cnnlSetOpTensorDescriptor(op, CNNL_OP_TENSOR_ADD, CNNL_DTYPE_FLOAT, CNNL_NOT_PROPAGATE_NAN);
  float one = 1, zero = 0;

  cnrtQueue_t holder;
  cnrtNotifier_t notifier;
  cnrtQueueCreate(&holder);
  cnrtNotifierCreate(&notifier);
  MEASURE("floor", 20000, , cnrtPeekAtLastError(), );
  MEASURE("device_count", 20000, , cnrtGetDeviceCount(&count), );
  MEASURE("idle_sync", 20000, , cnrtQueueSync(queue), );
  MEASURE("memcpy_async", 2000, stall(queue, holder, notifier),
          cnrtMemcpyAsync(a, host, 64, queue, cnrtMemcpyHostToDev), release(queue, holder));
  MEASURE("op_tensor", 1000, stall(queue, holder, notifier),
          cnnlOpTensor(handle, op, &one, d, a, &one, d, b, NULL, 0, &zero, d, c), release(queue, holder));
  MEASURE("memcpy_async_running", 2000, , cnrtMemcpyAsync(a, host, 64, queue, cnrtMemcpyHostToDev),
          cnrtQueueSync(queue));
  MEASURE("op_tensor_running", 1000, , cnnlOpTensor(handle, op, &one, d, a, &one, d, b, NULL, 0, &zero, d, c),
          cnrtQueueSync(queue));
  return 0;
}
"""


def _compile(directory: Path, libraries: Path) -> Path:
    compiler = os.environ.get("CC") or "gcc"
    if shutil.which(compiler) is None:
        raise RuntimeError(f"the C ABI benchmark needs a C compiler ({compiler} not found)")
    source, program = directory / "bench.c", directory / "bench"
    source.write_text(_PROGRAM % {"batches": BATCHES})
    subprocess.run([compiler, "-O2", f"-I{cdecl.INCLUDE_DIR}", str(source), "-o", str(program), f"-L{libraries}",
                    f"-Wl,-rpath,{libraries}", "-lcnnl", "-lcnrt"], check=True, capture_output=True, text=True)
    return program


def _run_c(program: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    out = subprocess.run([str(program)], check=True, capture_output=True, text=True, env=env, timeout=600).stdout
    return {name: float(value) for name, value in (line.split() for line in out.splitlines())}


def _batched(call, count: int, after=None, before=None) -> float:
    """Median over BATCHES of the per-call seconds of `count` calls (`before()` and `after()` untimed)."""
    samples = []
    for _ in range(BATCHES):
        if before is not None:
            before()
        start = time.perf_counter()
        for _ in range(count):
            call()
        samples.append((time.perf_counter() - start) / count)
        if after is not None:
            after()
    return statistics.median(samples)


def _run_python() -> dict:
    queue = cnrt.queueCreate()
    handle = cnnl.create()
    cnnl.setQueue(handle, queue)
    a, b, c = cnrt.malloc(64), cnrt.malloc(64), cnrt.malloc(64)
    host = np.zeros(16, np.float32)
    cnrt.memcpy(a, host, 64, cnrt.cnrtMemcpyHostToDev)
    cnrt.memcpy(b, host, 64, cnrt.cnrtMemcpyHostToDev)
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [16])
    op = cnnl.createOpTensorDescriptor()
    cnnl.setOpTensorDescriptor(op, cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_NOT_PROPAGATE_NAN)
    sync = lambda: cnrt.queueSync(queue)  # noqa: E731
    holder, notifier, released = cnrt.queueCreate(), cnrt.notifierCreate(), threading.Event()

    def stall():
        released.clear()
        cnrt.invokeHostFunc(holder, lambda _: released.wait(), None)
        cnrt.placeNotifier(notifier, holder)
        cnrt.queueWaitNotifier(notifier, queue, 0)

    def release():
        released.set()
        cnrt.queueSync(holder)
        cnrt.queueSync(queue)

    copy = lambda: cnrt.memcpyAsync(a, host, 64, queue, cnrt.cnrtMemcpyHostToDev)  # noqa: E731
    add = lambda: cnnl.opTensor(handle, op, 1.0, desc, a, 1.0, desc, b, None, 0, 0.0, desc, c)  # noqa: E731
    result = {
        "floor": _batched(cnrt.peekAtLastError, 20000),
        "device_count": _batched(cnrt.getDeviceCount, 20000),
        "idle_sync": _batched(sync, 20000),
        "memcpy_async": _batched(copy, 2000, release, stall),
        "op_tensor": _batched(add, 1000, release, stall),
        "memcpy_async_running": _batched(copy, 2000, sync),
        "op_tensor_running": _batched(add, 1000, sync),
    }
    cnrt.queueDestroy(holder)
    cnrt.notifierDestroy(notifier)
    for pointer in (a, b, c):
        cnrt.free(pointer)
    cnnl.destroy(handle)
    cnrt.queueDestroy(queue)
    return result


_FIRST_CALLS = {"cnrt": "cnrtGetDeviceCount", "cnnl": "cnnlCreate", "cncl": "cnclGetLibVersion", "cndev": "cndevInit",
                "cndrv": "cnInit"}


def _startup_rows(cache: str, startup: dict) -> list[dict]:
    """The start-up rows of one page-cache state: each library's first call (target <= 0.5 s), then cnnl's first
    ops; the reference is a Python process that imports numpy."""
    floor = startup["python"]["first"]
    rows = []
    for library, call in _FIRST_CALLS.items():
        seconds = startup[library]["first"]
        r = row(f"first call, {cache}: {call} (s)", seconds, floor, None, unit="s",
                note=f"a fresh C process; starts Python, imports {library}; reference: python -c 'import numpy'; "
                     "absolute target <= 0.5 s")
        r["target"], r["pass"] = 0.5, seconds <= 0.5
        rows.append(r)
    rows.append(row(f"first cnnlOpTensor float32, {cache} (s)", startup["cnnl"]["first_op_float"], None, None,
                    unit="s", note="after cnnlCreate: imports the op's module (no numba kernel)"))
    rows.append(row(f"first cnnlOpTensor half, {cache} (s)", startup["cnnl"]["first_op_half"], None, None,
                    unit="s", note="then: imports numba, loads the cached float16 conversion kernel"))
    rows.append(row(f"first cnclInitComms + allReduce, {cache} (s)", startup["cncl"]["first_comm"], None, None,
                    unit="s", note="after cnclGetLibVersion: a one-rank clique of the process; imports numba and the zero-copy code"))
    return rows


def run(report=print) -> list[dict]:
    """Run the C ABI benchmark; returns its rows."""
    started = time.perf_counter()
    libraries = build.build_libraries()
    report(f"libraries: {libraries} (ready in {time.perf_counter() - started:.1f} s)")
    with tempfile.TemporaryDirectory(prefix="mlusim-bench-capi-") as tmp:
        program = _compile(Path(tmp), libraries)
        c_runs, python_runs = [], []
        for _ in range(ROUNDS):
            c_runs.append(_run_c(program))
            python_runs.append(_run_python())
        startup_program = capi_startup.compile_program(Path(tmp), libraries)
        warm = capi_startup.measure(startup_program, STARTUP_ROUNDS)
        cold = capi_startup.measure(startup_program, COLD_ROUNDS, capi_startup.startup_files(libraries))
    c = {key: statistics.median(r[key] for r in c_runs) for key in c_runs[0]}
    py = {key: statistics.median(r[key] for r in python_runs) for key in python_runs[0]}
    report(format_rows([])[0])
    rows = []
    for key, label, limit in (("floor", "cnrtPeekAtLastError from C (µs): the floor", None),
                              ("device_count", "cnrtGetDeviceCount from C (µs)", 5.0),
                              ("idle_sync", "cnrtQueueSync, idle queue, from C (µs)", 5.0),
                              ("memcpy_async", "cnrtMemcpyAsync 64 B H2D enqueue from C (µs)", 15.0)):
        r = row(label, c[key] * 1e6, py[key] * 1e6, None, unit="µs",
                note=f"reference: the Python call; absolute target <= {limit:g} µs" if limit else
                "reference: the Python call")
        r["target"], r["pass"] = limit, (None if limit is None else c[key] * 1e6 <= limit)
        rows.append(r)
    rows.append(row("cnnlOpTensor 16 floats enqueue from C (µs)", c["op_tensor"] * 1e6, py["op_tensor"] * 1e6, 1.2,
                    unit="µs", note="reference: cnnl.opTensor from Python; target C/Python <= 1.2"))
    for key, label in (("memcpy_async_running", "cnrtMemcpyAsync, queue running (µs)"),
                       ("op_tensor_running", "cnnlOpTensor, queue running (µs)")):
        rows.append(row(label, c[key] * 1e6, py[key] * 1e6, None, unit="µs",
                        note="each call also waits for the worker thread to run the last command (GIL)"))
    for cache, startup in (("warm", warm), ("cold", cold)):
        rows.extend(_startup_rows(cache, startup))
    for r in rows:
        report(format_rows([r])[1])
    return rows


def main() -> None:
    """Run the suite and print its table (the benchmarks/ script and `python -m`)."""
    run()


if __name__ == "__main__":
    main()
