"""The elementwise code generator: a chain (a DAG) of elementwise ops becomes ONE numba kernel.

The builder's fusion pass gathers elementwise steps into an *expression* (a JSON-able dict stored in the fused
step's attrs, so it serializes with the model):

    {"nodes": [{"op": "input", "index": 0, "dtype": "float32"},
               {"op": "input", "index": 1, "dtype": "float32"},
               {"op": "binary", "fn": "add", "args": [0, 1], "dtype": "float32"},
               {"op": "unary", "fn": "relu", "params": {}, "args": [2], "dtype": "float32"}]}

(the last node is the output). The scalar form of each function is the one `functions.py` gives next to
its numpy form. A kernel is generated per expression and broadcast *pattern*: the output's axes are collapsed
(axes of extent 1 dropped, neighbours merged where every input is either full on both or broadcast on both), each
input is full ('f') or broadcast ('b') on each collapsed axis, and the innermost index of each input is therefore
the loop index or constant, which LLVM vectorises. Extents and strides are run-time arguments: one kernel serves
every batch size. Kernels are written to the disk cache (`mlusim.host.jitcache`) and compiled by numba once.

Numerics: 16-bit floats travel as uint16 bit patterns (numba has no float16), are computed in float32, and every
node whose type is float16 is rounded into half, so a fused chain rounds as the same ops one by one (each stored
in half); float32 and float64 compute in themselves. Transcendental functions are numba's (the C library's), which
may differ from numpy's in the last ulp.
"""
from __future__ import annotations

import json
import math
import re
import threading
from typing import Optional, Sequence

import numpy as np

from mlusim.host import jitcache
from mlusim.host.parallel import even_ranges, map_parallel, thread_count

from .functions import BINARY, LOGIC, UNARY


AREA = "magicmind"
#: outputs of at most this many elements run on the calling thread (a fork costs more than a core saves)
INLINE_ELEMENTS = 1 << 16
FLOAT_TYPES = ("float16", "float32", "float64")
#: scalar constants the function expressions name, in the compute type
CONSTANTS = {"zero": 0.0, "one": 1.0, "half": 0.5, "six": 6.0, "sqrt_half": 0.7071067811865476,
             "gelu_k": 0.7978845608028654, "gelu_c": 0.044715}
#: expressions whose numba form differs from the table's (math.floor/ceil return ints in numba)
_SCALAR_OVERRIDES = {"floor": "np.floor(a)", "ceil": "np.ceil(a)"}


def compute_type(dtypes: Sequence[str]) -> Optional[str]:
    """The compute type of a group whose float nodes have these types: float32 for 16/32-bit floats, float64 for
    float64; None when they mix float64 with narrower floats (such a group is not fused)."""
    floats = {d for d in dtypes if d in FLOAT_TYPES}
    if not floats:
        return "float32"
    if floats == {"float64"}:
        return "float64"
    if "float64" in floats:
        return None
    return "float32"


# ---- broadcast patterns -------------------------------------------------------------------------------------------

def collapse(out_shape: Sequence[int], in_shapes: Sequence[Sequence[int]]):
    """(dims, flags, strides): the collapsed output extents, per input a string of 'f'/'b' per collapsed axis, and
    per input its element stride on each collapsed axis (0 where broadcast). Every input must broadcast to
    out_shape (numpy rules)."""
    rank = len(out_shape)
    aligned = [(1,) * (rank - len(s)) + tuple(s) for s in in_shapes]
    axes = [a for a in range(rank) if out_shape[a] != 1]
    dims: list = []
    flags: list = [[] for _ in in_shapes]
    for axis in axes:
        axis_flags = ["f" if shape[axis] == out_shape[axis] else "b" for shape in aligned]
        if dims and all(f[-1] == g for f, g in zip(flags, axis_flags)):
            dims[-1] *= out_shape[axis]
            continue
        dims.append(out_shape[axis])
        for f, g in zip(flags, axis_flags):
            f.append(g)
    if not dims:
        dims, flags = [1], [["f"] for _ in in_shapes]
    strides = []
    for f in flags:
        stride, own = 1, []
        for extent, flag in zip(reversed(dims), reversed(f)):
            own.append(stride if flag == "f" else 0)
            if flag == "f":
                stride *= extent
        strides.append(own[::-1])
    return dims, ["".join(f) for f in flags], strides


# ---- source ------------------------------------------------------------------------------------------------------

def _scalar(node: dict) -> str:
    op, fn = node["op"], node.get("fn")
    if op == "binary":
        return BINARY[fn][1]
    if op == "unary":
        return _SCALAR_OVERRIDES.get(fn) or UNARY[fn][1]
    if op == "logic":
        return "not a" if fn == "not" else LOGIC[fn][1]
    raise KeyError(op)


def _params(node: dict, ctype: str, expression: str) -> list:
    """Lines defining the parameters the node's expression names (alpha, beta, low, high) in the compute type."""
    params = node.get("params") or {}
    lines = []
    for name, key, default in (("alpha", "alpha", None), ("beta", "beta", None), ("low", "min", "-np.inf"),
                               ("high", "max", "np.inf")):
        if not re.search(rf"\b{name}\b", expression):
            continue
        value = params.get(key)
        if value is None and default is None:
            raise ValueError(f"{node.get('fn')}: parameter {key!r} is missing")
        text = default if value is None else repr(float(value))
        lines.append(f"{name} = np.{ctype}({text})")
    return lines


def _load(k: int, dtype: str, index: str) -> str:
    if dtype == "float16":
        return f"half_to_f32(x{k}[{index}])"
    return f"x{k}[{index}]"


def _round(node_dtype: str, ctype: str, value: str) -> str:
    """The node's value in its own type, carried in the compute type."""
    if node_dtype == "float16":
        return f"half_to_f32(f32_to_half({value}))"
    if node_dtype in FLOAT_TYPES:
        return f"np.{ctype}({value})"
    return value


def generate(expression: dict, flags: Sequence[str], name: str = "fused") -> str:
    """The module source of the kernel of `expression` for the broadcast pattern `flags` (one per input)."""
    nodes = expression["nodes"]
    ctype = compute_type([n["dtype"] for n in nodes])
    if ctype is None:
        raise ValueError("an expression mixing float64 with narrower floats is not fused")
    rank = len(flags[0]) if flags else 1
    inputs = sorted({n["index"] for n in nodes if n["op"] == "input"})
    count = max(inputs) + 1 if inputs else 0
    args = ["start", "stop"] + [f"d{a}" for a in range(1, rank)]
    for k in range(count):
        args.append(f"x{k}")
        args += [f"s{k}_{a}" for a in range(rank - 1)]
    args += ["out"] + [f"os{a}" for a in range(rank - 1)]
    lines = ["import math", "import numba", "import numpy as np",
             "from mlusim.bang.dtypes import f32_to_half, half_to_f32", "", "",
             f"@numba.njit(nogil=True, cache=True, error_model='numpy')",
             f"def {name}({', '.join(args)}):"]
    body = [f"{c} = np.{ctype}({v!r})" for c, v in CONSTANTS.items()]
    indent = "    "
    for axis in range(rank):
        var = f"i{axis}"
        loop = f"range(start, stop)" if axis == 0 else f"range(d{axis})"
        body.append("    " * axis + f"for {var} in {loop}:")
        indent_here = "    " * (axis + 1)
        inner = axis == rank - 1
        if not inner:
            for k in range(count):
                flag = flags[k][axis] if k < len(flags) else "b"
                base = f"p{k}_{axis - 1} + " if axis else ""
                step = f"{var} * s{k}_{axis}" if flag == "f" else "0"
                body.append(f"{indent_here}p{k}_{axis} = {base}{step}")
            base = f"o_{axis - 1} + " if axis else ""
            body.append(f"{indent_here}o_{axis} = {base}{var} * os{axis}")
        else:
            for node_index, node in enumerate(nodes):
                for line in _node_lines(node, node_index, flags, axis, var, ctype):
                    body.append(indent_here + line)
            out_index = (f"o_{axis - 1} + " if axis else "") + var
            final = f"v{len(nodes) - 1}"
            body.append(indent_here + f"out[{out_index}] = {_store(nodes[-1]['dtype'], final)}")
    lines += [indent + line for line in body]
    return "\n".join(lines) + "\n"


def _node_lines(node: dict, n: int, flags, axis: int, var: str, ctype: str) -> list:
    op = node["op"]
    if op == "input":
        k = node["index"]
        base = f"p{k}_{axis - 1}" if axis else "0"
        index = f"{base} + {var}" if flags[k][axis] == "f" else base
        return [f"v{n} = {_load(k, node['dtype'], index)}"]
    args = node["args"]
    if op == "where":
        c, x, y = args
        return [f"v{n} = v{x} if v{c} else v{y}"]
    if op == "cast":
        source = node["source"]
        (a,) = args
        target = node["dtype"]
        if target == "bool":
            return [f"v{n} = v{a} != 0"]
        if source == "bool":
            return [f"v{n} = {_round(target, ctype, f'(1.0 if v{a} else 0.0)')}"]
        return [f"v{n} = {_round(target, ctype, f'v{a}')}"]
    value = _scalar(node)
    lines = _params(node, ctype, value)
    lines.append(f"a = v{args[0]}")
    if len(args) > 1:
        lines.append(f"b = v{args[1]}")
    if op == "logic":
        lines.append(f"v{n} = {value}")
    else:
        lines.append(f"v{n} = {_round(node['dtype'], ctype, value)}")
    return lines


def _store(dtype: str, value: str) -> str:
    if dtype == "float16":
        return f"f32_to_half({value})"
    if dtype in FLOAT_TYPES:
        return f"np.{dtype}({value})"
    return value


# ---- kernels at run time ------------------------------------------------------------------------------------------

_kernels: dict = {}
_lock = threading.Lock()


def kernel(expression: dict, flags: Sequence[str]):
    """The compiled kernel of an expression and pattern (generated, cached on disk and in this process)."""
    key = (json.dumps(expression, sort_keys=True), tuple(flags))
    found = _kernels.get(key)
    if found is None:
        source = generate(expression, flags)
        found = jitcache.load(source, AREA).fused
        with _lock:
            _kernels[key] = found
    return found


def flat(array: np.ndarray) -> np.ndarray:
    """The flat view a kernel indexes: float16 as its uint16 bits."""
    view = array.reshape(-1)
    return view.view(np.uint16) if view.dtype == np.float16 else view


class Elementwise:
    """A fused elementwise computation prepared for one set of shapes: call it with the input arrays (dense, of the
    shapes given) and the dense output array."""

    def __init__(self, expression: dict, in_shapes: Sequence[tuple], out_shape: tuple):
        self.expression = expression
        self.out_shape = tuple(out_shape)
        self.size = int(np.prod(out_shape, dtype=np.int64))
        self.dims, self.flags, self.strides = collapse(self.out_shape, in_shapes)
        self.inner = math.prod(self.dims[1:])
        self.function = kernel(expression, self.flags)
        out_strides = []
        stride = 1
        for extent in reversed(self.dims):
            out_strides.append(stride)
            stride *= extent
        self.out_strides = out_strides[::-1]

    @property
    def source(self) -> str:
        """The generated kernel's source."""
        return generate(self.expression, self.flags)

    def _arguments(self, ins, out) -> list:
        args = list(self.dims[1:])
        for array, strides in zip(ins, self.strides):
            args.append(flat(array))
            args += strides[:-1]
        args.append(flat(out))
        args += self.out_strides[:-1]
        return args

    def __call__(self, ins: Sequence[np.ndarray], out: np.ndarray) -> None:
        if self.size == 0:
            return
        args = self._arguments(ins, out)
        outer = self.dims[0]
        function = self.function
        if self.size <= INLINE_ELEMENTS or outer < 2:
            function(0, outer, *args)
            return
        pieces = min(outer, 2 * thread_count())
        map_parallel(lambda bounds: function(bounds[0], bounds[1], *args), even_ranges(outer, pieces))

    def run_block(self, ins: Sequence[np.ndarray], out: np.ndarray, parallel: bool = False) -> None:
        """Over a block of whole rows of the outermost axis: `out` and the full inputs are the block's views
        (their leading extent the block's), broadcast inputs whole (a conv or matmul epilogue over the block of
        its output it just computed); on this thread, or (`parallel`) shared over the host's cores."""
        rows = out.size // self.inner if self.inner else 0
        if not rows:
            return
        args = self._arguments(ins, out)
        function = self.function
        if not parallel or rows < 2 or out.size <= INLINE_ELEMENTS:
            function(0, rows, *args)
            return
        map_parallel(lambda bounds: function(bounds[0], bounds[1], *args),
                     even_ranges(rows, min(rows, 2 * thread_count())))


class ExpressionBuilder:
    """Builds an expression node by node: `input(k, dtype)`, `node(op, args, dtype, fn=, params=)`; each returns
    the node's index; `expression()` gives the dict (the last node added is the output)."""

    def __init__(self):
        self.nodes: list = []

    def input(self, index: int, dtype) -> int:
        self.nodes.append({"op": "input", "index": int(index), "dtype": np.dtype(dtype).name})
        return len(self.nodes) - 1

    def node(self, op: str, args: Sequence[int], dtype, fn: Optional[str] = None, params: Optional[dict] = None,
             source=None) -> int:
        entry = {"op": op, "args": [int(a) for a in args], "dtype": np.dtype(dtype).name}
        if fn is not None:
            entry["fn"] = fn
        if params:
            entry["params"] = {k: (None if v is None else float(v)) for k, v in params.items()}
        if source is not None:
            entry["source"] = np.dtype(source).name
        self.nodes.append(entry)
        return len(self.nodes) - 1

    def cast(self, value: int, dtype) -> int:
        """`value` in `dtype` (no node when it already is)."""
        have = self.nodes[value]["dtype"]
        if have == np.dtype(dtype).name:
            return value
        return self.node("cast", [value], dtype, source=have)

    def expression(self) -> dict:
        return {"nodes": [dict(n) for n in self.nodes]}


def bias_epilogue(bias_dtype, out_dtype) -> dict:
    """acc (float32) [+ bias], in the output's type: the epilogue of a conv or matmul layer with nothing fused."""
    build = ExpressionBuilder()
    value = build.input(0, np.float32)
    if bias_dtype is not None:
        bias = build.cast(build.input(1, bias_dtype), np.float32)
        value = build.node("binary", [value, bias], np.float32, fn="add")
    build.cast(value, out_dtype)
    return build.expression()
