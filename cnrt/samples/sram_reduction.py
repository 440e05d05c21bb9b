"""Sum of a float32 vector through SRAM with __sync_cluster: a Union1 kernel.

Each core sums its share in NRAM tiles, writes its partial sum into the cluster's SRAM, and after sync_cluster
core 0 of each cluster adds the cluster's partials and writes one value per cluster to GDRAM; the host adds the
cluster values. Run: python -m cnrt.samples.sram_reduction
"""
import numpy as np

import cnrt
from mlusim import bang
from cnrt.samples import queue_for

TILE = 16 * 1024
PARTIALS = 64  # SRAM slots: one per core of the cluster, padded to a 64-byte aligned vector


@bang.kernel
def cluster_sum(ctx, x: bang.gdram(bang.float32), out: bang.gdram(bang.float32), n: int):
    tile = bang.nram(ctx, "tile", bang.float32, TILE)
    acc = bang.nram(ctx, "acc", bang.float32, 32)
    partial = bang.nram(ctx, "partial", bang.float32, PARTIALS)
    shared = bang.sram(ctx, "partials", bang.float32, PARTIALS)
    share = (n + ctx.taskDim - 1) // ctx.taskDim
    start = min(n, ctx.taskId * share)
    stop = min(n, start + share)
    total = 0.0
    for offset in range(start, stop, TILE):
        count = min(TILE, stop - offset)
        bang.memcpy(ctx, tile, x + offset, count * 4, bang.GDRAM2NRAM)
        bang.reduce_sum(ctx, acc, tile, count)
        total += acc[0]
    acc[0] = total
    bang.memcpy(ctx, shared + ctx.coreId, acc, 4, bang.NRAM2SRAM)
    bang.sync_cluster(ctx)
    if ctx.coreId == 0:
        bang.memcpy(ctx, partial, shared, ctx.coreDim * 4, bang.SRAM2NRAM)
        bang.reduce_sum(ctx, acc, partial, ctx.coreDim)
        cluster = ctx.taskId // ctx.coreDim
        bang.memcpy(ctx, out + cluster, acc, 4, bang.NRAM2GDRAM)


def run(x: np.ndarray, queue=None) -> float:
    """The sum of x computed by the kernel on the current device."""
    clusters = cnrt.deviceGetAttribute(cnrt.cnrtAttrClusterCount, 0)
    cores = cnrt.deviceGetAttribute(cnrt.cnrtAttrMcorePerCluster, 0)
    n = x.size
    x_ptr = cnrt.malloc(n * 4)
    out_ptr = cnrt.malloc(clusters * 4)
    try:
        cnrt.memcpy(x_ptr, np.ascontiguousarray(x, np.float32), n * 4, cnrt.cnrtMemcpyHostToDev)
        with queue_for(queue) as target:
            cluster_sum[(cores, clusters, 1), cnrt.cnrtFuncTypeUnion1, target](x_ptr, out_ptr, n)
            cnrt.queueSync(target)
        per_cluster = np.empty(clusters, np.float32)
        cnrt.memcpy(per_cluster, out_ptr, clusters * 4, cnrt.cnrtMemcpyDevToHost)
        return float(per_cluster.sum(dtype=np.float64))
    finally:
        cnrt.free(x_ptr)
        cnrt.free(out_ptr)


if __name__ == "__main__":
    x = np.random.default_rng(0).standard_normal(1 << 20, dtype=np.float32)
    print("kernel:", run(x), " numpy:", float(x.sum(dtype=np.float64)))
