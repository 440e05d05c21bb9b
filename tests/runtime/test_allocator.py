"""The GDRAM allocator: alignment, exact accounting, fresh addresses for every block (a stale pointer is always a use
after free), capacity reuse, coalescing, wrapping, exhaustion, poison."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

from mlusim.errors import (DoubleFreeFault, NegativeOffsetFault, NotBlockStartFault, NullPointerFault,
                           OutOfBoundsFault, OutOfMemoryFault, UnknownAddressFault, UseAfterFreeFault)
from mlusim import memory as gdram
from mlusim.memory import ALIGNMENT, BACKING_ALIGNMENT, GUARD, AddressSpace, footprint

BASE = 1 << 40


def space(capacity=1 << 20):
    return AddressSpace(0, BASE, capacity)


def test_blocks_are_aligned_and_disjoint_and_accounting_is_exact():
    memory = space()
    blocks = [memory.allocate(n) for n in (1, 100, 256, 257, 4096)]
    assert all(b.start % ALIGNMENT == 0 for b in blocks)
    ends = sorted((b.start, b.start + b.size) for b in blocks)
    assert all(a[1] < b[0] for a, b in zip(ends, ends[1:]))
    free, total = memory.info()
    assert total == 1 << 20
    assert free == total - sum(footprint(n) for n in (1, 100, 256, 257, 4096))


def test_a_freed_blocks_capacity_is_reused_but_its_addresses_are_not():
    """malloc/free/malloc of the same size, many times over the capacity: each block gets fresh addresses, so every
    earlier pointer is a use after free naming its block and the free, however often the capacity turned over."""
    memory = space(4 * footprint(1000))
    stale = []
    for _ in range(40):
        block = memory.allocate(1000)
        assert all(not (old <= block.start < old + footprint(1000)) for old in stale)
        memory.free(block.start)
        stale.append(block.start)
    assert memory.info()[0] == memory.capacity and memory.wraps == 0
    for number, old in enumerate(stale, 1):
        for offset, nbytes in ((0, 4), (996, 4), (500, 0)):
            with pytest.raises(UseAfterFreeFault, match=rf"0x{old:x} \(size 1000, allocation #{number}\), "
                                                        r"which cnrtFree freed"):
                memory.resolve(old + offset, nbytes)


def test_a_block_freed_just_before_the_next_one_is_not_taken_again():
    """Freeing the block handed out last merges its range with the untouched rest: the next block still starts
    after it."""
    memory = space()
    first = memory.allocate(1000)
    memory.free(first.start)
    second = memory.allocate(1000)
    assert second.start == first.start + footprint(1000)
    with pytest.raises(UseAfterFreeFault):
        memory.resolve(first.start, 4)


def test_addresses_wrap_to_the_lowest_free_range_only_when_the_span_is_spent():
    """A span of 16 footprints: 15 blocks of one footprint fit after the first guard; the 16th allocation wraps to
    the lowest free address (reused: the documented limit), later ones go on from there."""
    size = 1000
    memory = AddressSpace(0, BASE, 4 * footprint(size), span=GUARD + 15 * footprint(size))
    starts = []
    for _ in range(15):
        starts.append(memory.allocate(size).start)
        memory.free(starts[-1])
    assert starts == [BASE + GUARD + i * footprint(size) for i in range(15)] and memory.wraps == 0
    keep = memory.allocate(size)
    assert keep.start == starts[0] and memory.wraps == 1
    assert memory.resolve(starts[0] + 8, 4) == (keep, 8)
    with pytest.raises(UseAfterFreeFault):
        memory.resolve(starts[1] + 8, 4)  # freed, not handed out again yet
    assert memory.allocate(size).start == starts[1]


def test_a_use_after_a_free_older_than_the_history_is_still_a_use_after_free(monkeypatch):
    monkeypatch.setattr(gdram, "FREED_HISTORY", 4)
    memory = space()
    blocks = [memory.allocate(300) for _ in range(10)]
    for block in blocks:
        memory.free(block.start)
    with pytest.raises(UseAfterFreeFault, match="which cnrtFree freed"):
        memory.resolve(blocks[-1].start + 8, 4)
    with pytest.raises(UseAfterFreeFault, match="older than the last 4 frees"):
        memory.resolve(blocks[0].start + 8, 4)
    with pytest.raises(UnknownAddressFault):
        memory.resolve(blocks[-1].start + (1 << 30), 4)  # never handed out


@given(st.lists(st.tuples(st.booleans(), st.integers(1, 5000), st.integers(0, 1 << 20)), max_size=60))
def test_no_freed_address_is_handed_out_again_and_each_stale_pointer_is_caught(operations):
    memory = space(64 * 1024)
    live, freed = [], []
    for allocate, size, pick in operations:
        if allocate or not live:
            try:
                block = memory.allocate(size)
            except OutOfMemoryFault:
                continue
            assert all(block.start + block.footprint <= old.start or old.start + old.footprint <= block.start
                       for old in freed)
            live.append(block)
        else:
            block = live.pop(pick % len(live))
            memory.free(block.start)
            freed.append(block)
        if freed:
            old = freed[pick % len(freed)]
            with pytest.raises(UseAfterFreeFault, match=f"allocation #{old.serial}"):
                memory.resolve(old.start + pick % old.size, 1)


def test_neighbouring_holes_coalesce_so_the_whole_capacity_is_usable_again():
    memory = space(64 * 1024)
    blocks = [memory.allocate(4000) for _ in range(10)]
    for block in blocks[::2]:
        memory.free(block.start)
    assert memory.fragments() > 1
    for block in blocks[1::2]:
        memory.free(block.start)
    assert memory.fragments() == 1
    assert memory.info()[0] == 64 * 1024
    whole = memory.allocate(64 * 1024 - 2 * ALIGNMENT)
    assert whole.size == 64 * 1024 - 2 * ALIGNMENT


def test_exhaustion_is_out_of_memory_and_leaves_state_intact():
    memory = space(16 * 1024)
    memory.allocate(8 * 1024)
    before = memory.info()
    with pytest.raises(OutOfMemoryFault, match=r"7936 of 16384 bytes free"):
        memory.allocate(8 * 1024)
    assert memory.info() == before


def test_fresh_blocks_are_poisoned():
    block = space().allocate(64)
    assert (block.data == 0xFF).all()
    assert np.isnan(block.data.view(np.float32)).all()
    assert np.isnan(block.data.view(np.float16).astype(np.float32)).all()


@pytest.mark.parametrize("poison", [True, False])
def test_host_bytes_of_blocks_start_on_a_cache_line(poison):
    """Kernels read device memory through numpy views of a block's bytes: those start on a 64-byte boundary of
    host memory (numpy alone gives 16), whatever the size, with exactly the block's size."""
    memory = AddressSpace(0, BASE, 1 << 24, poison=poison)
    for nbytes in (1, 64, 1000, 200_000, 3 << 20):
        data = memory.allocate(nbytes).data
        assert data.ctypes.data % BACKING_ALIGNMENT == 0 and data.size == nbytes
        assert (data == (0xFF if poison else 0)).all()


def test_poison_can_be_turned_off():
    memory = AddressSpace(0, BASE, 1 << 20, poison=False)
    assert (memory.allocate(64).data == 0).all()


def test_each_bad_address_gets_its_own_fault():
    memory = space()
    block = memory.allocate(1000)
    follower = memory.allocate(1000)
    with pytest.raises(OutOfBoundsFault, match="past the end"):
        memory.resolve(block.start + 900, 200)
    with pytest.raises(NegativeOffsetFault, match="before the start"):
        memory.resolve(follower.start - 8, 4)
    with pytest.raises(NotBlockStartFault):
        memory.free(block.start + 8)
    memory.free(block.start)
    with pytest.raises(UseAfterFreeFault):
        memory.resolve(block.start + 4, 4)
    with pytest.raises(DoubleFreeFault):
        memory.free(block.start)
    with pytest.raises(UnknownAddressFault):
        memory.resolve(BASE + (1 << 30), 4)


def test_a_zero_length_range_may_end_a_block():
    memory = space()
    block = memory.allocate(64)
    assert memory.resolve(block.start + 64, 0) == (block, 64)


@given(st.lists(st.tuples(st.booleans(), st.integers(1, 20000)), max_size=60))
def test_random_alloc_free_sequences_keep_the_invariants(operations):
    memory = space(256 * 1024)
    live = []
    for allocate, size in operations:
        if allocate or not live:
            try:
                live.append(memory.allocate(size))
            except OutOfMemoryFault:
                pass
        else:
            memory.free(live.pop(size % len(live)).start)
        spans = sorted((b.start, b.start + b.footprint) for b in live)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
        assert memory.info()[0] == 256 * 1024 - sum(b.footprint for b in live)
    for block in live:
        memory.free(block.start)
    assert memory.fragments() == 1 and memory.info()[0] == 256 * 1024


def test_lookups_after_the_remembered_block_was_freed_or_passed_find_the_right_block():
    """resolve remembers the block it found last; a freed block, an address past it or before it is looked up
    again (never answered from the stale block)."""
    memory = space()
    first = memory.allocate(1000)
    second = memory.allocate(1000)
    assert memory.resolve(first.start + 10, 4) == (first, 10)
    assert memory.resolve(second.start + 20, 4) == (second, 20)  # past the remembered block
    assert memory.resolve(first.start, 4) == (first, 0)  # before it
    with pytest.raises(OutOfBoundsFault, match="past the end"):
        memory.resolve(first.start + 999, 2)  # inside the remembered block, running past it
    memory.free(first.start)
    with pytest.raises(UseAfterFreeFault):
        memory.resolve(first.start + 10, 4)
    fresh = memory.allocate(500)  # the freed range is not handed out again
    assert fresh.start > second.start
    with pytest.raises(UseAfterFreeFault):
        memory.resolve(first.start + 10, 4)
    assert memory.resolve(fresh.start + 10, 4) == (fresh, 10)


@given(st.lists(st.tuples(st.sampled_from(["allocate", "free", "resolve"]), st.integers(0, 1 << 30)),
                max_size=80))
def test_resolve_agrees_with_a_search_of_the_live_blocks(operations):
    memory = space(64 * 1024)
    live = []
    for action, number in operations:
        if action == "allocate":
            try:
                live.append(memory.allocate(1 + number % 5000))
            except OutOfMemoryFault:
                pass
        elif action == "free" and live:
            memory.free(live.pop(number % len(live)).start)
        else:
            address = BASE + number % (64 * 1024 + 1024)
            nbytes = number % 64
            holder = [b for b in live if b.start <= address and address + nbytes <= b.start + b.size
                      and (address < b.start + b.size or nbytes == 0)]
            if holder:
                assert memory.resolve(address, nbytes) == (holder[0], address - holder[0].start)
            else:
                with pytest.raises((OutOfBoundsFault, NegativeOffsetFault, UseAfterFreeFault, UnknownAddressFault,
                                    NullPointerFault)):
                    memory.resolve(address, nbytes)


def test_a_free_waits_until_every_pin_is_dropped_however_many_go_at_once():
    """Queued work drops the pins of a block its operands share in one step (unpin with a count): a free waiting
    for the block goes on only when the last pin is gone."""
    import threading

    memory = space()
    block = memory.allocate(4096)
    for offset in (0, 1024, 2048):
        assert memory.acquire(block.start + offset, 16) == (block, offset)
    freed = threading.Event()
    waiter = threading.Thread(target=lambda: (memory.free(block.start), freed.set()))
    waiter.start()
    memory.unpin(block, 2)
    assert not freed.wait(0.2)
    memory.unpin(block)
    assert freed.wait(10)
    waiter.join(10)
    assert block.freed and block.pins == 0 and memory.info()[0] == memory.capacity
