"""Elementwise binary ops with broadcasting: cnnlOpTensor (+ its descriptor), cnnlDiv_v2, cnnlMaximum, cnnlMinimum,
cnnlPow and cnnlLogicOp (comparisons and logical and/or/xor/not), with their workspace queries."""
from __future__ import annotations

from mlusim.errors import ArgumentFault
from mlusim.lenient import tolerate
from mlusim.validate import as_enum

from .. import checks
from .. import dtypes as D
from .. import enums as E
from .. import workspace as W
from ..descriptors import Descriptor, lifecycle, live, ready
from ..handle import handle_arg
from .. import kernels
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from ..validated import ValidatedCalls
from ..views import pointer_value

_OP_TENSOR_NAMES = {E.CNNL_OP_TENSOR_ADD: "add", E.CNNL_OP_TENSOR_SUB: "sub", E.CNNL_OP_TENSOR_MUL: "mul"}
_COMPARISONS = {E.CNNL_LOGIC_OP_EQ: "eq", E.CNNL_LOGIC_OP_NE: "ne", E.CNNL_LOGIC_OP_LT: "lt",
                E.CNNL_LOGIC_OP_LE: "le", E.CNNL_LOGIC_OP_GT: "gt", E.CNNL_LOGIC_OP_GE: "ge"}
_LOGICALS = {E.CNNL_LOGIC_OP_AND: "and", E.CNNL_LOGIC_OP_OR: "or", E.CNNL_LOGIC_OP_XOR: "xor"}
_LOGIC_OPS = (*_COMPARISONS, *_LOGICALS, E.CNNL_LOGIC_OP_NOT)


# ---- cnnlOpTensor ----------------------------------------------------------------------------------------------

class OpTensorDescriptor(Descriptor):
    """cnnlOpTensorDescriptor_t: the operation, the computation data type and the NaN propagation."""

    c_type = "cnnlOpTensorDescriptor_t"
    setter = "cnnlSetOpTensorDescriptor"

    def __init__(self):
        super().__init__()
        self.op = E.CNNL_OP_TENSOR_ADD
        self.compute_dtype = E.CNNL_DTYPE_INVALID
        self.nan = E.CNNL_NOT_PROPAGATE_NAN


createOpTensorDescriptor, destroyOpTensorDescriptor = lifecycle(
    OpTensorDescriptor, "cnnlCreateOpTensorDescriptor", "cnnlDestroyOpTensorDescriptor")


@api("cnnlSetOpTensorDescriptor")
def setOpTensorDescriptor(desc, op: int, comp_dtype: int, nan: int) -> None:
    """cnnlSetOpTensorDescriptor(desc, cnnlOpTensorDesc_t op, cnnlDataType_t op_tensor_comp_type,
    cnnlNanPropagation_t op_tensor_nan_opt)."""
    target = live(desc, OpTensorDescriptor, "desc")
    op = as_enum(op, "op", _OP_TENSOR_NAMES, "cnnlOpTensorDesc_t")
    comp = checks.dtype_value(comp_dtype, "comp_dtype", D.NUMERIC, "a computation type")
    nan = as_enum(nan, "nan", E.NAN_PROPAGATIONS, "cnnlNanPropagation_t")
    target.op, target.compute_dtype, target.nan, target.is_set = op, comp, nan, True


@api("cnnlGetOpTensorDescriptor")
def getOpTensorDescriptor(desc) -> tuple[int, int, int]:
    """cnnlGetOpTensorDescriptor(desc, &op, &comp_dtype, &nan) -> (op, comp_dtype, nan)."""
    target = ready(desc, OpTensorDescriptor, "desc")
    return target.op, target.compute_dtype, target.nan


def _broadcast_operands(op_name, a_desc, b_desc, c_desc, names=("a_desc", "b_desc", "c_desc")):
    """The three descriptors of a broadcasting binary op with one data type, validated."""
    a, b, c = (tensor_arg(d, n) for d, n in zip((a_desc, b_desc, c_desc), names))
    checks.supported_dtype(a, names[0], D.NUMERIC, op_name)
    checks.same_dtype(a, names[0], (b, names[1]), (c, names[2]))
    checks.broadcasts_to(c, names[2], (a, names[0]), (b, names[1]))
    return a, b, c


def _staged_workspace(a, b, c) -> int:
    """Dense output-shaped copies of the broadcast or strided inputs (see cnnl.workspace)."""
    return W.staged_inputs(c.dims, a, b)


@api("cnnlGetOpTensorWorkspaceSize")
def getOpTensorWorkspaceSize(handle, a_desc, b_desc, c_desc) -> int:
    """cnnlGetOpTensorWorkspaceSize(handle, a_desc, b_desc, c_desc, size_t *size) -> size."""
    handle_arg(handle)
    return _staged_workspace(*_broadcast_operands("cnnlOpTensor", a_desc, b_desc, c_desc))


@api("cnnlGetOpTensorWorkspaceSize_v2")
def getOpTensorWorkspaceSize_v2(handle, op_desc, alpha1, a_desc, a, alpha2, b_desc, b, beta, c_desc, c) -> int:
    """cnnlGetOpTensorWorkspaceSize_v2(handle, op_desc, alpha1, a_desc, a, alpha2, b_desc, b, beta, c_desc, c,
    size_t *size) -> size: the workspace cnnlOpTensor needs for exactly this call. The operation, the scalars
    and the tensors are checked as cnnlOpTensor checks them; the pointers are not read (they may be NULL)."""
    handle_arg(handle)
    ad, bd, cd = _broadcast_operands("cnnlOpTensor", a_desc, b_desc, c_desc)
    _op_descriptor(op_desc, "op_desc", cd)
    for value, arg, default in ((alpha1, "alpha1", 1), (alpha2, "alpha2", 1), (beta, "beta", 0)):
        checks.scalar(value, arg, default, cd.dtype)
    for pointer, arg in ((a, "a"), (b, "b"), (c, "c")):
        pointer_value(pointer, arg)
    return _staged_workspace(ad, bd, cd)


def _op_descriptor(op_desc, arg: str, c) -> tuple:
    """(operation, computation type) of an op-tensor descriptor. One created but never set is what CNNL makes of
    it: ADD, computed in the output's type (float for half and bfloat16) -- tolerated (mlusim.lenient)."""
    descriptor = live(op_desc, OpTensorDescriptor, arg)
    if descriptor.is_set:
        _check_compute_dtype(descriptor, c, arg)
        return descriptor.op, descriptor.compute_dtype
    tolerate("an op-tensor descriptor must be set before use", "cnnlOpTensor",
             ArgumentFault(f"the {OpTensorDescriptor.c_type} was never set ({OpTensorDescriptor.setter})", arg))
    return E.CNNL_OP_TENSOR_ADD, (E.CNNL_DTYPE_FLOAT if c.dtype in D.HALF_PRECISION else c.dtype)


def _compute_dtype_fits(compute: int, storage: int) -> bool:
    if compute == storage:
        return True
    return compute == E.CNNL_DTYPE_FLOAT and storage in D.HALF_PRECISION


def _check_compute_dtype(descriptor, c, arg: str) -> None:
    if not _compute_dtype_fits(descriptor.compute_dtype, c.dtype):
        raise ArgumentFault(f"computation type {D.name(descriptor.compute_dtype)} does not fit {D.name(c.dtype)} "
                            f"tensors", arg)


_validated_op_tensor = ValidatedCalls("cnnlOpTensor")


def _op_tensor_operands(op_desc, a_desc, b_desc, c_desc):
    """(kernel op name, a, b, c descriptors, workspace bytes needed) of cnnlOpTensor's descriptors, validated (once
    per unchanged set of descriptor objects: cnnl.validated)."""
    key = (op_desc, a_desc, b_desc, c_desc)
    found = _validated_op_tensor.lookup(key, key)
    if found is not None:
        return found
    ad, bd, cd = _broadcast_operands("cnnlOpTensor", a_desc, b_desc, c_desc)
    op, _ = _op_descriptor(op_desc, "op_tensor_desc", cd)
    found = (_OP_TENSOR_NAMES[op], ad, bd, cd, _staged_workspace(ad, bd, cd))
    if op_desc.is_set:  # (a never-set one is accepted only while lenient: checked on every call, MLUSIM_STRICT)
        _validated_op_tensor.remember(key, key, found)
    return found


@api("cnnlOpTensor")
def opTensor(handle, op_desc, alpha1, a_desc, a, alpha2, b_desc, b, workspace, workspace_size, beta,
             c_desc, c) -> None:
    """cnnlOpTensor(handle, op_desc, alpha1, a_desc, a, alpha2, b_desc, b, workspace, workspace_size, beta, c_desc, c):
    c = op(alpha1*a, alpha2*b) + beta*c with broadcasting of a and b to c. beta == 0 never reads c."""
    with OpCall("cnnlOpTensor", handle) as call:
        name, ad, bd, cd, needed = _op_tensor_operands(op_desc, a_desc, b_desc, c_desc)
        scale_a = checks.scalar(alpha1, "alpha1", 1, cd.dtype)
        scale_b = checks.scalar(alpha2, "alpha2", 1, cd.dtype)
        scale_c = checks.scalar(beta, "beta", 0, cd.dtype)
        a_view = call.input(ad, a, "a")
        b_view = call.input(bd, b, "b")
        c_view = call.output(cd, c, "c", read=scale_c != 0)
        call.workspace(workspace, workspace_size, needed, "cnnlGetOpTensorWorkspaceSize")
        flops = cd.size * (1 + (scale_a != 1) + (scale_b != 1) + 2 * (scale_c != 0))
        call.submit(lambda: kernels.op_tensor(name, a_view, b_view, c_view, scale_a, scale_b, scale_c),
                    flops=flops, dtype=cd.dtype)


# ---- div / maximum / minimum / pow ------------------------------------------------------------------------------

def _binary(c_name: str, kernel_op: str, handle, x_desc, x, y_desc, y, workspace, workspace_size, z_desc, z,
            needed_workspace, query: str, flops_per_element: int = 1, names: str = "xyz") -> None:
    """z = kernel_op(x, y) with broadcasting; `names` are the C names of the three tensors (xyz or abc)."""
    with OpCall(c_name, handle) as call:
        xd, yd, zd = _broadcast_operands(c_name, x_desc, y_desc, z_desc, tuple(f"{n}_desc" for n in names))
        x_view = call.input(xd, x, names[0])
        y_view = call.input(yd, y, names[1])
        z_view = call.output(zd, z, names[2])
        call.workspace(workspace, workspace_size, needed_workspace(xd, yd, zd), query)
        call.submit(lambda: kernels.binary(kernel_op, x_view, y_view, z_view), flops=zd.size * flops_per_element,
                    dtype=zd.dtype)


XYZ = ("x_desc", "y_desc", "z_desc")


def _no_workspace(x, y, z) -> int:
    return 0


@api("cnnlGetDivWorkspaceSize")
def getDivWorkspaceSize(handle, x_desc, y_desc, z_desc) -> int:
    """cnnlGetDivWorkspaceSize(handle, x_desc, y_desc, z_desc, size_t *size) -> size."""
    handle_arg(handle)
    return _staged_workspace(*_broadcast_operands("cnnlDiv_v2", x_desc, y_desc, z_desc, XYZ))


@api("cnnlDiv_v2")
def div_v2(handle, prefer, x_desc, x, y_desc, y, workspace, workspace_size, z_desc, z) -> None:
    """cnnlDiv_v2(handle, prefer, x_desc, x, y_desc, y, workspace, workspace_size, z_desc, z): z = x / y with
    broadcasting (integers truncate toward zero; x / 0 is 0 for integers)."""
    checks.preference(prefer)
    _binary("cnnlDiv_v2", "div", handle, x_desc, x, y_desc, y, workspace, workspace_size, z_desc, z,
            _staged_workspace, "cnnlGetDivWorkspaceSize")


@api("cnnlGetMaximumWorkspaceSize")
def getMaximumWorkspaceSize(handle, c_desc) -> int:
    """cnnlGetMaximumWorkspaceSize(handle, c_desc, size_t *size) -> size (0: the simulator stages nothing)."""
    handle_arg(handle)
    tensor_arg(c_desc, "c_desc")
    return 0


@api("cnnlMaximum")
def maximum(handle, a_desc, a, b_desc, b, c_desc, c, workspace, workspace_size) -> None:
    """cnnlMaximum(handle, a_desc, a, b_desc, b, c_desc, c, workspace, workspace_size): c = max(a, b), broadcasting."""
    _binary("cnnlMaximum", "maximum", handle, a_desc, a, b_desc, b, workspace, workspace_size, c_desc, c,
            _no_workspace, "cnnlGetMaximumWorkspaceSize", names="abc")


@api("cnnlGetMinimumWorkspaceSize")
def getMinimumWorkspaceSize(handle, c_desc) -> int:
    """cnnlGetMinimumWorkspaceSize(handle, c_desc, size_t *size) -> size (0: the simulator stages nothing)."""
    handle_arg(handle)
    tensor_arg(c_desc, "c_desc")
    return 0


@api("cnnlMinimum")
def minimum(handle, a_desc, a, b_desc, b, c_desc, c, workspace, workspace_size) -> None:
    """cnnlMinimum(handle, a_desc, a, b_desc, b, c_desc, c, workspace, workspace_size): c = min(a, b), broadcasting."""
    _binary("cnnlMinimum", "minimum", handle, a_desc, a, b_desc, b, workspace, workspace_size, c_desc, c,
            _no_workspace, "cnnlGetMinimumWorkspaceSize", names="abc")


@api("cnnlGetPowWorkspaceSize")
def getPowWorkspaceSize(handle, x_desc, y_desc, z_desc) -> int:
    """cnnlGetPowWorkspaceSize(handle, x_desc, y_desc, z_desc, size_t *size) -> size."""
    handle_arg(handle)
    return _staged_workspace(*_broadcast_operands("cnnlPow", x_desc, y_desc, z_desc, XYZ))


@api("cnnlPow")
def pow(handle, prefer, x_desc, x, y_desc, y, workspace, workspace_size, z_desc, z) -> None:
    """cnnlPow(handle, prefer, x_desc, x, y_desc, y, workspace, workspace_size, z_desc, z): z = x ** y, broadcasting."""
    checks.preference(prefer)
    _binary("cnnlPow", "pow", handle, x_desc, x, y_desc, y, workspace, workspace_size, z_desc, z,
            _staged_workspace, "cnnlGetPowWorkspaceSize", flops_per_element=8)


# ---- cnnlLogicOp ------------------------------------------------------------------------------------------------

def _logic_operands(logic_op, a_desc, b_desc, c_desc):
    """(op, a, b or None, c) of a logic op, validated: a and b share a type; c is BOOL or a's type."""
    op = as_enum(logic_op, "logic_op", _LOGIC_OPS, "cnnlLogicOp_t")
    a, c = tensor_arg(a_desc, "a_desc"), tensor_arg(c_desc, "c_desc")
    checks.supported_dtype(a, "a_desc", D.ALL, "cnnlLogicOp")
    if c.dtype not in (E.CNNL_DTYPE_BOOL, a.dtype):
        raise ArgumentFault(f"output data type {D.name(c.dtype)} must be BOOL or the input's {D.name(a.dtype)}",
                            "c_desc")
    if op == E.CNNL_LOGIC_OP_NOT:
        checks.broadcasts_to(c, "c_desc", (a, "a_desc"))
        return op, a, None, c
    b = tensor_arg(b_desc, "b_desc")
    checks.same_dtype(a, "a_desc", (b, "b_desc"))
    checks.broadcasts_to(c, "c_desc", (a, "a_desc"), (b, "b_desc"))
    return op, a, b, c


def _logic_workspace(a, b, c) -> int:
    return W.staged_inputs(c.dims, a) + (W.staged_inputs(c.dims, b) if b is not None else 0)


@api("cnnlGetLogicOpWorkspaceSize")
def getLogicOpWorkspaceSize(handle, a_desc, b_desc, c_desc) -> int:
    """cnnlGetLogicOpWorkspaceSize(handle, a_desc, b_desc, c_desc, size_t *size) -> size."""
    handle_arg(handle)
    a, b, c = (tensor_arg(d, n) for d, n in ((a_desc, "a_desc"), (b_desc, "b_desc"), (c_desc, "c_desc")))
    checks.broadcasts_to(c, "c_desc", (a, "a_desc"), (b, "b_desc"))
    return _logic_workspace(a, b, c)


@api("cnnlLogicOp")
def logicOp(handle, logic_op, a_desc, a, b_desc, b, workspace, workspace_size, c_desc, c) -> None:
    """cnnlLogicOp(handle, logic_op, a_desc, a, b_desc, b, workspace, workspace_size, c_desc, c): comparisons
    (CNNL_LOGIC_OP_EQ/NE/LT/LE/GT/GE) and logical AND/OR/XOR/NOT (nonzero is true), broadcasting; c is 0/1 in BOOL
    or the inputs' type. NOT reads only a (b may be NULL)."""
    with OpCall("cnnlLogicOp", handle) as call:
        op, ad, bd, cd = _logic_operands(logic_op, a_desc, b_desc, c_desc)
        a_view = call.input(ad, a, "a")
        b_view = call.input(bd, b, "b") if bd is not None else None
        c_view = call.output(cd, c, "c")
        call.workspace(workspace, workspace_size, _logic_workspace(ad, bd, cd), "cnnlGetLogicOpWorkspaceSize")
        if op == E.CNNL_LOGIC_OP_NOT:
            run = lambda: kernels.logical_not(a_view, c_view)  # noqa: E731
        elif op in _COMPARISONS:
            run = lambda: kernels.compare(_COMPARISONS[op], a_view, b_view, c_view)  # noqa: E731
        else:
            run = lambda: kernels.logical(_LOGICALS[op], a_view, b_view, c_view)  # noqa: E731
        call.submit(run, flops=cd.size, dtype=ad.dtype)
