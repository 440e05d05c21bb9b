"""Matrix products: cnnlMatMul (old form), cnnlMatMul_v2 with the matmul descriptor, algorithm and heuristic
objects, cnnlBatchMatMulBCast (+ workspace query) and cnnlBatchMatMulBCast_v2 (+ heuristic), with broadcasting of
the batch dims.

Result = alpha * op(a) @ op(b) + beta * c, op = optional transpose of the last two axes. half and bfloat16 multiply
in float32 (float32 BLAS) and round once; the output may be FLOAT for HALF/BFLOAT16/INT8/INT16 inputs, or HALF
for INT8/INT16 inputs. The one algorithm the heuristic returns needs a float32 accumulator workspace for
half/bfloat16 inputs.
"""
from __future__ import annotations

import math

from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.validate import as_enum, as_int

from .. import checks
from .. import dtypes as D
from .. import enums as E
from .. import kernels
from .. import workspace as W
from ..descriptors import Descriptor, lifecycle, live, ready
from ..handle import handle_arg
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg

_WIDER_OUTPUTS = {E.CNNL_DTYPE_HALF: (E.CNNL_DTYPE_FLOAT,), E.CNNL_DTYPE_BFLOAT16: (E.CNNL_DTYPE_FLOAT,),
                  E.CNNL_DTYPE_INT8: (E.CNNL_DTYPE_FLOAT, E.CNNL_DTYPE_HALF),
                  E.CNNL_DTYPE_INT16: (E.CNNL_DTYPE_FLOAT, E.CNNL_DTYPE_HALF)}
#: the single algorithm of the simulator
ALGORITHM = 0


# ---- descriptor, algorithm, heuristic result ----------------------------------------------------------------------

class MatMulDescriptor(Descriptor):
    """cnnlMatMulDescriptor_t: transposes, computation type and flags (set attribute by attribute)."""

    c_type = "cnnlMatMulDescriptor_t"
    setter = "cnnlSetMatMulDescAttr"

    def __init__(self):
        super().__init__()
        self.is_set = True  # every attribute has a default
        self.attributes = {E.CNNL_MATMUL_DESC_COMPUTE_TYPE: E.CNNL_DTYPE_FLOAT, E.CNNL_MATMUL_DESC_SCALE_TYPE:
                           E.CNNL_DTYPE_FLOAT, E.CNNL_MATMUL_DESC_POINTER_MODE: E.CNNL_POINTER_MODE_HOST,
                           E.CNNL_MATMUL_DESC_TRANSA: 0, E.CNNL_MATMUL_DESC_TRANSB: 0, E.CNNL_MATMUL_DESC_TRANSC: 0,
                           E.CNNL_MATMUL_ALLOW_TF32: 1, E.CNNL_MATMUL_USE_BETA: 0, E.CNNL_MATMUL_USE_STRIDE: 0}

    @property
    def trans_a(self) -> bool:
        return bool(self.attributes[E.CNNL_MATMUL_DESC_TRANSA])

    @property
    def trans_b(self) -> bool:
        return bool(self.attributes[E.CNNL_MATMUL_DESC_TRANSB])


class MatMulAlgo(Descriptor):
    """cnnlMatMulAlgo_t: the algorithm chosen by cnnlGetMatMulHeuristicResult."""

    c_type = "cnnlMatMulAlgo_t"
    setter = "cnnlGetMatMulHeuristicResult"

    def __init__(self):
        super().__init__()
        self.algorithm = ALGORITHM


class MatMulHeuristicResult(Descriptor):
    """cnnlMatMulHeuristicResult_t: an algorithm with the workspace it needs for one problem."""

    c_type = "cnnlMatMulHeuristicResult_t"
    setter = "cnnlGetMatMulAlgoHeuristic"

    def __init__(self):
        super().__init__()
        self.algorithm = ALGORITHM
        self.workspace_size = 0


matMulDescCreate, matMulDescDestroy = lifecycle(MatMulDescriptor, "cnnlMatMulDescCreate", "cnnlMatMulDescDestroy")
matMulAlgoCreate, matMulAlgoDestroy = lifecycle(MatMulAlgo, "cnnlMatMulAlgoCreate", "cnnlMatMulAlgoDestroy")


@api("cnnlCreateMatMulDescriptor")
def createMatMulDescriptor() -> MatMulDescriptor:
    """cnnlCreateMatMulDescriptor(cnnlMatMulDescriptor_t *desc) -> desc: CNNL's newer name of cnnlMatMulDescCreate."""
    return matMulDescCreate()


@api("cnnlDestroyMatMulDescriptor")
def destroyMatMulDescriptor(desc) -> None:
    """cnnlDestroyMatMulDescriptor(cnnlMatMulDescriptor_t desc): CNNL's newer name of cnnlMatMulDescDestroy."""
    matMulDescDestroy(desc)


@api("cnnlCreateMatMulAlgo")
def createMatMulAlgo() -> MatMulAlgo:
    """cnnlCreateMatMulAlgo(cnnlMatMulAlgo_t *algo) -> algo: CNNL's newer name of cnnlMatMulAlgoCreate."""
    return matMulAlgoCreate()


@api("cnnlDestroyMatMulAlgo")
def destroyMatMulAlgo(algo) -> None:
    """cnnlDestroyMatMulAlgo(cnnlMatMulAlgo_t algo): CNNL's newer name of cnnlMatMulAlgoDestroy."""
    matMulAlgoDestroy(algo)
createMatMulHeuristicResult, destroyMatMulHeuristicResult = lifecycle(
    MatMulHeuristicResult, "cnnlCreateMatMulHeuristicResult", "cnnlDestroyMatMulHeuristicResult")


def _attribute_value(attr: int, value) -> int:
    """The checked value of one matmul attribute; NOT_SUPPORTED for features the simulator lacks."""
    if attr in (E.CNNL_MATMUL_DESC_COMPUTE_TYPE, E.CNNL_MATMUL_DESC_SCALE_TYPE):
        return checks.dtype_value(value, "buf", D.NUMERIC, "the compute or scale type")
    number = as_int(value, "buf")
    if attr == E.CNNL_MATMUL_DESC_POINTER_MODE and number != E.CNNL_POINTER_MODE_HOST:
        raise NotSupportedFault("alpha and beta on the device (CNNL_POINTER_MODE_DEVICE) are not supported", "buf")
    if attr == E.CNNL_MATMUL_DESC_TRANSC and number:
        raise NotSupportedFault("transposing C is not supported", "buf")
    return number


@api("cnnlSetMatMulDescAttr")
def setMatMulDescAttr(matmul_desc, attr, value) -> None:
    """cnnlSetMatMulDescAttr(matmul_desc, cnnlMatMulDescAttribute_t attr, const void *buf, size_t size_in_bytes):
    `value` is the attribute's value (buf and its size in one Python int). Supported: TRANSA, TRANSB, TRANSC (0),
    COMPUTE_TYPE, SCALE_TYPE, POINTER_MODE (host), ALLOW_TF32, USE_BETA, USE_STRIDE."""
    target = live(matmul_desc, MatMulDescriptor, "matmul_desc")
    key = as_int(attr, "attr")
    if key not in target.attributes:
        raise NotSupportedFault(f"matmul attribute {key} is not supported", "attr")
    target.attributes[key] = _attribute_value(key, value)


@api("cnnlGetMatMulDescAttr")
def getMatMulDescAttr(matmul_desc, attr) -> int:
    """cnnlGetMatMulDescAttr(matmul_desc, attr, void *buf, size_t size_in_bytes, size_t *size_written) -> value."""
    target = live(matmul_desc, MatMulDescriptor, "matmul_desc")
    key = as_int(attr, "attr")
    if key not in target.attributes:
        raise NotSupportedFault(f"matmul attribute {key} is not supported", "attr")
    return target.attributes[key]


# ---- shape and type checks ----------------------------------------------------------------------------------------

class _Problem:
    """A validated product: operand descriptors, transposes, output dims, flops and workspace."""

    def __init__(self, c_name: str, a: TensorDescriptor, b: TensorDescriptor, out: TensorDescriptor, out_arg: str,
                 trans_a: bool, trans_b: bool, batched: bool):
        checks.supported_dtype(a, "a_desc", D.NUMERIC, c_name)
        checks.same_dtype(a, "a_desc", (b, "b_desc"))
        if out.dtype != a.dtype and out.dtype not in _WIDER_OUTPUTS.get(a.dtype, ()):
            raise ArgumentFault(f"output data type {D.name(out.dtype)} does not fit {D.name(a.dtype)} inputs", out_arg)
        for desc, arg in ((a, "a_desc"), (b, "b_desc"), (out, out_arg)):
            if len(desc.dims) < 2 or (not batched and len(desc.dims) != 2):
                raise ArgumentFault(f"{len(desc.dims)} dims; {c_name} takes "
                                    f"{'at least 2' if batched else '2 (matrices)'}", arg)
        try:
            expected = kernels.matmul_shape(a.dims, b.dims, trans_a, trans_b)
        except ValueError as exc:
            raise ArgumentFault(f"a {list(a.dims)} and b {list(b.dims)} do not multiply: {exc}", "b_desc") from None
        if out.dims != expected:
            raise ArgumentFault(f"dims {list(out.dims)}, the product has {list(expected)}", out_arg)
        self.a, self.b, self.out = a, b, out
        self.trans_a, self.trans_b = trans_a, trans_b
        inner = a.dims[-2] if trans_a else a.dims[-1]
        self.flops = 2 * math.prod(expected) * inner
        self.workspace = W.float32_accumulator(out, a.dtype)


def _descriptors(a_desc, b_desc, out_desc, out_arg: str):
    return tensor_arg(a_desc, "a_desc"), tensor_arg(b_desc, "b_desc"), tensor_arg(out_desc, out_arg)


def _enqueue(c_name: str, handle, problem: _Problem, alpha, beta, a, b, c_desc, c, out, out_arg: str,
             workspace=None, workspace_size=0, checks_workspace: bool = False) -> None:
    """Pin the operands and enqueue out = alpha*op(a)@op(b) + beta*c (c read only when beta != 0)."""
    with OpCall(c_name, handle) as call:
        scale, accumulate = (checks.scalar(alpha, "alpha", 1, problem.out.dtype),
                             checks.scalar(beta, "beta", 0, problem.out.dtype))
        a_view, b_view = call.input(problem.a, a, "a"), call.input(problem.b, b, "b")
        in_place = c_desc is None or (c == out and c_desc.dims == problem.out.dims
                                      and c_desc.strides == problem.out.strides)
        c_view = None
        if accumulate != 0 and not in_place:
            c_view = call.input(c_desc, c, "c")
        out_view = call.output(problem.out, out, out_arg, read=accumulate != 0 and in_place)
        if checks_workspace:
            call.workspace(workspace, workspace_size, problem.workspace, "cnnlGetMatMulHeuristicResult")

        def run() -> None:
            if c_view is not None:
                kernels.copy(c_view, out_view)
            kernels.matmul(a_view, b_view, out_view, problem.trans_a, problem.trans_b, scale, accumulate)

        call.submit(run, flops=problem.flops, dtype=problem.a.dtype)


@api("cnnlMatMul")
def matMul(handle, is_trans_a, is_trans_b, alpha, a_desc, a, b_desc, b, beta, c_desc, c) -> None:
    """cnnlMatMul(handle, is_trans_a, is_trans_b, alpha, a_desc, a, b_desc, b, beta, c_desc, c):
    c = alpha * op(a) @ op(b) + beta * c for matrices."""
    handle_arg(handle)
    ad, bd, cd = _descriptors(a_desc, b_desc, c_desc, "c_desc")
    problem = _Problem("cnnlMatMul", ad, bd, cd, "c_desc", checks.flag(is_trans_a, "is_trans_a"),
                       checks.flag(is_trans_b, "is_trans_b"), batched=False)
    _enqueue("cnnlMatMul", handle, problem, alpha, beta, a, b, None, None, c, "c")


def _v2_problem(c_name, matmul_desc, a_desc, b_desc, out_desc, out_arg, batched) -> _Problem:
    desc = ready(matmul_desc, MatMulDescriptor, "matmul_desc")
    ad, bd, od = _descriptors(a_desc, b_desc, out_desc, out_arg)
    return _Problem(c_name, ad, bd, od, out_arg, desc.trans_a, desc.trans_b, batched)


def _fill_results(results, problem: _Problem, requested) -> int:
    """Store the one algorithm into the caller's heuristic result(s); returns the count returned."""
    wanted = as_int(requested, "requested_algo_count", minimum=1)
    targets = list(results) if isinstance(results, (list, tuple)) else [results]
    if not targets:
        raise ArgumentFault("no heuristic result to fill", "result_array")
    target = live(targets[0], MatMulHeuristicResult, "result_array[0]")
    target.algorithm, target.workspace_size, target.is_set = ALGORITHM, problem.workspace, True
    return min(wanted, 1)


def _preference(value) -> None:
    if value is not None:
        as_enum(value, "preference", (E.CNNL_MATMUL_FASTEST, E.CNNL_MATMUL_LOW_MEMORY_OCCUPY),
                "cnnlMatMulPreference_t")


@api("cnnlGetMatMulAlgoHeuristic")
def getMatMulAlgoHeuristic(handle, matmul_desc, a_desc, b_desc, c_desc, d_desc, preference, requested_algo_count,
                           result_array) -> int:
    """cnnlGetMatMulAlgoHeuristic(handle, matmul_desc, a_desc, b_desc, c_desc, d_desc, preference,
    requested_algo_count, result_array[], &return_algo_count) -> return_algo_count. `result_array` is one
    heuristic result or a sequence of them; `preference` may be NULL (None)."""
    handle_arg(handle)
    _preference(preference)
    problem = _v2_problem("cnnlMatMul_v2", matmul_desc, a_desc, b_desc, d_desc if d_desc is not None else c_desc,
                          "d_desc", batched=False)
    return _fill_results(result_array, problem, requested_algo_count)


def _take_result(result, algo) -> int:
    source = ready(result, MatMulHeuristicResult, "result")
    target = live(algo, MatMulAlgo, "algo")
    target.algorithm, target.is_set = source.algorithm, True
    return source.workspace_size


@api("cnnlGetMatMulHeuristicResult")
def getMatMulHeuristicResult(result, algo) -> int:
    """cnnlGetMatMulHeuristicResult(result, algo, size_t *workspace_size) -> workspace_size; sets `algo`."""
    return _take_result(result, algo)


@api("cnnlMatMul_v2")
def matMul_v2(handle, matmul_desc, algo, alpha, a_desc, a, b_desc, b, beta, c_desc, c, workspace, workspace_size,
              d_desc, d) -> None:
    """cnnlMatMul_v2(handle, matmul_desc, algo, alpha, a_desc, a, b_desc, b, beta, c_desc, c, workspace,
    workspace_size, d_desc, d): d = alpha * op(a) @ op(b) + beta * c for matrices (d may be c)."""
    handle_arg(handle)
    live(algo, MatMulAlgo, "algo")
    problem = _v2_problem("cnnlMatMul_v2", matmul_desc, a_desc, b_desc, d_desc, "d_desc", batched=False)
    c_tensor = tensor_arg(c_desc, "c_desc")
    checks.same_dtype(problem.out, "d_desc", (c_tensor, "c_desc"))
    checks.same_shape(problem.out, "d_desc", (c_tensor, "c_desc"))
    _enqueue("cnnlMatMul_v2", handle, problem, alpha, beta, a, b, c_tensor, c, d, "d", workspace, workspace_size,
             checks_workspace=True)


# ---- batched ------------------------------------------------------------------------------------------------------

@api("cnnlGetBatchMatMulBCastWorkspaceSize")
def getBatchMatMulBCastWorkspaceSize(handle, a_desc, b_desc, c_desc) -> int:
    """cnnlGetBatchMatMulBCastWorkspaceSize(handle, a_desc, b_desc, c_desc, size_t *size) -> size (computed without
    transposes, which do not change it)."""
    handle_arg(handle)
    ad, bd, cd = _descriptors(a_desc, b_desc, c_desc, "c_desc")
    return W.float32_accumulator(cd, ad.dtype)


@api("cnnlBatchMatMulBCast")
def batchMatMulBCast(handle, is_trans_a, is_trans_b, a_desc, a, b_desc, b, workspace, workspace_size, c_desc,
                     c) -> None:
    """cnnlBatchMatMulBCast(handle, is_trans_a, is_trans_b, a_desc, a, b_desc, b, workspace, workspace_size, c_desc,
    c): c = op(a) @ op(b) for every batch, the batch dims of a and b broadcasting (numpy rules)."""
    handle_arg(handle)
    ad, bd, cd = _descriptors(a_desc, b_desc, c_desc, "c_desc")
    problem = _Problem("cnnlBatchMatMulBCast", ad, bd, cd, "c_desc", checks.flag(is_trans_a, "is_trans_a"),
                       checks.flag(is_trans_b, "is_trans_b"), batched=True)
    _enqueue("cnnlBatchMatMulBCast", handle, problem, 1, 0, a, b, None, None, c, "c", workspace, workspace_size,
             checks_workspace=True)


@api("cnnlGetBatchMatMulAlgoHeuristic")
def getBatchMatMulAlgoHeuristic(handle, bmm_desc, a_desc, b_desc, c_desc, preference, requested_algo_count,
                                result_array) -> int:
    """cnnlGetBatchMatMulAlgoHeuristic(handle, bmm_desc, a_desc, b_desc, c_desc, preference, requested_algo_count,
    result_array[], &return_algo_count) -> return_algo_count."""
    handle_arg(handle)
    _preference(preference)
    problem = _v2_problem("cnnlBatchMatMulBCast_v2", bmm_desc, a_desc, b_desc, c_desc, "c_desc", batched=True)
    return _fill_results(result_array, problem, requested_algo_count)


@api("cnnlGetBatchMatMulHeuristicResult")
def getBatchMatMulHeuristicResult(result, algo) -> int:
    """cnnlGetBatchMatMulHeuristicResult(result, algo, size_t *workspace_size) -> workspace_size; sets `algo`."""
    return _take_result(result, algo)


@api("cnnlBatchMatMulBCast_v2")
def batchMatMulBCast_v2(handle, bmm_desc, algo, alpha, a_desc, a, b_desc, b, beta, c_desc, c, workspace,
                        workspace_size) -> None:
    """cnnlBatchMatMulBCast_v2(handle, bmm_desc, algo, alpha, a_desc, a, b_desc, b, beta, c_desc, c, workspace,
    workspace_size): c = alpha * op(a) @ op(b) + beta * c per batch, batch dims broadcasting."""
    handle_arg(handle)
    live(algo, MatMulAlgo, "algo")
    problem = _v2_problem("cnnlBatchMatMulBCast_v2", bmm_desc, a_desc, b_desc, c_desc, "c_desc", batched=True)
    _enqueue("cnnlBatchMatMulBCast_v2", handle, problem, alpha, beta, a, b, None, None, c, "c", workspace,
             workspace_size, checks_workspace=True)
