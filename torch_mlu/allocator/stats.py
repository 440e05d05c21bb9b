"""The caching allocator's statistics, in torch.cuda.memory_stats' names and shapes: for each name, (current, peak,
allocated, freed) for all, small_pool and large_pool, kept in one flat list per device (the allocation path updates
a few entries in straight-line code)."""
from __future__ import annotations

#: stat names of torch.cuda.memory_stats that are arrays over (all, small_pool, large_pool)
ARRAY_STATS = ("allocation", "segment", "active", "inactive_split", "allocated_bytes", "reserved_bytes",
               "active_bytes", "inactive_split_bytes", "requested_bytes")
SCALAR_STATS = ("num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc", "num_device_free",
                "max_split_size")
POOLS = ("all", "small_pool", "large_pool")


def format_size(nbytes: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(nbytes) < 1024 or unit == "GiB":
            return f"{nbytes:.2f} {unit}" if unit != "B" else f"{nbytes} B"
        nbytes /= 1024
    return f"{nbytes:.2f} GiB"


_FIELDS = ("current", "peak", "allocated", "freed")
_STAT = 12                      # ints per statistic: 3 pools x 4 fields
SMALL, LARGE = 4, 8             # offsets of the small and large pool within a statistic
(ALLOCATION, SEGMENT, ACTIVE, INACTIVE_SPLIT, ALLOCATED_BYTES, RESERVED_BYTES, ACTIVE_BYTES, INACTIVE_SPLIT_BYTES,
 REQUESTED_BYTES) = (i * _STAT for i in range(len(ARRAY_STATS)))


def increase(values: list, stat: int, pool: int, amount: int) -> None:
    """values[stat] (all) and values[stat + pool] grow by `amount`."""
    current = values[stat] + amount
    values[stat] = current
    values[stat + 2] += amount
    if current > values[stat + 1]:
        values[stat + 1] = current
    i = stat + pool
    current = values[i] + amount
    values[i] = current
    values[i + 2] += amount
    if current > values[i + 1]:
        values[i + 1] = current


def decrease(values: list, stat: int, pool: int, amount: int) -> None:
    values[stat] -= amount
    values[stat + 3] += amount
    values[stat + pool] -= amount
    values[stat + pool + 3] += amount


class DeviceStats:
    """The allocator statistics of one device.

    "active" (blocks allocated or still used by a stream) is "allocation" plus the freed blocks waiting for the
    streams they were recorded on (record_stream), so it costs nothing while no block waits; its peak is kept
    apart for the moments when some do."""

    def __init__(self):
        self.values = [0] * (_STAT * len(ARRAY_STATS))
        self.counters = dict.fromkeys(SCALAR_STATS, 0)
        self.waiting = [0] * _STAT        # (count, bytes, -, -) of waiting blocks for all, small, large
        self.active_peaks = [0] * _STAT   # (count peak, bytes peak, -, -) while blocks waited

    def wait(self, pool: int, nbytes: int, sign: int) -> None:
        """A freed block starts (sign 1) or stops (sign -1) waiting for other streams."""
        for i in (0, pool):
            self.waiting[i] += sign
            self.waiting[i + 1] += sign * nbytes

    def note_active_peak(self, pool: int) -> None:
        """After an allocation while blocks wait: the active peaks may have grown."""
        values, waiting, peaks = self.values, self.waiting, self.active_peaks
        for i in (0, pool):
            peaks[i] = max(peaks[i], values[ALLOCATION + i] + waiting[i])
            peaks[i + 1] = max(peaks[i + 1], values[ALLOCATED_BYTES + i] + waiting[i + 1])

    def reset_peak(self) -> None:
        values = self.values
        for i in range(0, len(values), 4):
            values[i + 1] = values[i]
        for i in (0, SMALL, LARGE):
            self.active_peaks[i] = values[ALLOCATION + i] + self.waiting[i]
            self.active_peaks[i + 1] = values[ALLOCATED_BYTES + i] + self.waiting[i + 1]

    def reset_accumulated(self) -> None:
        values = self.values
        for i in range(0, len(values), 4):
            values[i + 2] = values[i + 3] = 0
        for name in ("num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc",
                     "num_device_free"):
            self.counters[name] = 0

    def rows(self) -> dict:
        """{name: [[current, peak, allocated, freed] for all, small, large], counter: value}."""
        values, waiting, peaks = self.values, self.waiting, self.active_peaks
        result = {}
        for k, name in enumerate(ARRAY_STATS):
            result[name] = [values[k * _STAT + p:k * _STAT + p + 4] for p in (0, SMALL, LARGE)]
        for name, source, field in (("active", "allocation", 0), ("active_bytes", "allocated_bytes", 1)):
            rows = []
            for row, p in zip(result[source], (0, SMALL, LARGE)):
                current, peak, allocated, freed = row
                rows.append([current + waiting[p + field], max(peak, peaks[p + field]), allocated,
                             freed - waiting[p + field]])
            result[name] = rows
        result.update(self.counters)
        return result

    def nested(self) -> dict:
        """torch.cuda.memory_stats_as_nested_dict's form. There are no oversize blocks: every block may be split
        (torch's max_split_size is unlimited by default)."""
        result = {name: {pool: dict(zip(_FIELDS, row)) for pool, row in zip(POOLS, rows)}
                  for name, rows in self.rows().items() if name in ARRAY_STATS}
        for name in ("oversize_allocations", "oversize_segments"):
            result[name] = dict.fromkeys(_FIELDS, 0)
        result.update(self.counters)
        return result

    def current(self, stat: int) -> int:
        return self.values[stat]
