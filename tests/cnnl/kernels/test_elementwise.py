"""opTensor, binary, compare, logical and unary ops against float64 / exact-integer references."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cnnl.kernels import binary, compare, logical, logical_not, op_tensor, unary
from cnnl.kernels.unary import UNARY_OPS

from ..references import to_f64, wrap_int
from .strategies import ALL, FLOATS, INTS, NUMERIC, SETTINGS, broadcast_operands, operands, outputs, shapes
from ..tolerances import TRANSCENDENTAL_ULPS, assert_close


def exact_ints(x):
    return np.asarray(x).astype(object)


@pytest.mark.parametrize("op", ["add", "sub", "mul"])
@given(dtype=st.sampled_from(NUMERIC), shape=shapes(min_dims=1), data=st.data())
@SETTINGS
def test_op_tensor(op, dtype, shape, data):
    is_int = dtype in INTS
    scales = st.integers(-3, 3) if is_int else st.sampled_from([1.0, 0.5, -2.0, 1.25])
    alpha1, alpha2 = data.draw(scales), data.draw(scales)
    beta = data.draw(st.sampled_from([0, 1, 2] if is_int else [0.0, 1.0, -0.5]))
    a = data.draw(broadcast_operands(shape, dtype))
    b = data.draw(broadcast_operands(shape, dtype))
    out = data.draw(outputs(shape, dtype) if beta == 0 else operands(shape, dtype))
    previous = out.copy()
    op_tensor(op, a, b, out, alpha1, alpha2, beta)
    combine = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y}[op]
    if is_int:
        expected = combine(alpha1 * exact_ints(a), alpha2 * exact_ints(b)) + (beta * exact_ints(previous) if beta else 0)
        np.testing.assert_array_equal(out.astype(np.int64), wrap_int(np.broadcast_to(expected, shape), dtype))
        return
    x, y = alpha1 * to_f64(a), alpha2 * to_f64(b)
    term = combine(x, y)
    expected = term + (beta * to_f64(previous) if beta else 0.0)
    scale = (np.abs(term) if op == "mul" else np.abs(x) + np.abs(y)) + (abs(beta) * np.abs(to_f64(previous)) if beta else 0)
    assert_close(out, expected, dtype, scale=scale, what=op)


def test_op_tensor_beta_zero_ignores_nan_in_out():
    a, b = np.ones((4, 5), np.float32), np.full((5,), 2.0, np.float32)
    out = np.full((4, 5), np.nan, np.float32)
    op_tensor("add", a, b, out, beta=0.0)
    assert (out == 3.0).all()


def test_integer_add_wraps():
    out = np.empty(2, np.int8)
    op_tensor("add", np.array([127, -128], np.int8), np.array([1, -1], np.int8), out)
    assert out.tolist() == [-128, 127]


def int_div(a, b):
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def int_pow(a, b, dtype):
    if b >= 0:
        return pow(a, b, 1 << (8 * np.dtype(dtype).itemsize))
    return 1 if a == 1 else ((-1) ** (b % 2) if a == -1 else 0)


@pytest.mark.parametrize("op", ["div", "maximum", "minimum", "pow"])
@given(dtype=st.sampled_from(NUMERIC), shape=shapes(min_dims=1), data=st.data())
@SETTINGS
def test_binary(op, dtype, shape, data):
    is_int = dtype in INTS
    low, high = (-3.0, 3.0) if op == "pow" else (-10.0, 10.0)
    a = data.draw(broadcast_operands(shape, dtype))
    b = data.draw(broadcast_operands(shape, dtype, low, high))
    out = data.draw(outputs(shape, dtype))
    binary(op, a, b, out)
    if is_int:
        fn = {"div": int_div, "maximum": max, "minimum": min, "pow": lambda x, y: int_pow(x, y, dtype)}[op]
        pairs = np.broadcast_arrays(exact_ints(a), exact_ints(b), np.empty(shape))[:2]
        expected = np.frompyfunc(fn, 2, 1)(*pairs)
        np.testing.assert_array_equal(out.astype(np.int64), wrap_int(expected, dtype))
        return
    x, y = to_f64(a), to_f64(b)
    with np.errstate(all="ignore"):
        expected = {"div": np.divide, "maximum": np.maximum, "minimum": np.minimum, "pow": np.power}[op](x, y)
    assert_close(out, expected, dtype, ulps=TRANSCENDENTAL_ULPS if op == "pow" else 4, what=op)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("in_place", [False, True])
def test_float_power_of_a_broadcast_two_is_the_exact_square(dtype, in_place):
    """x ** 2 with the exponent one broadcast value: x * x (torch's result), bit for bit, specials included."""
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(200_000) * 300).astype(dtype)
    x[:7] = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-30, -3e5]
    expected = (x.astype(np.float64) ** 2).astype(dtype) if dtype != np.float16 else \
        np.square(x.astype(np.float32)).astype(dtype)
    two = np.full((1,), 2, dtype) if in_place else np.broadcast_to(np.array(2, dtype), x.shape)  # (either form)
    base = x.copy()
    out = x if in_place else np.full_like(x, 7)
    binary("pow", x, two, out)
    np.testing.assert_array_equal(out.view(np.uint8), expected.view(np.uint8))
    three = np.broadcast_to(np.array(3, dtype), x.shape)  # other exponents: powf as before
    with np.errstate(all="ignore"):
        binary("pow", base[7:], three[7:], out[7:])
        np.testing.assert_allclose(out[7:], np.power(base[7:].astype(np.float64), 3).astype(dtype), rtol=1e-3)


def test_integer_div_truncates_and_div_by_zero_is_zero():
    out = np.empty(5, np.int32)
    binary("div", np.array([7, -7, 7, -7, 5], np.int32), np.array([2, 2, -2, -2, 0], np.int32), out)
    assert out.tolist() == [3, -3, -3, 3, 0]


def test_maximum_propagates_nan():
    out = np.empty(2, np.float32)
    binary("maximum", np.array([np.nan, 1.0], np.float32), np.array([0.0, np.nan], np.float32), out)
    assert np.isnan(out).all()


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
@given(dtype=st.sampled_from(ALL), out_dtype=st.sampled_from(ALL), shape=shapes(min_dims=1), data=st.data())
@SETTINGS
def test_compare(op, dtype, out_dtype, shape, data):
    a = data.draw(broadcast_operands(shape, dtype, -2.0, 2.0))
    # b often equals a somewhere, so equality is exercised
    b = a if data.draw(st.booleans()) else data.draw(broadcast_operands(shape, dtype, -2.0, 2.0))
    if dtype in FLOATS:
        a = np.round(a.astype(np.float32)).astype(dtype)
        b = np.round(b.astype(np.float32)).astype(dtype)
    out = data.draw(outputs(shape, out_dtype))
    compare(op, a, b, out)
    ufunc = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
             "gt": np.greater, "ge": np.greater_equal}[op]
    expected = ufunc(exact_ints(a) if dtype in INTS else to_f64(a), exact_ints(b) if dtype in INTS else to_f64(b))
    np.testing.assert_array_equal(to_f64(out), np.broadcast_to(expected, shape).astype(np.float64))


@pytest.mark.parametrize("op", ["and", "or", "xor", "not"])
@given(dtype=st.sampled_from(ALL), out_dtype=st.sampled_from(ALL), shape=shapes(min_dims=1), data=st.data())
@SETTINGS
def test_logical(op, dtype, out_dtype, shape, data):
    a = data.draw(broadcast_operands(shape, dtype, -1.0, 1.0))
    b = data.draw(broadcast_operands(shape, dtype, -1.0, 1.0))
    if dtype in FLOATS:  # plenty of zeros
        a = np.where(np.abs(to_f64(a)) < 0.5, 0, a).astype(dtype)
    out = data.draw(outputs(shape, out_dtype))
    truth_a, truth_b = to_f64(a) != 0, to_f64(b) != 0
    if op == "not":
        logical_not(a, out)
        expected = ~truth_a
    else:
        logical(op, a, b, out)
        expected = {"and": truth_a & truth_b, "or": truth_a | truth_b, "xor": truth_a ^ truth_b}[op]
    np.testing.assert_array_equal(to_f64(out), np.broadcast_to(expected, shape).astype(np.float64))


FLOAT_REFERENCES = {
    "abs": np.abs, "neg": np.negative, "exp": np.exp, "log": np.log, "log2": np.log2, "log10": np.log10,
    "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "square": np.square, "reciprocal": lambda x: 1 / x,
    "sin": np.sin, "cos": np.cos, "floor": np.floor, "ceil": np.ceil, "round": np.rint, "sign": np.sign,
    "trunc": np.trunc, "expm1": np.expm1, "log1p": np.log1p,
}
INT_REFERENCES = {"abs": abs, "neg": lambda v: -v, "square": lambda v: v * v, "sign": lambda v: (v > 0) - (v < 0),
                  "floor": lambda v: v, "ceil": lambda v: v, "round": lambda v: v, "trunc": lambda v: v}


@pytest.mark.parametrize("op", sorted(UNARY_OPS))
@given(dtype=st.sampled_from(NUMERIC), shape=shapes(min_dims=1), data=st.data())
@SETTINGS
def test_unary(op, dtype, shape, data):
    if dtype in INTS and op not in INT_REFERENCES:
        with pytest.raises(TypeError):
            unary(op, np.zeros(shape, dtype), np.zeros(shape, dtype))
        return
    x = data.draw(broadcast_operands(shape, dtype))
    if op == "round" and dtype in FLOATS:  # make exact .5 ties common
        x = (np.round(to_f64(x) * 2) / 2).astype(dtype)
    out = data.draw(outputs(shape, dtype))
    unary(op, x, out)
    if dtype in INTS:
        expected = np.frompyfunc(INT_REFERENCES[op], 1, 1)(exact_ints(x))
        np.testing.assert_array_equal(out.astype(np.int64), wrap_int(np.broadcast_to(expected, shape), dtype))
        return
    with np.errstate(all="ignore"):
        expected = FLOAT_REFERENCES[op](to_f64(x))
    scale = np.maximum(np.abs(expected), 1.0) if op in ("sin", "cos") else None
    assert_close(out, expected, dtype, scale=scale, ulps=TRANSCENDENTAL_ULPS, what=op)


def test_round_is_half_to_even():
    out = np.empty(6, np.float32)
    unary("round", np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.6], np.float32), out)
    assert out.tolist() == [0.0, 2.0, 2.0, -0.0, -2.0, 3.0]


def test_large_contiguous_add_is_exact_in_float32():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(1 << 18).astype(np.float32), rng.standard_normal(1 << 18).astype(np.float32)
    out = np.empty_like(a)
    op_tensor("add", a, b, out)
    assert np.array_equal(out, a + b)
    assert math.isfinite(float(out.sum()))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_neg_with_16_byte_input_stride_into_strided_output(dtype):
    # numpy 2.4's own np.negative gets exactly this layout wrong; the kernel must not
    x = np.arange(1, 41).astype(dtype)[::4]
    out = np.zeros(30, dtype)[::3]
    unary("neg", x, out)
    assert out.tolist() == [-v for v in x.tolist()]
