"""The whole conformance run: every OpInfo in worker processes (worker.py), one op at a time per worker.

A worker that exceeds the per-op time limit is killed and the op is recorded as a hang; one that dies is recorded
as a crash of the op it was running; either way a new worker takes the remaining ops. So every op of op_db gets a
row, whatever it does.
"""
from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from .compare import PhaseRecord

DEFAULT_TIMEOUT = 300.0
STARTUP_TIMEOUT = 600.0


@dataclass
class OpReport:
    """One OpInfo's row: its forward and gradient records, or the problem that stopped it."""
    op: str
    forward: Optional[PhaseRecord] = None
    gradient: Optional[PhaseRecord] = None
    problem: str = ""
    seconds: float = 0.0
    tests: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"op": self.op, "problem": self.problem, "seconds": round(self.seconds, 3), "tests": self.tests,
                "forward": self.forward.to_dict() if self.forward else None,
                "gradient": self.gradient.to_dict() if self.gradient else None}

    @classmethod
    def from_answer(cls, answer: dict, seconds: float) -> "OpReport":
        report = cls(op=answer["op"], seconds=seconds, tests=answer.get("tests", {}))
        for data in answer.get("records", []):
            record = PhaseRecord.from_dict(data)
            setattr(report, record.phase, record)
        errors = [text for key, text in report.tests.items() if key.endswith(":traceback")]
        if errors:
            report.problem = "error: " + " ".join(errors[0].split())[-300:]
        return report


class _Worker:
    def __init__(self, names: Optional[list[str]], environment: dict):
        self.log = tempfile.TemporaryFile(mode="w+")
        command = [sys.executable, "-m", "torch_mlu.conformance.worker", *(names or [])]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                        text=True, bufsize=1, env=environment, start_new_session=True)
        self.op: Optional[str] = None
        self.started = time.monotonic()
        self.ready = False

    def send(self, op: str) -> None:
        self.op, self.started = op, time.monotonic()
        self.process.stdin.write(op + "\n")
        self.process.stdin.flush()

    def log_tail(self, limit: int = 600) -> str:
        self.log.seek(0)
        return " ".join(self.log.read()[-limit:].split())

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.process.wait()
        self.log.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.write("\n")
                self.process.stdin.close()
                self.process.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()


def _environment() -> dict:
    environment = dict(os.environ)
    environment["MLUSIM_TORCH_FALLBACK"] = "silent"
    environment.setdefault("PYTHONWARNINGS", "ignore")
    return environment


def run(names: Optional[list[str]] = None, jobs: int = 2, timeout: float = DEFAULT_TIMEOUT,
        progress: Optional[Callable[[OpReport, int, int], None]] = None) -> list[OpReport]:
    """Run the conformance tests of the OpInfos named (all of op_db for None) in `jobs` worker processes; one
    OpReport per op, in op_db's order. `progress(report, done, total)` is called as ops finish."""
    from .suite import select
    ops = [op.full_name for op in select(names)]
    ops = list(dict.fromkeys(ops))
    pending = list(ops)
    reports: dict[str, OpReport] = {}
    environment = _environment()
    worker_names = names and ops
    selector = selectors.DefaultSelector()
    workers: list[_Worker] = []

    def start() -> None:
        worker = _Worker(worker_names, environment)
        workers.append(worker)
        selector.register(worker.process.stdout, selectors.EVENT_READ, worker)

    def retire(worker: _Worker) -> None:
        selector.unregister(worker.process.stdout)
        workers.remove(worker)
        worker.kill()

    def finish(report: OpReport) -> None:
        reports[report.op] = report
        if progress:
            progress(report, len(reports), len(ops))

    def feed(worker: _Worker) -> None:
        if pending:
            worker.send(pending.pop(0))
        else:
            worker.op = None

    try:
        for _ in range(max(1, min(jobs, len(ops)))):
            start()
        while len(reports) < len(ops):
            if not workers:
                start()
            now = time.monotonic()
            for worker in list(workers):
                limit = timeout if worker.ready else STARTUP_TIMEOUT
                if (worker.op or not worker.ready) and now - worker.started > limit:
                    if worker.op:
                        finish(OpReport(worker.op, problem=f"hang: no answer in {timeout:.0f} s",
                                        seconds=now - worker.started))
                    else:
                        raise RuntimeError(f"a conformance worker did not start in {limit:.0f} s: "
                                           f"{worker.log_tail()}")
                    retire(worker)
                    if pending:
                        start()
            events = selector.select(timeout=1.0)
            for key, _ in events:
                worker: _Worker = key.data
                line = worker.process.stdout.readline()
                if not line:  # the worker died
                    code = worker.process.wait()
                    if worker.op:
                        finish(OpReport(worker.op, problem=f"crash: worker exited with {code}: {worker.log_tail()}",
                                        seconds=time.monotonic() - worker.started))
                    elif not worker.ready:
                        raise RuntimeError(f"a conformance worker failed to start ({code}): {worker.log_tail()}")
                    retire(worker)
                    if pending:
                        start()
                    continue
                line = line.strip()
                if line == "ready":
                    worker.ready = True
                    feed(worker)
                    continue
                answer = json.loads(line)
                finish(OpReport.from_answer(answer, time.monotonic() - worker.started))
                feed(worker)
            for worker in list(workers):
                if worker.ready and worker.op is None and not pending:
                    selector.unregister(worker.process.stdout)
                    workers.remove(worker)
                    worker.stop()
    finally:
        for worker in list(workers):
            worker.kill()
        selector.close()
    return [reports[op] for op in ops]
