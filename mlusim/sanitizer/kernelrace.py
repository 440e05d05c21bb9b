"""racecheck inside a BANG kernel, and the bytes a launch really touched.

The launch's access log (mlusim.bang.accesslog) says, per task, which host bytes of GDRAM blocks and SRAM it read
and wrote and how many barriers it had passed. Two accesses of different tasks to a common byte, at least one a
write, race unless a barrier both tasks take part in lies between them: that needs the tasks to run in the same
round of a UnionN launch with barriers, and then a different count of barriers passed (any barrier for two tasks of
one cluster, sync_all for two of different clusters). Block tasks, tasks of different rounds and tasks of a launch
without barriers never synchronise. SRAM is compared only between tasks of one cluster and round (the only ones
that share it).

The same log gives the launch's exact read and write sets per block, which replace the pointer arguments' whole
blocks in the cross-queue checks and initcheck.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from .extents import span_of_runs
from .report import Access, Report

#: Races kept per launch for reporting (all are counted).
MAX_PAIRS = 4096
#: Reports per launch (one per memory region with races).
MAX_REPORTS = 8


@numba.njit(cache=True, nogil=True)
def _merge(order, domain, lo, hi, task, write, syncs_all, syncs_any):
    """Merge the overlapping or adjacent entries of one (domain, task, write, barrier counts), visited in `order`
    (sorted by those and lo); the kept entries and their merged bounds."""
    n = lo.size
    keep = np.empty(n, np.int64)
    out_lo = lo.copy()
    out_hi = hi.copy()
    count = 0
    for position in range(n):
        i = order[position]
        if count > 0:
            j = keep[count - 1]
            if (domain[j] == domain[i] and task[j] == task[i] and write[j] == write[i]
                    and syncs_all[j] == syncs_all[i] and syncs_any[j] == syncs_any[i] and lo[i] <= out_hi[j]):
                if hi[i] > out_hi[j]:
                    out_hi[j] = hi[i]
                continue
        keep[count] = i
        count += 1
    return keep[:count], out_lo, out_hi


@numba.njit(cache=True, nogil=True)
def _sweep(domain, lo, hi, task, write, syncs_all, syncs_any, rounds, group, cores, limit):
    """Pairs (i, j) of entries (sorted by domain, lo) that race; returns (pairs[:kept], total found)."""
    n = lo.size
    pairs = np.empty((limit, 2), np.int64)
    found = 0
    active = np.empty(n, np.int64)
    active_count = 0
    for i in range(n):
        alive = 0
        for k in range(active_count):
            a = active[k]
            if domain[a] == domain[i] and hi[a] > lo[i]:
                active[alive] = a
                alive += 1
        active_count = alive
        for k in range(active_count):
            a = active[k]
            if task[a] == task[i] or (write[a] == 0 and write[i] == 0):
                continue
            ordered = False
            if rounds and task[a] // group == task[i] // group:
                if (task[a] % group) // cores == (task[i] % group) // cores:
                    ordered = syncs_any[a] != syncs_any[i]
                else:
                    ordered = syncs_all[a] != syncs_all[i]
            if not ordered:
                if found < limit:
                    pairs[found, 0] = a
                    pairs[found, 1] = i
                found += 1
        active[active_count] = i
        active_count += 1
    return pairs[:min(found, limit)], found


@dataclass
class Region:
    """Where a domain of the log lives: a GDRAM block, or the SRAM of one cluster in one round."""

    block: object = None
    host_start: int = 0
    cluster: int = -1
    round: int = -1


@dataclass
class KernelRace:
    """Two tasks' accesses to common bytes with no barrier between them."""

    region: Region
    first: int          # offset of the first common byte in the region
    nbytes: int
    tasks: tuple        # (task a, task b)
    writes: tuple       # (a writes, b writes)
    count: int          # races found in the region


@dataclass
class LaunchAccesses:
    """What the analysis of one launch's log found."""

    races: list
    touched: list       # (block, Span, write) per block and access
    dropped: int


def analyse(entries: np.ndarray, dropped: int, blocks, sram_ranges, rounds: bool, group: int,
            cores_per_cluster: int, union: int) -> LaunchAccesses:
    """Races between tasks and the read/write sets per block, from a launch's log entries ((n, 4) int64)."""
    if len(entries) == 0:
        return LaunchAccesses([], [], dropped)
    lo, hi, flags, epochs = (np.ascontiguousarray(entries[:, i]) for i in range(4))
    task = flags >> 8
    space = (flags >> 1) & 7
    write = flags & 1
    syncs_all = epochs >> 32
    syncs_any = epochs & 0xFFFFFFFF
    regions: list[Region] = []
    domain = np.full(len(lo), -1, np.int64)
    base = np.zeros(len(lo), np.int64)

    live = sorted((b for b in blocks if b.data is not None and b.size), key=lambda b: b.data.ctypes.data)
    starts = np.array([b.data.ctypes.data for b in live], np.int64)
    ends = starts + np.array([b.size for b in live], np.int64)
    gdram = space == 0
    if len(live):
        index = np.searchsorted(starts, lo, side="right") - 1
        inside = gdram & (index >= 0) & (lo >= starts[np.maximum(index, 0)]) & (hi <= ends[np.maximum(index, 0)])
        domain[inside] = index[inside]
        base[inside] = starts[index[inside]]
        regions += [Region(block=b, host_start=int(s)) for b, s in zip(live, starts)]
    if rounds and sram_ranges:
        sram_starts = np.array([s for s, _ in sram_ranges], np.int64)
        sram_ends = np.array([e for _, e in sram_ranges], np.int64)
        index = np.searchsorted(sram_starts, lo, side="right") - 1
        clipped = np.maximum(index, 0)
        inside = (space == 3) & (index >= 0) & (lo >= sram_starts[clipped]) & (hi <= sram_ends[clipped])
        rounds_of = task // group
        keys = {}
        for i in np.flatnonzero(inside):
            key = (int(rounds_of[i]), int(index[i]))
            region = keys.get(key)
            if region is None:
                region = keys[key] = len(regions)
                regions.append(Region(host_start=int(sram_starts[index[i]]), cluster=key[1], round=key[0]))
            domain[i] = region
            base[i] = sram_starts[index[i]]
    chosen = domain >= 0
    domain, task, write = domain[chosen], task[chosen], write[chosen]
    lo, hi = lo[chosen] - base[chosen], hi[chosen] - base[chosen]
    syncs_all, syncs_any = syncs_all[chosen], syncs_any[chosen]

    order = np.lexsort((lo, syncs_any, syncs_all, write, task, domain))
    kept, merged_lo, merged_hi = _merge(order, domain, lo, hi, task, write, syncs_all, syncs_any)
    kept = kept[np.lexsort((merged_lo[kept], domain[kept]))]
    domain, task, write = domain[kept], task[kept], write[kept]
    lo, hi = merged_lo[kept], merged_hi[kept]
    syncs_all, syncs_any = syncs_all[kept], syncs_any[kept]
    pairs, _ = _sweep(domain, lo, hi, task, write, syncs_all, syncs_any, rounds, group, max(cores_per_cluster, 1),
                      MAX_PAIRS)

    races: list[KernelRace] = []
    per_region: dict[int, int] = {}
    for a, b in pairs:
        per_region[int(domain[a])] = per_region.get(int(domain[a]), 0) + 1
    seen: set = set()
    for a, b in pairs:
        region = int(domain[a])
        if region in seen or len(races) >= MAX_REPORTS:
            continue
        seen.add(region)
        first, last = max(lo[a], lo[b]), min(hi[a], hi[b])
        races.append(KernelRace(regions[region], int(first), int(last - first), (int(task[a]), int(task[b])),
                                (bool(write[a]), bool(write[b])), per_region[region]))

    touched = []
    for index, region in enumerate(regions):
        if region.block is None:
            continue
        mine = domain == index
        for writes in (False, True):
            chosen = mine & (write == int(writes))
            if chosen.any():
                span = span_of_runs(np.stack([lo[chosen], hi[chosen]], axis=1))
                if span is not None:
                    touched.append((region.block, span, writes))
    return LaunchAccesses(races, touched, dropped)


def race_report(launch, record, race) -> Report:
    """The racecheck report of one race between two tasks of a launch (`record`: the command's CommandRecord)."""
    layout = launch.layout
    region = race.region
    sides = []
    for task, write in zip(race.tasks, race.writes):
        sides.append(Access("write" if write else "read", command=launch.name, kind="kernel",
                            queue=record.queue_name if record else "", task=task,
                            task_ids=launch.describe(task),
                            stack=record.stack if record else ()))
    both = all(race.writes)
    if region.block is not None:
        address, device = region.block.start + race.first, region.block.device_index
        where = "GDRAM"
    else:
        address, device = None, launch.device.index
        where = f"SRAM of cluster {region.cluster} (round {region.round}), bytes [{race.first}, " \
                f"{race.first + race.nbytes})"
    first, second = race.tasks
    if not layout.union:
        why = "Block tasks never synchronise with each other"
    elif not (launch.kernel.uses_barriers and first // layout.group_size == second // layout.group_size):
        why = ("the kernel has no barrier" if not launch.kernel.uses_barriers else
               "tasks of different union rounds never synchronise")
    else:
        why = "no sync_cluster or sync_all that both take part in lies between the accesses"
    message = (f"tasks {first} and {second} of kernel '{launch.name}' touch the same {where} bytes, one "
               f"writing, and {why}")
    return Report("racecheck", "kernel_race", message, address=address, size=race.nbytes, device=device,
                  accesses=sides, hazard="write-write" if both else "read-write", task=race.tasks[0],
                  count=race.count)
