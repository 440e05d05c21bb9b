"""The caching allocator's settings (torch_mlu/allocator/settings.py): PYTORCH_MLU_ALLOC_CONF's syntax and checks,
and what each option does to the blocks torch.mlu.memory_stats counts."""
import pytest
import torch
from hypothesis import given, settings as hypothesis_settings, strategies as st

from torch_mlu.allocator.settings import LARGE_BUFFER, MIB, AllocatorSettings, next_division

ACTIVE = "active_bytes.all.allocated"


def power_of_two_steps(size: int, divisions: int) -> int:
    """The reference rounding: the next of `divisions` equal steps between the powers of two around `size`."""
    upper = 1
    while upper < size:
        upper *= 2
    if upper == size:
        return size
    step, rounded = upper // 2 // divisions, upper // 2
    while rounded < size:
        rounded += step
    return rounded


@pytest.fixture(autouse=True)
def default_settings():
    yield
    torch.mlu.memory._set_allocator_settings("")


def allocated_by(numel: int) -> int:
    before = torch.mlu.memory_stats()[ACTIVE]
    kept = torch.empty(numel, device="mlu")
    grown = torch.mlu.memory_stats()[ACTIVE] - before
    del kept
    return grown


def test_roundup_power2_divisions_rounds_each_request():
    nbytes = 84 * MIB
    assert allocated_by(nbytes // 4) == nbytes
    torch.mlu.memory._set_allocator_settings("roundup_power2_divisions:4")
    assert allocated_by(nbytes // 4) == power_of_two_steps(nbytes, 4) == 96 * MIB
    torch.mlu.memory._set_allocator_settings("garbage_collection_threshold:0.5")  # names no rounding: reset
    assert allocated_by(nbytes // 4) == nbytes


def test_roundup_power2_divisions_per_size_interval():
    torch.mlu.memory._set_allocator_settings(
        "garbage_collection_threshold:0.5,roundup_power2_divisions:[64:8,128:2,256:2,512:2,1024:1,>:1]")
    assert allocated_by(21 * MIB) == power_of_two_steps(84 * MIB, 8) == 88 * MIB  # (numel: 84 MiB of floats)
    assert allocated_by(100 * MIB) == power_of_two_steps(400 * MIB, 2) == 512 * MIB
    settings = AllocatorSettings.parse("roundup_power2_divisions:[64:8,128:2,256:2,512:2,1024:1,>:1]")
    assert settings.roundup_divisions == [8] * 7 + [2] * 3 + [1] * 6


@hypothesis_settings(max_examples=200, deadline=None)
@given(size=st.integers(513, 1 << 40), exponent=st.integers(1, 6))
def test_next_division_is_the_reference_rounding(size, exponent):
    assert next_division(size, 1 << exponent) == power_of_two_steps(size, 1 << exponent)


@pytest.mark.parametrize("text, message", [
    ("foo:1,bar:2", "Unrecognized CachingAllocator option: foo"),
    ("garbage_collection_threshold:1.2", "garbage_collect_threshold too big"),
    ("garbage_collection_threshold:0", "garbage_collect_threshold too small"),
    ("max_split_size_mb:2", "max_split_size_mb too small, must be > 20"),
    ("roundup_power2_divisions:3", "divisons has to be power of 2"),
    ("roundup_power2_divisions:[48:2]", "intervals have to be power of 2"),
    ("roundup_power2_divisions:[64:2", "ends too early"),
    ("max_split_size_mb", "ends too early"),
    ("max_split_size_mb:lots", "is not a number"),
    ("expandable_segments:maybe", "True/False"),
    ("backend:cnrtMallocAsync", "Unknown allocator backend"),
])
def test_a_bad_setting_is_refused_by_name(text, message):
    with pytest.raises(RuntimeError, match=message):
        torch.mlu.memory._set_allocator_settings(text)
    assert allocated_by(1000) == 4096  # the allocator's settings are unchanged


def test_max_split_size_keeps_large_blocks_whole():
    torch.mlu.memory.empty_cache()
    torch.mlu.memory._set_allocator_settings("max_split_size_mb:40")
    big = torch.empty(50 * MIB // 4, device="mlu")
    address = big.data_ptr()
    del big
    small = torch.empty(MIB, device="mlu")  # 4 MiB: may not take the 50 MiB block
    assert not (address <= small.data_ptr() < address + 50 * MIB)
    bigger = torch.empty(55 * MIB // 4, device="mlu")  # within 20 MiB of the cached block's size: may not, it is
    assert bigger.data_ptr() != address  # smaller than the request
    del bigger
    again = torch.empty(49 * MIB // 4, device="mlu")  # within 20 MiB below: takes it, unsplit
    assert again.data_ptr() == address
    segments = {s["address"]: s for s in torch.mlu.memory_snapshot()}
    assert len(segments[address]["blocks"]) == 1
    torch.mlu.memory._set_allocator_settings("")
    assert AllocatorSettings.parse("max_split_size_mb:40").may_serve(40 * MIB + LARGE_BUFFER, 40 * MIB) is False


def test_garbage_collection_threshold_gives_cached_segments_back():
    torch.mlu.memory.empty_cache()
    total = torch.mlu.mem_get_info()[1]
    torch.mlu.memory._set_allocator_settings("garbage_collection_threshold:0.1")
    cached = torch.empty(int(total * 0.15) // 4, device="mlu")
    address = cached.data_ptr()
    del cached  # reserved, unused: past the threshold
    assert torch.mlu.memory_reserved() > 0.1 * total
    again = torch.empty(int(total * 0.15) // 4, device="mlu")  # served by the cache: nothing to collect
    assert again.data_ptr() == address and torch.mlu.memory_reserved() > 0.1 * total
    del again
    kept = torch.empty(1024, device="mlu")  # needs a new segment: the unused ones are given back first
    assert torch.mlu.memory_reserved() < 0.1 * total
    del kept


def test_the_environment_variable_configures_the_allocator(monkeypatch):
    from torch_mlu.allocator import settings
    monkeypatch.setenv("PYTORCH_MLU_ALLOC_CONF", "roundup_power2_divisions:2")
    assert settings.from_environment().round_size(84 * MIB) == 96 * MIB
    monkeypatch.setenv("PYTORCH_MLU_ALLOC_CONF", "nonsense:1")
    with pytest.raises(RuntimeError, match="Unrecognized CachingAllocator option: nonsense"):
        settings.from_environment()


def test_a_bad_environment_variable_fails_the_first_allocation(monkeypatch):
    from torch_mlu import _state
    from torch_mlu.allocator import CachingAllocator
    monkeypatch.setenv("PYTORCH_MLU_ALLOC_CONF", "nonsense:1")
    allocator = CachingAllocator(_state.runtime.streams)  # as the process's allocator is made at import
    allocator.reset(1)
    with pytest.raises(RuntimeError, match="Unrecognized CachingAllocator option: nonsense"):
        allocator.malloc(4, 0, 0)
    allocator.configure("")
    allocator.free(allocator.malloc(4, 0, 0))


def test_settings_outlive_a_rebuilt_device_table():
    from mlusim import device as devices
    torch.mlu.memory._set_allocator_settings("roundup_power2_divisions:4")
    devices.configure(memory=1 << 30)
    assert allocated_by(21 * MIB) == 96 * MIB
