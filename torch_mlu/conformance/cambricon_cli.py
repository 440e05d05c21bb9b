"""`mlusim conformance torch_mlu PATH [--folders mlu,torch,storage,torch_ops] [--files TEXT] [--jobs N]
[--timeout S] [--case-timeout S] [--skips F] [--json F]`: Cambricon's torch_mlu test suite from a checkout at PATH, the per-file
table, the totals per folder and every skip's reason (cambricon.py)."""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from . import cambricon


def main(args: argparse.Namespace) -> int:
    """Run the files, print the table; exit status 1 when a case failed or a file timed out or crashed."""
    folders = [part.strip() for part in args.folders.split(",") if part.strip()]
    if args.jobs < 1 or args.timeout <= 0 or args.case_timeout <= 0:
        print("mlusim conformance torch_mlu: --jobs must be >= 1, the timeouts > 0", file=sys.stderr)
        return 2
    started = time.monotonic()

    def progress(report, done, total):
        if not args.quiet:
            print(f"[{done}/{total}] {report.path} {report.count('passed')} passed, {report.count('failed')} "
                  f"failed, {report.count('error')} errors, {report.count('skipped')} skipped "
                  f"{report.seconds:.1f}s {report.problem}", file=sys.stderr, flush=True)

    try:
        skips = json.loads(Path(args.skips).read_text()) if args.skips else None
        reports = cambricon.run(Path(args.path), folders, args.files, args.timeout, args.case_timeout, args.jobs,
                                progress, skips)
    except ValueError as error:
        print(f"mlusim conformance torch_mlu: {error}", file=sys.stderr)
        return 2
    for line in cambricon.table_lines(reports):
        print(line)
    reasons = cambricon.skip_reasons(reports)
    if reasons:
        print("\nskipped, by reason:")
        for reason, count in reasons.items():
            print(f"{count:6d}  {reason[:150]}")
    print(f"wall time {time.monotonic() - started:.0f} s with {args.jobs} job(s)")
    if args.json:
        Path(args.json).write_text(json.dumps([{"path": r.path, "seconds": round(r.seconds, 2), "problem": r.problem,
                                                "cases": [vars(c) for c in r.cases]} for r in reports], indent=1))
        print(f"JSON written to {args.json}")
    bad = any(r.problem or r.count("failed") or r.count("error") for r in reports)
    return 1 if bad else 0
