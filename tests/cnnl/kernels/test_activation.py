"""Activation forward/backward against float64 references (alpha/beta blending included)."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cnnl.kernels import activation_backward, activation_forward
from cnnl.kernels.activation import MODES

from ..references import to_f64
from .strategies import FLOATS, SETTINGS, broadcast_operands, operands, outputs, shapes
from ..tolerances import TRANSCENDENTAL_ULPS, assert_close

_erf = np.frompyfunc(math.erf, 1, 1)


def erf(x):
    return np.asarray(_erf(x), dtype=np.float64)
K = math.sqrt(2 / math.pi)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def forward_reference(mode, x, coef):
    with np.errstate(all="ignore"):
        return {
            "relu": lambda: np.where(x > 0, x, 0.0),
            "relu6": lambda: np.clip(x, 0, 6),
            "sigmoid": lambda: sigmoid(x),
            "tanh": lambda: np.tanh(x),
            "gelu": lambda: 0.5 * x * (1 + erf(x / math.sqrt(2))),
            "gelu_tanh": lambda: 0.5 * x * (1 + np.tanh(K * (x + 0.044715 * x ** 3))),
            "silu": lambda: x * sigmoid(x),
            "leaky_relu": lambda: np.where(x > 0, x, coef * x),
            "elu": lambda: np.where(x > 0, x, coef * np.expm1(x)),
            "hardswish": lambda: x * np.clip(x + 3, 0, 6) / 6,
        }[mode]()


def derivative_reference(mode, x, y, coef):
    with np.errstate(all="ignore"):
        if mode == "gelu":
            return 0.5 * (1 + erf(x / math.sqrt(2))) + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)
        if mode == "gelu_tanh":
            t = np.tanh(K * (x + 0.044715 * x ** 3))
            return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * K * (1 + 3 * 0.044715 * x * x)
        return {
            "relu": lambda: (x > 0).astype(float),
            "relu6": lambda: ((x > 0) & (x < 6)).astype(float),
            "sigmoid": lambda: y * (1 - y),
            "tanh": lambda: 1 - y * y,
            "silu": lambda: sigmoid(x) * (1 + x * (1 - sigmoid(x))),
            "leaky_relu": lambda: np.where(x > 0, 1.0, coef),
            "elu": lambda: np.where(x > 0, 1.0, coef * np.exp(x)),
            "hardswish": lambda: np.where(x <= -3, 0.0, np.where(x < 3, (2 * x + 3) / 6, 1.0)),  # torch at +-3
        }[mode]()


def cancellation(mode, x):
    """Size of the terms a formula cancels (1 + erf and 1 + tanh in the gelu tails, 1 + x(1 - s) in silu'):
    rounding errors scale with them rather than with the result."""
    if mode in ("gelu", "gelu_tanh"):
        return np.abs(to_f64(x))
    return 1.0 + np.abs(to_f64(x)) if mode == "silu" else 0.0


@pytest.mark.parametrize("mode", MODES)
@given(dtype=st.sampled_from(FLOATS), shape=shapes(min_dims=1), data=st.data())
@SETTINGS
def test_activation_forward(mode, dtype, shape, data):
    coef = data.draw(st.sampled_from([0.01, 0.2, 1.5]))
    alpha, beta = data.draw(st.sampled_from([(1.0, 0.0), (0.5, 0.0), (2.0, -1.0)]))
    x = data.draw(broadcast_operands(shape, dtype, -8.0, 8.0))
    out = data.draw(outputs(shape, dtype) if beta == 0 else operands(shape, dtype))
    previous = to_f64(out)
    activation_forward(mode, x, out, coef=coef, alpha=alpha, beta=beta)
    term = alpha * forward_reference(mode, to_f64(x), coef)
    expected = term + (beta * previous if beta else 0.0)
    scale = np.abs(term) + (abs(beta) * np.abs(previous) if beta else 0.0) + cancellation(mode, x)
    assert_close(out, expected, dtype, scale=scale, ulps=TRANSCENDENTAL_ULPS, what=mode)


@pytest.mark.parametrize("mode", MODES)
@given(dtype=st.sampled_from(FLOATS), shape=shapes(min_dims=1), data=st.data())
@SETTINGS
def test_activation_backward(mode, dtype, shape, data):
    coef = data.draw(st.sampled_from([0.01, 0.2, 1.5]))
    alpha, beta = data.draw(st.sampled_from([(1.0, 0.0), (2.0, 0.5)]))
    x = data.draw(operands(shape, dtype, -8.0, 8.0))
    y = np.empty(shape, dtype)
    y[...] = forward_reference(mode, to_f64(x), coef).astype(np.float32).astype(dtype)
    dy = data.draw(broadcast_operands(shape, dtype, -2.0, 2.0))
    out = data.draw(outputs(shape, dtype) if beta == 0 else operands(shape, dtype))
    previous = to_f64(out)
    activation_backward(mode, dy, out, x=x, y=y, coef=coef, alpha=alpha, beta=beta)
    term = alpha * derivative_reference(mode, to_f64(x), to_f64(y), coef) * to_f64(dy)
    expected = term + (beta * previous if beta else 0.0)
    scale = (np.abs(term) + (abs(beta) * np.abs(previous) if beta else 0.0)
             + cancellation(mode, x) * np.abs(alpha * to_f64(dy)) + 1e-6)
    assert_close(out, expected, dtype, scale=scale, ulps=TRANSCENDENTAL_ULPS, what=mode)


def test_forward_beta_zero_ignores_nan_and_relu_propagates_nan():
    x = np.array([-1.0, 2.0, np.nan], np.float32)
    out = np.full(3, np.nan, np.float32)
    activation_forward("relu", x, out)
    assert out[:2].tolist() == [0.0, 2.0] and np.isnan(out[2])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_relu_is_torchs_clamp_min_bit_for_bit(dtype, alpha):
    """max(x, 0) as torch's relu (clamp_min) computes it: -0.0 and 0.0 stay as they are, NaN stays NaN, -inf is 0;
    plain (alpha 1, the array's own type) and scaled."""
    x = np.array([-0.0, 0.0, np.nan, -1.0, 2.5, -np.inf, np.inf, -1e-30], dtype)
    out = np.empty_like(x)
    activation_forward("relu", x, out, alpha=alpha)
    want = np.where(x < 0, dtype(0), x) * dtype(alpha)
    assert out.tobytes() == want.tobytes()


def test_sigmoid_backward_from_x_only_recomputes_y():
    x = np.linspace(-4, 4, 9).astype(np.float32)
    out = np.empty_like(x)
    activation_backward("sigmoid", np.ones_like(x), out, x=x)
    s = sigmoid(x.astype(np.float64))
    np.testing.assert_allclose(out, s * (1 - s), rtol=1e-5)  # y is rounded to float32 first


def test_backward_requires_x_where_needed():
    with pytest.raises(ValueError):
        activation_backward("gelu", np.ones(3, np.float32), np.empty(3, np.float32), y=np.ones(3, np.float32))


def test_large_activation_matches_small():
    rng = np.random.default_rng(1)
    x = rng.standard_normal(300_000).astype(np.float32)
    out = np.empty_like(x)
    activation_forward("gelu", x, out)
    assert_close(out, forward_reference("gelu", x.astype(np.float64), 0.0), np.float32,
                 scale=np.abs(out) + cancellation("gelu", x), ulps=TRANSCENDENTAL_ULPS)
