"""Cambricon's own torch_mlu test suite run against mlusim (`mlusim conformance torch_mlu PATH`).

PATH is a checkout of Cambricon/torch_mlu (or its `test/` folder); nothing is fetched. Each test file of the chosen
folders (mlu/, torch/, storage/, torch_ops/ by default) runs in a pytest process of its own (the suite's
common_utils sets torch's state at import), with a wall-clock limit per file and per case (pytest-timeout), and a
JUnit report read back for every case's outcome: passed, failed, error, skipped, with each skip's reason. Cases that
need a real card (its tools, its hardware counters) are skipped by `hardware.py` with the reason. The processes see
DEVICE_COUNT simulated cards (MLUSIM_DEVICE_COUNT overrides it). The table gives,
per file, the counts and the seconds it took; the totals give the pass rate over the cases that ran.
"""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Callable, Optional, Sequence

from . import hardware

#: the folders of the issue's target (the device runtime, torch's runtime parts, storages, the ops)
DEFAULT_FOLDERS = ("mlu", "torch", "storage", "torch_ops")
#: simulated cards per test process unless MLUSIM_DEVICE_COUNT says otherwise: the suite's multi-card cases
#: (tensors on mlu:1, copies between cards, per-device streams) are written for a machine with several
DEVICE_COUNT = 2


@dataclasses.dataclass
class Case:
    """One test case's outcome."""

    name: str
    outcome: str  # "passed", "failed", "error", "skipped"
    seconds: float = 0.0
    message: str = ""


@dataclasses.dataclass
class FileReport:
    """One test file's run."""

    path: str  # relative to the suite's test/ folder
    cases: list = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    problem: str = ""  # "timeout after N s", "crashed (exit status N)", "no report"

    def count(self, outcome: str) -> int:
        return sum(1 for case in self.cases if case.outcome == outcome)

    @property
    def folder(self) -> str:
        return self.path.split("/", 1)[0]


def test_folder(path: Path) -> Path:
    """The suite's test/ folder: PATH itself, or PATH/test; an error naming what is missing otherwise."""
    path = Path(path)
    for candidate in (path, path / "test"):
        if (candidate / "common_utils.py").is_file():
            return candidate
    raise ValueError(f"{path} is not a checkout of Cambricon/torch_mlu nor its test/ folder (no common_utils.py)")


def suite_files(root: Path, folders: Sequence[str] = DEFAULT_FOLDERS, pattern: Optional[str] = None) -> list[Path]:
    """The test files (test_*.py) of `folders` under the test/ folder `root`, sorted; `pattern` keeps the files
    whose relative path contains it."""
    files = []
    for folder in folders:
        directory = root / folder
        if not directory.is_dir():
            raise ValueError(f"{directory} is not a folder of the suite")
        files += sorted(p for p in directory.rglob("test_*.py"))
    relative = [p for p in files if pattern is None or pattern in p.relative_to(root).as_posix()]
    return relative


def read_junit(report: Path) -> list[Case]:
    """The cases of a pytest JUnit XML report."""
    cases = []
    for element in ElementTree.parse(report).getroot().iter("testcase"):
        name = f"{element.get('classname', '')}::{element.get('name', '')}".lstrip(":")
        seconds = float(element.get("time") or 0.0)
        outcome, message = "passed", ""
        for child in element:
            if child.tag in ("failure", "error", "skipped"):
                outcome = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                message = (child.get("message") or child.text or "").strip()
                break
        cases.append(Case(name, outcome, seconds, message))
    return cases


def run_file(root: Path, path: Path, timeout: float, case_timeout: float, skips: Optional[Path] = None) -> FileReport:
    """One test file in a pytest process of its own (the hardware skips loaded as a plugin), read back from its
    JUnit report."""
    relative = path.relative_to(root).as_posix()
    with tempfile.TemporaryDirectory(prefix="mlusim-cambricon-") as scratch:
        report = Path(scratch) / "report.xml"
        command = [sys.executable, "-m", "pytest", str(path), "-q", "-p", "no:cacheprovider",
                   "-p", "torch_mlu.conformance.hardware", "--junitxml", str(report), "-o", "junit_family=xunit1",
                   "--timeout", str(case_timeout), "-W", "ignore::DeprecationWarning"]
        environment = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        environment.setdefault("MLUSIM_DEVICE_COUNT", str(DEVICE_COUNT))
        if skips is not None:
            environment[hardware.SKIPS_VARIABLE] = str(skips)
        started = time.monotonic()
        problem = ""
        try:
            result = subprocess.run(command, cwd=path.parent, env=environment, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, timeout=timeout)
            if result.returncode not in (0, 1) and not report.is_file():
                tail = result.stdout.strip().splitlines()[-3:]
                problem = f"crashed (exit status {result.returncode}): {' / '.join(tail)}"
        except subprocess.TimeoutExpired:
            problem = f"timeout after {timeout:.0f} s"
        seconds = time.monotonic() - started
        cases = read_junit(report) if report.is_file() else []
        if not cases and not problem:
            problem = "no report"
    return FileReport(relative, cases, seconds, problem)


def run(path: Path, folders: Sequence[str] = DEFAULT_FOLDERS, pattern: Optional[str] = None,
        timeout: float = 900.0, case_timeout: float = 300.0, jobs: int = 1,
        progress: Optional[Callable[[FileReport, int, int], None]] = None,
        skips: Optional[dict] = None) -> list[FileReport]:
    """Every test file of `folders` (or those matching `pattern`), `jobs` at a time; the reports in file order.
    `skips`: more cases to skip (suite id or prefix -> reason), besides hardware.NEEDS_HARDWARE."""
    root = test_folder(path)
    files = suite_files(root, folders, pattern)
    if not files:
        raise ValueError(f"no test files under {root} for {', '.join(folders)}" + (f" matching {pattern!r}"
                                                                                  if pattern else ""))
    reports: list[Optional[FileReport]] = [None] * len(files)
    done = 0
    with tempfile.TemporaryDirectory(prefix="mlusim-cambricon-skips-") as scratch:
        skips_file = None
        if skips:
            skips_file = Path(scratch) / "skips.json"
            skips_file.write_text(json.dumps(skips))
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = {pool.submit(run_file, root, path, timeout, case_timeout, skips_file): index
                       for index, path in enumerate(files)}
            for future in as_completed(futures):
                index = futures[future]
                reports[index] = future.result()
                done += 1
                if progress is not None:
                    progress(reports[index], done, len(files))
    return [r for r in reports if r is not None]


def table_lines(reports: Sequence[FileReport]) -> list[str]:
    """The per-file table, the totals per folder and overall (the pass rate over the cases that ran: passed /
    (passed + failed + errors); skips are listed apart, each with its reason in the JSON)."""
    lines = [f"{'file':48} {'passed':>7} {'failed':>7} {'errors':>7} {'skipped':>8} {'seconds':>8}  problem"]
    for report in reports:
        lines.append(f"{report.path:48} {report.count('passed'):7d} {report.count('failed'):7d} "
                     f"{report.count('error'):7d} {report.count('skipped'):8d} {report.seconds:8.1f}  "
                     f"{report.problem}")
    folders = sorted({report.folder for report in reports})
    lines.append("")
    for folder in folders + ["all"]:
        chosen = [r for r in reports if folder == "all" or r.folder == folder]
        passed, failed, errors, skipped = (sum(r.count(o) for r in chosen) for o in
                                           ("passed", "failed", "error", "skipped"))
        ran = passed + failed + errors
        rate = f"{100.0 * passed / ran:.1f}%" if ran else "-"
        problems = sum(1 for r in chosen if r.problem)
        lines.append(f"{folder + '/' if folder != 'all' else 'all':12} {len(chosen):4d} files  {passed:6d} passed  "
                     f"{failed:5d} failed  {errors:4d} errors  {skipped:5d} skipped  pass rate {rate}  "
                     f"{problems} file(s) with a problem  {sum(r.seconds for r in chosen):7.0f} s")
    return lines


def skip_reasons(reports: Sequence[FileReport]) -> dict[str, int]:
    """Every skip's reason with how many cases it skipped."""
    reasons: dict[str, int] = {}
    for report in reports:
        for case in report.cases:
            if case.outcome == "skipped":
                reasons[case.message or "(no reason given)"] = reasons.get(case.message or "(no reason given)", 0) + 1
    return dict(sorted(reasons.items(), key=lambda item: -item[1]))
