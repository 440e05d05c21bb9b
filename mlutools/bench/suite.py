"""The all-ops benchmark, the main job of `mlusim bench`: every case of the table (cases/) at the chosen sizes and data
types, with its host time (median of repeats after warm-up, noise shown), its modelled MLU time (from the trace of the
commands it queued), the modelled rate, and the ratio to the numpy reference measured in the same run.

Run: `mlusim bench [--ops matmul,add] [--sizes small,medium] [--repeats 5] [--collectives]`, or
`python benchmarks/bench_ops.py`, or call `run(...)`, which returns one dict per measurement (report.COLUMNS).
"""
from __future__ import annotations

import inspect
from typing import Callable, Iterable, Optional, Sequence

import numpy as np

from mlutools.bench.cases import CASES, SIZES, Arena, Case  # noqa: E402
from mlutools.bench.common import Progress, median_time  # noqa: E402
from mlutools.bench.report import ESTIMATE_NOTE, table_lines  # noqa: E402

import cncl  # noqa: E402
import cnrt  # noqa: E402
from mlusim import cost, trace  # noqa: E402
from mlusim import device as devices  # noqa: E402

DEFAULT_SIZES = ("small", "medium")
DEFAULT_REPEATS = 5
WARMUP = 2
COLLECTIVE_RANKS = 2
COLLECTIVE_BYTES = {"small": 1 << 18, "medium": 1 << 22, "large": 1 << 26}


def select_cases(ops: Optional[Iterable[str]] = None, cases: Sequence[Case] = CASES) -> list[Case]:
    """The cases `ops` name (case-insensitive): a name equal to a case's op or function picks those cases, any other
    name the cases whose op or function contains it. All cases when `ops` is empty; ValueError for a name that
    matches nothing."""
    wanted = [o.strip().lower() for o in (ops or ()) if o.strip()]
    if not wanted:
        return list(cases)
    chosen = set()
    for name in wanted:
        exact = {c for c in cases if name in (c.op.lower(), c.function.lower())}
        partial = {c for c in cases if name in c.op.lower() or name in c.function.lower()}
        if not (exact or partial):
            raise ValueError(f"no benchmark case matches {name!r}; ops: {', '.join(c.op for c in cases)}")
        chosen |= exact or partial
    return [c for c in cases if c in chosen]


def check_sizes(sizes: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(s.strip().lower() for s in sizes if s.strip())
    unknown = [s for s in chosen if s not in SIZES]
    if unknown or not chosen:
        raise ValueError(f"unknown size(s) {', '.join(unknown) or '(none)'}; sizes: {', '.join(SIZES)}")
    return chosen


def _shape_text(shape: tuple) -> str:
    return "x".join(str(n) for n in shape)


def _rate(flops: float, nbytes: float, model_us: float, bound: str) -> tuple[Optional[float], str]:
    """Modelled TFLOPS when compute bounds the time, GB/s otherwise (None without work to rate)."""
    if model_us <= 0:
        return None, ""
    if bound == "compute" and flops:
        return flops / model_us / 1e6, "TFLOPS"
    if nbytes:
        return nbytes / model_us / 1e3, "GB/s"
    return None, ""


def _modelled(records: list, kinds: tuple, spec) -> dict:
    """Modelled time, work and bound of the commands of `kinds` among `records`."""
    chosen = [r for r in records if r.kind in kinds]
    model_us = sum(r.model_us for r in chosen)
    flops = sum(float((r.info or {}).get("flops", 0.0)) for r in chosen)
    nbytes = sum(r.nbytes for r in chosen)
    ops = [r for r in chosen if r.kind == "op"]
    if ops:
        longest = max(ops, key=lambda r: r.model_us).info
        bound = cost.op_estimate(spec, longest["flops"], longest["bytes"], longest["rate"], longest["unit"]).bound
    else:
        bound = {"memcpy": "copy", "kernel": "kernel", "collective": "link"}.get(chosen[0].kind if chosen else "", "-")
    rate, unit = _rate(flops, nbytes, model_us, bound)
    return {"model_us": model_us, "flops": flops, "bytes": nbytes, "bound": bound, "rate": rate, "rate_unit": unit}


def measure(case: Case, size: str, dtype: str, repeats: int = DEFAULT_REPEATS, warmup: int = WARMUP) -> dict:
    """One result row: `case` at `size` in `dtype`."""
    shape = case.shapes[size]
    arena = Arena()
    try:
        device_call, reference = case.build(arena, shape, dtype)

        def synced() -> None:
            device_call()
            cnrt.queueSync(arena.queue)

        with trace.recording() as recorder:  # the first run is a warm-up whose commands give the modelled time
            synced()
        host_s, noise = median_time(synced, repeats, max(0, warmup - 1))
        numpy_s, _ = median_time(reference, repeats, warmup)
    finally:
        arena.free()
    spec = devices.get(cnrt.getDevice()).spec
    records = [r for r in recorder.records if r.queue == arena.queue.ident]
    return {"op": case.op, "function": case.function, "shape": _shape_text(shape), "dtype": dtype, "size": size,
            "host_ms": host_s * 1e3, "noise": noise, **_modelled(records, case.kinds, spec),
            "numpy_ms": numpy_s * 1e3, "ratio": host_s / numpy_s if numpy_s > 0 else None,
            "reference": case.reference, "board": spec.name}


def measure_all_reduce(size: str, repeats: int = DEFAULT_REPEATS, warmup: int = WARMUP) -> dict:
    """allReduce (sum, float32) over COLLECTIVE_RANKS devices of this process; modelled time of the slowest rank.
    Reference: numpy adding the ranks' buffers."""
    nbytes = COLLECTIVE_BYTES[size]
    count = nbytes // 4
    table = devices.configure(device_count=COLLECTIVE_RANKS)
    comms = cncl.initComms(COLLECTIVE_RANKS, list(range(COLLECTIVE_RANKS)), list(range(COLLECTIVE_RANKS)),
                           COLLECTIVE_RANKS, None)
    try:
        ranks = []
        for rank in range(COLLECTIVE_RANKS):
            cnrt.setDevice(rank)
            buffer = cnrt.malloc(nbytes)
            cnrt.memset(buffer, 0, nbytes)
            ranks.append((cnrt.queueCreate(), buffer))

        def all_reduce() -> None:
            cncl.groupStart()
            for comm, (queue, buffer) in zip(comms, ranks):
                cncl.allReduce(buffer, buffer, count, cncl.cnclFloat, cncl.cnclSum, comm, queue)
            cncl.groupEnd()
            for queue, _ in ranks:
                cnrt.queueSync(queue)

        with trace.recording() as recorder:
            all_reduce()
        host_s, noise = median_time(all_reduce, repeats, max(0, warmup - 1))
        host_buffers = [np.ones(count, np.float32) for _ in range(COLLECTIVE_RANKS)]
        out = np.empty(count, np.float32)
        numpy_s, _ = median_time(lambda: np.add(*host_buffers[:2], out=out), repeats, warmup)
        model_us = max(r.model_us for r in recorder.records if r.kind == "collective")
    finally:
        cncl.destroyComms(comms, len(comms))
        cnrt.setDevice(0)
        devices.configure()
    spec = table[0].spec
    return {"op": f"allReduce {COLLECTIVE_RANKS} ranks", "function": "cnclAllReduce", "shape": str(nbytes),
            "dtype": "float", "size": size, "host_ms": host_s * 1e3, "noise": noise, "model_us": model_us,
            "flops": 0.0, "bytes": nbytes, "bound": "link", "rate": nbytes / model_us / 1e3, "rate_unit": "GB/s",
            "numpy_ms": numpy_s * 1e3, "ratio": host_s / numpy_s, "reference": "np.add of 2 buffers",
            "board": spec.name}


def uncovered_functions(cases: Sequence[Case] = CASES) -> list[str]:
    """cnnl functions that queue work on a handle but have no benchmark case (to extend the table as ops land); a
    function a case only calls to set up state counts as covered when the case lists it in `exercises`."""
    from cnnl.status import api
    covered = {function for c in cases for function in (c.function, *c.exercises)}
    queued = set()
    for function in api.functions.values():
        parameters = list(inspect.signature(function).parameters)
        verb = function.c_name[len("cnnl"):]
        if parameters[:1] == ["handle"] and not verb.startswith(("Get", "Set", "Create", "Destroy")):
            queued.add(function.c_name)
    return sorted(queued - covered)


def plan(cases: Sequence[Case], sizes: Sequence[str]) -> list[tuple[Case, str, str]]:
    """(case, size, dtype) for every measurement, in run order."""
    return [(case, size, dtype) for case in cases for size in sizes if size in case.shapes for dtype in case.dtypes]


def run(report: Callable[[str], None] = print, ops: Optional[Iterable[str]] = None,
        sizes: Iterable[str] = DEFAULT_SIZES, repeats: int = DEFAULT_REPEATS, warmup: int = WARMUP,
        collectives: bool = False, progress: bool = True) -> list[dict]:
    """Run the chosen cases; report the table; return the rows."""
    chosen = select_cases(ops)
    sizes = check_sizes(sizes)
    jobs = plan(chosen, sizes)
    bar = Progress(len(jobs) + (len(sizes) if collectives else 0)) if progress else None
    rows = []
    for case, size, dtype in jobs:
        if bar:
            bar.step(f"{case.op} {size} {dtype}")
        rows.append(measure(case, size, dtype, repeats, warmup))
    if collectives:
        for size in sizes:
            if bar:
                bar.step(f"allReduce {size}")
            rows.append(measure_all_reduce(size, repeats, warmup))
    if bar:
        bar.finish()
    board = rows[0]["board"] if rows else devices.current_config().arch
    report(f"board {board}; {ESTIMATE_NOTE}")
    report(f"host: median of {repeats} runs after {warmup} warm-up runs; noise = (max - min) / median")
    for line in table_lines(rows):
        report(line)
    missing = uncovered_functions()
    if missing and ops is None:
        report(f"cnnl ops without a benchmark case: {', '.join(missing)}")
    return rows


def main() -> None:
    """Run the suite and print its table (the benchmarks/ script and `python -m`)."""
    run()


if __name__ == "__main__":
    main()
