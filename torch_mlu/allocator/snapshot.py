"""torch.mlu.memory_snapshot: the segments of a device with their blocks (torch.cuda.memory_snapshot's shape,
reduced)."""
from __future__ import annotations

from .blocks import Block, DeviceCache, Segment


def segments_with_blocks(cache: DeviceCache) -> list[dict]:
    """Segments with their blocks, for one device's cache (the caller holds the allocator's lock)."""
    result = []
    for segment in cache.segments.values():
        blocks = []
        block = _first_block(cache, segment)
        while block is not None:
            blocks.append({"address": block.address, "size": block.size,
                           "requested_size": block.requested if block.allocated else 0,
                           "state": "active_allocated" if block.allocated else "inactive"})
            block = block.next
        result.append({"device": cache.device, "address": segment.address, "total_size": segment.size,
                       "segment_type": "small" if segment.small else "large", "blocks": blocks,
                       "allocated_size": sum(b["size"] for b in blocks if b["state"] == "active_allocated"),
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
