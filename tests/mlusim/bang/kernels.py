"""Kernels shared by the tests (module level, so numba caches them on disk)."""
from mlusim import bang


@bang.kernel
def record_ids(ctx, out: bang.gdram(bang.int32)):
    """out[12 * taskId + i] = the i-th built-in of the task."""
    base = 12 * ctx.taskId
    ids = (ctx.taskIdX, ctx.taskIdY, ctx.taskIdZ, ctx.taskDimX, ctx.taskDimY, ctx.taskDimZ, ctx.taskId, ctx.taskDim,
           ctx.clusterId, ctx.clusterDim, ctx.coreId, ctx.coreDim)
    for i in range(12):
        out[base + i] = ids[i]


@bang.kernel
def nram_hog(ctx, count: int):
    bang.nram(ctx, "first", bang.float32, 1024)
    bang.nram(ctx, "too_big", bang.float32, count)


@bang.kernel
def wram_hog(ctx, count: int):
    bang.wram(ctx, "weights", bang.half, count)


@bang.kernel
def sram_hog(ctx, count: int):
    bang.sram(ctx, "shared_tile", bang.float32, count)
    bang.sync_cluster(ctx)


@bang.kernel
def copy_with_direction(ctx, x: bang.gdram(bang.float32), direction: int):
    tile = bang.nram(ctx, "tile", bang.float32, 64)
    bang.memcpy(ctx, tile, x, 256, direction)


@bang.kernel
def load_at(ctx, x: bang.gdram(bang.float32), out: bang.gdram(bang.float32), offset: int, count: int):
    """Task 0 copies x[offset : offset + count] to out through NRAM."""
    tile = bang.nram(ctx, "tile", bang.float32, 1024)
    if ctx.taskId == 0:
        bang.memcpy(ctx, tile, x + offset, count * 4, bang.GDRAM2NRAM)
        bang.memcpy(ctx, out, tile, count * 4, bang.NRAM2GDRAM)


@bang.kernel
def scalar_at(ctx, x: bang.gdram(bang.float32), index: int):
    x[index] = 1.0


@bang.kernel
def add_on_gdram(ctx, x: bang.gdram(bang.float32)):
    bang.add(ctx, x, x, x, 64)


@bang.kernel
def misaligned_add(ctx, shift: int):
    a = bang.nram(ctx, "a", bang.float32, 128)
    bang.write_value(ctx, a + shift, 32, 1.0)


@bang.kernel
def asserting(ctx, limit: int):
    bang.assert_(ctx.taskId < limit, "taskId below the limit")


@bang.kernel
def trapping(ctx):
    if ctx.taskId == 3:
        bang.trap("task 3 gives up")


@bang.kernel
def sram_exchange(ctx, out: bang.gdram(bang.float32)):
    """Each core writes taskId into its cluster's SRAM slot; after sync_cluster each reads its neighbour's slot."""
    mine = bang.nram(ctx, "mine", bang.float32, 16)
    seen = bang.nram(ctx, "seen", bang.float32, 16)
    slots = bang.sram(ctx, "slots", bang.float32, 16 * ctx.coreDim)
    bang.write_value(ctx, mine, 16, ctx.taskId)
    bang.memcpy(ctx, slots + 16 * ctx.coreId, mine, 64, bang.NRAM2SRAM)
    bang.sync_cluster(ctx)
    neighbour = (ctx.coreId + 1) % ctx.coreDim
    bang.memcpy(ctx, seen, slots + 16 * neighbour, 64, bang.SRAM2NRAM)
    bang.memcpy(ctx, out + 16 * ctx.taskId, seen, 64, bang.NRAM2GDRAM)


@bang.kernel
def sram_peek(ctx, out: bang.gdram(bang.float32)):
    """Reads SRAM before anyone of this round wrote it, then core 0 writes; a later round must not see it."""
    slot = bang.sram(ctx, "slot", bang.float32, 16)
    value = bang.nram(ctx, "value", bang.float32, 16)
    bang.memcpy(ctx, value, slot, 64, bang.SRAM2NRAM)
    bang.memcpy(ctx, out + 16 * ctx.taskId, value, 64, bang.NRAM2GDRAM)
    bang.sync_all(ctx)
    if ctx.coreId == 0:
        bang.write_value(ctx, value, 16, 7.0)
        bang.memcpy(ctx, slot, value, 64, bang.NRAM2SRAM)
    bang.sync_all(ctx)


@bang.kernel
def skips_barrier(ctx):
    if ctx.coreId != 2:
        bang.sync_cluster(ctx)


@bang.kernel
def crossed_barriers(ctx):
    if ctx.coreId == 0:
        bang.sync_all(ctx)
    else:
        bang.sync_cluster(ctx)


@bang.kernel(barriers=True)
def sync_in_block(ctx):
    bang.sync_cluster(ctx)


@bang.kernel
def last_writer(ctx, out: bang.gdram(bang.int32)):
    """Every task writes its id to out[0] and appends it to out[1:]: the order tasks ran in."""
    count = out[0]
    out[1 + count] = ctx.taskId
    out[0] = count + 1


@bang.kernel
def async_then_read(ctx, x: bang.gdram(bang.float32), out: bang.gdram(bang.float32), synced: int):
    """Reads an async copy's destination with or without sync first."""
    tile = bang.nram(ctx, "tile", bang.float32, 16)
    bang.write_value(ctx, tile, 16, -1.0)
    bang.memcpy_async(ctx, tile, x, 64, bang.GDRAM2NRAM)
    if synced:
        bang.sync(ctx)
    out[0] = tile[0]


@bang.kernel
def debug_probe(ctx, out: bang.gdram(bang.float32)):
    tile = bang.nram(ctx, "tile", bang.float32, 16)
    bang.write_value(ctx, tile, 16, 2.0)
    print("debug task", ctx.taskId)
    out[ctx.taskId] = tile[0] * ctx.taskId
    if ctx.taskId == 5:
        tile[99] = 1.0


@bang.kernel
def empty(ctx):
    pass
