"""Inductor's pointwise ops (`ops.add`, `ops.exp`, `ops.where`, ...) as numba scalar expressions.

Each method returns the source text of one expression over the kernel's scalar variables; the kernel's common
subexpression eliminator names it. Values follow Inductor's compute types: float16 and bfloat16 are computed in
float32 (loads widen, stores round), every other dtype in itself. numba types arithmetic like NumPy scalars, which
would widen float32 with a float64 literal or small integers to int64: constants are typed and narrow integer results
are cast back, so a kernel computes in the dtypes Inductor chose and matches eager torch.

What numba cannot evaluate (the special functions without a numba implementation: Bessel, gamma-family, orthogonal
polynomials, ...) is listed in `UNSUPPORTED`; `torch_mlu._inductor.fallback` runs the aten ops that need them as
eager mlu ops, so a kernel never contains them.
"""
from __future__ import annotations

import math

import sympy
import torch
from torch._inductor.codegen.common import CSEVariable, OpOverrides, pointwise_overrides_data
from torch._inductor.utils import get_bounds_index_expr
from torch._inductor.virtualized import V

from . import dtypes as D
from .unsupported import Unsupported

#: Special functions of Inductor's pointwise set that the numba code generator implements.
IMPLEMENTED_SPECIAL = frozenset({"fma", "mul_rn", "ndtr"})
#: Inductor op names this backend does not generate (their aten ops fall back to the eager mlu op).
UNSUPPORTED = frozenset(set(pointwise_overrides_data) - IMPLEMENTED_SPECIAL) | frozenset(
    {"inline_asm_elementwise", "halide_clamp", "dot", "partial_accumulate", "bucketize", "scan", "sort"})


def dtype_of(value) -> torch.dtype | None:
    """The dtype of an op argument: a CSE variable's, or the Python type of a number."""
    if isinstance(value, CSEVariable):
        return value.dtype
    if isinstance(value, bool):
        return torch.bool
    if isinstance(value, int):
        return torch.int64
    if isinstance(value, float):
        return torch.float64
    return None


def _is_float(*values) -> bool:
    return any((d := dtype_of(v)) is not None and d.is_floating_point for v in values)


def _narrow_int(*values) -> torch.dtype | None:
    """The common integer dtype narrower than 64 bits of integer operands (None when none is narrow)."""
    found = None
    for value in values:
        dtype = dtype_of(value)
        if dtype is None or dtype.is_floating_point or dtype == torch.bool:
            continue
        if dtype.itemsize < 8 and not isinstance(value, (int, float)):
            found = dtype if found is None or dtype.itemsize > found.itemsize else found
    return found


def _wrap_int(expr: str, *operands) -> str:
    """Cast an integer result back to its operands' narrow dtype (numba would keep it as int64)."""
    narrow = _narrow_int(*operands)
    if narrow is None or _is_float(*operands):
        return expr
    return f"{D.numba_scalar(narrow)}({expr})"


def float_literal(value: float, dtype: torch.dtype) -> str:
    """A typed float literal in the compute type of `dtype` (16-bit values rounded to their type first)."""
    value = float(value)
    if dtype in (torch.float16, torch.bfloat16) and math.isfinite(value):
        value = float(torch.tensor(value, dtype=dtype).item())
    scalar = D.numba_scalar(dtype)
    if math.isnan(value):
        text = "np.nan"
    elif math.isinf(value):
        text = "np.inf" if value > 0 else "-np.inf"
    else:
        text = repr(value)
    return f"{scalar}({text})"


def constant_text(value, dtype: torch.dtype) -> str:
    """The typed numba expression of a constant of `dtype` (e.g. "np.float32(0.5)")."""
    if dtype == torch.bool:
        return "True" if value else "False"
    if dtype.is_floating_point:
        return float_literal(value, dtype)
    return f"{D.numba_scalar(dtype)}({int(value)})"


def _p(value) -> str:
    return OpOverrides.paren(str(value) if not isinstance(value, str) else value)


def _common(*values) -> tuple[str, ...]:
    """The operands as text, cast to their common compute dtype when their dtypes differ (numba would otherwise
    widen, e.g. float32 with an int32 constant to float64, where torch keeps float32)."""
    dtypes = [dtype_of(v) for v in values]
    known = [d for d in dtypes if d is not None]
    if len(set(known)) <= 1:
        return tuple(_p(v) for v in values)
    common = known[0]
    for dtype in known[1:]:
        common = torch.promote_types(common, dtype)
    scalar = D.numba_scalar(D.compute_dtype(common))
    return tuple(_p(v) if d == common else f"{scalar}({v})" for v, d in zip(values, dtypes))


def _float_or_int(float_form: str, int_helper: str) -> staticmethod:
    """A binary op whose float form is the expression `float_form` over {a} and {b} and whose integer form calls
    `int_helper(a, b)` (its result cast back to the operands' narrow integer type)."""
    def op(a, b) -> str:
        if _is_float(a, b):
            return float_form.format(a=_p(a), b=_p(b))
        return _wrap_int(f"{int_helper}({a}, {b})", a, b)
    return staticmethod(op)


class NumbaOverrides(OpOverrides):
    """Pointwise ops as numba scalar expressions."""

    # ---- values ------------------------------------------------------------------------------------------------

    @staticmethod
    def constant(value, dtype: torch.dtype) -> str:
        if dtype == torch.bool:
            return "True" if value else "False"
        return V.kernel.constant_name(constant_text(value, dtype))

    @staticmethod
    def index_expr(expr: sympy.Expr, dtype: torch.dtype):
        index = V.kernel.prepare_indexing(expr)
        text = V.kernel.index_to_str(index)
        return V.kernel.cse.generate(V.kernel.compute, f"{D.numba_scalar(dtype)}({text})",
                                     bounds=get_bounds_index_expr(expr), dtype=D.compute_dtype(dtype))

    @staticmethod
    def value_expr(expr: sympy.Expr, dtype: torch.dtype):
        return NumbaOverrides.index_expr(expr, dtype)

    @staticmethod
    def to_dtype(x, dtype: torch.dtype, src_dtype: torch.dtype | None = None, use_compute_types: bool = True) -> str:
        src = src_dtype if src_dtype is not None else dtype_of(x)
        if dtype == torch.bool:
            return f"({_p(x)} != 0)"
        if dtype == torch.float16:
            return f"h.round_half({x})"
        if dtype == torch.bfloat16:
            return f"h.round_bfloat16({x})"
        if not dtype.is_floating_point and src is not None and src.is_floating_point:
            # float -> integer truncates toward zero (C), through int64 so out-of-range values wrap as on hardware
            if dtype == torch.int64:
                return f"np.int64({x})"
            return f"{D.numba_scalar(dtype)}(np.int64({x}))"
        return f"{D.numba_scalar(dtype)}({x})"

    @staticmethod
    def to_dtype_bitcast(x, dtype: torch.dtype, src_dtype: torch.dtype) -> str:
        if src_dtype.itemsize != dtype.itemsize:
            raise Unsupported(f"bitcast {src_dtype} -> {dtype}")
        bits = {2: "np.uint16", 4: "np.uint32", 8: "np.uint64"}
        # source value -> its bit pattern as an unsigned integer
        if src_dtype == torch.float16:
            word = f"h.f32_to_half({x})"
        elif src_dtype == torch.bfloat16:
            word = f"h.f32_to_bfloat16({x})"
        elif src_dtype == torch.float32:
            word = f"h.f32_bits(np.float32({x}))"
        elif src_dtype == torch.float64:
            word = f"np.uint64(h.f64_as_i64(np.float64({x})))"
        else:
            word = f"{bits[src_dtype.itemsize]}({x})"
        # bit pattern -> target value
        if dtype == torch.float16:
            return f"h.half_to_f32({word})"
        if dtype == torch.bfloat16:
            return f"h.bfloat16_to_f32({word})"
        if dtype == torch.float32:
            return f"h.bits_f32(np.uint32({word}))"
        if dtype == torch.float64:
            return f"h.i64_as_f64(np.int64({word}))"
        return f"{D.numba_scalar(dtype)}({word})"

    # ---- arithmetic --------------------------------------------------------------------------------------------

    @staticmethod
    def add(a, b) -> str:
        x, y = _common(a, b)
        return _wrap_int(f"{x} + {y}", a, b)

    @staticmethod
    def sub(a, b) -> str:
        x, y = _common(a, b)
        return _wrap_int(f"{x} - {y}", a, b)

    @staticmethod
    def mul(a, b) -> str:
        if dtype_of(a) == torch.bool and dtype_of(b) == torch.bool:
            return f"{_p(a)} and {_p(b)}"
        x, y = _common(a, b)
        return _wrap_int(f"{x} * {y}", a, b)

    @staticmethod
    def neg(x) -> str:
        return _wrap_int(f"-{_p(x)}", x)

    @staticmethod
    def truediv(a, b) -> str:
        x, y = _common(a, b)
        return f"{x} / {y}"

    @staticmethod
    def div_rn(a, b) -> str:
        return f"{_p(a)} / {_p(b)}"

    @staticmethod
    def mul_rn(a, b) -> str:
        return f"{_p(a)} * {_p(b)}"

    # floats by a numpy/math expression, integers by a helper of runtime/helpers.py (cast back to a narrow type)
    floordiv = _float_or_int("np.floor({a} / {b})", "h.floordiv")
    truncdiv = _float_or_int("np.trunc({a} / {b})", "h.truncdiv")
    mod = _float_or_int("np.fmod({a}, {b})", "h.int_fmod")
    fmod = mod
    remainder = _float_or_int("h.float_remainder({a}, {b})", "h.int_remainder")
    pow = _float_or_int("math.pow({a}, {b})", "h.int_pow")

    @staticmethod
    def fma(x, y, z) -> str:
        return f"{_p(x)} * {_p(y)} + {_p(z)}"

    @staticmethod
    def abs(x) -> str:
        return _wrap_int(f"abs({x})", x)

    @staticmethod
    def sign(x) -> str:
        # torch.sign: -1, 0 or 1, and 0 for NaN (as torch's CPU kernels)
        scalar = D.numba_scalar(D.compute_dtype(dtype_of(x) or torch.float32))
        return f"{scalar}(({_p(x)} > 0) - ({_p(x)} < 0))"

    @staticmethod
    def signbit(x) -> str:
        if _is_float(x):
            return f"np.signbit({x})"
        return f"({_p(x)} < 0)"

    @staticmethod
    def ldexp(a, b) -> str:
        return f"np.ldexp({a}, np.int32({b}))"

    @staticmethod
    def where(cond, a, b) -> str:
        x, y = _common(a, b)
        return f"({x} if {cond} else {y})"

    # ---- math functions beyond the tables below (numba keeps float32 in float32) ------------------------------

    @staticmethod
    def rsqrt(x) -> str:
        one = "np.float64(1.0)" if dtype_of(x) == torch.float64 else "np.float32(1.0)"
        return f"{one} / np.sqrt({x})"

    @staticmethod
    def erf(x) -> str:
        if dtype_of(x) == torch.float64:
            return f"math.erf({x})"
        return f"h.erf32({x})"

    @staticmethod
    def erfinv(x) -> str:
        scalar = D.numba_scalar(dtype_of(x) or torch.float32)
        return f"{scalar}(h.erfinv({x}))"

    @staticmethod
    def ndtr(x) -> str:
        scalar = D.numba_scalar(dtype_of(x) or torch.float32)
        return f"{scalar}(0.5 * math.erfc(-np.float64({x}) * {1.0 / math.sqrt(2.0)!r}))"

    @staticmethod
    def frexp(x):
        cache_key = f"frexp({x})"
        found = V.kernel.cse.try_get(cache_key)
        if found is not None:
            return found
        mantissa = V.kernel.cse.newvar(dtype=dtype_of(x))
        exponent = V.kernel.cse.newvar(dtype=torch.int32)
        V.kernel.compute.writeline(f"{mantissa}, {exponent} = np.frexp({x})")
        V.kernel.cse.put(cache_key, (mantissa, exponent))
        return mantissa, exponent

    # ---- logic (comparisons, the logical and bitwise binary ops: the tables below) ------------------------------------

    @staticmethod
    def logical_not(a) -> str:
        return f"{_p(a)} == 0"

    @staticmethod
    def bitwise_not(x) -> str:
        if dtype_of(x) == torch.bool:
            return f"not {_p(x)}"
        return _wrap_int(f"~{_p(x)}", x)

    # ---- randomness (Philox, counter based: the same (seed, offset) always gives the same number) --------------

    @staticmethod
    def randint64(seed, offset, low, high) -> str:
        return f"h.randint64({seed}, {offset}, {low}, {high})"

    # ---- control -----------------------------------------------------------------------------------------------

    @staticmethod
    def masked(mask, body, other):
        """`body()` where `mask` holds, `other` elsewhere: an if/else block, so masked-off loads never run."""
        return V.kernel.masked_block(mask, body, other)

    @staticmethod
    def device_assert_async(cond, msg) -> None:
        V.kernel.compute.writeline(f"if not ({cond}):")
        V.kernel.compute.writeline(f"    raise AssertionError({msg!r})")


# ---- the ops that are one function or one operator each: generated from these tables -----------------------------

#: one-argument math functions: Inductor op -> the numba function it is (numba keeps float32 in float32)
MATH_FUNCTIONS = {
    "exp": "math.exp", "exp2": "np.exp2", "expm1": "math.expm1", "log": "np.log", "log2": "np.log2",
    "log10": "np.log10", "log1p": "np.log1p", "sqrt": "np.sqrt", "sin": "math.sin", "cos": "math.cos",
    "tan": "math.tan", "asin": "np.arcsin", "acos": "np.arccos", "atan": "math.atan", "sinh": "math.sinh",
    "cosh": "math.cosh", "tanh": "math.tanh", "asinh": "math.asinh", "acosh": "np.arccosh", "atanh": "np.arctanh",
    "erfc": "math.erfc", "lgamma": "math.lgamma",
}
#: two-argument functions of floats: Inductor op -> the numba function
TWO_ARGUMENT_FUNCTIONS = {"atan2": "math.atan2", "copysign": "np.copysign", "nextafter": "np.nextafter",
                          "hypot": "np.hypot"}
#: float classification: Inductor op -> the numba test (an integer is never inf or NaN)
CLASSIFICATIONS = {"isinf": "np.isinf", "isnan": "np.isnan"}
#: the extremes: Inductor op -> the helpers of runtime/helpers.py for floats (NaN propagates, as torch) and integers
EXTREMES = {"maximum": ("h.maximum", "h.int_maximum"), "minimum": ("h.minimum", "h.int_minimum")}
#: logical binary ops of the truth values (x != 0): Inductor op -> the Python operator
LOGICAL = {"logical_and": "and", "logical_or": "or", "logical_xor": "!="}
#: counter-based random numbers of (seed, offset): Inductor op -> the Philox helper of runtime/helpers.py
RANDOM = {"rand": "h.rand", "randn": "h.randn"}
#: comparisons of two values brought to one type (`_common`): Inductor op -> the operator
COMPARISONS = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
#: bitwise binary ops, wrapped back to their narrow integer type (`_wrap_int`): Inductor op -> the operator
BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^", "bitwise_left_shift": "<<",
           "bitwise_right_shift": ">>"}
#: rounding to an integral value: Inductor op -> the numba function (integers are their own rounding); the
#: `<op>_to_int` forms convert the rounded value to the dtype asked for
ROUNDING = {"floor": "np.floor", "ceil": "np.ceil", "trunc": "np.trunc", "round": "np.rint"}


def _generated(name: str, text):
    method = staticmethod(text)
    text.__name__ = text.__qualname__ = name
    setattr(NumbaOverrides, name, method)


for _name, _function in MATH_FUNCTIONS.items():
    _generated(_name, lambda x, function=_function: f"{function}({x})")
for _name, _function in TWO_ARGUMENT_FUNCTIONS.items():
    _generated(_name, lambda a, b, function=_function: f"{function}({a}, {b})")
for _name, _function in CLASSIFICATIONS.items():
    _generated(_name, lambda x, function=_function: f"{function}({x})" if _is_float(x) else "False")
for _name, _function in RANDOM.items():
    _generated(_name, lambda seed, offset, function=_function: f"{function}({seed}, {offset})")
for _name, _operator in LOGICAL.items():
    _generated(_name, lambda a, b, operator=_operator: f"({_p(a)} != 0) {operator} ({_p(b)} != 0)")


def _extreme(float_helper: str, int_helper: str):
    def extreme(a, b) -> str:
        x, y = _common(a, b)
        if _is_float(a, b):
            return f"{float_helper}({x}, {y})"
        return _wrap_int(f"{int_helper}({x}, {y})", a, b)
    return extreme


for _name, (_float_helper, _int_helper) in EXTREMES.items():
    _generated(_name, _extreme(_float_helper, _int_helper))


def _comparison(operator: str):
    def compare(a, b) -> str:
        x, y = _common(a, b)
        return f"{x} {operator} {y}"
    return compare


for _name, _operator in COMPARISONS.items():
    _generated(_name, _comparison(_operator))
for _name, _operator in BITWISE.items():
    _generated(_name, lambda a, b, operator=_operator: _wrap_int(f"{_p(a)} {operator} {_p(b)}", a, b))
for _name, _function in ROUNDING.items():
    _generated(_name, lambda x, function=_function: f"{function}({x})" if _is_float(x) else str(x))
    _generated(f"{_name}_to_int",
               lambda x, dtype, function=_function: f"{D.numba_scalar(dtype)}({function}({x}))")


def _unsupported(name: str):
    def fail(*args, **kwargs):
        raise Unsupported(f"the mlu numba code generator has no '{name}'")
    fail.__name__ = name
    return staticmethod(fail)


for _name in UNSUPPORTED:
    setattr(NumbaOverrides, _name, _unsupported(_name))
