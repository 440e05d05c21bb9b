"""timing: a per-op table of host time and modelled MLU time.

Each intercepted op is bracketed by cnrt notifiers on its device's current stream; the stream is synchronised
before the op (so earlier work is not counted) and after it. Host time is the wall time from the call until its
device work is done; MLU time is the modelled device time between the two notifiers (cnrtNotifierDuration: the
cost model's estimate of the op on the simulated board).

    with torch_mlu.op_tools.timing() as timer:
        model(x)
    print("\\n".join(timer.table_lines()))
"""
from __future__ import annotations

import csv
import time
from dataclasses import dataclass
from pathlib import Path

import torch

import cnrt

from ._intercept import OpCall, Tool


@dataclass
class OpTime:
    op: str
    calls: int = 0
    host_us: float = 0.0
    mlu_us: float = 0.0


def _queue(device: torch.device):
    return torch.mlu.current_stream(device).mlu_stream


class OpTimer(Tool):
    """Collects host and modelled MLU time per aten op name (`times`, `table_lines()`, `write_csv()`)."""

    order = 100

    def __init__(self, path=None):
        self.path = Path(path) if path is not None else None
        self.times: dict[str, OpTime] = {}

    def before(self, call: OpCall) -> None:
        device = call.device()
        if device is None:
            return
        queue = _queue(device)
        cnrt.queueSync(queue)
        start = cnrt.notifierCreate()
        cnrt.placeNotifier(start, queue)
        call.notes["timing"] = (queue, start, time.perf_counter())

    def after(self, call: OpCall) -> None:
        started = call.notes.get("timing")
        device = call.device()
        if started is None and device is not None:  # a factory op: its device is known only now
            return self._record(call.name, call.host_us, 0.0)
        if started is None:
            return
        queue, start, wall = started
        end = cnrt.notifierCreate()
        cnrt.placeNotifier(end, queue)
        cnrt.queueSync(queue)
        host_us = (time.perf_counter() - wall) * 1e6
        mlu_us = cnrt.notifierDuration(start, end)
        cnrt.notifierDestroy(start)
        cnrt.notifierDestroy(end)
        self._record(call.name, host_us, mlu_us)

    def _record(self, name: str, host_us: float, mlu_us: float) -> None:
        entry = self.times.get(name)
        if entry is None:
            entry = self.times[name] = OpTime(name)
        entry.calls += 1
        entry.host_us += host_us
        entry.mlu_us += mlu_us

    def rows(self) -> list[OpTime]:
        """The ops, most host time first."""
        return sorted(self.times.values(), key=lambda t: -t.host_us)

    def table_lines(self, limit: int | None = None) -> list[str]:
        header = f"{'op':<44} {'calls':>7} {'host ms':>10} {'host us/call':>13} {'MLU ms':>10} {'MLU us/call':>12}"
        lines = [header, "-" * len(header)]
        rows = self.rows()
        for entry in rows[:limit]:
            lines.append(f"{entry.op[:44]:<44} {entry.calls:>7} {entry.host_us / 1e3:>10.3f} "
                         f"{entry.host_us / entry.calls:>13.1f} {entry.mlu_us / 1e3:>10.3f} "
                         f"{entry.mlu_us / entry.calls:>12.2f}")
        total_host = sum(t.host_us for t in rows)
        total_mlu = sum(t.mlu_us for t in rows)
        lines.append(f"{'total':<44} {sum(t.calls for t in rows):>7} {total_host / 1e3:>10.3f} {'':>13} "
                     f"{total_mlu / 1e3:>10.3f}")
        lines.append("MLU time is modelled (mlusim's cost model for the simulated board), not measured.")
        return lines

    def write_csv(self, path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["op", "calls", "host_us", "mlu_us"])
            for entry in self.rows():
                writer.writerow([entry.op, entry.calls, round(entry.host_us, 3), round(entry.mlu_us, 3)])
        return path

    def finish(self) -> None:
        if self.path is not None:
            self.write_csv(self.path)
