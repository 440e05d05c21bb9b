"""CNRT runtime benchmark: memcpy bandwidth against numpy's own copy, enqueue cost, idle sync, tiny-command burst,
and a queue kept busy by two producers while a third thread syncs it (its longest sync; resident memory over the run).

Run: `python benchmarks/bench_runtime.py` or `mlusim bench runtime`. Every figure is measured in the same run as
its host reference; ratios, not absolute times, are what the targets are about.
"""
from __future__ import annotations

import os
import threading
import time

import numpy as np

from mlutools.bench.common import format_rows, median_time, paired_median_ms, row  # noqa: E402

import cnrt  # noqa: E402
from mlusim import device as devices  # noqa: E402

MiB = 1 << 20
SIZES = (1 * MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB)
COPY_TARGET = 0.8  # >= 0.8x numpy's bandwidth at 64 MiB and up


def _bandwidth_rows(report) -> list[dict]:
    rows = []
    for size in SIZES:
        host_src = np.ones(size, dtype=np.uint8)
        host_dst = np.zeros(size, dtype=np.uint8)
        device_a = cnrt.malloc(size)
        device_b = cnrt.malloc(size)
        repeats = 9 if size <= 16 * MiB else 5
        cases = {
            "H2D": lambda: cnrt.memcpy(device_a, host_src, size, cnrt.cnrtMemcpyHostToDev),
            "D2H": lambda: cnrt.memcpy(host_dst, device_a, size, cnrt.cnrtMemcpyDevToHost),
            "D2D": lambda: cnrt.memcpy(device_b, device_a, size, cnrt.cnrtMemcpyDevToDev),
        }
        for label, function in cases.items():
            # numpy's copy and ours in alternation, so that load from elsewhere on the host affects both alike
            ours_ms, numpy_ms = paired_median_ms(function, lambda: np.copyto(host_dst, host_src), repeats=repeats)
            ours, numpy_time = ours_ms / 1e3, numpy_ms / 1e3
            target = COPY_TARGET if size >= 64 * MiB else None
            r = row(f"memcpy {label} {size // MiB} MiB (GB/s)", size / ours / 1e9, size / numpy_time / 1e9,
                    target, unit="", higher_is_better=True, note="numpy np.copyto in alternation")
            r["ratio"] = numpy_time / ours
            r["pass"] = None if target is None else r["ratio"] >= target
            rows.append(r)
            report(format_rows([r])[1])
        cnrt.free(device_a)
        cnrt.free(device_b)
    return rows


def _enqueue_cost(queue, count: int = 2000) -> float:
    source = cnrt.malloc(64)
    target = cnrt.malloc(64)
    median = median_time(lambda: cnrt.memcpyAsync(target, source, 64, queue, cnrt.cnrtMemcpyDevToDev),
                         repeats=count, warmup=0)[0]
    cnrt.queueSync(queue)
    cnrt.free(source)
    cnrt.free(target)
    return median


def _idle_sync(queue, count: int = 2000) -> float:
    return median_time(lambda: cnrt.queueSync(queue), repeats=count, warmup=1)[0]


def _burst(queue, commands: int = 1000) -> float:
    pointer = cnrt.malloc(256)

    def burst():
        for _ in range(commands):
            cnrt.memsetAsync(pointer, 1, 256, queue)
        cnrt.queueSync(queue)

    elapsed, _ = median_time(burst, repeats=7)
    cnrt.free(pointer)
    return elapsed


#: How long two threads keep queueing 4 KiB copies on one queue while a third syncs it (issue: flat memory over 60 s).
BACKLOG_SECONDS = 60.0
BACKLOG_SYNC_TARGET_S = 1.0


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _backlog(seconds: float = BACKLOG_SECONDS) -> tuple[float, int, int]:
    """(longest sync in s, resident bytes after the first tenth of the run, at its end) while two producer threads
    queue 4 KiB host-to-device copies on one queue as fast as they can and this thread syncs it in a loop."""
    queue = cnrt.queueCreate()
    device, host = cnrt.malloc(4096), np.ones(4096, np.uint8)
    stop = threading.Event()

    def produce():
        while not stop.is_set():
            cnrt.memcpyAsync(device, host, 4096, queue, cnrt.cnrtMemcpyHostToDev)

    producers = [threading.Thread(target=produce, daemon=True) for _ in range(2)]
    for thread in producers:
        thread.start()
    started = time.perf_counter()
    longest, early = 0.0, None
    while time.perf_counter() - started < seconds:
        begin = time.perf_counter()
        cnrt.queueSync(queue)
        longest = max(longest, time.perf_counter() - begin)
        if early is None and time.perf_counter() - started >= seconds / 10:
            early = _resident_bytes()
        time.sleep(0.05)
    late = _resident_bytes()
    stop.set()
    for thread in producers:
        thread.join(10)
    cnrt.queueSync(queue)
    cnrt.queueDestroy(queue)
    cnrt.free(device)
    return longest, early or late, late


def run(report=print) -> list[dict]:
    """Run the runtime benchmark; returns its rows."""
    if devices.current_config().memory_per_device < 1 << 30:
        devices.configure(memory=1 << 30)
    report(format_rows([])[0])
    rows = _bandwidth_rows(report)
    queue = cnrt.queueCreate()
    latency_rows = [
        row("enqueue cost of memcpyAsync (median, µs)", _enqueue_cost(queue) * 1e6, None, None, unit="µs"),
        row("queueSync on an idle queue (median, µs)", _idle_sync(queue) * 1e6, None, None, unit="µs"),
        row("1000 tiny memsetAsync + one sync (ms)", _burst(queue) * 1e3, None, None, unit="ms"),
    ]
    for r, limit in zip(latency_rows, (10.0, 5.0, 20.0)):
        r["target"] = limit
        r["pass"] = r["ours"] <= limit
        r["note"] = f"absolute target <= {limit:g} {r['unit']}"
        report(format_rows([r])[1])
    cnrt.queueDestroy(queue)
    longest, early, late = _backlog()
    backlog_rows = [
        row(f"longest sync, 2 threads queueing 4 KiB copies ({BACKLOG_SECONDS:g} s, s)", longest, None, None,
            unit="s"),
        row("resident memory growth over that run (MiB)", (late - early) / MiB, None, None, unit="MiB"),
    ]
    backlog_rows[0].update(target=BACKLOG_SYNC_TARGET_S, note=f"absolute target <= {BACKLOG_SYNC_TARGET_S:g} s",
                           **{"pass": longest <= BACKLOG_SYNC_TARGET_S})
    backlog_rows[1]["note"] = (f"from {early / MiB:.0f} MiB after the first tenth to {late / MiB:.0f} MiB at the end "
                               f"(flat: the queue's depth, mlusim.queue.MAX_PENDING, bounds it)")
    for r in backlog_rows:
        report(format_rows([r])[1])
    return rows + latency_rows + backlog_rows


def main() -> None:
    """Run the suite and print its table (the benchmarks/ script and `python -m`)."""
    run()


if __name__ == "__main__":
    main()
