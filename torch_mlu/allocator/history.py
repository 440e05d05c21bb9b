"""The caching allocator's memory history (torch.mlu.memory._record_memory_history, as torch.cuda's): where each
live block and segment was allocated (its stack), and a trace of the allocator's actions per device, which
torch.mlu.memory._snapshot returns for torch's memory visualizer (torch.cuda._memory_viz: trace_plot,
segment_plot, memory.pytorch.org).

  enabled  None: off; "state": the stacks of what is alive now (and the last action); "all": also the trace of
           every action
  context  None: no stacks; "state": stacks of live blocks only; "alloc": also of alloc actions; "all": also of
           frees
  stacks   "python": Python (and TorchScript) frames; "all": also C++ frames

The stacks are captured unsymbolized (a few µs) and symbolized only by a snapshot. The frames of torch_mlu's own
Python code (the allocator the C++ part called back, an op written in Python) are left out of each stack, so its
first Python frame is the caller's, as with torch's allocators, whose stacks start where the allocation was asked
for.
"""
from __future__ import annotations

import collections
import os
import sys
import time

from torch._C._profiler import gather_traceback, symbolize_tracebacks

ENABLED = (None, "state", "all")
ACTIONS = ("alloc", "free_requested", "free_completed", "segment_alloc", "segment_free", "oom", "snapshot")
CONTEXTS = (None, "state", "alloc", "all")
STACKS = ("python", "all")
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
#: the C++ part's allocator (csrc/mlu.cpp), where a C++ stack of an allocation torch asked for begins
_CPP_ENTRY = "mlu::DeviceAllocator::allocate"


class MemoryHistory:
    """What _record_memory_history asked for, and the trace it keeps (one bounded list of actions per device)."""

    def __init__(self):
        self.enabled: str | None = None
        self.context: str | None = None
        self.cpp = False
        self.traces: dict[int, collections.deque] = {}
        self.max_entries = sys.maxsize
        self.skipped: frozenset = frozenset()

    def configure(self, enabled, context, stacks, max_entries, clear: bool, skip_actions=()) -> None:
        if enabled not in ENABLED:
            raise ValueError(f"_record_memory_history: enabled must be one of {ENABLED}, not {enabled!r}")
        if context not in CONTEXTS:
            raise ValueError(f"_record_memory_history: context must be one of {CONTEXTS}, not {context!r}")
        if stacks not in STACKS:
            raise ValueError(f"_record_memory_history: stacks must be one of {STACKS}, not {stacks!r}")
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 0:
            raise ValueError(f"_record_memory_history: max_entries must be an int >= 0, not {max_entries!r}")
        unknown = set(skip_actions or ()) - set(ACTIONS)
        if unknown:
            raise ValueError(f"_record_memory_history: unknown skip_actions {sorted(unknown)}; the actions are "
                             f"{', '.join(ACTIONS)}")
        if clear or enabled is None or enabled != self.enabled or max_entries != self.max_entries:
            self.traces = {}
        self.skipped = frozenset(skip_actions or ())
        self.enabled, self.context, self.cpp = enabled, context if enabled else None, stacks == "all"
        self.max_entries = max_entries

    # ---- capture (under the allocator's lock) ----
    def stack(self, kept_with=("state", "alloc", "all")):
        """The current stack, when the context is one of `kept_with` (else None): a block's with any context, a new
        segment's with "alloc" or "all" only (a segment outlives the allocation that made it, and "state" keeps
        the stacks of live blocks only)."""
        if self.context not in kept_with:
            return None
        return gather_traceback(python=True, script=True, cpp=self.cpp)

    def record(self, device: int, action: str, address: int, size: int, stream: int, stack=None) -> None:
        """One action of the trace ("alloc", "free_requested", "free_completed", "segment_alloc",
        "segment_free"). Its stack: with context "all" every action's (`stack`, a block's own, or the current
        one), with "alloc" the allocations' only, otherwise none."""
        if self.enabled is None or not self.max_entries or action in self.skipped:
            return
        if self.context == "all" or (self.context == "alloc" and not action.startswith("free")):
            if stack is None:
                stack = self.stack()
        else:
            stack = None
        trace = self.traces.get(device)
        if trace is None:
            # "state" keeps the last action only, as torch's allocators do (at least one entry)
            trace = self.traces[device] = collections.deque(maxlen=self.max_entries if self.enabled == "all" else 1)
        trace.append((action, address, size, stream, stack, time.time_ns() // 1000))

    # ---- snapshot ----
    def device_traces(self, device_count: int, frames_of) -> list[list[dict]]:
        return [[{"action": action, "addr": address, "size": size, "stream": stream,
                  "frames": frames_of(stack), "time_us": time_us}
                 for action, address, size, stream, stack, time_us in self.traces.get(device, ())]
                for device in range(device_count)]


def symbolizer(stacks):
    """A function from each of `stacks` (captured tracebacks, or None) to its frames: all symbolized in one call,
    each without torch_mlu's own frames."""
    unique = [stack for stack in {id(s): s for s in stacks if s is not None}.values()]
    symbolized = dict(zip(map(id, unique), symbolize_tracebacks(unique))) if unique else {}

    def frames_of(stack) -> list[dict]:
        if stack is None:
            return []
        return callers_frames(symbolized[id(stack)])

    return frames_of


def callers_frames(frames: list[dict]) -> list[dict]:
    """`frames` (innermost first) without torch_mlu's own Python frames; a stack with C++ frames also without
    what lies inside the C++ allocator's entry (the unwinder, pybind11, the call back into Python)."""
    entry = next((index for index, frame in enumerate(frames) if frame.get("name", "").startswith(_CPP_ENTRY)), 0)
    return [frame for frame in frames[entry:] if not frame.get("filename", "").startswith(_PACKAGE)]
