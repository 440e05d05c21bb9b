"""`mlusim conformance torch [--ops ...] [--csv F] [--json F] [--jobs N] [--timeout S]`: PyTorch's OpInfo tests on
mlu, the per-op table and its totals (runner.py, report.py)."""
from __future__ import annotations

import argparse
import platform
import sys
import time
from typing import Optional, Sequence

from . import report as report_module
from .runner import run


def main(args: argparse.Namespace) -> int:
    """Run the suite, print the table; exit status 1 when a sample failed unexpectedly or an op crashed/hung."""
    names = [part.strip() for part in args.ops.split(",") if part.strip()] if args.ops else None
    if args.jobs < 1 or args.timeout <= 0:
        print("mlusim conformance: --jobs must be >= 1 and --timeout > 0", file=sys.stderr)
        return 2
    started = time.monotonic()

    def progress(report, done, total):
        if not args.quiet:
            status = report.problem.split(":")[0] if report.problem else "ok"
            print(f"[{done}/{total}] {report.op} {status} {report.seconds:.1f}s", file=sys.stderr, flush=True)

    try:
        reports = run(names, jobs=args.jobs, timeout=args.timeout, progress=progress)
    except ValueError as error:
        print(f"mlusim conformance: {error}", file=sys.stderr)
        return 2
    elapsed = time.monotonic() - started
    for line in report_module.table_lines(reports):
        print(line)
    print(f"wall time {elapsed:.0f} s with {args.jobs} worker(s)")
    meta = {"wall_seconds": round(elapsed, 1), "jobs": args.jobs, "timeout": args.timeout,
            "python": platform.python_version()}
    try:
        import torch
        meta["torch"] = torch.__version__
    except ImportError:  # pragma: no cover - the run itself needs torch
        pass
    if args.csv:
        print(f"CSV written to {report_module.write_csv(reports, args.csv)}")
    if args.json:
        print(f"JSON written to {report_module.write_json(reports, args.json, meta)}")
    bad = [r for r in reports if r.problem or any(
        record is not None and record.unexpected() for record in (r.forward, r.gradient))]
    return 1 if bad else 0
