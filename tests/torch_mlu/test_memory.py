"""The stream-ordered caching allocator: rounding and pools, reuse on the same stream at once and on no other, no
sync on free, record_stream, statistics, empty_cache, out-of-memory recovery."""
import threading

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cnrt
from mlusim import device as devices

MiB = 1 << 20


def _pending_marker(stream):
    notifier = cnrt.notifierCreate()
    cnrt.placeNotifier(notifier, stream.mlu_stream)
    return notifier


def test_sizes_round_to_512_bytes_from_2_mib_segments():
    t = torch.empty(100, dtype=torch.uint8, device="mlu")
    assert torch.mlu.memory_allocated() == 512
    assert torch.mlu.memory_reserved() == 2 * MiB
    stats = torch.mlu.memory_stats()
    assert stats["allocation.all.current"] == 1 and stats["allocation.small_pool.current"] == 1
    assert stats["segment.small_pool.current"] == 1 and stats["segment.large_pool.current"] == 0
    assert stats["requested_bytes.all.current"] == 100
    u = torch.empty(600, dtype=torch.uint8, device="mlu")
    assert torch.mlu.memory_allocated() == 512 + 1024
    assert u.data_ptr() == t.data_ptr() + 512  # carved from the same segment
    assert torch.mlu.memory_stats()["segment.all.current"] == 1
    del t, u
    assert torch.mlu.memory_allocated() == 0
    assert torch.mlu.memory_reserved() == 2 * MiB  # cached, not returned to cnrt


def test_large_pool_segments():
    a = torch.empty(5 * MiB, dtype=torch.uint8, device="mlu")
    assert torch.mlu.memory_reserved() == 20 * MiB  # requests under 10 MiB share 20 MiB segments
    b = torch.empty(3 * MiB, dtype=torch.uint8, device="mlu")
    assert torch.mlu.memory_reserved() == 20 * MiB and b.data_ptr() == a.data_ptr() + 5 * MiB
    c = torch.empty(13 * MiB + 1, dtype=torch.uint8, device="mlu")  # more than the 12 MiB left
    assert torch.mlu.memory_reserved() == 20 * MiB + 14 * MiB  # its own segment, rounded up to 2 MiB
    stats = torch.mlu.memory_stats()
    # a large block keeps a remainder of up to 1 MiB rather than splitting it off (as CUDA's allocator)
    assert stats["segment.large_pool.current"] == 2 and stats["allocated_bytes.large_pool.current"] == \
        5 * MiB + 3 * MiB + 14 * MiB
    assert stats["requested_bytes.large_pool.current"] == 5 * MiB + 3 * MiB + 13 * MiB + 1
    del a, b, c


def test_a_freed_block_is_reused_at_once_on_the_same_stream_without_waiting(gates):
    stream = torch.mlu.current_stream()
    t = torch.ones(256, device="mlu")
    gate = gates(stream)
    t.add_(t)  # queued behind the blocked host function
    address = t.data_ptr()
    marker = _pending_marker(stream)
    del t  # must not wait for the queue
    assert cnrt.queryNotifier(marker) == cnrt.cnrtErrorNotReady
    u = torch.empty(256, device="mlu")
    assert u.data_ptr() == address  # same stream: its work on the block comes first
    u.fill_(5)
    assert cnrt.queryNotifier(marker) == cnrt.cnrtErrorNotReady
    gate.set()
    torch.mlu.synchronize()
    assert u.cpu().tolist() == [5.0] * 256


def test_a_free_block_serves_its_own_stream_only(gates):
    default = torch.mlu.current_stream()
    side = torch.mlu.Stream()
    t = torch.empty(5 * MiB, dtype=torch.uint8, device="mlu")
    gate = gates(default)
    t.fill_(1)
    address = t.data_ptr()
    del t  # its 20 MiB segment is free again, but the default queue has not run the fill yet
    with torch.mlu.stream(side):
        x = torch.empty(5 * MiB, dtype=torch.uint8, device="mlu")
    assert x.data_ptr() != address and torch.mlu.memory_reserved() == 40 * MiB
    gate.set()
    default.synchronize()
    with torch.mlu.stream(side):
        y = torch.empty(16 * MiB, dtype=torch.uint8, device="mlu")  # more than the 15 MiB left of side's segment
    assert y.data_ptr() != address  # an idle default stream's block still serves it alone (torch's rule)
    assert torch.mlu.memory_reserved() == (20 + 20 + 16) * MiB  # y: a segment of its own
    del x, y
    torch.mlu.empty_cache()
    with torch.mlu.stream(side):
        z = torch.empty(16 * MiB, dtype=torch.uint8, device="mlu")  # released segments are anyone's again
    assert torch.mlu.memory_reserved() == 16 * MiB
    del z


def test_two_threads_on_their_own_streams_never_share_a_block():
    """Cambricon's test_cudnn_multiple_threads_same_device: each thread's tensors were made on the default stream
    and used and freed on its own; the other thread must not be handed their blocks while that work is queued
    (mlusim's racecheck found the two convolutions writing and reading the same bytes)."""
    weight = torch.ones((1, 1, 2, 2), device="mlu")
    iterations, size = 60, 256
    for _ in range(3):
        results = {t: torch.ones((1, 1, size, size), device="mlu") for t in range(2)}
        barrier = threading.Barrier(2)

        def work(t):
            stream = torch.mlu.Stream()
            torch.mlu.synchronize()
            barrier.wait()
            with torch.mlu.stream(stream):
                for _ in range(iterations):
                    results[t] = torch.nn.functional.conv2d(results[t], weight)
                    results[t].div_(4.0)
            torch.mlu.synchronize()

        threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        for t in range(2):
            assert results[t].sum().item() == (size - iterations) ** 2


def test_record_stream_keeps_a_block_until_the_other_stream_is_done(gates):
    side = torch.mlu.Stream()
    t = torch.ones(256, device="mlu")
    gate = gates(side)
    side.wait_stream(torch.mlu.current_stream())  # the fill of t (default stream) before its use on `side`
    with torch.mlu.stream(side):
        t.add_(t)
    t.record_stream(side)
    address = t.data_ptr()
    del t
    u = torch.empty(256, device="mlu")  # same stream as the freed block, but the block is still used on `side`
    assert u.data_ptr() != address
    assert torch.mlu.memory_stats()["active.all.current"] == 2  # the recorded block is still active
    gate.set()
    side.synchronize()
    v = torch.empty(256, device="mlu")
    assert v.data_ptr() == address


def test_peaks_reset_and_accumulated_stats():
    a = torch.empty(10 * MiB, dtype=torch.uint8, device="mlu")
    del a
    assert torch.mlu.max_memory_allocated() == 10 * MiB and torch.mlu.memory_allocated() == 0
    torch.mlu.reset_peak_memory_stats()
    assert torch.mlu.max_memory_allocated() == 0
    assert torch.mlu.max_memory_reserved() == torch.mlu.memory_reserved() == 10 * MiB
    stats = torch.mlu.memory_stats()
    assert stats["allocated_bytes.all.allocated"] == stats["allocated_bytes.all.freed"] == 10 * MiB
    torch.mlu.reset_accumulated_memory_stats()
    assert torch.mlu.memory_stats()["allocated_bytes.all.allocated"] == 0


def test_empty_cache_gives_segments_back_to_cnrt():
    free_before, total = torch.mlu.mem_get_info()
    assert (free_before, total) == cnrt.memGetInfo()
    a = torch.empty(30 * MiB, dtype=torch.uint8, device="mlu")
    b = torch.empty(1000, device="mlu")
    del a
    assert torch.mlu.mem_get_info()[0] < free_before - 30 * MiB
    torch.mlu.empty_cache()
    assert torch.mlu.memory_reserved() == 2 * MiB  # b's segment stays
    del b
    torch.mlu.empty_cache()
    assert torch.mlu.memory_reserved() == 0
    assert torch.mlu.mem_get_info() == (free_before, total)


def test_out_of_memory_frees_the_cache_once_then_raises_with_the_sizes():
    devices.configure(memory=64 * MiB)
    a = torch.empty(40 * MiB, dtype=torch.uint8, device="mlu")
    del a  # 40 MiB stay cached
    b = torch.empty(50 * MiB, dtype=torch.uint8, device="mlu")  # fits only after the cache is released
    stats = torch.mlu.memory_stats()
    assert stats["num_alloc_retries"] == 1 and stats["num_ooms"] == 0
    with pytest.raises(torch.OutOfMemoryError, match=r"Tried to allocate 100\.00 MiB\. MLU 0 has a total capacity "
                                                     r"of 64\.00 MiB") as error:
        torch.empty(100 * MiB, dtype=torch.uint8, device="mlu")
    assert "50.00 MiB is allocated by PyTorch" in str(error.value)
    assert torch.mlu.memory_stats()["num_ooms"] == 1
    del b
    c = torch.ones(60 * MiB // 4, device="mlu")  # recovers: the memory is usable again
    assert c[-1].item() == 1.0
    assert isinstance(error.value, torch.mlu.OutOfMemoryError)


def test_torch_accelerator_memory_functions_see_the_allocator():
    a = torch.empty(3000, dtype=torch.uint8, device="mlu")
    assert torch.accelerator.memory_allocated() == torch.mlu.memory_allocated() == 3072
    assert torch.accelerator.memory_reserved() == 2 * MiB
    assert torch.accelerator.memory_stats()["allocation.all.current"] == 1
    del a
    torch.accelerator.empty_cache()
    assert torch.mlu.memory_reserved() == 0


def test_summary_and_snapshot():
    a = torch.empty(1000, device="mlu")
    summary = torch.mlu.memory_summary()
    assert "Allocated memory" in summary and "MLU reserved memory" in summary and "3.91 KiB" in summary
    (segment,) = torch.mlu.memory_snapshot()
    assert segment["total_size"] == 2 * MiB and segment["segment_type"] == "small"
    assert segment["blocks"][0] == {"address": a.data_ptr(), "size": 4096, "requested_size": 4000,
                                    "state": "active_allocated", "frames": []}  # (no memory history: no stack)


@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.booleans(), st.integers(1, 3 * MiB)), min_size=1, max_size=25))
def test_live_tensors_never_overlap_and_keep_their_bytes(steps):
    live = []
    for index, (allocate, nbytes) in enumerate(steps):
        if allocate or not live:
            live.append((torch.empty(nbytes, dtype=torch.uint8, device="mlu").fill_(index % 251), index % 251))
        else:
            live.pop(index % len(live))
    spans = sorted((t.data_ptr(), t.data_ptr() + t.numel()) for t, _ in live)
    assert all(end <= start for (_, end), (start, _) in zip(spans, spans[1:]))
    rounded = sum(max(512, -(-t.numel() // 512) * 512) for t, _ in live)
    large = sum(t.numel() > MiB for t, _ in live)  # a large block may keep a remainder of up to 1 MiB
    assert rounded <= torch.mlu.memory_allocated() <= rounded + large * MiB
    assert torch.mlu.memory_allocated() <= torch.mlu.memory_reserved()
    assert all(int(t.min().item()) == int(t.max().item()) == value for t, value in live)
    live.clear()
    assert torch.mlu.memory_allocated() == 0



def test_caching_allocator_alloc_gives_raw_device_memory():
    address = torch.mlu.caching_allocator_alloc(1000)
    assert cnrt.pointerGetAttributes(address).type == cnrt.cnrtMemTypeDevice
    assert torch.mlu.memory_allocated() == 1024
    cnrt.memset(address, 7, 1000)  # usable with cnrt directly
    torch.mlu.caching_allocator_delete(address)
    assert torch.mlu.memory_allocated() == 0
    with pytest.raises(ValueError, match="was not allocated by caching_allocator_alloc"):
        torch.mlu.caching_allocator_delete(address)
    with pytest.raises(ValueError, match="non-negative int"):
        torch.mlu.caching_allocator_alloc(-1)
    side = torch.mlu.Stream()
    on_side = torch.mlu.caching_allocator_alloc(512, stream=side)
    torch.mlu.caching_allocator_delete(on_side)


def test_releasing_the_cache_never_waits_for_the_device_under_the_allocator_lock(gates):
    # cnrtFree waits for queued work on a segment; if that work frees a tensor (here a host function drops the last
    # reference on the queue's worker thread), the allocator must not be holding its lock meanwhile
    import threading
    big = torch.empty(5 * MiB, dtype=torch.uint8, device="mlu")
    holder = [torch.empty(1024, device="mlu")]
    gate = gates()
    cnrt.invokeHostFunc(torch.mlu.current_stream().mlu_stream, lambda _: holder.clear(), None)
    big.fill_(1)  # queued behind the gate: its segment stays pinned until the gate opens
    del big
    releaser = threading.Thread(target=torch.mlu.empty_cache)
    releaser.start()
    threading.Timer(0.3, gate.set).start()
    releaser.join(timeout=60)
    assert not releaser.is_alive()
    assert holder == [] and torch.mlu.memory_reserved() == 2 * MiB  # the small segment of the freed tensor


def test_memory_stats_have_the_keys_of_torch_accelerator():
    a = torch.empty(100, device="mlu")
    assert set(torch.mlu.memory_stats()) == set(torch.accelerator.memory_stats())
    assert torch.mlu.memory_stats() == torch.accelerator.memory_stats()
    del a


@pytest.fixture
def uncached(monkeypatch):
    """PYTORCH_NO_MLU_MEMORY_CACHING=1 on a fresh machine (the allocator reads it when the device table is built)."""
    monkeypatch.setenv("PYTORCH_NO_MLU_MEMORY_CACHING", "1")
    devices.configure(memory=256 * MiB)
    yield
    monkeypatch.delenv("PYTORCH_NO_MLU_MEMORY_CACHING")
    devices.configure(memory=256 * MiB)


def test_without_the_cache_each_tensor_is_its_own_cnrt_allocation(uncached, gates):
    free_before = cnrt.memGetInfo()[0]
    t = torch.ones(1000, device="mlu")
    assert torch.mlu.memory_allocated() == torch.mlu.memory_reserved() == 4000
    assert cnrt.memGetInfo()[0] < free_before
    gate = gates()
    t.add_(t)
    marker = _pending_marker(torch.mlu.current_stream())
    del t  # cnrtMemFreeAsync on the stream: no wait
    assert cnrt.queryNotifier(marker) == cnrt.cnrtErrorNotReady
    assert torch.mlu.memory_reserved() == 0
    gate.set()
    torch.mlu.synchronize()
    assert cnrt.memGetInfo()[0] == free_before
    with pytest.raises(torch.OutOfMemoryError, match="Tried to allocate 1.00 GiB"):
        torch.empty(1 << 30, dtype=torch.uint8, device="mlu")


def test_without_the_cache_the_simulator_sees_each_tensors_bounds(uncached):
    import cnnl
    from torch_mlu.ops import _core
    t = torch.zeros(4, device="mlu")
    torch.ones(4, device="mlu")  # a neighbour
    too_long = _core.desc_for((8,), (1,), torch.float32)  # a kernel bug: twice the tensor's length
    with pytest.raises(cnnl.CnnlError, match="past the end"):
        cnnl.fill_v3(_core.handle(t), cnnl.CNNL_POINTER_MODE_HOST, 1.0, too_long, t.data_ptr())


def test_after_the_exit_hook_frees_without_the_gil_stay_out_of_python():
    """At exit, torch's autograd device thread may still free the tensors of a backward pass that has just returned;
    once the interpreter finalizes, its asking for the GIL would end it through noexcept deleters (std::terminate).
    torch_mlu's atexit hook closes Python to frees from threads without the GIL (torch lets go of the GIL to free a
    tensor, on any thread): before it, steps leave nothing allocated; after it, their blocks stay allocated; the
    process exits cleanly."""
    import json
    import subprocess
    import sys
    script = (
        "import json, torch, torch_mlu\n"
        "from torch_mlu import _state\n"
        "x = torch.randn(256, 256, device='mlu', requires_grad=True)\n"
        "three = torch.full((256, 256), 3.0, device='mlu')\n"
        "def step():\n"
        "    (x.exp() * three).tanh().sum().backward()\n"
        "    x.grad = None\n"
        "    torch.mlu.synchronize()\n"
        "step()\n"
        "before = torch.mlu.memory_allocated()\n"
        "step()\n"
        "steady = torch.mlu.memory_allocated() == before\n"
        "_state.C.quiesce_at_exit()\n"
        "step()\n"
        "print(json.dumps({'steady': steady, 'kept': torch.mlu.memory_allocated() - before}))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout.splitlines()[-1])
    assert facts["steady"]
    assert facts["kept"] > 0  # an intermediate the engine frees without the GIL was not given back after the hook


@pytest.mark.parametrize("cache", ["cached", "uncached"])
def test_a_per_process_memory_fraction_bounds_what_the_allocator_reserves(cache, request):
    """Cambricon's test_caching_allocator test_set_per_process_memory_fraction, re-expressed for both allocators."""
    if cache == "uncached":
        request.getfixturevalue("uncached")
    else:
        devices.configure(memory=256 * MiB)
    with pytest.raises(TypeError, match="Invalid type"):
        torch.mlu.set_per_process_memory_fraction(1)
    for bad in (-0.1, 2.0):
        with pytest.raises(ValueError, match="Invalid fraction value"):
            torch.mlu.set_per_process_memory_fraction(bad)
    assert torch.mlu.get_per_process_memory_fraction() == 1.0
    kept = torch.ones(1024, device="mlu")
    torch.mlu.set_per_process_memory_fraction(0.5, 0)
    assert torch.mlu.get_per_process_memory_fraction(0) == 0.5
    fits = torch.empty(100 * MiB - torch.mlu.max_memory_reserved(), dtype=torch.int8, device="mlu")
    del fits
    torch.mlu.empty_cache()
    with pytest.raises(torch.OutOfMemoryError, match=r"may reserve 128\.00 MiB of it \(set_per_process_memory"):
        torch.empty(128 * MiB, dtype=torch.int8, device="mlu")
    assert cnrt.memGetInfo()[0] > 200 * MiB  # refused by the fraction, not by the device
    kept.fill_(2)
    assert (kept == 2).all()
    torch.mlu.set_per_process_memory_fraction(1.0)
    big = torch.empty(200 * MiB, dtype=torch.int8, device="mlu")
    assert big.numel() == 200 * MiB


def test_a_request_of_an_exabyte_or_more_is_refused_outright():
    """Cambricon's test_out_of_memory: torch's allocators refuse 2^60 bytes and more with their own message."""
    kept = torch.zeros(1024, device="mlu")
    with pytest.raises(torch.OutOfMemoryError, match="Tried to allocate more than 1EB memory"):
        torch.empty(1024 * 1024 * 1024 * 8000000000, dtype=torch.int8, device="mlu")
    with pytest.raises(torch.OutOfMemoryError, match=r"Tried to allocate 500\.00 GiB"):
        torch.empty(1024 * 1024 * 1024 * 500, dtype=torch.int8, device="mlu")
    kept.fill_(1)
    assert (kept == 1).all()


def test_snapshot_segments_carry_torch_s_keys():
    t = torch.ones(1000, device="mlu")
    segments = torch.mlu.memory_snapshot()
    assert segments and all(s["is_expandable"] is False for s in segments)
    assert sum(s["allocated_size"] for s in segments) == torch.mlu.memory_allocated() > 0
    del t
