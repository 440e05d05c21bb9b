"""Tiled matmul C = A @ B through NRAM and WRAM: a Block kernel, one output tile per task.

A (M x K) and B (K x N) are row-major float32 in GDRAM. Task t computes the TM x TN tile (t // (N/TN), t % (N/TN))
of C: for each K-slice it loads a TM x TK tile of A into NRAM and a TK x TN tile of B into WRAM with strided
copies, multiplies with bang.matmul and accumulates in NRAM. Run: python -m cnrt.samples.tiled_matmul
"""
import numpy as np

import cnrt
from mlusim import bang
from cnrt.samples import queue_for

TM, TK, TN = 32, 64, 32


@bang.kernel
def tiled_matmul(ctx, a: bang.gdram(bang.float32), b: bang.gdram(bang.float32), c: bang.gdram(bang.float32),
                 m: int, k: int, n: int):
    a_tile = bang.nram(ctx, "a_tile", bang.float32, TM * TK)
    b_tile = bang.wram(ctx, "b_tile", bang.float32, TK * TN)
    product = bang.nram(ctx, "product", bang.float32, TM * TN)
    c_tile = bang.nram(ctx, "c_tile", bang.float32, TM * TN)
    tiles_n = n // TN
    row = (ctx.taskId // tiles_n) * TM
    col = (ctx.taskId % tiles_n) * TN
    bang.write_value(ctx, c_tile, TM * TN, 0.0)
    for depth in range(0, k, TK):
        # TM rows of TK floats, rows k floats apart in A; TK rows of TN floats, rows n floats apart in B.
        bang.memcpy_strided(ctx, a_tile, a + row * k + depth, TK * 4, bang.GDRAM2NRAM, TK * 4, k * 4, TM - 1)
        bang.memcpy_strided(ctx, b_tile, b + depth * n + col, TN * 4, bang.GDRAM2WRAM, TN * 4, n * 4, TK - 1)
        bang.matmul(ctx, product, a_tile, b_tile, TM, TK, TN)
        bang.add(ctx, c_tile, c_tile, product, TM * TN)
    bang.memcpy_strided(ctx, c + row * n + col, c_tile, TN * 4, bang.NRAM2GDRAM, n * 4, TN * 4, TM - 1)


def run(a: np.ndarray, b: np.ndarray, queue=None) -> np.ndarray:
    """a @ b computed by the kernel; dimensions must be multiples of the tile sizes."""
    (m, k), (_, n) = a.shape, b.shape
    if m % TM or k % TK or n % TN:
        raise ValueError(f"shapes must be multiples of ({TM}, {TK}, {TN})")
    ptrs = [cnrt.malloc(size * 4) for size in (m * k, k * n, m * n)]
    try:
        cnrt.memcpy(ptrs[0], np.ascontiguousarray(a, np.float32), m * k * 4, cnrt.cnrtMemcpyHostToDev)
        cnrt.memcpy(ptrs[1], np.ascontiguousarray(b, np.float32), k * n * 4, cnrt.cnrtMemcpyHostToDev)
        tiles = (m // TM) * (n // TN)
        with queue_for(queue) as target:
            tiled_matmul[(tiles, 1, 1), cnrt.cnrtFuncTypeBlock, target](*ptrs, m, k, n)
            cnrt.queueSync(target)
        out = np.empty((m, n), np.float32)
        cnrt.memcpy(out, ptrs[2], m * n * 4, cnrt.cnrtMemcpyDevToHost)
        return out
    finally:
        for ptr in ptrs:
            cnrt.free(ptr)


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    a = rng.standard_normal((128, 256), dtype=np.float32)
    b = rng.standard_normal((256, 96), dtype=np.float32)
    c = run(a, b)
    print("max |error| vs numpy:", float(np.max(np.abs(c - a @ b))))
    print("work:", tiled_matmul.last_launch.counts.as_dict())
