"""mm.Profiler: per-layer host time and modelled MLU time of every context's enqueues.

    profiler = mm.Profiler(mm.ProfilerOptions(mm.HostTracerLevel.kCritical, mm.DeviceTracerLevel.kOn), logdir)
    profiler.start()
    for i in range(steps):
        profiler.step_begin(i); context.enqueue(inputs, outputs, queue); queue.sync(); profiler.step_end()
    profiler.stop()                      # logdir/plugins/profile/<run>/<host>.trace.json.gz (TensorBoard's layout)
    profiler.layers()                    # per layer: calls, host ms, modelled MLU us (an addition of this simulator)
    profiler.export_chrome_trace(path)   # the trace as mlusim's Perfetto JSON

While a profiler runs, every command a context queues for a layer (its own kernel, or the CNNL call of a library
layer) is tagged with the model and layer on the thread that queues it and recorded when the queue has run it: host
time is the host's run of the command, MLU time mlusim.cost's modelled duration. The trace is mlusim.trace's format
(host and modelled timelines per device, a track per queue), each event named `model/layer`; HostTracerLevel.kNone
leaves out the host timeline, DeviceTracerLevel.kOff the modelled one.
"""
from __future__ import annotations

import gzip
import itertools
import json
import os
import socket
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

from mlusim import trace
from mlusim.observers import OBSERVERS

from ..enums import DeviceTracerLevel, HostTracerLevel, member
from ..status import Code, Status, invalid

#: the profilers started and not stopped (one at a time, as MagicMind's is per process)
_active: list = []
_issuing = threading.local()
#: serial numbers of enqueues (a layer's calls are the enqueues that ran it)
RUNS = itertools.count()


@contextmanager
def issuing(model: str, layer: str, op: str, run: int):
    """Tag the commands the calling thread queues inside the block with a model's layer and the enqueue `run`
    (when a profiler runs)."""
    if not _active:
        yield
        return
    previous = getattr(_issuing, "layer", None)
    _issuing.layer = (model, layer, op, run)
    try:
        yield
    finally:
        _issuing.layer = previous


class ProfilerOptions:
    """mm.ProfilerOptions(host_tracer_level, device_tracer_level)."""

    def __init__(self, host_tracer_level=HostTracerLevel.kCritical, device_tracer_level=DeviceTracerLevel.kOn):
        self.host_tracer_level = member(host_tracer_level, HostTracerLevel, "ProfilerOptions host_tracer_level")
        self.device_tracer_level = member(device_tracer_level, DeviceTracerLevel,
                                          "ProfilerOptions device_tracer_level")


class Profiler:
    """mm.Profiler(options, output_path) (C++ CreateIProfiler(options, path)): start(), step_begin(n), step_end(),
    stop(); see the module docstring."""

    def __init__(self, options: Optional[ProfilerOptions] = None, output_path="."):
        if options is None:
            options = ProfilerOptions()
        if not isinstance(options, ProfilerOptions):
            raise invalid(f"Profiler: options must be a ProfilerOptions, not {type(options).__name__}")
        if not isinstance(output_path, (str, os.PathLike)):
            raise invalid(f"Profiler: output_path {output_path!r} is not a path")
        self.options = options
        self.output_path = Path(output_path)
        self.records: list = []      # (trace.Record named model/layer, model, layer, op, run)
        self._tags: dict = {}        # command -> (queue, model, layer, op, run, step)
        self._lock = threading.Lock()
        self._step: Optional[int] = None
        self._running = False
        self._host_origin = time.perf_counter()
        self.trace_file: Optional[Path] = None

    # ---- MagicMind's calls -------------------------------------------------------------------------------------

    def start(self) -> Status:
        """IProfiler::Start(): record from now on."""
        if self._running:
            return Status(Code.FAILED_PRECONDITION, "start: the profiler is running")
        if _active:
            return Status(Code.FAILED_PRECONDITION, "start: another profiler is running (stop it first)")
        self.records, self._tags = [], {}
        self._host_origin = time.perf_counter()
        self._running = True
        _active.append(self)
        OBSERVERS.add(self, events=("command_enqueued", "command_finished"))
        return Status()

    def step_begin(self, step_id) -> Status:
        """Profiler.step_begin(n): the records until step_end belong to step n."""
        if not self._running:
            return Status(Code.FAILED_PRECONDITION, "step_begin: the profiler is not running (start first)")
        if isinstance(step_id, bool) or not isinstance(step_id, int) or step_id < 0:
            return Status(Code.INVALID_ARGUMENT, f"step_begin: step_id {step_id!r} is not an int >= 0")
        if self._step is not None:
            return Status(Code.FAILED_PRECONDITION, f"step_begin: step {self._step} has not ended")
        self._step = step_id
        return Status()

    def step_end(self) -> Status:
        """Profiler.step_end()."""
        if self._step is None:
            return Status(Code.FAILED_PRECONDITION, "step_end: no step has begun")
        self._step = None
        return Status()

    def stop(self) -> Status:
        """IProfiler::Stop(): once the work it saw queued has run, stop and write the trace under output_path."""
        if not self._running:
            return Status(Code.FAILED_PRECONDITION, "stop: the profiler is not running")
        with self._lock:
            queues = {tag[0] for tag in self._tags.values()}
        for queue in queues:
            if queue.submitted:
                queue.wait_until(queue.submitted - 1)
        OBSERVERS.remove(self)
        _active.remove(self)
        self._running, self._step = False, None
        run = time.strftime("%Y_%m_%d_%H_%M_%S")
        target = self.output_path / "plugins" / "profile" / run / f"{socket.gethostname()}.trace.json.gz"
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            with gzip.open(target, "wt") as out:
                json.dump(self.chrome_trace(), out)
        except OSError as error:
            return Status(Code.UNAVAILABLE, f"stop: cannot write the trace under {str(self.output_path)!r}: {error}")
        self.trace_file = target
        return Status()

    # ---- reading the results -----------------------------------------------------------------------------------

    def layers(self) -> list:
        """Per (model, layer): op, calls, host_ms and mlu_us (totals), in the order layers first ran."""
        table: dict = {}
        for record, model, layer, op, run in sorted(self.records, key=lambda r: r[0].host_start):
            row = table.setdefault((model, layer), {"model": model, "layer": layer, "op": op, "calls": 0,
                                                    "commands": 0, "host_ms": 0.0, "mlu_us": 0.0, "runs": set()})
            row["commands"] += 1
            row["host_ms"] += record.host_seconds * 1e3
            row["mlu_us"] += record.model_us
            row["runs"].add(run)
        rows = list(table.values())
        for row in rows:
            row["calls"] = len(row.pop("runs"))
        return rows

    def chrome_trace(self) -> dict:
        """The records as mlusim.trace's Chrome/Perfetto JSON, less the timelines the options leave out."""
        document = trace.chrome_trace([r[0] for r in self.records], self._host_origin)
        keep_host = self.options.host_tracer_level is not HostTracerLevel.kNone
        keep_device = self.options.device_tracer_level is not DeviceTracerLevel.kOff
        events = []
        host_pids = {trace.host_pid(r[0].device) for r in self.records}
        for event in document["traceEvents"]:
            host = event["pid"] in host_pids
            if (host and keep_host) or (not host and keep_device):
                events.append(event)
        document["traceEvents"] = events
        return document

    def export_chrome_trace(self, path) -> Status:
        """Write the trace as JSON to `path` (open it in ui.perfetto.dev)."""
        try:
            Path(path).write_text(json.dumps(self.chrome_trace()))
        except (OSError, TypeError) as error:
            return Status(Code.INVALID_ARGUMENT, f"export_chrome_trace: {path!r}: {error}")
        return Status()

    # ---- the observer events (mlusim.observers) ----------------------------------------------------------------

    def command_enqueued(self, queue, command) -> None:
        layer = getattr(_issuing, "layer", None)
        if layer is not None:
            with self._lock:
                self._tags[command] = (queue, *layer, self._step)

    def command_finished(self, queue, command) -> None:
        with self._lock:
            tag = self._tags.pop(command, None)
        if tag is None:
            return
        _, model, layer, op, run, step = tag
        record = trace.Record(queue, command)
        record.name = f"{model}/{layer}"
        record.info = {**(command.info or {}), "model": model, "layer": layer, "op": op, "step": step}
        with self._lock:
            self.records.append((record, model, layer, op, run))
