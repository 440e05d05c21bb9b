"""The numba kernel of one Inductor group: pointwise, reduction and persistent-reduction kernels as scalar loops.

Inductor's SIMD machinery (tiling, range trees, the node schedule with its reduction markers) decides what a kernel
computes; this class decides how it is written. A kernel is one numba function over the kernel's tiles:

    def kernel(start, stop, out_ptr0, in_ptr0, ks0, xnumel, r0_numel):
        for xindex in range(start, stop):            # the outermost tile: split over the host cores
            x0 = xindex % 64                         # index variables
            tmp0 = in_ptr0[x0]                       # loads (x only: hoisted out of the reduction loops)
            acc0 = np.float64(0.0)                   # one loop over the reduction range per reduction stage
            for r0_index in range(r0_numel):
                tmp1 = in_ptr0[r0_index + 64 * x0]
                acc0 = h.acc_add(acc0, np.float64(tmp1))
            tmp2 = np.float32(acc0)
            out_ptr0[x0] = np.float32(tmp2)          # reduction results stored after their loop

Buffers are flat 1-D views of device memory (16-bit floats as uint16 bit patterns) indexed with Inductor's index
expressions; values are computed in Inductor's compute types.

Reductions: each stage (a reduction and what follows it before the next reduction needs its result) is one loop
over the reduction range (Inductor's looped reduction). When the reduction range is static and small enough
(`PERSISTENT_RNUMEL`), the kernel is a *persistent reduction*: values computed in one stage that a later stage needs
again are kept in a per-row scratch array instead of being loaded and computed again, so each input element is read
from device memory once, as a GPU keeps a persistent reduction's row in registers.
"""
from __future__ import annotations

import itertools
from typing import Any, Optional

import sympy
import torch
from torch._inductor.codegen.common import CSEVariable, DeferredLine, IndentedBuffer, SizeArg, TensorArg, \
    WorkspaceArg
from torch._inductor.codegen.simd import SIMDKernel
from torch._inductor.utils import Placeholder
from torch._inductor.virtualized import V
from torch.utils._ordered_set import OrderedSet
from torch.utils._sympy.symbol import SymT, free_symbol_is_type, symbol_is_type

from . import dtypes as D
from . import persistent
from .overrides import NumbaOverrides, dtype_of
from .printer import pexpr
from .reductions import reduction_code
from .unsupported import Unsupported

#: Static reduction ranges up to this many elements are persistent reductions (per-row scratch for values reused
#: across stages; 64K elements = 256-512 KiB per kept value and host thread).
PERSISTENT_RNUMEL = 1 << 16

def _stored(value, dtype: torch.dtype) -> str:
    """The element written to a buffer of `dtype`: the value itself when it already has the buffer's type."""
    if isinstance(value, CSEVariable) and value.dtype == dtype and dtype in (torch.float32, torch.float64,
                                                                             torch.int32, torch.int64):
        return str(value)
    return D.store_expr(str(value), dtype)


class NumbaKernel(SIMDKernel):
    """Generates the numba source of one fused kernel."""

    overrides = NumbaOverrides  # type: ignore[assignment]
    sexpr = staticmethod(pexpr)
    kexpr = staticmethod(pexpr)
    allow_block_ptr = False

    def __init__(self, tiling: dict[str, sympy.Expr], **kwargs: Any) -> None:
        super().__init__(tiling, **kwargs)
        self.outside_loop_vars: OrderedSet[Any] = OrderedSet()
        self.reduction_prefix = IndentedBuffer()
        self.post_loop = IndentedBuffer()
        self.accumulators = itertools.count()
        self.masked_depth = 0
        #: (vector ops per iteration, True when the stage loops over the reduction range), for the cost model
        self.stages: list[tuple[int, bool]] = []
        #: a store with atomic_add: the kernel runs on one host thread (no two threads add to the same element)
        self.serial = False
        self.persistent = self._decide_persistent()
        #: persistent reductions: the stage (loop) index each CSE variable of a reduction loop was defined in
        self.stage_index = 0
        self.var_stage: dict[str, int] = {}
        #: persistent reductions: temporaries whose definition is a constant (defined again where reused)
        self.var_constant: dict[str, str] = {}
        #: typed constants, defined once at module level (numba freezes them: no call to type and lower per use)
        self.constants: dict[str, str] = {}
        #: persistent reductions: the temporaries kept in per-row arrays (set when the source is written)
        self._rows: list[str] = []

    # ---- kernel-wide choices -------------------------------------------------------------------------------------

    def _decide_persistent(self) -> bool:
        if not self.inside_reduction:
            return False
        numel = sympy.S.One
        for prefix, size in self.numels.items():
            if prefix.startswith("r"):
                numel = numel * size
        return isinstance(numel, (int, sympy.Integer)) and int(numel) <= PERSISTENT_RNUMEL

    def should_use_persistent_reduction(self) -> bool:
        # Inductor's flow for looped reductions (a loop closed at each stage) is the one scalar code needs; the
        # persistent form is this kernel's own: see `persistent`.
        return False

    def want_no_x_dim(self) -> bool:
        return False

    def get_index_dtype_as_torch_dtype(self) -> torch.dtype:
        return torch.int64

    def dtype_to_str(self, dtype: torch.dtype) -> str:
        return D.numba_scalar(dtype)

    def constant_name(self, text: str) -> str:
        """The module-level name of the typed constant `text` (e.g. "np.float32(0.5)" -> "c0")."""
        name = self.constants.get(text)
        if name is None:
            name = self.constants[text] = f"c{len(self.constants)}"
        return name

    # ---- index variables -----------------------------------------------------------------------------------------

    def codegen_iteration_ranges_entry(self, entry) -> None:
        line = f"{entry.name} = {self.kexpr(self.rename_indexing(entry.expr))}"
        if entry.root.is_loop:
            self.indexing_code.writeline(line)
        else:
            self.body.writeline(line)

    @staticmethod
    def _has_rindex(index: sympy.Expr) -> bool:
        return any(symbol_is_type(s, (SymT.R0_INDEX, SymT.R1_INDEX)) for s in index.free_symbols)

    def _in_reduction_loop(self) -> bool:
        return self.inside_reduction and any(tree.is_loop for tree in self.range_trees)

    # ---- memory --------------------------------------------------------------------------------------------------

    def load(self, name: str, index: sympy.Expr) -> CSEVariable:
        var = self.args.input(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        D.storage(dtype)
        line = D.load_expr(f"{var}[{self.index_to_str(index)}]", dtype)
        indirect = free_symbol_is_type(index, SymT.TMP)
        hoisted = not indirect and not self.masked_depth and self._in_reduction_loop() \
            and not self._has_rindex(index)
        if indirect or self.masked_depth:
            buffer = self.compute
        elif hoisted:
            buffer = self.body
        else:
            buffer = self.loads
        result = self.cse.generate(buffer, line, dtype=D.compute_dtype(dtype))
        if hoisted or (not self.inside_reduction and not self.masked_depth):
            self.outside_loop_vars.add(result)
        return result

    def store(self, name: str, index: sympy.Expr, value: CSEVariable, mode=None) -> None:
        var = self.args.output(name)
        index = self.prepare_indexing(index)
        dtype = V.graph.get_dtype(name)
        element = f"{var}[{self.index_to_str(index)}]"
        if mode is None:
            line = f"{element} = {_stored(value, dtype)}"
        elif mode == "atomic_add":
            self.serial = True
            line = f"{element} = {D.store_expr(f'{D.load_expr(element, dtype)} + {value}', dtype)}"
        else:
            raise Unsupported(f"store mode {mode}")
        self.stores.writeline(DeferredLine(name, line))
        if not self.inside_reduction:
            self.outside_loop_vars.add(value)

    def store_reduction(self, name: str, index: sympy.Expr, value: CSEVariable) -> None:
        var = self.args.output(name)
        self.inside_reduction = False
        try:
            index = self.prepare_indexing(index)
            text = self.index_to_str(index)
        finally:
            self.inside_reduction = True
        dtype = V.graph.get_dtype(name)
        self.post_loop.writeline(DeferredLine(name, f"{var}[{text}] = {_stored(value, dtype)}"))

    def check_bounds(self, expr: sympy.Expr, size: sympy.Expr, lower: bool, upper: bool) -> None:
        if not (lower or upper):
            return
        index, limit = self.index_to_str(expr), self.index_to_str(self.rename_indexing(size))
        self.compute.writeline(f"h.check_index({index}, {limit}, 0)")

    def masked_block(self, mask, body, other):
        """ops.masked: `body()` under `if mask:`, `other` otherwise (loads inside never run when masked off)."""
        scoped = IndentedBuffer()
        self.masked_depth += 1
        try:
            with self.swap_buffers(scoped):
                result = body()
        finally:
            self.masked_depth -= 1
        result_dtype = dtype_of(result) or torch.float32
        other_text = NumbaOverrides.constant(other, result_dtype) if not isinstance(other, CSEVariable) \
            else str(other)
        key = f"masked({mask})\n{scoped.getvalue()}\n{result}\n{other_text}"
        found = self.cse.try_get(key)
        if found is not None:
            return found
        var = self.cse.newvar(dtype=result_dtype)
        self.cse.put(key, var)
        # one buffer for the whole block: splicing dedents a buffer to its least indented line
        block = IndentedBuffer()
        block.writeline(f"if {mask}:")
        with block.indent():
            block.splice(scoped)
            block.writeline(f"{var} = {D.numba_scalar(result_dtype)}({result})")
        block.writeline("else:")
        with block.indent():
            block.writeline(f"{var} = {D.numba_scalar(result_dtype)}({other_text})")
        self.compute.splice(block)
        return var

    # ---- reductions ----------------------------------------------------------------------------------------------

    def reduction(self, dtype, src_dtype, reduction_type, value):
        assert self.inside_reduction
        cache_key = (src_dtype, reduction_type, value)
        if cache_key in self.cse.reduction_cache:
            return self.cse.reduction_cache[cache_key]
        result = reduction_code(self, dtype, src_dtype, reduction_type, value)
        self.cse.reduction_cache[cache_key] = result
        return result

    def accumulator(self, init: str) -> str:
        """A new accumulator, set to `init` before the reduction loop."""
        name = f"acc{next(self.accumulators)}"
        self.reduction_prefix.writeline(f"{name} = {init}")
        return name

    def reduction_result(self, text: str, dtype: torch.dtype) -> CSEVariable:
        """A variable set to `text` after the reduction loop (a reduction's result)."""
        var = self.cse.newvar(dtype=D.compute_dtype(dtype))
        self.post_loop.writeline(f"{var} = {text}")
        self.outside_loop_vars.add(var)
        return var

    def reduction_index(self) -> str:
        """The linear index within the reduction range (r0 the slowest when there are several)."""
        text = ""
        for tree in self.range_trees:
            if tree.is_reduction:
                numel = self._numel_text(tree)
                text = f"{tree.prefix}index" if not text else f"({text}) * {numel} + {tree.prefix}index"
        return text

    # ---- loops ---------------------------------------------------------------------------------------------------

    def _numel_text(self, tree) -> str:
        numel = V.graph.sizevars.simplify(tree.numel)
        if isinstance(numel, (int, sympy.Integer)):
            return str(int(numel))
        return f"{tree.prefix}numel"

    @staticmethod
    def _ops_in(*buffers: IndentedBuffer) -> int:
        return sum(1 for buffer in buffers for line in buffer.getvalue().splitlines() if "=" in line)

    def codegen_body(self) -> None:
        if not (self.indexing_code or self.loads or self.compute or self.stores or self.post_loop
                or self.reduction_prefix):
            return
        loop_trees = [tree for tree in self.range_trees if tree.is_loop]
        if self.inside_reduction and loop_trees:
            self.body.splice(self.reduction_prefix)
            depth = len(loop_trees)
            for level, tree in enumerate(loop_trees):
                with self.body.indent(offset=level):
                    self.body.writeline(f"for {tree.prefix}index in range({self._numel_text(tree)}):")
            with self.body.indent(offset=depth):
                inner = IndentedBuffer()
                for part in (self.indexing_code, self.loads, self.compute, self.stores):
                    inner.splice(part)
                if self.persistent:
                    persistent.mark_stage(inner.getvalue(), self.stage_index, self.var_stage, self.var_constant)
                self.body.splice(inner)
                if not inner.getvalue().strip():
                    self.body.writeline("pass")
            self.body.splice(self.post_loop)
            self.stages.append((self._ops_in(self.loads, self.compute), True))
            if self.persistent:
                # values of this stage stay valid (the kernel keeps them per row, see `_keep_rows`)
                self.stage_index += 1
            else:
                self.cse.invalidate(self.outside_loop_vars)
            for tree in loop_trees:
                tree.cache_clear()
        else:
            for part in (self.indexing_code, self.loads, self.compute, self.stores, self.post_loop):
                self.body.splice(part)
            self.stages.append((self._ops_in(self.loads, self.compute), False))
        for part in (self.indexing_code, self.loads, self.compute, self.stores, self.post_loop,
                     self.reduction_prefix):
            part.clear()

    # ---- the kernel source ---------------------------------------------------------------------------------------

    def kernel_params(self) -> tuple[list[tuple[str, str, Any]], list[str]]:
        """([(parameter, kind, torch dtype or None)], call arguments) in call order; kind is "in", "out",
        "inout" or "size"; the numels of the tiles follow."""
        _, call_args, precompile_args, _ = self.args.python_argdefs()
        params = []
        for arg in precompile_args:
            if isinstance(arg, TensorArg):
                if arg.name.startswith("in_out_ptr"):
                    kind = "inout"
                elif arg.name.startswith("out_ptr"):
                    kind = "out"
                else:
                    kind = "in"
                params.append((arg.name, kind, arg.dtype))
            elif isinstance(arg, SizeArg):
                params.append((arg.name, "size", None))
            elif isinstance(arg, WorkspaceArg):
                raise Unsupported("kernel workspaces")
            else:
                raise Unsupported(f"kernel argument {arg!r}")
        return params, list(call_args)

    def codegen_kernel(self, name: Optional[str] = None) -> str:
        self.codegen_body()
        params, _ = self.kernel_params()
        numels = [f"{tree.prefix}numel" for tree in self.range_trees]
        body = self.body.getvalue()
        if self.persistent:
            body, self._rows = persistent.keep_rows(body, self.var_stage, self.var_constant, self.reduction_index())
        outer_trees = [tree for tree in self.range_trees if not tree.is_reduction]
        code = IndentedBuffer()
        for text, constant in self.constants.items():
            code.writeline(f"{constant} = {text}")
        if self.constants:
            code.writeline("")
            code.writeline("")
        names = ["start", "stop"] + [p for p, _, _ in params] + numels
        code.writeline(f"def {name or str(Placeholder.KERNEL_NAME)}({', '.join(names)}):")
        with code.indent():
            if self.persistent and self._rows:
                rnumel = self._reduction_numel()
                for row in self._rows:
                    code.writeline(f"{row}_row = np.empty({rnumel}, {self._row_dtype(row)})")
            for level, tree in enumerate(outer_trees):
                with code.indent(offset=level):
                    bounds = "start, stop" if level == 0 else self._numel_text(tree)
                    code.writeline(f"for {tree.prefix}index in range({bounds}):")
            with code.indent(offset=len(outer_trees)):
                code.splice(body)
                if not body.strip():
                    code.writeline("pass")
        return code.getvalue()

    # ---- persistent reductions: values reused across stages kept per row -----------------------------------------

    def _reduction_numel(self) -> int:
        numel = 1
        for tree in self.range_trees:
            if tree.is_reduction:
                numel *= int(V.graph.sizevars.simplify(tree.numel))
        return numel

    def _row_dtype(self, name: str) -> str:
        var = self.cse.varname_map.get(name)
        dtype = var.dtype if var is not None and var.dtype is not None else torch.float32
        return D.numba_scalar(dtype)

    # ---- launching -----------------------------------------------------------------------------------------------

    def call_kernel(self, name: str, node: Any = None, deallocate_ws: bool = True) -> None:
        wrapper = V.graph.wrapper_code
        for size in self.args.sizevars:
            wrapper.ensure_size_computed(size)
        _, call_args = self.kernel_params()
        args: list[Any] = list(call_args)
        for tree in self.range_trees:
            numel = V.graph.sizevars.simplify(tree.numel)
            if isinstance(numel, (int, sympy.Integer)):
                args.append(str(int(numel)))
            elif isinstance(numel, sympy.Symbol):
                args.append(str(numel))
            else:
                args.append(str(wrapper.generate_numel_expr(name, tree).inner))
        wrapper.generate_kernel_call(name, args, device=V.graph.get_current_device_or_throw(), triton=False)

    def kernel_meta(self) -> dict:
        """What the launcher needs besides the source: parameters, tiles, stages for the cost model."""
        params, _ = self.kernel_params()
        return {
            "params": [(p, kind, str(dtype).replace("torch.", "") if dtype is not None else None)
                       for p, kind, dtype in params],
            "trees": [(tree.prefix, bool(tree.is_reduction)) for tree in self.range_trees],
            "stages": list(self.stages),
            "serial": self.serial,
            "persistent": bool(self.persistent),
        }

    def codegen_nan_check(self) -> None:
        raise Unsupported("nan checks in mlu kernels")

