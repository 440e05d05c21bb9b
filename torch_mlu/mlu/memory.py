"""torch.mlu's memory functions over the caching allocator (torch_mlu/allocator/), with torch.cuda's names and
statistics (memory_stats keys such as "allocated_bytes.all.current")."""
from __future__ import annotations

import collections
import sys

from .. import _state
from ..allocator import POOLS, format_size
from ._utils import checked_index


def _allocator():
    return _state.runtime.allocator


def memory_stats_as_nested_dict(device=None) -> dict:
    """torch.mlu.memory_stats_as_nested_dict: the allocator statistics of a device as nested dicts."""
    index = checked_index(device)
    with _allocator().lock:
        return _allocator().stats(index).nested()


def memory_stats(device=None) -> "collections.OrderedDict[str, int]":
    """torch.mlu.memory_stats: flat, sorted statistics ("allocated_bytes.all.current", "num_ooms", ...)."""
    flat = []

    def visit(prefix: str, value) -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                visit(f"{prefix}.{key}" if prefix else key, inner)
        else:
            flat.append((prefix, value))

    visit("", memory_stats_as_nested_dict(device))
    flat.sort()
    return collections.OrderedDict(flat)


def _stat(name: str, field: str, device) -> int:
    return memory_stats_as_nested_dict(device)[name]["all"][field]


def memory_allocated(device=None) -> int:
    """torch.mlu.memory_allocated: bytes held by tensors (rounded block sizes) on the device."""
    return _stat("allocated_bytes", "current", device)


def max_memory_allocated(device=None) -> int:
    """torch.mlu.max_memory_allocated: peak of memory_allocated since start or reset_peak_memory_stats."""
    return _stat("allocated_bytes", "peak", device)


def memory_reserved(device=None) -> int:
    """torch.mlu.memory_reserved: bytes the caching allocator holds from cnrt (allocated + cached)."""
    return _stat("reserved_bytes", "current", device)


def max_memory_reserved(device=None) -> int:
    """torch.mlu.max_memory_reserved: peak of memory_reserved."""
    return _stat("reserved_bytes", "peak", device)


def memory_cached(device=None) -> int:
    """Deprecated name of memory_reserved."""
    return memory_reserved(device)


def max_memory_cached(device=None) -> int:
    """Deprecated name of max_memory_reserved."""
    return max_memory_reserved(device)


def reset_peak_memory_stats(device=None) -> None:
    """torch.mlu.reset_peak_memory_stats: every peak becomes the current value."""
    _allocator().reset_peak(checked_index(device))


def reset_max_memory_allocated(device=None) -> None:
    """Deprecated: reset_peak_memory_stats."""
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None) -> None:
    """Deprecated: reset_peak_memory_stats."""
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device=None) -> None:
    """torch.mlu.reset_accumulated_memory_stats: the allocated/freed totals and the counters restart at 0."""
    _allocator().reset_accumulated(checked_index(device))


def empty_cache() -> None:
    """torch.mlu.empty_cache: give the cached, unused segments back to cnrt (cnrtFree)."""
    _allocator().empty_cache()


def set_per_process_memory_fraction(fraction: float, device=None) -> None:
    """torch.mlu.set_per_process_memory_fraction: this process's caching allocator may reserve at most `fraction`
    (a float in [0, 1]) of the device's memory; past it an allocation is torch.OutOfMemoryError."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if not 0 <= fraction <= 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    _allocator().set_memory_fraction(fraction, checked_index(device))


def get_per_process_memory_fraction(device=None) -> float:
    """torch.mlu.get_per_process_memory_fraction: the fraction set_per_process_memory_fraction set (1.0 if none)."""
    return _allocator().memory_fraction(checked_index(device))


def _set_allocator_settings(env: str) -> None:
    """torch.mlu.memory._set_allocator_settings (torch.cuda.memory._set_allocator_settings): the caching
    allocator's settings in PYTORCH_MLU_ALLOC_CONF's syntax (torch_mlu/allocator/settings.py); the options the
    string does not name go back to their defaults. RuntimeError names a bad option or value."""
    if not isinstance(env, str):
        raise TypeError(f"_set_allocator_settings: env must be a str, not {type(env).__name__}")
    _allocator().configure(env)


def mem_get_info(device=None) -> tuple[int, int]:
    """torch.mlu.mem_get_info: (free, total) bytes of the device's simulated GDRAM (cnrtMemGetInfo)."""
    return _state.runtime.mem_get_info(checked_index(device))


def memory_snapshot(mempool_id=None) -> list[dict]:
    """torch.mlu.memory_snapshot (torch.cuda.memory_snapshot): every device's segments and their blocks."""
    if mempool_id is not None:
        raise ValueError(f"mlu: memory pools are not supported (mempool_id={mempool_id!r}); the caching allocator "
                         f"has the one default pool")
    return _allocator().snapshot()["segments"]


def _snapshot(device=None, augment_with_fx_traces=False) -> dict:
    """torch.mlu.memory._snapshot (torch.cuda.memory._snapshot): {"segments": every device's segments with their
    blocks and the stacks the memory history kept, "device_traces": the history's actions per device}, the input
    of torch.cuda._memory_viz and memory.pytorch.org."""
    if device is not None:
        checked_index(device)
    return _allocator().snapshot()


def _record_memory_history(enabled="all", *args, **kwargs) -> None:
    """torch.mlu.memory._record_memory_history (torch.cuda's): keep the stacks of the allocator's live blocks and a
    trace of its actions (torch_mlu/allocator/history.py). `enabled` None stops; a bool takes the legacy
    arguments (record_context, trace_alloc_max_entries, trace_alloc_record_context, record_context_cpp)."""
    if isinstance(enabled, bool):
        return _record_memory_history_legacy(enabled, *args, **kwargs)
    return _record_memory_history_impl(enabled, *args, **kwargs)


def _record_memory_history_impl(enabled="all", context="all", stacks="all", max_entries=sys.maxsize, device=None,
                                clear_history=False, compile_context=False, global_record_annotations=False,
                                skip_actions=None) -> None:
    # compile_context and global_record_annotations add torch.compile's and record_function's names to the
    # stacks on CUDA; the stacks here are the Python/TorchScript/C++ frames only.
    if device is not None:
        checked_index(device)
    _allocator().record_history(enabled, context, stacks, max_entries, bool(clear_history), skip_actions)


def _record_memory_history_legacy(enabled: bool, record_context=True, trace_alloc_max_entries=1,
                                  trace_alloc_record_context=False, device=None, record_context_cpp=False,
                                  clear_history=False, compile_context=False, global_record_annotations=False,
                                  skip_actions=None) -> None:
    if not enabled:
        return _record_memory_history_impl(None)
    tracing = trace_alloc_max_entries > 1
    context = ("alloc" if trace_alloc_record_context else "state") if record_context else None
    _record_memory_history_impl("all" if tracing else "state", context, "all" if record_context_cpp else "python",
                                trace_alloc_max_entries, device, clear_history, skip_actions=skip_actions)


def _save_segment_usage(filename="output.svg", snapshot=None) -> None:
    """torch.mlu.memory._save_segment_usage: an SVG of the segments' use (torch.cuda._memory_viz.segments)."""
    from torch.cuda._memory_viz import segments
    with open(filename, "w") as file:
        file.write(segments(_snapshot() if snapshot is None else snapshot))


def _save_memory_usage(filename="output.svg", snapshot=None) -> None:
    """torch.mlu.memory._save_memory_usage: an SVG of memory over the trace (torch.cuda._memory_viz.memory)."""
    from torch.cuda._memory_viz import memory
    with open(filename, "w") as file:
        file.write(memory(_snapshot() if snapshot is None else snapshot))


_raw_blocks: dict[int, object] = {}


def caching_allocator_alloc(size: int, device=None, stream=None) -> int:
    """torch.mlu.caching_allocator_alloc: `size` bytes of device memory from the caching allocator, for use on
    `stream` (default: the current stream of `device`); returns the device address (for calling cnrt/cnnl
    directly). Give it back with caching_allocator_delete."""
    import torch
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(f"caching_allocator_alloc: size must be a non-negative int, got {size!r}")
    index = checked_index(device if stream is None else stream.device_index)
    from .streams import stream as stream_context
    with stream_context(stream):
        block = torch.empty(size, dtype=torch.uint8, device=torch.device("mlu", index))
    address = block.data_ptr()
    if address:
        _raw_blocks[address] = block
    return address


def caching_allocator_delete(mem_ptr: int) -> None:
    """torch.mlu.caching_allocator_delete: give back memory from caching_allocator_alloc (stream-ordered, no wait)."""
    if mem_ptr == 0:
        return
    if _raw_blocks.pop(mem_ptr, None) is None:
        raise ValueError(f"caching_allocator_delete: 0x{mem_ptr:x} was not allocated by caching_allocator_alloc")


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """torch.mlu.memory_summary: a readable table of the allocator statistics of a device."""
    index = checked_index(device)
    stats = memory_stats_as_nested_dict(index)
    rows = [("Allocated memory", "allocated_bytes", True), ("Active memory", "active_bytes", True),
            ("Requested memory", "requested_bytes", True), ("MLU reserved memory", "reserved_bytes", True),
            ("Non-releasable memory", "inactive_split_bytes", True), ("Allocations", "allocation", False),
            ("Active allocs", "active", False), ("MLU reserved segments", "segment", False),
            ("Non-releasable allocs", "inactive_split", False)]
    width = 75
    lines = ["=" * width, f" PyTorch MLU memory summary, device ID {index:<6d}".ljust(width - 1) + "|",
             "-" * width,
             f" MLU OOMs: {stats['num_ooms']:<13d} | cudaMalloc retries: {stats['num_alloc_retries']:<9d}"
             .replace("cudaMalloc", "cnrtMalloc").ljust(width - 1) + "|",
             "=" * width,
             f" {'Metric':<25}| {'Cur Usage':>10} | {'Peak Usage':>10} | {'Tot Alloc':>10} | {'Tot Freed':>10} |",
             "-" * width]
    for title, name, is_bytes in rows:
        pools = POOLS[:1] if abbreviated else POOLS
        for pool in pools:
            entry = stats[name][pool]
            show = format_size if is_bytes else str
            label = title if pool == "all" else f"      from {pool.replace('_pool', '')} pool"
            lines.append(f" {label:<25}| {show(entry['current']):>10} | {show(entry['peak']):>10} | "
                         f"{show(entry['allocated']):>10} | {show(entry['freed']):>10} |")
        lines.append("-" * width)
    lines.append("=" * width)
    return "\n".join(lines) + "\n"


__all__ = ["memory_stats", "memory_stats_as_nested_dict", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "memory_cached", "max_memory_cached",
           "reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached",
           "reset_accumulated_memory_stats", "empty_cache", "mem_get_info", "memory_snapshot", "memory_summary",
           "caching_allocator_alloc", "caching_allocator_delete", "set_per_process_memory_fraction",
           "get_per_process_memory_fraction"]
