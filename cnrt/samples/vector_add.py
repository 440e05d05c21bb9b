"""Vector add as a Union1 BANG kernel over every core of the board: z = x + y.

Each task takes a contiguous share of the vector and streams it through NRAM in tiles:
GDRAM -> NRAM (x, y), __bang_add, NRAM -> GDRAM (z). Run: python -m cnrt.samples.vector_add
"""
import numpy as np

import cnrt
from mlusim import bang
from cnrt.samples import queue_for

TILE = 32 * 1024  # float32 elements per NRAM tile (3 tiles = 384 KiB of NRAM)


@bang.kernel
def vector_add(ctx, x: bang.gdram(bang.float32), y: bang.gdram(bang.float32), z: bang.gdram(bang.float32), n: int):
    x_tile = bang.nram(ctx, "x_tile", bang.float32, TILE)
    y_tile = bang.nram(ctx, "y_tile", bang.float32, TILE)
    z_tile = bang.nram(ctx, "z_tile", bang.float32, TILE)
    share = (n + ctx.taskDim - 1) // ctx.taskDim
    start = ctx.taskId * share
    stop = min(n, start + share)
    for offset in range(start, stop, TILE):
        count = min(TILE, stop - offset)
        bang.memcpy(ctx, x_tile, x + offset, count * 4, bang.GDRAM2NRAM)
        bang.memcpy(ctx, y_tile, y + offset, count * 4, bang.GDRAM2NRAM)
        bang.add(ctx, z_tile, x_tile, y_tile, count)
        bang.memcpy(ctx, z + offset, z_tile, count * 4, bang.NRAM2GDRAM)


def union1_dim():
    """mlu-ops' Union1 sizing: {cores per cluster, clusters, 1} = every core of the board."""
    count = cnrt.deviceGetAttribute(cnrt.cnrtAttrClusterCount, 0)
    cores = cnrt.deviceGetAttribute(cnrt.cnrtAttrMcorePerCluster, 0)
    return cnrt.cnrtDim3_t(cores, count, 1)


def run(x: np.ndarray, y: np.ndarray, queue=None) -> np.ndarray:
    """z = x + y computed by the kernel on the current device."""
    n = x.size
    ptrs = [cnrt.malloc(n * 4) for _ in range(3)]
    try:
        cnrt.memcpy(ptrs[0], x, n * 4, cnrt.cnrtMemcpyHostToDev)
        cnrt.memcpy(ptrs[1], y, n * 4, cnrt.cnrtMemcpyHostToDev)
        with queue_for(queue) as target:
            vector_add[union1_dim(), cnrt.cnrtFuncTypeUnion1, target](ptrs[0], ptrs[1], ptrs[2], n)
            cnrt.queueSync(target)
        z = np.empty(n, np.float32)
        cnrt.memcpy(z, ptrs[2], n * 4, cnrt.cnrtMemcpyDevToHost)
        return z
    finally:
        for ptr in ptrs:
            cnrt.free(ptr)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    x = rng.standard_normal(1 << 20, dtype=np.float32)
    y = rng.standard_normal(1 << 20, dtype=np.float32)
    z = run(x, y)
    print("max |error| vs numpy:", float(np.max(np.abs(z - (x + y)))))
    print("work:", vector_add.last_launch.counts.as_dict())
    print(f"modelled device time: {vector_add.last_launch.model_us:.1f} us")
