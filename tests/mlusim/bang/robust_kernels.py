"""Kernels of the robustness tests (module level, so numba caches them on disk)."""
import numba
import numpy as np

from mlusim import bang
from mlusim.bang import activations

TILE = 4096


@bang.kernel
def poke(ctx, x: bang.gdram(bang.uint8), index: int, value: int):
    """x[index] = value, once."""
    if ctx.taskId == 0:
        x[index] = value


@bang.kernel
def bounce(ctx, x: bang.gdram(bang.uint8), offset: int, nbytes: int):
    """Copy nbytes at x + offset into NRAM and back (the write-back is what a wrapped bounds check would misplace)."""
    tile = bang.nram(ctx, "tile", bang.uint8, TILE)
    if ctx.taskId == 0:
        bang.memcpy(ctx, tile, x + offset, nbytes, bang.GDRAM2NRAM)
        bang.memcpy(ctx, x + offset, tile, nbytes, bang.NRAM2GDRAM)


@bang.kernel
def scatter_segments(ctx, x: bang.gdram(bang.uint8), size: int, stride: int, segnum: int):
    """segnum + 1 segments of `size` bytes of NRAM, written to x every `stride` bytes."""
    tile = bang.nram(ctx, "tile", bang.uint8, TILE)
    bang.write_value(ctx, tile, TILE, 9)
    if ctx.taskId == 0:
        bang.memcpy_strided(ctx, x, tile, size, bang.NRAM2GDRAM, stride, 0, segnum)


@bang.kernel
def nram_of(ctx, count: int):
    """__nram__ float big[count];"""
    bang.nram(ctx, "big", bang.float32, count)


@bang.kernel
def transpose_of(ctx, height: int, width: int):
    a = bang.nram(ctx, "a", bang.float32, 1024)
    b = bang.nram(ctx, "b", bang.float32, 1024)
    bang.transpose(ctx, b, a, height, width)


@bang.kernel
def matmul_of(ctx, m: int, k: int, n: int):
    out = bang.nram(ctx, "out", bang.float32, 1024)
    lhs = bang.nram(ctx, "lhs", bang.float32, 1024)
    rhs = bang.wram(ctx, "rhs", bang.float32, 1024)
    bang.matmul(ctx, out, lhs, rhs, m, k, n)


# ---- kernels that never end -----------------------------------------------------------------------------------------

@bang.kernel(time_limit=0.5)
def endless_copies(ctx, x: bang.gdram(bang.float32), n: int):
    """Loops forever calling an intrinsic (stops at the intrinsic's check)."""
    tile = bang.nram(ctx, "tile", bang.float32, 64)
    while n > 0:
        bang.memcpy(ctx, tile, x, 256, bang.GDRAM2NRAM)


@bang.kernel(time_limit=0.5)
def endless_arithmetic(ctx, x: bang.gdram(bang.float32), n: int):
    """Loops forever on plain arithmetic (stops at the poll of its loop head)."""
    k = 0
    while k >= 0:
        k = (k + n) % 1000


@numba.njit(nogil=True)
def _spin_without_polls(n):
    k = 0
    while k >= 0:
        k = (k + n) % 1000
    return k


@bang.kernel(time_limit=0.5)
def endless_in_plain_numba(ctx, x: bang.gdram(bang.float32), n: int):
    """Loops forever inside a plain numba function, which has no polls: it can only be given up."""
    _spin_without_polls(n)


@bang.kernel
def sleepy(ctx, x: bang.gdram(bang.float32), n: int):
    """Finishes after `n` polls of a busy loop: a kernel that is slow, not endless."""
    k = 0
    for i in range(n):
        k = (k + i) % 7
    x[0] = k


# ---- arguments and compilation --------------------------------------------------------------------------------------

@bang.kernel
def typed_args(ctx, x: bang.gdram(bang.float32), n: int, scale: float):
    tile = bang.nram(ctx, "tile", bang.float32, 64)
    bang.memcpy(ctx, tile, x, n * 4, bang.GDRAM2NRAM)
    bang.mul_scalar(ctx, tile, tile, scale, 64)


@bang.kernel
def calls_a_missing_intrinsic(ctx, x: bang.gdram(bang.float32)):
    tile = bang.nram(ctx, "tile", bang.float32, 64)
    bang.active_softsign(ctx, tile, tile, 64)


@bang.kernel
def passes_an_int_as_a_buffer(ctx, x: bang.gdram(bang.float32)):
    tile = bang.nram(ctx, "tile", bang.float32, 64)
    bang.add(ctx, tile, tile, 3, 64)


# ---- the __bang_active_* family ---------------------------------------------------------------------------------------

@bang.kernel
def every_activation(ctx, x: bang.gdram(bang.float32), y: bang.gdram(bang.float32), ops: bang.gdram(bang.int32),
                     count: int):
    """y[i * 64: (i + 1) * 64] = function ops[i] of the family on x[:64], for i < count: the loop every intrinsic of
    the family compiles to, compiled once for all of them (the op is a run-time value here)."""
    a = bang.nram(ctx, "a", bang.float32, 64)
    b = bang.nram(ctx, "b", bang.float32, 64)
    bang.memcpy(ctx, a, x, 256, bang.GDRAM2NRAM)
    for i in range(count):
        activations.apply(ctx, b, a, 64, ops[i], "active dst", "active src")
        bang.memcpy(ctx, y + i * 64, b, 256, bang.NRAM2GDRAM)


@bang.kernel
def named_recip(ctx, x: bang.gdram(bang.half), y: bang.gdram(bang.half)):
    """__bang_active_recip on half buffers: a named intrinsic of the family (they all wrap `apply` alike)."""
    a = bang.nram(ctx, "a", bang.half, 64)
    b = bang.nram(ctx, "b", bang.half, 64)
    bang.memcpy(ctx, a, x, 128, bang.GDRAM2NRAM)
    bang.active_recip(ctx, b, a, 64)
    bang.memcpy(ctx, y, b, 128, bang.NRAM2GDRAM)


def reference(op: int, x: np.ndarray) -> np.ndarray:
    """numpy's value of function `op` of the family (mlusim.bang.activations) on float64 inputs; NaN where the
    domain-restricted forms trap."""
    from math import erf
    A = activations
    v = x.astype(np.float64)
    with np.errstate(all="ignore"):
        table = {
            A.ABS: np.abs(v), A.SIGN: np.where(np.isnan(v), 0.0, np.sign(v)), A.SQRT: np.sqrt(v),
            A.RSQRT: 1 / np.sqrt(v), A.RECIP: 1 / v, A.RECIP_GREATER_1: np.where(v > 1, 1 / v, np.nan),
            A.LOG: np.log(v), A.EXP: np.exp(v), A.EXP_LESS_0: np.where(v <= 0, np.exp(v), np.nan),
            A.POW2: np.exp2(v), A.SIN: np.sin(v), A.COS: np.cos(v),
            A.GELU: 0.5 * v * (1 + np.vectorize(erf)(v / np.sqrt(2))),
        }
    return table[op]
