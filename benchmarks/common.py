"""Helpers shared by the benchmark suites: timing, ratios, the table printer."""
from __future__ import annotations

import statistics
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
