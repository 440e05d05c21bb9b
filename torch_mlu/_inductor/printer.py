"""Index expressions (sympy) printed as numba source: Python's syntax, with numba-compatible spellings of what
Inductor's Python printer leaves to torch (sym_float, _sym_sqrt) and integer results where Python's math returns
ints for floats."""
from __future__ import annotations

import sympy
from torch._inductor.codegen.common import PythonPrinter
from torch.utils._sympy.printers import PRECEDENCE


class NumbaPrinter(PythonPrinter):
    """sympy -> numba expression text (index arithmetic is int64; floor division and modulo are Python's, which
    equal C's for the non-negative indices Inductor produces)."""

    def _print_ToFloat(self, expr: sympy.Expr) -> str:
        return f"np.float64({self._print(expr.args[0])})"

    def _print_OpaqueUnaryFn_sqrt(self, expr: sympy.Expr) -> str:
        return f"math.sqrt({self._print(expr.args[0])})"

    def _print_FloatTrueDiv(self, expr: sympy.Expr) -> str:
        lhs, rhs = expr.args
        return f"(np.float64({self._print(lhs)}) / np.float64({self._print(rhs)}))"

    def _print_IntTrueDiv(self, expr: sympy.Expr) -> str:
        lhs, rhs = expr.args
        return f"(np.float64({self._print(lhs)}) / np.float64({self._print(rhs)}))"

    def _print_RoundToInt(self, expr: sympy.Expr) -> str:
        return f"np.int64(np.rint({self._print(expr.args[0])}))"

    def _print_TruncToInt(self, expr: sympy.Expr) -> str:
        return f"np.int64(np.trunc({self._print(expr.args[0])}))"

    def _print_TruncToFloat(self, expr: sympy.Expr) -> str:
        return f"np.trunc({self._print(expr.args[0])})"

    def _print_Where(self, expr: sympy.Expr) -> str:
        c, p, q = (self.parenthesize(arg, PRECEDENCE["Atom"] - 0.5) for arg in expr.args)
        return f"({p} if {c} else {q})"

    def _print_Infinity(self, expr: sympy.Expr) -> str:
        return "np.inf"

    def _print_NegativeInfinity(self, expr: sympy.Expr) -> str:
        return "-np.inf"

    def _print_NaN(self, expr: sympy.Expr) -> str:
        return "np.nan"

    def _print_BooleanTrue(self, expr: sympy.Expr) -> str:
        return "True"

    def _print_BooleanFalse(self, expr: sympy.Expr) -> str:
        return "False"


printer = NumbaPrinter()
pexpr = printer.doprint
