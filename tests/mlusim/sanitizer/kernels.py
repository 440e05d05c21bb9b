"""BANG kernels of the sanitizer tests (compiled once, cached on disk)."""
from mlusim import bang

SLOT = 16  # float32 elements per task


@bang.kernel
def cluster_sum(ctx, x: bang.gdram(bang.float32), out: bang.gdram(bang.float32), barrier: int):
    """Each core of a cluster puts its slice of x into SRAM; core 0 adds the cluster's slices into out. Without the
    barrier, core 0 reads SRAM its neighbours may not have written yet."""
    shared = bang.sram(ctx, "shared", bang.float32, SLOT * ctx.coreDim)
    tile = bang.nram(ctx, "tile", bang.float32, SLOT)
    total = bang.nram(ctx, "total", bang.float32, SLOT)
    bang.memcpy(ctx, tile, x + ctx.taskId * SLOT, SLOT * 4, bang.GDRAM2NRAM)
    bang.memcpy(ctx, shared + ctx.coreId * SLOT, tile, SLOT * 4, bang.NRAM2SRAM)
    if barrier:
        bang.sync_cluster(ctx)
    if ctx.coreId == 0:
        bang.write_value(ctx, total, SLOT, 0.0)
        for core in range(ctx.coreDim):
            bang.memcpy(ctx, tile, shared + core * SLOT, SLOT * 4, bang.SRAM2NRAM)
            bang.add(ctx, total, total, tile, SLOT)
        bang.memcpy(ctx, out + (ctx.taskId // ctx.coreDim) * SLOT, total, SLOT * 4, bang.NRAM2GDRAM)


@bang.kernel
def gather_all(ctx, x: bang.gdram(bang.float32), out: bang.gdram(bang.float32), scope: int):
    """Every task writes its slot of x, waits at a barrier (0: none, 1: sync_cluster, 2: sync_all), then reads the
    slot of the task one cluster further (one union task of two clusters): only sync_all orders those."""
    tile = bang.nram(ctx, "tile", bang.float32, SLOT)
    bang.write_value(ctx, tile, SLOT, float(ctx.taskId))
    bang.memcpy(ctx, x + ctx.taskId * SLOT, tile, SLOT * 4, bang.NRAM2GDRAM)
    if scope == 1:
        bang.sync_cluster(ctx)
    elif scope == 2:
        bang.sync_all(ctx)
    group = ctx.clusterDim * ctx.coreDim
    base = ctx.taskId - ctx.taskId % group
    other = base + (ctx.taskId % group + ctx.coreDim) % group
    bang.memcpy(ctx, tile, x + other * SLOT, SLOT * 4, bang.GDRAM2NRAM)
    bang.memcpy(ctx, out + ctx.taskId * SLOT, tile, SLOT * 4, bang.NRAM2GDRAM)


@bang.kernel
def scale_slices(ctx, x: bang.gdram(bang.float32), y: bang.gdram(bang.float32), per_task: int):
    """y[task slice] = 2 x[task slice], per_task elements per task (too many: the last tasks run off the end)."""
    tile = bang.nram(ctx, "tile", bang.float32, 1024)
    start = ctx.taskId * per_task
    bang.memcpy(ctx, tile, x + start, per_task * 4, bang.GDRAM2NRAM)
    bang.mul_scalar(ctx, tile, tile, 2.0, per_task)
    bang.memcpy(ctx, y + start, tile, per_task * 4, bang.NRAM2GDRAM)


@bang.kernel
def count_into(ctx, out: bang.gdram(bang.int32), shared_slot: int):
    """Element accesses: every task writes out[task] (or, shared_slot, all of them out[0])."""
    index = 0 if shared_slot else ctx.taskId
    out[index] = out[index] + 1
