"""The conformance table: one row per OpInfo, totals, CSV and JSON.

Per phase (forward, gradient): samples, passed, xfail, skipped (not compared), fell back (the mlu run used the CPU
fallback for some aten op), failed (values differ), error (one device raised, the other did not). An op is
*native* when at least one of its forward samples passed and none of them fell back; *native with gradients*
when its gradient samples did not fall back either. Pass rates count compared samples (samples - skipped).
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

from .compare import ERROR, FAILED, PASSED, SKIPPED, XFAIL

PHASES = ("forward", "gradient")
COLUMNS = ("samples", PASSED, XFAIL, SKIPPED, "fell_back", FAILED, ERROR)
SHORT = {"samples": "n", PASSED: "pass", XFAIL: "xfail", SKIPPED: "skip", "fell_back": "fb", FAILED: "fail",
         ERROR: "err"}


def _counts(record) -> dict:
    if record is None:
        return {column: 0 for column in COLUMNS}
    found = record.counts()
    return {column: found.get(column, 0) for column in COLUMNS}


def compared(counts: dict) -> int:
    return counts["samples"] - counts[SKIPPED]


def is_native(report, with_gradient: bool = False) -> bool:
    if report.problem or report.forward is None:
        return False
    forward = _counts(report.forward)
    if forward[PASSED] == 0 or forward["fell_back"]:
        return False
    return not (with_gradient and report.gradient is not None and _counts(report.gradient)["fell_back"])


def note(report) -> str:
    """The first thing worth reading about a row: its problem, a skip reason, or its first failing sample."""
    if report.problem:
        return report.problem
    for record in (report.forward, report.gradient):
        if record is not None and record.skipped_reason:
            return f"{record.phase} skipped: {record.skipped_reason}"
    for record in (report.forward, report.gradient):
        if record is None:
            continue
        for sample in record.samples:
            if sample.status in (FAILED, ERROR):
                return f"{record.phase} #{sample.index}: {sample.message}"
    fallbacks = sorted({name for record in (report.forward, report.gradient) if record is not None
                        for name in record.fallback_ops()})
    if fallbacks:
        return "fallback: " + ", ".join(fallbacks)
    return ""


def row(report) -> dict:
    """A flat dict for CSV: op, dtype, <phase>_<column>..., native, native_gradient, seconds, problem, note."""
    data = {"op": report.op, "dtype": (report.forward or report.gradient).dtype if (report.forward or
                                                                                    report.gradient) else ""}
    for phase in PHASES:
        counts = _counts(getattr(report, phase))
        for column in COLUMNS:
            data[f"{phase}_{column}"] = counts[column]
    data["native"] = is_native(report)
    data["native_gradient"] = is_native(report, with_gradient=True)
    data["seconds"] = round(report.seconds, 2)
    data["problem"] = report.problem
    data["note"] = note(report)
    return data


def totals(reports) -> dict:
    """The run's totals: ops, native ops and the pass rates of their samples."""
    result = {"ops": len(reports), "crashed": sum(r.problem.startswith("crash") for r in reports),
              "hung": sum(r.problem.startswith("hang") for r in reports),
              "errored": sum(r.problem.startswith("error") for r in reports),
              "native_ops": sum(is_native(r) for r in reports),
              "native_with_gradient_ops": sum(is_native(r, True) for r in reports)}
    for scope, chosen in (("all", reports), ("native", [r for r in reports if is_native(r)])):
        for phase in PHASES:
            sums = {column: 0 for column in COLUMNS}
            for report in chosen:
                for column, value in _counts(getattr(report, phase)).items():
                    sums[column] += value
            total = compared(sums)
            result[f"{scope}_{phase}"] = {**sums, "compared": total,
                                          "pass_rate": round(sums[PASSED] / total, 4) if total else None}
    result["seconds"] = round(sum(r.seconds for r in reports), 1)
    return result


def _percent(value) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def table_lines(reports, width: int = 60) -> list[str]:
    """The per-op table and the totals, as text lines."""
    numbers = " ".join(f"{SHORT[c]:>5}" for c in COLUMNS)
    header = f"{'op':<38} {'dtype':<8} | forward {numbers} | gradient {numbers} | native  {'s':>6}  note"
    lines = [header, "-" * len(header)]
    for report in reports:
        data = row(report)
        cells = []
        for phase in PHASES:
            cells.append(" ".join(f"{data[f'{phase}_{c}']:>5}" for c in COLUMNS))
        native = "yes+g" if data["native_gradient"] and report.gradient else ("yes" if data["native"] else "no")
        lines.append(f"{report.op[:38]:<38} {data['dtype'][:8]:<8} | forward {cells[0]} | gradient {cells[1]} | "
                     f"{native:<6} {data['seconds']:>6.1f}  {data['note'][:width]}")
    summary = totals(reports)
    lines += ["", f"{summary['ops']} OpInfos: {summary['native_ops']} native ({summary['native_with_gradient_ops']} with their "
                  f"gradients), {summary['crashed']} crashed, {summary['hung']} hung, {summary['errored']} raised "
                  f"outside the samples; {summary['seconds']:.0f} s of op time"]
    for scope in ("native", "all"):
        parts = []
        for phase in PHASES:
            data = summary[f"{scope}_{phase}"]
            parts.append(f"{phase} {data[PASSED]}/{data['compared']} passed ({_percent(data['pass_rate'])}), "
                         f"{data[XFAIL]} xfail, {data[FAILED]} failed, {data[ERROR]} errors, "
                         f"{data['fell_back']} fell back, {data[SKIPPED]} not compared")
        lines.append(f"{scope} ops: " + "; ".join(parts))
    return lines


def write_csv(reports, path) -> Path:
    path = Path(path)
    rows = [row(report) for report in reports]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]) if rows else ["op"])
        writer.writeheader()
        writer.writerows(rows)
    return path


def write_json(reports, path, meta: dict | None = None) -> Path:
    path = Path(path)
    data = {"meta": meta or {}, "totals": totals(reports), "ops": [report.to_dict() for report in reports]}
    path.write_text(json.dumps(data, indent=1))
    return path
