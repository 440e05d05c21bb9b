"""What the sanitizer costs: enqueue and a burst of tiny commands with it off (must be unchanged) and with
racecheck + memcheck on (enqueue <= 3x), and a BANG vector add of 2^24 floats with it off and on (<= 10x).

Run: `python benchmarks/bench_sanitizer.py` or `mlusim bench sanitizer`. Off and on are measured in alternation in
the same run, so that load from elsewhere on the host affects both alike; the ratios are what the targets are about.
"""
from __future__ import annotations

import statistics

import numpy as np

import cnrt
from mlusim import device as devices
from mlusim import sanitizer
from mlutools.bench.common import format_rows, median_time, row
from cnrt.samples.vector_add import union1_dim, vector_add

TOOLS = "racecheck,memcheck"
ROUNDS = 5


def _enqueue_us(queue, source: int, target: int, count: int = 1000) -> float:
    median = median_time(lambda: cnrt.memcpyAsync(target, source, 64, queue, cnrt.cnrtMemcpyDevToDev),
                         repeats=count, warmup=20)[0]
    cnrt.queueSync(queue)
    return median * 1e6


def _burst_ms(queue, pointer: int, commands: int = 1000) -> float:
    def burst():
        for _ in range(commands):
            cnrt.memsetAsync(pointer, 1, 256, queue)
        cnrt.queueSync(queue)

    return median_time(burst, repeats=5, warmup=1)[0] * 1e3


def _alternate(measure, tools: str) -> tuple[float, float, float]:
    """(median off, median on, median of the per-round ratios on/off) of `measure()` over ROUNDS rounds."""
    off, on, ratios = [], [], []
    for _ in range(ROUNDS):
        sanitizer.disable()
        off.append(measure())
        sanitizer.enable(tools)
        on.append(measure())
        sanitizer.disable()
        ratios.append(on[-1] / off[-1])
    return statistics.median(off), statistics.median(on), statistics.median(ratios)


def _vector_add_ms(n: int = 1 << 24):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    pointers = [cnrt.malloc(n * 4) for _ in range(3)]
    cnrt.memcpy(pointers[0], x, n * 4, cnrt.cnrtMemcpyHostToDev)
    cnrt.memcpy(pointers[1], y, n * 4, cnrt.cnrtMemcpyHostToDev)
    queue = cnrt.queueCreate()
    dim = union1_dim()

    def launch() -> float:
        return median_time(lambda: (vector_add[dim, cnrt.cnrtFuncTypeUnion1, queue](*pointers, n),
                                    cnrt.queueSync(queue)), repeats=3, warmup=1)[0] * 1e3

    def cleanup():
        z = np.empty(n, np.float32)
        cnrt.memcpy(z, pointers[2], n * 4, cnrt.cnrtMemcpyDevToHost)
        assert np.array_equal(z, x + y)
        for pointer in pointers:
            cnrt.free(pointer)
        cnrt.queueDestroy(queue)

    return launch, cleanup


def run(report=print) -> list[dict]:
    """Run the sanitizer benchmark; returns its rows."""
    if devices.current_config().memory_per_device < 1 << 30:
        devices.configure(memory=1 << 30)
    was_on = sanitizer.enabled()
    sanitizer.disable()
    report(format_rows([])[0])
    rows = []
    queue = cnrt.queueCreate()
    source, target, scratch = cnrt.malloc(64), cnrt.malloc(64), cnrt.malloc(256)
    cnrt.memset(source, 0, 64)

    off, on, ratio = _alternate(lambda: _enqueue_us(queue, source, target), TOOLS)
    rows.append(row("enqueue memcpyAsync, sanitizer off (µs)", off, None, None, unit="µs"))
    rows[-1].update(target=10.0, ratio=None, note="absolute target <= 10 µs")
    rows[-1]["pass"] = off <= 10.0
    rows.append(row(f"enqueue memcpyAsync, {TOOLS} (µs)", on, off, 3.0, unit="µs",
                    note="reference: sanitizer off, in alternation"))
    rows[-1]["ratio"], rows[-1]["pass"] = ratio, ratio <= 3.0
    for r in rows[-2:]:
        report(format_rows([r])[1])

    off, on, ratio = _alternate(lambda: _burst_ms(queue, scratch), TOOLS)
    rows.append(row("1000 tiny memsetAsync + sync, off (ms)", off, None, None))
    rows[-1].update(target=20.0, note="absolute target <= 20 ms")
    rows[-1]["pass"] = off <= 20.0
    rows.append(row(f"1000 tiny memsetAsync + sync, {TOOLS} (ms)", on, off, None,
                    note="reference: sanitizer off (no target)"))
    rows[-1]["ratio"] = ratio
    for r in rows[-2:]:
        report(format_rows([r])[1])

    launch, cleanup = _vector_add_ms()
    for tools, target in ((TOOLS, 10.0), ("all", None)):
        off, on, ratio = _alternate(launch, tools)
        rows.append(row(f"BANG vector add 2^24, {tools} (ms)", on, off, target,
                        note="reference: the same launch with the sanitizer off, in alternation"))
        rows[-1]["ratio"] = ratio
        rows[-1]["pass"] = None if target is None else ratio <= target
        report(format_rows([rows[-1]])[1])
    cleanup()
    for pointer in (source, target, scratch):
        cnrt.free(pointer)
    cnrt.queueDestroy(queue)
    if was_on:
        sanitizer.enable(was_on)
    return rows


def main() -> None:
    """Run the suite and print its table (the benchmarks/ script and `python -m`)."""
    run()


if __name__ == "__main__":
    main()
