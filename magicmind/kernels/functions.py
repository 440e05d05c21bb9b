"""The elementwise functions of MagicMind's binary, unary and logic nodes, each in its two forms: a numpy one (what
an op that stands alone runs: graph/ops/elementwise.py) and a scalar numba expression (what the builder's fusion pass
writes into one generated kernel for a chain of them: codegen.py). The graph's ops and the code generator both read
these tables, so the two forms of one function stay side by side.
"""
from __future__ import annotations

import numpy as np

from . import ufuncs


BINARY = {  # name: (numpy function, numba expression over a and b)
    "add": (np.add, "a + b"),
    "sub": (np.subtract, "a - b"),
    "mul": (np.multiply, "a * b"),
    "div": (np.divide, "a / b"),
    "pow": (np.power, "a ** b"),
    "max": (np.maximum, "a if (a > b or a != a) else b"),
    "min": (np.minimum, "a if (a < b or a != a) else b"),
    "squared_diff": (lambda a, b: np.square(a - b), "(a - b) * (a - b)"),
    "prelu": (lambda a, b: np.where(a < 0, a * b, a), "a * b if a < 0 else a"),
    "mod": (np.fmod, "math.fmod(a, b)"),
}


def clip(x, attrs):
    """ONNX Clip: x held within the attributes min and max, either of which may be absent."""
    low, high = attrs.get("min"), attrs.get("max")
    out = x
    if low is not None:
        out = np.where(out < low, np.asarray(low, x.dtype), out)
    if high is not None:
        out = np.where(out > high, np.asarray(high, x.dtype), out)
    return out


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


UNARY = {  # name: (numpy function of (x, attrs), numba expression over a with attrs as `alpha`, `beta`, `low`, `high`)
    "identity": (lambda x, _: x, "a"),
    "relu": (lambda x, _: np.where(x < 0, np.zeros((), x.dtype), x), "zero if a < zero else a"),
    "relu6": (lambda x, _: np.clip(x, 0, 6), "zero if a < zero else (six if a > six else a)"),
    "sigmoid": (lambda x, _: _sigmoid(x), "one / (one + math.exp(-a))"),
    "tanh": (lambda x, _: np.tanh(x), "math.tanh(a)"),
    "exp": (lambda x, _: np.exp(x), "math.exp(a)"),
    "log": (lambda x, _: np.log(x), "math.log(a) if a > zero else (-math.inf if a == zero else math.nan)"),
    "sqrt": (lambda x, _: np.sqrt(x), "math.sqrt(a) if a >= zero else math.nan"),
    "rsqrt": (lambda x, _: 1 / np.sqrt(x), "one / math.sqrt(a) if a >= zero else math.nan"),
    "neg": (lambda x, _: -x, "-a"),
    "abs": (lambda x, _: np.abs(x), "abs(a)"),
    "reciprocal": (lambda x, _: 1 / x, "one / a"),
    "floor": (lambda x, _: np.floor(x), "math.floor(a)"),
    "ceil": (lambda x, _: np.ceil(x), "math.ceil(a)"),
    "round": (lambda x, _: np.round(x), "np.round(a)"),
    "sin": (lambda x, _: np.sin(x), "math.sin(a)"),
    "cos": (lambda x, _: np.cos(x), "math.cos(a)"),
    "sign": (lambda x, _: np.sign(x), "np.sign(a)"),
    "erf": (lambda x, _: ufuncs.erf(x), "math.erf(a)"),
    "gelu": (lambda x, _: ufuncs.gelu(x), "a * half * (one + math.erf(a * sqrt_half))"),
    "gelu_tanh": (lambda x, _: 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))),
                  "half * a * (one + math.tanh(gelu_k * (a + gelu_c * a * a * a)))"),
    "silu": (lambda x, _: x * _sigmoid(x), "a / (one + math.exp(-a))"),
    "elu": (lambda x, p: np.where(x > 0, x, p["alpha"] * (np.exp(x) - 1)), "a if a > zero else alpha * (math.exp(a) - one)"),
    "leaky_relu": (lambda x, p: np.where(x < 0, x * np.asarray(p["alpha"], x.dtype), x), "a * alpha if a < zero else a"),
    "hard_sigmoid": (lambda x, p: np.clip(p["alpha"] * x + p["beta"], 0, 1),
                     "max(zero, min(one, alpha * a + beta))"),
    "hard_swish": (lambda x, _: x * np.clip(x / 6 + 0.5, 0, 1), "a * max(zero, min(one, a / six + half))"),
    "softplus": (lambda x, _: np.logaddexp(0, x), "max(a, zero) + math.log1p(math.exp(-abs(a)))"),
    "mish": (lambda x, _: x * np.tanh(np.logaddexp(0, x)), "a * math.tanh(max(a, zero) + math.log1p(math.exp(-abs(a))))"),
    "clip": (clip, "(low if a < low else (high if a > high else a))"),
    "scale": (lambda x, p: x * np.asarray(p["alpha"], x.dtype) + np.asarray(p["beta"], x.dtype), "a * alpha + beta"),
}
#: functions defined for integer inputs too (the others take floats)
INTEGER_UNARY = frozenset({"identity", "relu", "neg", "abs", "sign", "clip"})


LOGIC = {  # name: (numpy function, numba expression)
    "eq": (np.equal, "a == b"), "ne": (np.not_equal, "a != b"), "gt": (np.greater, "a > b"),
    "ge": (np.greater_equal, "a >= b"), "lt": (np.less, "a < b"), "le": (np.less_equal, "a <= b"),
    "and": (np.logical_and, "a and b"), "or": (np.logical_or, "a or b"), "xor": (np.logical_xor, "a != b"),
}
