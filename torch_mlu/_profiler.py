"""torch.profiler sees the MLU: the device work of each torch op with its modelled MLU time.

    with torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.MLU]) as prof:
        model(x.mlu()); torch.mlu.synchronize()
    print(prof.key_averages().table(sort_by="self_mlu_time_total"))    # "Self MLU" per op, as "Self CUDA" on GPUs
    prof.export_chrome_trace("trace.json")                              # device work on its own track per queue

The C++ part (csrc/profiler.cpp) is Kineto's PrivateUse1 activity profiler and the legacy profiler's device events;
it forwards to the `Collector` here. While a session records, the collector watches every simulated queue
(mlusim.observers): each kernel, copy and fill a queue runs becomes one device activity, linked to the torch op
whose thread queued it (the innermost correlation id Kineto pushed there).

Device times are mlusim.cost's modelled MLU time, not host time. On the trace's clock an activity starts when it
was queued or when the queue's previous activity ended, whichever is later, and lasts its modelled duration: a
queue never runs two activities at once, nothing runs before it was queued, and the durations add up to the
queue's modelled clock.
"""
from __future__ import annotations

import threading
import time

from mlusim.command import Kind
from mlusim.observers import OBSERVERS
from mlusim.trace import bytes_of

from . import _state

#: the activity codes csrc/profiler.cpp turns into Kineto's types (kernel, memcpy, memset)
KERNEL, MEMCPY, MEMSET = 0, 1, 2
_ACTIVITY = {Kind.OP: KERNEL, Kind.KERNEL: KERNEL, Kind.COLLECTIVE: KERNEL, Kind.MEMCPY: MEMCPY,
             Kind.MEMSET: MEMSET}


class Collector:
    """The records of one profiling session (the object csrc/profiler.cpp calls)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._queued: dict = {}      # command -> (queue, correlation id, time queued in ns on the trace's clock)
        self._finished: list = []    # (queue, command, correlation id, time queued ns)
        self._clock_offset_ns = 0    # trace clock (CLOCK_REALTIME, as c10::getTime) minus perf_counter

    # ---- the session, called by Kineto through csrc/profiler.cpp ----
    def start(self) -> None:
        with self._lock:
            self._queued.clear()
            self._finished = []
            self._clock_offset_ns = time.time_ns() - time.perf_counter_ns()
        OBSERVERS.add(self, events=("command_enqueued", "command_finished"))

    def stop(self) -> None:
        """End the session once the work it saw queued has run, on every device (torch's profiler synchronizes
        only the current one): a device's records are complete when the trace is processed. This waits for the
        queues' positions, not as a queue sync, so the sanitizer's ordering is the program's own."""
        for queue in {seen[0] for seen in list(self._queued.values())}:
            if queue.submitted:
                queue.wait_until(queue.submitted - 1)
        OBSERVERS.remove(self)

    def activities(self) -> list[tuple]:
        """The session's device activities: (name, activity code, device, queue id, queue label, start ns, end ns,
        correlation id, metadata), placed on the trace's clock (see the module's docstring)."""
        with self._lock:
            finished, self._finished = self._finished, []
            self._queued.clear()
        finished.sort(key=lambda row: (row[0].device.index, row[0].ident, row[1].model_start))
        rows, queue_free_at = [], {}
        for queue, command, correlation, queued_ns in finished:
            key = (queue.device.index, queue.ident)
            duration_ns = round((command.model_end - command.model_start) * 1000.0)
            start_ns = max(queued_ns, queue_free_at.get(key, queued_ns))
            queue_free_at[key] = end_ns = start_ns + duration_ns
            metadata = {"stream": queue.ident, "queue": queue.label, "bytes": bytes_of(command),
                        "modelled_us": command.model_end - command.model_start, "device time": "modelled"}
            rows.append((command.name, _ACTIVITY[command.kind], queue.device.index, queue.ident, queue.label,
                         start_ns, end_ns, correlation, metadata))
        return rows

    # ---- the observer events (mlusim.observers) ----
    def command_enqueued(self, queue, command) -> None:
        if command.kind in _ACTIVITY:
            self._queued[command] = (queue, _state.C.profiler_correlation_id(), time.time_ns())

    def command_finished(self, queue, command) -> None:
        if command.kind not in _ACTIVITY:
            return
        seen = self._queued.pop(command, None)
        if seen is None:  # queued before the session started
            seen = (queue, 0, round(command.host_start * 1e9) + self._clock_offset_ns)
        self._finished.append((queue, command, seen[1], seen[2]))

    # ---- the legacy profiler's device events ----
    @staticmethod
    def modelled_us(start_event: int, end_event: int) -> float:
        """Modelled device time between two torch events (cnrtNotifierDuration), in µs (what torch's profiler
        asks of a device's event stubs; its legacy table keeps whole µs)."""
        return _state.runtime.events.modelled_us(start_event, end_event)


#: torch_mlu's names of the device columns (sort_by="self_mlu_time_total", event.mlu_time_total): torch's
#: profiler calls them device_*; torch_mlu's own build of torch adds the mlu spellings.
_MLU_ALIASES = {"self_mlu_time_total": "self_device_time_total", "mlu_time_total": "device_time_total",
                "mlu_time": "device_time", "self_mlu_memory_usage": "self_device_memory_usage",
                "mlu_memory_usage": "device_memory_usage"}


def _alias(target: str) -> property:
    return property(lambda event: getattr(event, target), doc=f"torch_mlu's name of {target}")


#: the collector the C++ part calls (install() makes it)
COLLECTOR: Collector | None = None


def install() -> None:
    """Bind the collector to the C++ part; give torch's profiler events their mlu attribute names."""
    from torch.autograd import profiler_util

    global COLLECTOR
    COLLECTOR = Collector()
    _state.C.profiler_bind(COLLECTOR)
    for cls in (profiler_util.FunctionEvent, profiler_util.FunctionEventAvg):
        for name, target in _MLU_ALIASES.items():
            if not hasattr(cls, name):
                setattr(cls, name, _alias(target))
