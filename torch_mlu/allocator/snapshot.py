"""torch.mlu.memory_snapshot: the segments of a device with their blocks (torch.cuda.memory_snapshot's shape),
with the stacks the memory history kept (history.py)."""
from __future__ import annotations

from .blocks import Block, DeviceCache, Segment


def segments_with_blocks(cache: DeviceCache, frames_of) -> list[dict]:
    """Segments with their blocks, for one device's cache (the caller holds the allocator's lock); `frames_of`
    turns a kept stack into its frames. A freed block still waiting for the streams it was recorded on is
    "active_pending_free"."""
    waiting = {id(block) for block, _ in cache.pending}
    result = []
    for segment in cache.segments.values():
        blocks = []
        block = _first_block(cache, segment)
        while block is not None:
            state = "active_allocated" if block.allocated else \
                "active_pending_free" if id(block) in waiting else "inactive"
            blocks.append({"address": block.address, "size": block.size, "state": state,
                           "requested_size": block.requested if state != "inactive" else 0,
                           "frames": frames_of(block.stack)})
            block = block.next
        result.append({"device": cache.device, "address": segment.address, "total_size": segment.size,
                       "stream": segment.stream, "segment_type": "small" if segment.small else "large",
                       "blocks": blocks, "frames": frames_of(segment.stack),
                       "allocated_size": sum(b["size"] for b in blocks if b["state"] == "active_allocated"),
                       "active_size": sum(b["size"] for b in blocks if b["state"].startswith("active_")),
                       "requested_size": sum(b["requested_size"] for b in blocks),
                       "is_expandable": False})  # (segments never grow: no expandable_segments)
    return result


def _first_block(cache: DeviceCache, segment: Segment) -> Block | None:
    candidates = [b for b in cache.allocated.values() if b.segment is segment]
    candidates += [b for pool in (cache.small, cache.large) for b in pool.blocks.values() if b.segment is segment]
    candidates += [b for b, _ in cache.pending if b.segment is segment]
    candidates += [b for blocks in cache.parked.values() for b in blocks if b.segment is segment]
    if not candidates:
        return None
    block = candidates[0]
    while block.prev is not None:
        block = block.prev
    return block
