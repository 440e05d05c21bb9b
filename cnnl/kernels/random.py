"""Counter-based random numbers: uniform, normal and dropout masks (`cnnlRandGenerate*`, `cnnlFusedDropout_v2`).

A stream is (seed, offset): the raw 64-bit numbers are Philox4x64-10 outputs for key `seed` starting at counter
`offset` (bit for bit numpy's Philox bit generator advanced to the offset: counter step k of a call encrypts the
256-bit counter offset + k + 1), so any call is reproduced exactly from its seed and offset, independent of earlier
calls. Each call consumes a whole number of counter steps (4 raw numbers per step) and returns the offset after it.
Uniform: the top 53 bits of a raw number scaled into [0, 1), then into [low, high); half, bfloat16 and float values
that round up to `high` are replaced by the largest value of their type below it, so results stay in [low, high).
Normal: Box-Muller on pairs of uniforms. Dropout keeps an element where its uniform is >= p and scales the kept
values by 1 / (1 - p); dropped elements are multiplied by 0 (NaN and inf become NaN, as in PyTorch).

The generator is one nogil numba kernel per job (Philox rounds on a native 64x64->128-bit multiply, two counters
interleaved), run on contiguous element ranges (whole counter steps) spread over the kernel thread pool; 16-bit
outputs go through float64 blocks rounded once by `store`.
"""
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from mlusim.numerics.bitcast import f64_as_i64, i64_as_f64

from .dtypes import compute_dtype
from .parallel import INLINE_ELEMENTS, STAGED_BLOCK, map_parallel, thread_count
from .staging import load, store

RAW_PER_STEP = 4
_UNIT = 2.0 ** -53
_WORD = 2 ** 64

UNIFORM, NORMAL = 0, 1

_M0 = np.uint64(0xD2E7470EE14C6C93)
_M1 = np.uint64(0xCA5A826395121157)
_W0 = np.uint64(0x9E3779B97F4A7C15)
_W1 = np.uint64(0xBB67AE8584CAA73B)
_SHIFT = np.uint64(11)
_TWO_PI = 2.0 * np.pi


@intrinsic
def _mulhi(typingctx, a, b):
    """The high 64 bits of the 128-bit product of two uint64 (one host multiply instruction)."""
    signature = types.uint64(types.uint64, types.uint64)

    def codegen(context, builder, sig, args):
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))
    return signature, codegen


@njit(nogil=True, cache=True, inline="always")
def _philox2(a0, a1, a2, a3, b0, b1, b2, b3, k0, k1):
    """Philox4x64-10 of two counters (a, b) under key (k0, k1), interleaved for instruction-level parallelism."""
    for _ in range(10):
        ha0, la0 = _mulhi(_M0, a0), _M0 * a0
        ha1, la1 = _mulhi(_M1, a2), _M1 * a2
        hb0, lb0 = _mulhi(_M0, b0), _M0 * b0
        hb1, lb1 = _mulhi(_M1, b2), _M1 * b2
        a0, a1, a2, a3 = ha1 ^ a1 ^ k0, la1, ha0 ^ a3 ^ k1, la0
        b0, b1, b2, b3 = hb1 ^ b1 ^ k0, lb1, hb0 ^ b3 ^ k1, lb0
        k0 = k0 + _W0
        k1 = k1 + _W1
    return a0, a1, a2, a3, b0, b1, b2, b3


@njit(nogil=True, cache=True, inline="always")
def _counter(ctr, step):
    """The 256-bit counter ctr (4 words, low first) + step, as four words (carries propagate)."""
    c0 = ctr[0] + np.uint64(step)
    carry = np.uint64(c0 < ctr[0])
    c1 = ctr[1] + carry
    carry = np.uint64(carry > 0 and c1 == 0)
    c2 = ctr[2] + carry
    c3 = ctr[3] + np.uint64(carry > 0 and c2 == 0)
    return c0, c1, c2, c3


@njit(nogil=True, cache=True, inline="always")
def _steps(key, ctr, step):
    """The 8 raw numbers of counter steps `step` and `step + 1`."""
    a0, a1, a2, a3 = _counter(ctr, step)
    b0, b1, b2, b3 = _counter(ctr, step + 1)
    return _philox2(a0, a1, a2, a3, b0, b1, b2, b3, key[0], key[1])


_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_SQRT2 = 1.4142135623730951


@njit(nogil=True, cache=True, inline="always")
def _log(v):
    """log(v) for a normal positive float64 (a few ulp): v = m * 2^e with m in [sqrt(1/2), sqrt(2)),
    log m = 2 atanh((m - 1) / (m + 1)) by its series. Branch-free, so loops over it vectorise."""
    bits = f64_as_i64(v)
    e = (bits >> 52) - 1023
    m = i64_as_f64((bits & 0xFFFFFFFFFFFFF) | 0x3FF0000000000000)
    big = m > _SQRT2
    m = m * 0.5 if big else m
    e = e + 1 if big else e
    s = (m - 1.0) / (m + 1.0)
    z = s * s
    series = (1.0 + z * (1 / 3 + z * (1 / 5 + z * (1 / 7 + z * (1 / 9 + z * (1 / 11 + z * (1 / 13 + z * (
        1 / 15 + z * (1 / 17 + z * (1 / 19 + z * (1 / 21)))))))))))
    f = float(e)
    return f * _LN2_HI + (f * _LN2_LO + 2.0 * s * series)


@njit(nogil=True, cache=True, inline="always")
def _cos_sin_turns(u):
    """(cos, sin) of 2 pi u for u in [0, 1): u = q / 4 + t exactly, |t| <= 1/8, Taylor series of x = 2 pi t
    (error below 1e-16), rotated by the quarter turns q. Branch-free."""
    q = np.floor(4.0 * u + 0.5)
    x = (u - 0.25 * q) * _TWO_PI
    z = x * x
    sin = x * (1.0 + z * (-1 / 6 + z * (1 / 120 + z * (-1 / 5040 + z * (1 / 362880 + z * (
        -1 / 39916800 + z * (1 / 6227020800 + z * (-1 / 1307674368000 + z * (1 / 355687428096000)))))))))
    cos = 1.0 + z * (-0.5 + z * (1 / 24 + z * (-1 / 720 + z * (1 / 40320 + z * (-1 / 3628800 + z * (
        1 / 479001600 + z * (-1 / 87178291200 + z * (1 / 20922789888000 + z * (-1 / 6402373705728000)))))))))
    quarter = int(q) & 3
    swap = (quarter & 1) != 0
    c = sin if swap else cos
    s = cos if swap else sin
    c = c * (1.0 - 2.0 * ((quarter ^ (quarter >> 1)) & 1))
    s = s * (1.0 - 2.0 * (quarter >> 1))
    return c, s


_CHUNK = 256  # elements drawn per inner pass: raw numbers first, then one (vectorisable) loop of arithmetic


@njit(nogil=True, cache=True, inline="always")
def _raw_chunk(key, ctr, step, raw, count):
    """raw[:count] (rounded up to 8) = the raw numbers from counter step `step` on."""
    for block in range(0, count, 8):
        r = _steps(key, ctr, step + block // 4)
        for j in range(8):
            raw[block + j] = r[j]


@njit(nogil=True, cache=True, fastmath={"contract"})
def _generate(kind, key, ctr, first_step, a, b, out):
    """out[i] = the i-th number from counter step first_step on: uniform a + u * (b - a), or normal a + b * z
    (Box-Muller on the uniforms of raw numbers 2j, 2j + 1 gives elements 2j, 2j + 1)."""
    n = out.size
    raw = np.empty(_CHUNK, np.uint64)
    values = np.empty(_CHUNK, np.float64)
    radius = np.empty(_CHUNK // 2, np.float64)
    span = b - a
    for chunk in range(0, n, _CHUNK):
        _raw_chunk(key, ctr, first_step + chunk // 4, raw, min(_CHUNK, n - chunk))
        if kind == 0:
            for j in range(_CHUNK):
                values[j] = a + (raw[j] >> _SHIFT) * _UNIT * span
        else:
            for j in range(_CHUNK // 2):  # 1 - u is exact and in (0, 1], so the log is finite
                radius[j] = np.sqrt(-2.0 * _log(1.0 - (raw[2 * j] >> _SHIFT) * _UNIT))
            for j in range(_CHUNK // 2):
                c, s = _cos_sin_turns((raw[2 * j + 1] >> _SHIFT) * _UNIT)
                values[2 * j] = a + b * (radius[j] * c)
                values[2 * j + 1] = a + b * (radius[j] * s)
        for j in range(min(_CHUNK, n - chunk)):
            out[chunk + j] = values[j]


@njit(nogil=True, cache=True)
def _dropout(key, ctr, first_step, x, p, scale, keep, y):
    """keep[i] = uniform i >= p, y[i] = x[i] * scale where kept, else x[i] * 0 (x, y 1-D in one compute dtype): a
    dropped NaN or inf stays NaN, as in PyTorch, which multiplies by the scaled mask."""
    n = x.size
    zero = scale - scale
    raw = np.empty(_CHUNK, np.uint64)
    for chunk in range(0, n, _CHUNK):
        _raw_chunk(key, ctr, first_step + chunk // 4, raw, min(_CHUNK, n - chunk))
        for j in range(min(_CHUNK, n - chunk)):
            kept = (raw[j] >> _SHIFT) * _UNIT >= p
            keep[chunk + j] = kept
            y[chunk + j] = x[chunk + j] * (scale if kept else zero)


@njit(nogil=True, cache=True)
def _keep_grid(key, ctr, first, row_stride, p, scale, out):
    """out[r, c] = scale where uniform number first + r * row_stride + c of the stream is >= p, else 0."""
    rows, cols = out.shape
    raw = np.empty(_CHUNK + 8, np.uint64)
    zero = scale - scale
    for r in range(rows):
        start = first + r * row_stride
        for c0 in range(0, cols, _CHUNK):
            count = min(_CHUNK, cols - c0)
            element = start + c0
            step = element // 4
            skip = element - 4 * step
            _raw_chunk(key, ctr, step, raw, count + skip)
            for j in range(count):
                out[r, c0 + j] = scale if (raw[skip + j] >> _SHIFT) * _UNIT >= p else zero


def _key_counter(seed, offset):
    seed, start = int(seed) % (2 ** 128), int(offset) + 1
    key = np.array([seed % _WORD, seed // _WORD], np.uint64)
    ctr = np.array([(start >> (64 * i)) % _WORD for i in range(4)], np.uint64)
    return key, ctr


def _ranges(count, staged):
    """(start, stop) element ranges covering count, starting on even counter steps (multiples of 8 elements):
    one range when small, else one per thread (or cache-sized ones when `staged`)."""
    if count <= INLINE_ELEMENTS:
        return [(0, count)]
    size = STAGED_BLOCK if staged else -(-count // thread_count())
    size = -(-size // 8) * 8
    return [(start, min(start + size, count)) for start in range(0, count, size)]


def _flat(array, dtype):
    """A 1-D view of array when it is C-contiguous in `dtype`, else None."""
    return array.reshape(-1) if array.dtype == dtype and array.flags.c_contiguous else None


def steps(count, normal=False):
    """Counter steps a call drawing `count` numbers consumes (normal numbers come in pairs)."""
    raw = 2 * -(-count // 2) if normal else count
    return -(-raw // RAW_PER_STEP)


def largest_below(high, dtype):
    """The largest value of `dtype` (a numpy or ml_dtypes float type) that is < high, as a 0-d array of it."""
    value = np.array(high, dtype)
    if float(value) < high:
        return value
    bits = value.view(np.dtype(f"u{value.itemsize}"))
    if float(value) > 0:
        bits = bits - 1
    elif float(value) < 0:
        bits = bits + 1
    else:  # below +-0: the smallest negative subnormal
        bits = np.array(1 | (1 << (8 * value.itemsize - 1)), bits.dtype)
    return np.asarray(bits).view(dtype)


def _fill(kind, seed, offset, out, a, b):
    key, ctr = _key_counter(seed, offset)
    flat = _flat(out, out.dtype) if out.dtype in (np.float32, np.float64) else None
    target = out.reshape(-1)  # a raw buffer: one contiguous run
    below = largest_below(b, out.dtype) if kind == UNIFORM and a < b else None

    def run(bounds):
        start, stop = bounds
        if flat is not None:
            _generate(kind, key, ctr, start // 4, a, b, flat[start:stop])
        else:
            values = np.empty(stop - start, np.float64)
            _generate(kind, key, ctr, start // 4, a, b, values)
            store(values, target[start:stop])
        if below is not None:  # values that rounded up to `high` in the output type: [low, high), never high
            block = target[start:stop]
            block[block.astype(np.float64) >= b] = below

    map_parallel(run, _ranges(out.size, flat is None))


def uniform(seed, offset, out, low, high):
    """Fill out (1-D) with uniforms in [low, high); returns the next offset."""
    _fill(UNIFORM, seed, offset, out, float(low), float(high))
    return offset + steps(out.size)


def normal(seed, offset, out, mean, std):
    """Fill out (1-D) with normal(mean, std) samples; returns the next offset."""
    _fill(NORMAL, seed, offset, out, float(mean), float(std))
    return offset + steps(out.size, normal=True)


def dropout(seed, offset, x, p, mask, y):
    """mask = (uniform >= p), y = x * mask / (1 - p) (p = 1: all zero); returns the next offset."""
    key, ctr = _key_counter(seed, offset)
    dtype = compute_dtype(x.dtype)
    scale = dtype.type(0 if p >= 1 else 1 / (1 - p))
    xs, ys = _flat(x, dtype), _flat(y, dtype)
    ms = _flat(mask, mask.dtype)
    direct = xs is not None and ys is not None and ms is not None
    if not direct:  # work on contiguous copies, stored once at the end
        xs = np.ascontiguousarray(load(x, dtype)).reshape(-1)
        ys, ms = np.empty(x.size, dtype), np.empty(x.size, np.uint8)
    keep = ms.view(np.uint8)
    xs = xs.view()
    xs.flags.writeable = False  # one kernel specialisation whether or not the input view is writable

    def run(bounds):
        start, stop = bounds
        _dropout(key, ctr, start // 4, xs[start:stop], float(p), scale, keep[start:stop], ys[start:stop])

    if x.size:
        map_parallel(run, _ranges(x.size, False))
    if not direct:
        store(ys.reshape(y.shape), y)
        store(keep.view(np.bool_).reshape(mask.shape), mask)
    return offset + steps(x.size)


def keep_scale_grid(seed, offset, first, row_stride, p, out):
    """Dropout factors of a 2-D block of a larger grid of numbers: out[r, c] = 1 / (1 - p) where uniform number
    `first + r * row_stride + c` of the stream (seed, offset) is >= p (the rule of `dropout`), else 0. `out` is a
    C-contiguous float32 or float64 array. Element e of the stream is the e-th number `uniform` draws from the same
    seed and offset, so a grid's mask can be checked against cnnlRandGenerateUniform."""
    if out.size == 0:
        return
    key, ctr = _key_counter(seed, offset)
    scale = out.dtype.type(0 if p >= 1 else 1 / (1 - p))
    _keep_grid(key, ctr, np.int64(first), np.int64(row_stride), float(p), scale, out)
