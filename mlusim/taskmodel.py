"""The BANG task model: where each task of a launch runs and which ids it sees (Block and UnionN scheduling).

UnionN (ktype 4N) runs its tasks in groups of N clusters x coreDim cores ("rounds"); the i-th task of a group runs on
core i of the union: clusterId = i // coreDim, coreId = i % coreDim, clusterDim = N. Block tasks take one core each,
spread over all of the board's cores; they have clusterDim = 0 and no cluster or union to synchronise with (their
clusterId is the cluster of the core they land on, a simulator choice). Mutable (-1) is scheduled as Block.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

BLOCK_TYPES = (1, 2, -1)
UNION_TYPES = {4: 1, 8: 2, 16: 4, 32: 8, 64: 16}


def union_of(ktype: int) -> int:
    """N of a UnionN function type (0 for Block / Mutable)."""
    if ktype in BLOCK_TYPES:
        return 0
    if ktype not in UNION_TYPES:
        raise ValueError(f"unknown cnrtFunctionType_t {ktype}")
    return UNION_TYPES[ktype]


@dataclass(frozen=True)
class TaskLayout:
    """Ids of every task of one launch, as lists indexed by taskId."""

    dim: tuple[int, int, int]
    ktype: int                 # the cnrtFunctionType_t value
    union: int                 # N of UnionN, 0 for Block
    cores_per_cluster: int
    group_size: int            # tasks that run together and may share barriers (1 for Block)
    task_x: list
    task_y: list
    task_z: list
    cluster_id: list
    core_id: list

    @property
    def task_dim(self) -> int:
        return self.dim[0] * self.dim[1] * self.dim[2]

    @property
    def cluster_dim(self) -> int:
        return self.union

    @property
    def rounds(self) -> int:
        return self.task_dim // self.group_size

    def describe(self, task_id: int) -> str:
        return (f"taskIdX={self.task_x[task_id]}, taskIdY={self.task_y[task_id]}, taskIdZ={self.task_z[task_id]}, "
                f"clusterId={self.cluster_id[task_id]}, coreId={self.core_id[task_id]}")


@lru_cache(maxsize=256)
def layout(dim: tuple[int, int, int], ktype: int, cluster_count: int, cores_per_cluster: int,
           max_union: int) -> TaskLayout:
    """The task layout of `kernel<<<dim, ktype>>>` on a board (cached; do not mutate); ValueError when invalid."""
    dx, dy, dz = dim
    union = union_of(ktype)
    if union:
        if union > max_union:
            raise ValueError(f"Union{union} needs {union} clusters; the board allows at most Union{max_union}")
        group = union * cores_per_cluster
        if dx % group:
            raise ValueError(f"Union{union} needs taskDimX % {group} == 0, got taskDimX = {dx}")
    else:
        group = 1
    count = dx * dy * dz
    ids = range(count)
    if union:
        slots = [t % group for t in ids]
    else:
        slots = [t % (cluster_count * cores_per_cluster) for t in ids]
    return TaskLayout(
        dim=(dx, dy, dz), ktype=ktype, union=union, cores_per_cluster=cores_per_cluster, group_size=group,
        task_x=[t % dx for t in ids], task_y=[(t // dx) % dy for t in ids], task_z=[t // (dx * dy) for t in ids],
        cluster_id=[s // cores_per_cluster for s in slots], core_id=[s % cores_per_cluster for s in slots])
