"""The vectorisable float32 exp (fastmath.exp32) and the fused kernels built on it: sigmoid / silu / gelu forward and
backward, and the compiled softmax rows, at the edges of float32 and against float64 references and torch's CPU."""
import math

import numpy as np
import pytest

from cnnl.kernels import activation_backward, activation_forward
from cnnl.kernels.fastmath import exp_into
from cnnl.kernels.softmax import softmax_forward

from ..tolerances import TRANSCENDENTAL_ULPS, assert_close

EDGES = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 1e-45, 0.5, -0.5, 1.0, 10.0, -10.0, 20.0,
                  -20.0, 87.0, -87.0, 88.72, 88.73, 89.5, -87.4, -100.0, -103.97, -103.98, -104.5, -200.0, 3e38,
                  -3e38], np.float32)


def _ulps(actual, expected64):
    """|actual - expected| in units of the float32 spacing at the expected value (finite expected values)."""
    rounded = expected64.astype(np.float32)
    return np.abs(actual.astype(np.float64) - expected64) / np.spacing(np.abs(rounded)).astype(np.float64)


def test_exp32_is_within_an_ulp_over_the_float32_range():
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2 ** 32, 1 << 20, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([bits.view(np.float32), rng.uniform(-104, 89, 1 << 18).astype(np.float32), EDGES])
    x = x[~np.isnan(x)]
    out = np.empty_like(x)
    exp_into(x, out)
    with np.errstate(over="ignore"):
        expected = np.exp(x.astype(np.float64))
        finite = expected < np.finfo(np.float32).max
    assert _ulps(out[finite], expected[finite]).max() <= 1.0
    assert np.all(out[~finite] == np.inf)


def test_exp32_edges_are_numpys():
    out = np.empty_like(EDGES)
    exp_into(EDGES, out)
    with np.errstate(over="ignore"):
        expected = np.exp(EDGES)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
    finite = np.isfinite(expected) & (expected > 0)
    assert _ulps(out[finite], np.exp(EDGES[finite].astype(np.float64))).max() <= 1.0
    assert np.all(out[np.isinf(expected)] == np.inf) and np.all(out[expected == 0] == 0)


def _references(x, y):
    """Forward and derivative in float64 (sigmoid's derivative from the float32 forward y, as the kernel's)."""
    with np.errstate(all="ignore"):
        sig = 1 / (1 + np.exp(-x))
        cdf = np.array([0.5 * math.erfc(-v / math.sqrt(2)) if not np.isnan(v) else np.nan for v in x])
        pdf = np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
        return {"sigmoid": (sig, y * (1 - y)), "silu": (x * sig, sig * (1 + x * (1 - sig))),
                "gelu": (x * cdf, cdf + x * pdf)}


@pytest.mark.parametrize("mode", ["sigmoid", "silu", "gelu"])
def test_fused_activations_at_the_edges(mode):
    x = np.concatenate([EDGES, np.linspace(-30, 30, 601, dtype=np.float32)])
    y = np.empty_like(x)
    activation_forward(mode, x, y)
    dx = np.empty_like(x)
    activation_backward(mode, np.ones_like(x), dx, x=x, y=y)
    forward, derivative = _references(x.astype(np.float64), y.astype(np.float64))[mode]
    # below -80 the results are subnormal or 0 (few bits of precision left): only their size is checked there
    tiny = np.isfinite(x) & (x < -80)
    normal = ~tiny
    # gelu's erf is good to an ulp of 1 + erf (see activation.py), and the derivatives of silu and gelu cancel
    # where they cross 0 (1 + x (1 - s), Phi + x phi, in float32 as torch's): those errors are measured against 1
    for what, got, want, scale in (("forward", y, forward, 1.0 if mode == "gelu" else None),
                                   ("backward", dx, derivative, None if mode == "sigmoid" else 1.0)):
        assert_close(got[normal], want[normal], np.float32, scale=scale, ulps=TRANSCENDENTAL_ULPS,
                     what=f"{mode} {what}")
        assert np.all(np.abs(got[tiny]) < 1e-35) and np.all(np.abs(want[tiny]) < 1e-35)


def test_fused_activation_in_place_on_a_large_block():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((513, 1031)).astype(np.float32) * 8
    expected = np.empty_like(x)
    activation_forward("sigmoid", x.copy(), expected)
    activation_forward("sigmoid", x, x)  # out is x itself
    np.testing.assert_array_equal(x, expected)


def _softmax64(x, log):
    with np.errstate(all="ignore"):
        shifted = x - x.max(axis=-1, keepdims=True)
        total = np.exp(shifted).sum(axis=-1, keepdims=True)
        return shifted - np.log(total) if log else np.exp(shifted) / total


@pytest.mark.parametrize("log", [False, True])
def test_compiled_softmax_rows_against_float64(log):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((300, 777)) * 20).astype(np.float32)
    x[3, 5] = np.nan                          # a NaN row is NaN
    x[4] = -np.inf                            # a row of -inf is NaN (as torch)
    x[6, :10] = -np.inf                       # -inf entries give 0 (log: -inf)
    x[7, 2] = np.inf                          # an inf entry makes the row NaN
    x[8] = 0.0
    out = np.empty_like(x)
    softmax_forward(x, out, axis=1, log=log)
    expected = _softmax64(x.astype(np.float64), log)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(expected))
    fine = np.isfinite(expected)
    assert np.array_equal(out[~fine & ~np.isnan(expected)], expected[~fine & ~np.isnan(expected)])
    scale = np.maximum(np.abs(expected[fine]), 1.0) if log else 1.0  # log: a float32 sum's error, absolute
    assert_close(out[fine], expected[fine], np.float32, scale=scale, ulps=TRANSCENDENTAL_ULPS)


def test_compiled_softmax_matches_the_numpy_path_and_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    x = rng.standard_normal((4, 33, 129)).astype(np.float32) * 5
    for log in (False, True):
        compiled = np.empty_like(x)
        softmax_forward(x, compiled, axis=-1, log=log)
        strided = np.empty((4, 129, 33), np.float32).transpose(0, 2, 1)  # not contiguous: the numpy path
        softmax_forward(x, strided, axis=-1, log=log)
        reference = (torch.log_softmax if log else torch.softmax)(torch.from_numpy(x), dim=-1).numpy()
        for result in (compiled, strided):
            np.testing.assert_allclose(result, reference, rtol=2e-6, atol=2e-6)
        in_place = x.copy()
        softmax_forward(in_place, in_place, axis=-1, log=log)  # out is x itself
        np.testing.assert_array_equal(in_place, compiled)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("nan_highest", [True, False])
def test_order_keys_order_floats_as_max_compares_them(dtype, nan_highest):
    """Keys compare as the values do (every number pair, subnormals and infinities included), -0.0 and 0.0 get one
    key, and every NaN (either sign, any payload) sits above or below every number."""
    from numba import njit

    from cnnl.kernels.fastmath import order_key

    @njit
    def keys(values, highest):
        out = np.empty(values.size, np.int64)
        for i in range(values.size):
            out[i] = order_key(values[i], highest)
        return out

    info = np.finfo(dtype)
    numbers = np.array([-np.inf, -info.max, -1.5, -info.tiny, -info.smallest_subnormal, -0.0, 0.0,
                        info.smallest_subnormal, info.tiny, 1.0, 1.5, info.max, np.inf], dtype)
    rng = np.random.default_rng(5)
    numbers = np.concatenate([numbers, (rng.standard_normal(200) * 10.0 ** rng.integers(-30, 30, 200)).astype(dtype)])
    key = keys(numbers, nan_highest)
    for i in range(numbers.size):
        assert np.array_equal(key[i] > key, numbers[i] > numbers), numbers[i]
        assert np.array_equal(key[i] == key, numbers[i] == numbers), numbers[i]
    bits = np.uint64 if dtype == np.float64 else np.uint32
    nans = np.array([np.nan, -np.nan], dtype)
    nans = np.concatenate([nans, (nans.view(bits) | bits(1)).view(dtype)])  # other payloads
    nan_keys = keys(nans, nan_highest)
    assert len(set(nan_keys.tolist())) == 1
    assert (nan_keys[0] > key).all() if nan_highest else (nan_keys[0] < key).all()
