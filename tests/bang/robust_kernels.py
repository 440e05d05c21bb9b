"""Kernels of the robustness tests (module level, so numba caches them on disk)."""
import numba
import numpy as np

from mlusim import bang

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

UNARY = ("active_abs", "active_sign", "active_sqrt", "active_rsqrt", "active_recip", "active_log", "active_exphp",
         "active_pow2", "active_sin", "active_cos", "active_gelu", "active_sqrthp", "active_rsqrthp",
         "active_reciphp", "active_loghp", "active_gelup", "active_exp2")


@bang.kernel
def every_activation(ctx, x: bang.gdram(bang.float32), y: bang.gdram(bang.float32)):
    """y[i * 64: (i + 1) * 64] = UNARY[i](x[:64])."""
    a = bang.nram(ctx, "a", bang.float32, 64)
    b = bang.nram(ctx, "b", bang.float32, 64)
    bang.memcpy(ctx, a, x, 256, bang.GDRAM2NRAM)
    bang.active_abs(ctx, b, a, 64)
    bang.memcpy(ctx, y, b, 256, bang.NRAM2GDRAM)
    bang.active_sign(ctx, b, a, 64)
    bang.memcpy(ctx, y + 64, b, 256, bang.NRAM2GDRAM)
    bang.active_sqrt(ctx, b, a, 64)
    bang.memcpy(ctx, y + 128, b, 256, bang.NRAM2GDRAM)
    bang.active_rsqrt(ctx, b, a, 64)
    bang.memcpy(ctx, y + 192, b, 256, bang.NRAM2GDRAM)
    bang.active_recip(ctx, b, a, 64)
    bang.memcpy(ctx, y + 256, b, 256, bang.NRAM2GDRAM)
    bang.active_log(ctx, b, a, 64)
    bang.memcpy(ctx, y + 320, b, 256, bang.NRAM2GDRAM)
    bang.active_exphp(ctx, b, a, 64)
    bang.memcpy(ctx, y + 384, b, 256, bang.NRAM2GDRAM)
    bang.active_pow2(ctx, b, a, 64)
    bang.memcpy(ctx, y + 448, b, 256, bang.NRAM2GDRAM)
    bang.active_sin(ctx, b, a, 64)
    bang.memcpy(ctx, y + 512, b, 256, bang.NRAM2GDRAM)
    bang.active_cos(ctx, b, a, 64)
    bang.memcpy(ctx, y + 576, b, 256, bang.NRAM2GDRAM)
    bang.active_gelu(ctx, b, a, 64)
    bang.memcpy(ctx, y + 640, b, 256, bang.NRAM2GDRAM)
    bang.active_sqrthp(ctx, b, a, 64)
    bang.memcpy(ctx, y + 704, b, 256, bang.NRAM2GDRAM)
    bang.active_rsqrthp(ctx, b, a, 64)
    bang.memcpy(ctx, y + 768, b, 256, bang.NRAM2GDRAM)
    bang.active_reciphp(ctx, b, a, 64)
    bang.memcpy(ctx, y + 832, b, 256, bang.NRAM2GDRAM)
    bang.active_loghp(ctx, b, a, 64)
    bang.memcpy(ctx, y + 896, b, 256, bang.NRAM2GDRAM)
    bang.active_gelup(ctx, b, a, 64)
    bang.memcpy(ctx, y + 960, b, 256, bang.NRAM2GDRAM)
    bang.active_exp2(ctx, b, a, 64)
    bang.memcpy(ctx, y + 1024, b, 256, bang.NRAM2GDRAM)


@bang.kernel
def half_sqrt_and_recip(ctx, x: bang.gdram(bang.half), y: bang.gdram(bang.half)):
    a = bang.nram(ctx, "a", bang.half, 64)
    b = bang.nram(ctx, "b", bang.half, 64)
    bang.memcpy(ctx, a, x, 128, bang.GDRAM2NRAM)
    bang.active_sqrt(ctx, b, a, 64)
    bang.memcpy(ctx, y, b, 128, bang.NRAM2GDRAM)
    bang.active_recip(ctx, b, a, 64)
    bang.memcpy(ctx, y + 64, b, 128, bang.NRAM2GDRAM)


@bang.kernel
def domain_restricted(ctx, x: bang.gdram(bang.float32), y: bang.gdram(bang.float32), which: int):
    a = bang.nram(ctx, "a", bang.float32, 64)
    b = bang.nram(ctx, "b", bang.float32, 64)
    bang.memcpy(ctx, a, x, 256, bang.GDRAM2NRAM)
    if which == 0:
        bang.active_recip_greater_1(ctx, b, a, 64)
    else:
        bang.active_exp_less_0(ctx, b, a, 64)
    bang.memcpy(ctx, y, b, 256, bang.NRAM2GDRAM)


@bang.kernel
def activation_of_integers(ctx, x: bang.gdram(bang.int32)):
    a = bang.nram(ctx, "a", bang.int32, 64)
    bang.active_sqrt(ctx, a, a, 64)


def reference(name: str, x: np.ndarray) -> np.ndarray:
    """numpy's value of an activation on float64 inputs (rounded to float32 by the caller)."""
    with np.errstate(all="ignore"):
        from math import erf
        table = {
            "abs": np.abs, "sign": np.sign, "sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v),
            "recip": lambda v: 1 / v, "log": np.log, "exphp": np.exp, "pow2": np.exp2, "exp2": np.exp2,
            "sin": np.sin, "cos": np.cos, "gelu": lambda v: 0.5 * v * (1 + np.vectorize(erf)(v / np.sqrt(2))),
        }
        base = name.removeprefix("active_").removesuffix("hp") if name != "active_exphp" else "exphp"
        base = "gelu" if base == "gelup" else base
        return table[base](x.astype(np.float64))
