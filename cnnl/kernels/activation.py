"""Activation forward and backward (`cnnlActivationForward` / `cnnlActivationBackward`), numba kernels.

Modes: relu, relu6, sigmoid, tanh, gelu (erf form), gelu_tanh (tanh approximation), silu, leaky_relu (`coef` is
the negative slope), elu (`coef` is alpha), hardswish. Forward: y = alpha*f(x) + beta*y. Backward:
dx = alpha*f'(x)*dy + beta*dx. beta == 0 never reads the output. Each value is evaluated in float64 inside the
kernel and rounded to the compute dtype (float32 for half/bfloat16/float32), then once more to the storage dtype.
NaN inputs propagate through the forward. (Computed in float32, sigmoid, tanh, silu and gelu, forward and backward,
take a faster path of numpy's SIMD ufuncs and vectorised float32 loops instead: see "float32 fast path".) Derivatives follow PyTorch's CPU kernels, which test the inputs with
comparisons that a NaN fails: relu'(0) = 0, relu6' is 1 only on (0, 6), hardswish'(x) = (2x+3)/6 on (-3, 3), 0 at
-3 and below, 1 at 3 and above; at a NaN input relu, relu6, elu and hardswish pass the gradient (1), leaky_relu
scales it by its slope, and the smooth functions give NaN.

Backward reads `y` for sigmoid and tanh and `x` for every other mode (relu accepts either); sigmoid and tanh
recompute y from x when only x is given.
"""
import functools
import math

import numpy as np
from numba import njit

from .cast import readonly_flat
from .dtypes import FLOAT_DTYPES, check_dtype, check_same_dtype, compute_dtype
from .elementwise import run_elementwise, stored_in_compute_dtype
from .fastmath import FUSED_MULTIPLY_ADD, exp32
from .staging import load, store

MODES = ("relu", "relu6", "sigmoid", "tanh", "gelu", "gelu_tanh", "silu", "leaky_relu", "elu", "hardswish")
_MODE_INDEX = {name: i for i, name in enumerate(MODES)}
_USES_Y = ("sigmoid", "tanh")
_SQRT_HALF = 1.0 / math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_K = math.sqrt(2.0 / math.pi)


@njit(nogil=True, cache=True)
def _sigmoid(x):
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@njit(nogil=True, cache=True)
def _forward_value(mode, x, coef):
    if mode == 0:
        return 0.0 if x <= 0.0 else x  # NaN fails the test and passes through
    if mode == 1:
        return 0.0 if x <= 0.0 else (6.0 if x >= 6.0 else x)
    if mode == 2:
        return _sigmoid(x)
    if mode == 3:
        return math.tanh(x)
    if mode == 4:
        return 0.5 * x * (1.0 + math.erf(x * _SQRT_HALF))
    if mode == 5:
        return 0.5 * x * (1.0 + math.tanh(_GELU_K * (x + 0.044715 * x * x * x)))
    if mode == 6:
        return x * _sigmoid(x)
    if mode == 7:
        return coef * x if x < 0.0 else x
    if mode == 8:
        return coef * math.expm1(x) if x < 0.0 else x
    relu6 = 0.0 if x <= -3.0 else (6.0 if x >= 3.0 else x + 3.0)
    return x * relu6 / 6.0 if x == x else x


@njit(nogil=True, cache=True)
def _derivative(mode, x, y, coef):
    if mode == 0:
        return 0.0 if x <= 0.0 else 1.0
    if mode == 1:
        return 0.0 if (x <= 0.0 or x >= 6.0) else 1.0
    if mode == 2:
        return y * (1.0 - y)
    if mode == 3:
        return 1.0 - y * y
    if mode == 4:
        return 0.5 * (1.0 + math.erf(x * _SQRT_HALF)) + x * _INV_SQRT_2PI * math.exp(-0.5 * x * x)
    if mode == 5:
        t = math.tanh(_GELU_K * (x + 0.044715 * x * x * x))
        return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * _GELU_K * (1.0 + 3.0 * 0.044715 * x * x)
    if mode == 6:
        s = _sigmoid(x)
        return s * (1.0 + x * (1.0 - s))
    if mode == 7:
        return 1.0 if x > 0.0 else coef
    if mode == 8:
        return coef * math.exp(x) if x <= 0.0 else 1.0
    if x <= -3.0:
        return 0.0
    if x < 3.0:
        return (2.0 * x + 3.0) / 6.0
    return 1.0


@njit(nogil=True, cache=True)
def _relu_loop(alpha, beta, x, previous, out):
    # separate loop so the most common activation vectorises; max(x, 0) as torch's clamp_min: NaN and -0.0 stay
    if alpha == 1.0 and beta == 0.0:  # in the array's own type: as fast as a copy (a float64 alpha costs 50% more)
        for i in range(x.size):
            v = x[i]
            out[i] = v if not v < 0 else 0.0
    elif beta == 0.0:
        for i in range(x.size):
            v = x[i]
            out[i] = alpha * (v if not v < 0 else 0.0)
    else:
        for i in range(x.size):
            v = x[i]
            out[i] = alpha * (v if not v < 0 else 0.0) + beta * previous[i]


@njit(nogil=True, cache=True)
def forward_kernel(mode, coef, alpha, beta, x, previous, out):
    """out = alpha*f(x) + beta*previous over 1-D contiguous arrays (`previous` unread when beta == 0)."""
    if mode == 0:
        _relu_loop(alpha, beta, x, previous, out)
    elif beta == 0.0:
        for i in range(x.size):
            out[i] = alpha * _forward_value(mode, np.float64(x[i]), coef)
    else:
        for i in range(x.size):
            out[i] = alpha * _forward_value(mode, np.float64(x[i]), coef) + beta * previous[i]


@njit(nogil=True, cache=True)
def backward_kernel(mode, coef, alpha, beta, x, y, dy, previous, out):
    """out = alpha*f'(x, y)*dy + beta*previous over 1-D contiguous arrays (`previous` unread when beta == 0)."""
    for i in range(x.size):
        value = alpha * _derivative(mode, np.float64(x[i]), np.float64(y[i]), coef) * dy[i]
        out[i] = value if beta == 0.0 else value + beta * previous[i]


def _mode_index(mode):
    try:
        return _MODE_INDEX[mode]
    except KeyError:
        raise ValueError(f"unknown activation mode {mode!r} (one of {', '.join(MODES)})") from None


def _flat_output(out_block):
    """(1-D buffer the kernel writes, whether it is out_block itself)."""
    if out_block.flags.c_contiguous and stored_in_compute_dtype(out_block):
        return out_block.reshape(-1), True
    return np.empty(out_block.size, compute_dtype(out_block.dtype)), False


def _flat_input(block, shape):
    values = load(block)
    return readonly_flat(values if values.shape == shape else np.broadcast_to(values, shape))


def _run_kernel(kernel, out, beta, inputs, leading_args):
    flat_inputs = [_flat_input(x, out.shape) for x in inputs]
    previous = _flat_input(out, out.shape) if beta != 0 else flat_inputs[0]
    buffer, is_out = _flat_output(out)
    kernel(*leading_args, *flat_inputs, previous, buffer)
    if not is_out:
        store(buffer.reshape(out.shape), out)


# ---- float32 fast path ----------------------------------------------------------------------------------------------
# The smooth activations spend their time in transcendental functions, which numba calls one element at a time from
# libm (~20 ns each). So when the computation is in float32 (float32, half and bfloat16 data) and alpha = 1, beta = 0
# (what frameworks pass), sigmoid, silu and gelu (erf form) are one vectorised loop each around fastmath.exp32 (within
# an ulp of exp, as PyTorch's own vectorised CPU kernels), and tanh and gelu_tanh use numpy's SIMD tanh. The erf of
# gelu is Abramowitz & Stegun 7.1.26 (absolute error <= 1.5e-7, about an ulp of 1 + erf) on that exp.
_A1, _A2, _A3, _A4, _A5, _P = 0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429, 0.3275911


@njit(inline="always", nogil=True, cache=True, error_model="numpy")
def _sigmoid32(v):
    """sigmoid of a float32: 1 / (1 + e) for v >= 0, e / (1 + e) below, e = exp(-|v|) (never overflows)."""
    e = exp32(-abs(v))
    return (np.float32(1.0) if v >= 0 else e) / (np.float32(1.0) + e)


@njit(inline="always", nogil=True, cache=True, error_model="numpy")
def _gauss32(v):
    """exp(-v^2 / 2) of a float32."""
    return exp32(np.float32(-0.5) * v * v)


@njit(inline="always", nogil=True, cache=True, error_model="numpy")
def _normal_cdf32(v, gauss):
    """Phi(v) = (1 + erf(v / sqrt 2)) / 2 of a float32, given gauss = exp(-v^2 / 2)."""
    t = np.float32(1.0) / (np.float32(1.0) + np.float32(_P * _SQRT_HALF) * abs(v))
    tail = t * (np.float32(_A1) + t * (np.float32(_A2) + t * (np.float32(_A3) + t * (
        np.float32(_A4) + t * np.float32(_A5))))) * gauss  # erfc(|v| / sqrt 2)
    return np.float32(0.5) * (np.float32(2.0) - tail if v >= 0 else tail)


@njit(nogil=True, cache=True, error_model="numpy", fastmath=FUSED_MULTIPLY_ADD)
def _forward_float32(mode, x, out):
    """out = f(x) for sigmoid, silu and gelu (1-D float32; x may be out itself)."""
    if mode == 2:  # sigmoid
        for i in range(x.size):
            out[i] = _sigmoid32(x[i])
    elif mode == 6:  # silu
        for i in range(x.size):
            v = x[i]
            out[i] = v * _sigmoid32(v)
    else:  # gelu
        for i in range(x.size):
            v = x[i]
            out[i] = v * _normal_cdf32(v, _gauss32(v))


@njit(nogil=True, cache=True)
def _gelu_tanh_argument(x, out):
    """out = k (x + 0.044715 x^3) (what tanh turns into gelu_tanh's factor)."""
    for i in range(x.size):
        v = x[i]
        out[i] = np.float32(_GELU_K) * v * (np.float32(1.0) + np.float32(0.044715) * v * v)


@njit(nogil=True, cache=True)
def _gelu_tanh_from_tanh(x, t, out):
    for i in range(x.size):
        out[i] = np.float32(0.5) * x[i] * (np.float32(1.0) + t[i])


def _gelu_tanh_factor(x):
    """tanh(k (x + 0.044715 x^3)) of float32 x."""
    factor = np.empty(x.size, np.float32)
    _gelu_tanh_argument(x, factor)
    return np.tanh(factor, out=factor)


def _fast_float32(mode, x, out):
    """out (float32, 1-D) = f(x) for `mode` in _FAST_MODES; x float32 1-D (may be out itself)."""
    with np.errstate(all="ignore"):
        if mode == _MODE_INDEX["tanh"]:
            np.tanh(x, out=out)
        elif mode == _MODE_INDEX["gelu_tanh"]:
            _gelu_tanh_from_tanh(x, _gelu_tanh_factor(x), out)
        else:
            _forward_float32(mode, x, out)


_FAST_MODES = frozenset(_MODE_INDEX[name] for name in ("sigmoid", "tanh", "silu", "gelu", "gelu_tanh"))
#: elements per pass of gelu_tanh's float32 fast path: its temporary (a 512 KiB array) then stays in the core's L2
#: cache and is reused heap memory, not fresh pages at every call (the other modes need no temporary, and are not
#: cut: a single pass streams memory faster)
FAST_CHUNK = 1 << 17


def _in_chunks(mode, function, arrays):
    """function(*chunks) over consecutive FAST_CHUNK-element pieces of the equally long 1-D `arrays` for gelu_tanh,
    function(*arrays) for the other modes."""
    size = arrays[0].size
    if size <= FAST_CHUNK or mode != _MODE_INDEX["gelu_tanh"]:
        function(*arrays)
        return
    for start in range(0, size, FAST_CHUNK):
        function(*(array[start:start + FAST_CHUNK] for array in arrays))


@njit(nogil=True, cache=True, error_model="numpy", fastmath=FUSED_MULTIPLY_ADD)
def _backward_float32(mode, x, y, dy, aux, out):
    """out = f'(x) * dy (float32 loops; float64 for the short formulas of sigmoid and tanh, whose 1 - y cancels),
    given `aux` = tanh(k (x + 0.044715 x^3)) for gelu_tanh (unread otherwise; sigmoid and tanh use y)."""
    one, half = np.float32(1.0), np.float32(0.5)
    if mode == 2:  # sigmoid (in float64: 1 - y cancels near y = 1)
        for i in range(out.size):
            v = np.float64(y[i])
            out[i] = np.float64(dy[i]) * v * (1.0 - v)
    elif mode == 3:  # tanh (in float64: 1 - y^2 cancels near |y| = 1)
        for i in range(out.size):
            v = np.float64(y[i])
            out[i] = np.float64(dy[i]) * (1.0 - v * v)
    elif mode == 6:  # silu
        for i in range(out.size):
            s = _sigmoid32(x[i])
            out[i] = dy[i] * s * (one + x[i] * (one - s))
    elif mode == 4:  # gelu: Phi(x) + x phi(x)
        for i in range(out.size):
            v = x[i]
            gauss = _gauss32(v)
            out[i] = dy[i] * (_normal_cdf32(v, gauss) + v * gauss * np.float32(_INV_SQRT_2PI))
    else:  # gelu_tanh
        for i in range(out.size):
            v, t = x[i], aux[i]
            inner = np.float32(_GELU_K) * (one + np.float32(3 * 0.044715) * v * v)
            out[i] = dy[i] * (half * (one + t) + half * v * (one - t * t) * inner)


def _backward_aux(mode, x):
    """The transcendental part of a gelu_tanh backward, by numpy's SIMD tanh (x itself for the other modes)."""
    if mode == _MODE_INDEX["gelu_tanh"]:
        with np.errstate(all="ignore"):
            return _gelu_tanh_factor(x)
    return x


def _forward_block(mode, coef, alpha, beta, out, x):
    if mode in _FAST_MODES and alpha == 1.0 and beta == 0.0 and compute_dtype(out.dtype) == np.float32:
        values = _flat_input(x, out.shape)
        buffer, is_out = _flat_output(out)
        _in_chunks(mode, lambda xs, result: _fast_float32(mode, xs, result), (values, buffer))
        if not is_out:
            store(buffer.reshape(out.shape), out)
        return
    _run_kernel(forward_kernel, out, beta, [x], (mode, coef, alpha, beta))


def _backward_block(mode, coef, alpha, beta, out, x, y, dy):
    if mode in _FAST_MODES and alpha == 1.0 and beta == 0.0 and compute_dtype(out.dtype) == np.float32:
        xs, ys, dys = (_flat_input(a, out.shape) for a in (x, y, dy))
        buffer, is_out = _flat_output(out)
        _in_chunks(mode, lambda *chunks: _backward_float32(mode, *chunks[:3], _backward_aux(mode, chunks[0]), chunks[3]),
                   (xs, ys, dys, buffer))
        if not is_out:
            store(buffer.reshape(out.shape), out)
        return
    _run_kernel(backward_kernel, out, beta, [x, y, dy], (mode, coef, alpha, beta))


def _staged(out, *inputs):
    return not (stored_in_compute_dtype(out) and all(a.shape == out.shape and a.flags.c_contiguous
                                                     for a in (out, *inputs)))


def activation_forward(mode, x, out, coef=0.0, alpha=1.0, beta=0.0):
    """out = alpha*f(x) + beta*out (`cnnlActivationForward`); `coef` is the leaky slope or the elu alpha."""
    index = _mode_index(mode)
    check_same_dtype(x=x, out=out)
    check_dtype("x", x, FLOAT_DTYPES)
    block = functools.partial(_forward_block, index, float(coef), float(alpha), float(beta))
    run_elementwise(block, out, [x], staged=_staged(out, x))


def activation_backward(mode, dy, out, x=None, y=None, coef=0.0, alpha=1.0, beta=0.0):
    """out (dx) = alpha*f'(x)*dy + beta*out (`cnnlActivationBackward`); see the module doc for which of x, y is read."""
    index = _mode_index(mode)
    check_dtype("dy", dy, FLOAT_DTYPES)
    given = {name: a for name, a in (("x", x), ("y", y)) if a is not None}
    check_same_dtype(dy=dy, out=out, **given)
    if mode in _USES_Y and y is None:
        if x is None:
            raise ValueError(f"{mode} backward needs y or x")
        y = np.empty(x.shape, compute_dtype(x.dtype))
        activation_forward(mode, load(x), y)
    elif mode == "relu" and x is None:
        x = y  # relu'(x) depends only on the sign, which y keeps
    elif mode not in _USES_Y and x is None:
        raise ValueError(f"{mode} backward needs x")
    x = y if x is None else x
    y = x if y is None else y
    block = functools.partial(_backward_block, index, float(coef), float(alpha), float(beta))
    run_elementwise(block, out, [x, y, dy], staged=_staged(out, x, y, dy))
