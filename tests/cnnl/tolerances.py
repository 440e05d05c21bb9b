"""Per-dtype error bounds for comparing kernel results with float64 references, in one place.

A result r for reference value e passes when |r - e| <= STORE_UNIT*|e| + COMPUTE_UNIT*ulps*scale + TINY:
one rounding into the storage dtype, `ulps` roundings of the compute dtype relative to `scale` (the size of the
intermediate terms, |e| by default) and the smallest subnormal of the storage dtype. Integers and bools are exact.
"""
import ml_dtypes
import numpy as np

F16, BF16, F32, F64 = (np.dtype(t) for t in (np.float16, ml_dtypes.bfloat16, np.float32, np.float64))

#: unit roundoff of each storage dtype (half an ulp at 1.0)
STORE_UNIT = {F16: 2.0 ** -11, BF16: 2.0 ** -8, F32: 2.0 ** -24, F64: 2.0 ** -53}
#: unit roundoff of the dtype each storage dtype is computed in
COMPUTE_UNIT = {F16: 2.0 ** -24, BF16: 2.0 ** -24, F32: 2.0 ** -24, F64: 2.0 ** -53}
#: smallest subnormal of each storage dtype
TINY = {F16: 2.0 ** -24, BF16: 2.0 ** -133, F32: 2.0 ** -149, F64: 2.0 ** -1074}

#: largest finite value of each storage dtype
LARGEST = {d: float(ml_dtypes.finfo(d).max) for d in (F16, BF16, F32, F64)}

#: compute roundings allowed for plain arithmetic and for host libm transcendental functions
ARITHMETIC_ULPS = 4
TRANSCENDENTAL_ULPS = 16


def assert_close(actual, expected, dtype, scale=None, ulps=ARITHMETIC_ULPS, what=""):
    """Assert `actual` (any dtype) matches the float64/int64 reference `expected` within `dtype`'s bound."""
    dtype = np.dtype(dtype)
    actual = np.asarray(actual)
    expected = np.broadcast_to(np.asarray(expected), actual.shape)
    if dtype not in STORE_UNIT:
        np.testing.assert_array_equal(actual.astype(np.int64), np.asarray(expected).astype(np.int64), err_msg=what)
        return
    got = actual.astype(np.float64)
    want = np.asarray(expected, dtype=np.float64)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), f"{what}: NaN positions differ\n got {got}\n want {want}"
    # where the exact value overflows the storage format, infinity of the right sign is the right answer
    overflow = np.zeros(want.shape, bool)
    with np.errstate(invalid="ignore"):
        overflow[~nan] = np.abs(want[~nan]) > LARGEST[dtype] * (1 + STORE_UNIT[dtype])
    want = np.where(overflow, np.copysign(np.inf, want), want)
    infinite = np.isinf(want)
    assert np.array_equal(got[infinite], want[infinite]), f"{what}: infinities differ\n got {got}\n want {want}"
    size = np.abs(want) if scale is None else np.broadcast_to(np.asarray(scale, np.float64), want.shape)
    bound = STORE_UNIT[dtype] * np.abs(want) + COMPUTE_UNIT[dtype] * ulps * size + TINY[dtype]
    finite = ~nan & ~infinite
    error = np.abs(got[finite] - want[finite])
    bad = error > bound[finite]
    assert not bad.any(), (f"{what} ({dtype}): {bad.sum()} of {bad.size} off; worst got "
                           f"{got[finite][bad][:5]} want {want[finite][bad][:5]}")
