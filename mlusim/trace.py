"""Activity records of queued commands -> Chrome trace / Perfetto JSON.

Two ways to record every command every queue finishes:

  MLUSIM_TRACE=trace.json python app.py        (the environment switch: written when the process exits;
                                                "1" writes mlusim_trace.json in the working directory)

  from mlusim import trace
  with trace.recording("trace.json") as recorder:   # or recording() and recorder.write(path) later
      ...
  recorder.records                                  # one Record per command

The JSON (open it in ui.perfetto.dev or chrome://tracing) has, per device, two processes side by side: the host's
wall-clock timeline and the modelled device timeline (an estimate from mlusim.cost), each with one track per queue.
"""
from __future__ import annotations

import atexit
import json
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional, Union

from . import config as settings
from .observers import OBSERVERS

#: The file the environment switch writes when MLUSIM_TRACE is "1" (or "true", "yes", "on").
DEFAULT_TRACE_FILE = "mlusim_trace.json"
_SWITCH_VALUES = ("1", "true", "yes", "on")


class Record:
    """What one finished command did: where it ran, what it moved, and its host and modelled intervals."""

    __slots__ = ("device", "board", "queue", "queue_label", "kind", "name", "nbytes", "host_start", "host_end",
                 "model_start", "model_end", "info")

    def __init__(self, queue, command):
        self.device = queue.device.index
        self.board = queue.device.spec.name
        self.queue = queue.ident
        self.queue_label = queue.label
        self.kind = command.kind
        self.name = command.name
        self.nbytes = bytes_of(command)
        self.host_start, self.host_end = command.host_start, command.host_end
        self.model_start, self.model_end = command.model_start, command.model_end
        self.info = command.info

    @property
    def model_us(self) -> float:
        return self.model_end - self.model_start

    @property
    def host_seconds(self) -> float:
        return self.host_end - self.host_start

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__}


def bytes_of(command) -> int:
    """Bytes a command moves: the op's own count when it states one, else the larger of its read and written
    device ranges (a copy reads and writes the same bytes)."""
    if command.info and "bytes" in command.info:
        return int(command.info["bytes"])
    return max(sum(n for _, n in command.reads), sum(n for _, n in command.writes))


class Recorder:
    """Collects a Record of every command finished while it is installed."""

    def __init__(self):
        self.records: list[Record] = []
        self.host_origin = time.perf_counter()
        self._lock = threading.Lock()
        self._installed = False

    def command_finished(self, queue, command) -> None:
        """The observer event (mlusim.observers): keep the command's record."""
        self.records.append(Record(queue, command))

    def start(self) -> "Recorder":
        """Begin recording (idempotent)."""
        with self._lock:
            if not self._installed:
                OBSERVERS.add(self)
                self._installed = True
        return self

    def stop(self) -> "Recorder":
        """Stop recording; the records stay."""
        with self._lock:
            if self._installed:
                OBSERVERS.remove(self)
                self._installed = False
        return self

    def chrome_trace(self) -> dict:
        """The records as a Chrome trace event dict (see `chrome_trace`)."""
        return chrome_trace(list(self.records), self.host_origin)

    def write(self, path: Union[str, Path]) -> Path:
        """Write the Chrome trace JSON to `path`; returns the path."""
        target = Path(path)
        if target.parent != Path("."):
            target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(self.chrome_trace()))
        return target


def host_pid(device: int) -> int:
    """The trace's process id of a device's host wall-clock timeline."""
    return 2 * device + 1


def model_pid(device: int) -> int:
    """The trace's process id of a device's modelled timeline."""
    return 2 * device + 2


def _metadata(records: list[Record]) -> list[dict]:
    events = []
    devices = sorted({(r.device, r.board) for r in records})
    for device, board in devices:
        for pid, what in ((host_pid(device), "host wall clock"),
                          (model_pid(device), "modelled MLU time (estimate)")):
            events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                           "args": {"name": f"device {device} {board}: {what}"}})
            events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0, "args": {"sort_index": pid}})
    for device, queue, label in sorted({(r.device, r.queue, r.queue_label) for r in records}):
        for pid in (host_pid(device), model_pid(device)):
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": queue, "args": {"name": label}})
    return events


def _arguments(record: Record) -> dict:
    args = {"bytes": record.nbytes, "modelled_us": record.model_us, "host_us": record.host_seconds * 1e6}
    for key, value in (record.info or {}).items():
        args[key] = value if isinstance(value, (int, float, str, bool)) or value is None else str(value)
    return args


def chrome_trace(records: list[Record], host_origin: float) -> dict:
    """Chrome trace / Perfetto JSON: "X" (complete) events in µs, host times from `host_origin` (perf_counter s),
    modelled times from the earliest modelled start among the records."""
    model_origin = min((r.model_start for r in records), default=0.0)
    events = _metadata(records)
    for record in records:
        args = _arguments(record)
        common = {"name": record.name, "cat": record.kind, "tid": record.queue, "args": args}
        events.append({**common, "ph": "X", "pid": host_pid(record.device),
                       "ts": (record.host_start - host_origin) * 1e6, "dur": record.host_seconds * 1e6})
        events.append({**common, "ph": "X", "pid": model_pid(record.device),
                       "ts": record.model_start - model_origin, "dur": record.model_us})
    return {"traceEvents": events, "displayTimeUnit": "ms",
            "otherData": {"generator": "mlusim", "model_origin_us": model_origin,
                          "note": "modelled times are estimates of mlusim.cost, not measurements"}}


@contextmanager
def recording(path: Optional[Union[str, Path]] = None) -> Iterator[Recorder]:
    """Record every finished command inside the block; write the trace to `path` (if given) at its end."""
    recorder = Recorder().start()
    try:
        yield recorder
    finally:
        recorder.stop()
        if path is not None:
            recorder.write(path)


def trace_path_from_environment(environ=None) -> Optional[Path]:
    """The file MLUSIM_TRACE asks for (in the environment's snapshot, mlusim.config, or `environ`), or None when the
    switch is off."""
    environ = settings.environ() if environ is None else environ
    value = environ.get("MLUSIM_TRACE", "").strip()
    if value.lower() in ("", "0", "false", "no", "off"):
        return None
    return Path(DEFAULT_TRACE_FILE if value.lower() in _SWITCH_VALUES else value)


def record_from_environment(environ=None) -> Optional[Recorder]:
    """Start a process-wide recorder when MLUSIM_TRACE is set; it writes its file at exit."""
    path = trace_path_from_environment(environ)
    if path is None:
        return None
    recorder = Recorder().start()

    def write_at_exit() -> None:
        recorder.stop()
        recorder.write(path)

    # Registered when the mlusim package is first imported (mlusim.config), before mlusim.device registers its drain
    # of queued work; atexit runs handlers last-in first-out, so the queues are drained before this writes.
    atexit.register(write_at_exit)
    return recorder
