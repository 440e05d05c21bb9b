"""Helpers shared by the benchmark suites: timing, ratios, the table printer."""
from __future__ import annotations

import math
import statistics
import sys
import time
from typing import Callable, Optional


def median_time(function: Callable[[], object], repeats: int = 7, warmup: int = 2) -> tuple[float, float]:
    """(median seconds, relative spread) of `function()` over `repeats` runs after `warmup` runs."""
    for _ in range(warmup):
        function()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    middle = statistics.median(samples)
    spread = (max(samples) - min(samples)) / middle if middle > 0 else 0.0
    return middle, spread


def _paired_seconds(functions, repeats: int, warmup: int, burst: int = 1) -> list[list[float]]:
    """Each function's times (s) over `repeats` rounds in which the functions run in alternation: per round, each
    function runs `burst` times in a row, and with burst > 1 the first call of each burst is not counted (it pays
    for the hand-over from the other function, not for its own work)."""
    for _ in range(warmup):
        for function in functions:
            function()
    seconds = [[] for _ in functions]
    for _ in range(repeats):
        for times, function in zip(seconds, functions):
            for call in range(burst):
                start = time.perf_counter()
                function()
                if call or burst == 1:
                    times.append(time.perf_counter() - start)
    return seconds


def paired_median_ms(*functions: Callable[[], object], repeats: int = 7, warmup: int = 2) -> list[float]:
    """Median times (ms) of functions measured in alternation, so that load from elsewhere on the host affects
    them alike."""
    return [statistics.median(times) * 1e3 for times in _paired_seconds(functions, repeats, warmup)]


def paired_best_ms(*functions: Callable[[], object], repeats: int = 7, warmup: int = 1, burst: int = 1) -> list[float]:
    """Best times (ms) of functions measured in alternation. On a shared host the load inflates medians unevenly
    (torch's CPU ops wait for their OpenMP threads, ours for the queue's thread); the best of several runs is what
    each side does when it gets the cores. `burst` > 1 times each function in steady state: a call that directly
    follows the other function's pays for the hand-over between them (torch's OpenMP threads keep spinning on the
    cores for a while after its op returned), so each round runs a function `burst` times and counts all but the
    first call."""
    return [min(times) * 1e3 for times in _paired_seconds(functions, repeats, warmup, burst)]


def row(name: str, ours: float, reference: Optional[float], target: Optional[float], unit: str = "ms",
        higher_is_better: bool = False, note: str = "") -> dict:
    """A result row; `ratio` = ours / reference (or reference / ours when higher is better)."""
    ratio = None
    if reference:
        ratio = reference / ours if higher_is_better else ours / reference
    passed = None
    if target is not None and ratio is not None:
        passed = ratio >= target if higher_is_better else ratio <= target
    return {"name": name, "ours": ours, "reference": reference, "ratio": ratio, "target": target, "unit": unit,
            "higher_is_better": higher_is_better, "pass": passed, "note": note}


def geometric_mean_row(name: str, rows: list[dict], target: float,
                       short: Callable[[str], str] = lambda name: name) -> dict:
    """A row over `rows` (one unit, lower is better): the geometric means of their times on either side, so that
    its ratio is the geometric mean of the rows' ratios (each row weighs the same whatever its size), judged
    against `target`; the note names the rows above it (as `short(row name)`)."""
    ours = math.exp(statistics.fmean(math.log(r["ours"]) for r in rows))
    reference = math.exp(statistics.fmean(math.log(r["reference"]) for r in rows))
    above = [f"{short(r['name'])} {r['ratio']:.2f}" for r in rows if r["ratio"] > target]
    note = (f"geometric mean of the {len(rows)} rows above; "
            + (f"{len(above)} of them above {target:g}x: {', '.join(above)}" if above else f"each within {target:g}x"))
    return row(name, ours, reference, target, unit=rows[0]["unit"], note=note)


def reported(rows: list[dict], report: Callable[[str], None]) -> list[dict]:
    """`rows`, after handing each line of their table to `report` (print, or a collector in the tests)."""
    for line in format_rows(rows):
        report(line)
    return rows


def format_rows(rows: list[dict]) -> list[str]:
    lines = [f"{'measurement':<44} {'ours':>12} {'reference':>12} {'ratio':>7} {'target':>9}  result"]
    for r in rows:
        ref = f"{r['reference']:.4g}" if r["reference"] is not None else "-"
        ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "-"
        if r["target"] is None:
            target = "-"
        else:
            target = ("x>=" if r["higher_is_better"] else "x<=") + f"{r['target']:g}"
        result = {True: "PASS", False: "FAIL", None: ""}[r["pass"]]
        lines.append(f"{r['name']:<44} {r['ours']:>9.4g} {r['unit']:<2} {ref:>12} {ratio:>7} {target:>9}  {result}"
                     + (f"  {r['note']}" if r["note"] else ""))
    return lines


class Progress:
    """A one-line progress bar on stderr (redrawn in place on a terminal; a line per tenth elsewhere)."""

    WIDTH = 30

    def __init__(self, total: int, stream=None):
        self.total = max(1, total)
        self.done = 0
        self.stream = stream if stream is not None else sys.stderr
        self.live = getattr(self.stream, "isatty", lambda: False)()
        self._last_tenth = -1

    def step(self, label: str) -> None:
        """Announce the item about to run as `label`; count the previous one done."""
        self._draw(label)
        self.done += 1

    def _draw(self, label: str) -> None:
        filled = self.WIDTH * self.done // self.total
        bar = f"[{'#' * filled}{'.' * (self.WIDTH - filled)}] {self.done}/{self.total} {label}"
        if self.live:
            self.stream.write("\r" + bar[:120].ljust(120))
            self.stream.flush()
        elif 10 * self.done // self.total > self._last_tenth:
            self._last_tenth = 10 * self.done // self.total
            self.stream.write(bar + "\n")
            self.stream.flush()

    def finish(self) -> None:
        self.done = self.total
        if self.live:
            self.stream.write("\r" + " " * 120 + "\r")
            self.stream.flush()


def run_main(run: Callable[..., list], description: str, quick_help: str, argv=None) -> int:
    """The command line of a benchmark with rows of targets (`python -m mlutools.bench.bench_X [--quick]`): runs
    it, then prints how many measurements it made, in how long, and which fell below their target."""
    import argparse
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help=quick_help)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = run(quick=args.quick)
    failed = [r["name"] for r in rows if r["pass"] is False]
    print(f"{len(rows)} measurements in {time.perf_counter() - started:.0f} s"
          + (f", below target: {', '.join(failed)}" if failed else ""))
    return 0
