"""Outputs of the all-ops benchmark: the printed table, CSV, JSON and the PNG plot (matplotlib, optional)."""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Optional

#: The columns of a result row, in CSV order.
COLUMNS = ("op", "function", "shape", "dtype", "size", "host_ms", "noise", "model_us", "bound", "rate",
           "rate_unit", "flops", "bytes", "numpy_ms", "ratio", "reference", "board")

ESTIMATE_NOTE = "modelled MLU times are estimates of mlusim.cost (see docs/cost.md), not measurements"


def _number(value: Optional[float], digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def table_lines(rows: list[dict]) -> list[str]:
    """The table `mlusim bench` prints: host time (median, noise = (max - min) / median of the repeats), modelled
    MLU time and rate, what bounds it, and the ratio host / numpy reference."""
    header = (f"{'op':<18} {'shape':<18} {'dtype':<8} {'host ms':>9} {'noise':>6} {'MLU us':>9} "
              f"{'MLU rate':>15} {'bound':<8} {'numpy ms':>9} {'host/np':>7}")
    lines = [header, "-" * len(header)]
    for r in rows:
        rate = "-" if r["rate"] is None else f"{r['rate']:.3g} {r['rate_unit']}"
        lines.append(f"{r['op']:<18} {r['shape']:<18} {r['dtype']:<8} {r['host_ms']:>9.3f} {r['noise']:>6.0%} "
                     f"{r['model_us']:>9.1f} {rate:>15} {r['bound']:<8} {_number(r['numpy_ms']):>9} "
                     f"{_number(r['ratio'], 2):>7}")
    return lines


def write_csv(rows: list[dict], path: Path) -> Path:
    """One line per measurement, the columns of COLUMNS."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_json(results: dict[str, list[dict]], path: Path, meta: dict) -> Path:
    """{"meta": {...}, "results": {suite: [row, ...]}} with the estimate note in meta."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": {**meta, "note": ESTIMATE_NOTE}, "results": results}, indent=1,
                               default=str))
    return path


def write_plot(rows: list[dict], path: Path, title: str) -> Optional[Path]:
    """A log-log scatter of modelled MLU µs against host ms, one point per measurement, coloured by what bounds
    the modelled time. None when matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    figure, axes = plt.subplots(figsize=(10, 7))
    for bound in sorted({r["bound"] for r in rows}):
        chosen = [r for r in rows if r["bound"] == bound]
        axes.scatter([r["host_ms"] for r in chosen], [r["model_us"] for r in chosen], label=bound, alpha=0.7)
    for r in rows:
        axes.annotate(f"{r['op']} {r['dtype']}", (r["host_ms"], r["model_us"]), fontsize=6, alpha=0.6)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("host time on this machine (ms, median)")
    axes.set_ylabel("modelled MLU time (µs, estimate)")
    axes.set_title(title)
    axes.legend(title="modelled bound")
    axes.grid(True, which="both", alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(figure)
    return path
