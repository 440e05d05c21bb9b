"""The caching allocator's memory history (torch_mlu/allocator/history.py): stacks of live blocks, the trace of
actions, snapshots that torch's memory visualizer reads."""
import collections
import json
import os

import pytest
import torch
from torch.cuda._memory_viz import segment_plot, trace_plot

import torch_mlu

NBYTES = 311 * 411 * 4


@pytest.fixture(autouse=True)
def history_off_after():
    torch.mlu.memory.empty_cache()
    yield
    torch.mlu.memory._record_memory_history(None)


def blocks_of(snapshot, requested):
    return [b for s in snapshot["segments"] for b in s["blocks"] if b["requested_size"] == requested]


def allocate_here():
    return torch.rand(311, 411, device="mlu")


def test_a_live_block_carries_the_stack_that_allocated_it():
    torch.mlu.memory._record_memory_history("state", stacks="python")
    x = allocate_here()
    (block,) = blocks_of(torch.mlu.memory._snapshot(), NBYTES)
    assert block["address"] == x.untyped_storage().data_ptr()
    assert block["frames"][0]["name"] == "allocate_here" and block["frames"][0]["filename"] == __file__
    assert block["frames"][1]["name"] == "test_a_live_block_carries_the_stack_that_allocated_it"
    own = os.path.dirname(torch_mlu.__file__)
    assert not any(f["filename"].startswith(own) for f in block["frames"])  # the allocator's own frames left out


def test_cpp_stacks_and_torchscript_frames():
    torch.mlu.memory._record_memory_history("state", stacks="all")
    x = allocate_here()
    (block,) = blocks_of(torch.mlu.memory._snapshot(), NBYTES)
    assert "::rand" in str(block["frames"]) and "allocate_here" in str(block["frames"])
    del x

    @torch.jit.script
    def scripted():
        return torch.rand(311, 411, device="mlu")

    torch.mlu.memory._record_memory_history("state", stacks="python")
    y = scripted()
    (block,) = blocks_of(torch.mlu.memory._snapshot(), NBYTES)
    assert block["frames"][0]["name"] == "scripted" and y.numel() == 311 * 411


@pytest.mark.parametrize("context", ["alloc", "all", "state"])
def test_context_decides_which_actions_keep_stacks(context):
    torch.mlu.memory._record_memory_history(context=context)
    holder = []

    def thealloc():
        holder.append(torch.rand(3, 4, device="mlu"))

    def thefree():
        holder.clear()

    thealloc()
    thefree()
    text = json.dumps(torch.mlu.memory._snapshot())
    assert ("thefree" in text) == (context == "all")
    assert ("thealloc" in text) == (context != "state")


def test_the_trace_lists_the_allocators_actions_in_order():
    torch.mlu.memory._record_memory_history("all", context=None)
    x = torch.empty(1000, device="mlu")
    address = x.data_ptr()
    del x
    torch.mlu.memory.empty_cache()
    trace = torch.mlu.memory._snapshot()["device_traces"][0]
    assert [e["action"] for e in trace] == ["segment_alloc", "alloc", "free_requested", "free_completed",
                                           "segment_free"]
    assert trace[1]["addr"] == address and trace[1]["size"] == 4096
    assert all(e["frames"] == [] for e in trace)  # context None: no stacks
    assert trace[0]["time_us"] <= trace[-1]["time_us"]


def test_a_freed_block_on_a_recorded_stream_is_pending_until_the_stream_passes(gates):
    torch.mlu.memory._record_memory_history("all")
    side = torch.mlu.Stream()
    x = torch.empty(1000, device="mlu")
    x.record_stream(side)
    gate = gates(side)
    del x
    states = [b["state"] for s in torch.mlu.memory._snapshot()["segments"] for b in s["blocks"] if b["size"] == 4096]
    assert states == ["active_pending_free"]
    gate.set()
    side.synchronize()
    torch.empty(1000, device="mlu")  # the allocator sees the stream passed
    actions = [e["action"] for e in torch.mlu.memory._snapshot()["device_traces"][0]]
    assert actions[:4] == ["segment_alloc", "alloc", "free_requested", "free_completed"]


def test_state_keeps_only_the_last_action_and_none_clears():
    torch.mlu.memory._record_memory_history("state")
    x = torch.empty(10, device="mlu")
    del x
    assert [e["action"] for e in torch.mlu.memory._snapshot()["device_traces"][0]] == ["free_completed"]
    torch.mlu.memory._record_memory_history(None)
    y = torch.empty(10, device="mlu")
    snapshot = torch.mlu.memory._snapshot()
    assert snapshot["device_traces"] == [[]]
    assert all(b["frames"] == [] for b in blocks_of(snapshot, 40))
    del y


def test_max_entries_and_skip_actions():
    torch.mlu.memory._record_memory_history("all", max_entries=3, skip_actions=["free_requested"])
    for _ in range(5):
        torch.empty(10, device="mlu")
    trace = torch.mlu.memory._snapshot()["device_traces"][0]
    assert len(trace) == 3 and "free_requested" not in {e["action"] for e in trace}
    with pytest.raises(ValueError, match="skip_actions"):
        torch.mlu.memory._record_memory_history("all", skip_actions=["nothing"])
    with pytest.raises(ValueError, match="enabled"):
        torch.mlu.memory._record_memory_history("everything")
    with pytest.raises(ValueError, match="stacks"):
        torch.mlu.memory._record_memory_history("all", stacks="rust")
    with pytest.raises(ValueError, match="max_entries"):
        torch.mlu.memory._record_memory_history("all", max_entries=-1)


def test_the_legacy_signature():
    torch.mlu.memory._record_memory_history(True, trace_alloc_max_entries=10, trace_alloc_record_context=True)
    x = allocate_here()
    snapshot = torch.mlu.memory._snapshot()
    assert [e["action"] for e in snapshot["device_traces"][0]][-1] == "alloc"
    assert "allocate_here" in json.dumps(snapshot)
    torch.mlu.memory._record_memory_history(False)
    assert torch.mlu.memory._snapshot()["device_traces"] == [[]]
    del x


def test_torchs_memory_visualizer_reads_the_snapshot():
    torch.mlu.memory._record_memory_history("all", context="all", stacks="python")
    x = torch.rand(128, 128, device="mlu")
    (x * x + x * x).sum()
    snapshot = torch.mlu.memory._snapshot()
    assert "<html" in trace_plot(snapshot).lower() and "<html" in segment_plot(snapshot).lower()
    assert str(128 * 128 * 4) in json.dumps(snapshot)


def test_the_snapshot_agrees_with_the_statistics():
    tensors = [torch.empty(n, device="mlu") for n in (10, 1000, 300_000, 3_000_000)]
    del tensors[1]
    expected = collections.Counter()
    for segment in torch.mlu.memory_snapshot():
        pool = segment["segment_type"] + "_pool"
        for key in ("all", pool):
            expected[f"segment.{key}.current"] += 1
            expected[f"reserved_bytes.{key}.current"] += segment["total_size"]
            expected[f"allocated_bytes.{key}.current"] += segment["allocated_size"]
            expected[f"active_bytes.{key}.current"] += segment["active_size"]
            expected[f"requested_bytes.{key}.current"] += segment["requested_size"]
    stats = torch.mlu.memory_stats()
    for key, value in expected.items():
        assert stats[key] == value, key
