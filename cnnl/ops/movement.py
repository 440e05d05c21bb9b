"""Data movement: cnnlCopy, cnnlTranspose(_v2) with its descriptor and workspace query, cnnlExpand, cnnlConcat and
cnnlSplit with their workspace queries, cnnlStridedSlice. Values move unchanged; every side may be strided."""
from __future__ import annotations

from mlusim.errors import ArgumentFault
from mlusim.validate import as_int, as_int_sequence

from .. import checks
from .. import dtypes as D
from .. import kernels
from .. import workspace as W
from ..descriptors import Descriptor, lifecycle, live, ready
from ..handle import handle_arg
from ..opcall import OpCall
from ..status import api
from ..tensor import MAX_DIMS, tensor_arg


@api("cnnlCopy")
def copy(handle, input_desc, input, output_desc, output) -> None:
    """cnnlCopy(handle, input_desc, input, output_desc, output): output = input; same dims and data type, any
    strides on both sides."""
    with OpCall("cnnlCopy", handle) as call:
        src, dst = tensor_arg(input_desc, "input_desc"), tensor_arg(output_desc, "output_desc")
        checks.supported_dtype(src, "input_desc", D.ALL, "cnnlCopy")
        checks.same_dtype(src, "input_desc", (dst, "output_desc"))
        checks.same_shape(src, "input_desc", (dst, "output_desc"))
        src_view, dst_view = call.input(src, input, "input"), call.output(dst, output, "output")
        call.submit(lambda: kernels.copy(src_view, dst_view), flops=0, dtype=dst.dtype)


@api("cnnlGetCopyWorkspaceSize")
def getCopyWorkspaceSize(handle, input_desc, output_desc) -> int:
    """cnnlGetCopyWorkspaceSize(handle, input_desc, output_desc, size_t *size) -> 0: a copy between any strides needs
    no workspace here (the descriptors are checked as cnnlCopy_v2 checks them)."""
    handle_arg(handle)
    _copy_operands("cnnlCopy_v2", input_desc, output_desc)
    return 0


@api("cnnlCopy_v2")
def copy_v2(handle, input_desc, input, output_desc, output, workspace, workspace_size) -> None:
    """cnnlCopy_v2(handle, input_desc, input, output_desc, output, void *workspace, size_t workspace_size): cnnlCopy
    with the workspace cnnlGetCopyWorkspaceSize asks for (none; a workspace given is claimed, NULL with 0 is fine)."""
    with OpCall("cnnlCopy_v2", handle) as call:
        src, dst = _copy_operands("cnnlCopy_v2", input_desc, output_desc)
        src_view, dst_view = call.input(src, input, "input"), call.output(dst, output, "output")
        call.workspace(workspace, workspace_size, 0, "cnnlGetCopyWorkspaceSize")
        call.submit(lambda: kernels.copy(src_view, dst_view), flops=0, dtype=dst.dtype)


def _copy_operands(name: str, input_desc, output_desc) -> tuple:
    src, dst = tensor_arg(input_desc, "input_desc"), tensor_arg(output_desc, "output_desc")
    checks.supported_dtype(src, "input_desc", D.ALL, name)
    checks.same_dtype(src, "input_desc", (dst, "output_desc"))
    checks.same_shape(src, "input_desc", (dst, "output_desc"))
    return src, dst


@api("cnnlExpand")
def expand(handle, input_desc, input, output_desc, output) -> None:
    """cnnlExpand(handle, input_desc, input, output_desc, output): output = input broadcast (numpy rules) to the
    output's dims."""
    with OpCall("cnnlExpand", handle) as call:
        src, dst = tensor_arg(input_desc, "input_desc"), tensor_arg(output_desc, "output_desc")
        checks.supported_dtype(src, "input_desc", D.ALL, "cnnlExpand")
        checks.same_dtype(src, "input_desc", (dst, "output_desc"))
        checks.broadcasts_to(dst, "output_desc", (src, "input_desc"))
        src_view, dst_view = call.input(src, input, "input"), call.output(dst, output, "output")
        call.submit(lambda: kernels.copy(src_view, dst_view), flops=0, dtype=dst.dtype)


# ---- transpose ----------------------------------------------------------------------------------------------------

class TransposeDescriptor(Descriptor):
    """cnnlTransposeDescriptor_t: the permutation (output axis i is input axis permute[i])."""

    c_type = "cnnlTransposeDescriptor_t"
    setter = "cnnlSetTransposeDescriptor"

    def __init__(self):
        super().__init__()
        self.permute: tuple[int, ...] = ()


createTransposeDescriptor, destroyTransposeDescriptor = lifecycle(
    TransposeDescriptor, "cnnlCreateTransposeDescriptor", "cnnlDestroyTransposeDescriptor")


@api("cnnlSetTransposeDescriptor")
def setTransposeDescriptor(desc, permute) -> None:
    """cnnlSetTransposeDescriptor(desc, const int dims, const int permute[]): `permute` is permute[dims]."""
    target = live(desc, TransposeDescriptor, "desc")
    if isinstance(permute, (str, bytes)) or not hasattr(permute, "__len__") or not 1 <= len(permute) <= MAX_DIMS:
        raise ArgumentFault(f"expected a permutation of 1 to {MAX_DIMS} axes", "permute")
    order = tuple(as_int(p, f"permute[{i}]") for i, p in enumerate(permute))
    if sorted(order) != list(range(len(order))):
        raise ArgumentFault(f"{list(order)} is not a permutation of 0..{len(order) - 1}", "permute")
    target.permute, target.is_set = order, True


@api("cnnlGetTransposeDescriptor")
def getTransposeDescriptor(desc) -> tuple[int, ...]:
    """cnnlGetTransposeDescriptor(desc, &dims, permute[]) -> permute (its length is dims)."""
    return ready(desc, TransposeDescriptor, "desc").permute


def _transpose_operands(desc, x_desc, y_desc):
    order = ready(desc, TransposeDescriptor, "desc").permute
    x, y = tensor_arg(x_desc, "x_desc"), tensor_arg(y_desc, "y_desc")
    checks.supported_dtype(x, "x_desc", D.ALL, "cnnlTranspose_v2")
    checks.same_dtype(x, "x_desc", (y, "y_desc"))
    if len(order) != len(x.dims):
        raise ArgumentFault(f"the permutation has {len(order)} axes, x has {len(x.dims)}", "desc")
    expected = tuple(x.dims[p] for p in order)
    if y.dims != expected:
        raise ArgumentFault(f"dims {list(y.dims)}, expected {list(expected)} for permutation {list(order)}",
                            "y_desc")
    return order, x, y


@api("cnnlGetTransposeWorkspaceSize")
def getTransposeWorkspaceSize(handle, x_desc, desc) -> int:
    """cnnlGetTransposeWorkspaceSize(handle, x_desc, desc, size_t *size) -> size."""
    handle_arg(handle)
    ready(desc, TransposeDescriptor, "desc")
    return W.dense_copy(tensor_arg(x_desc, "x_desc"))


def _transpose(c_name: str, handle, desc, x_desc, x, y_desc, y, workspace=None, workspace_size=0,
               checks_workspace: bool = False) -> None:
    with OpCall(c_name, handle) as call:
        order, xd, yd = _transpose_operands(desc, x_desc, y_desc)
        x_view, y_view = call.input(xd, x, "x"), call.output(yd, y, "y")
        if checks_workspace:
            call.workspace(workspace, workspace_size, W.dense_copy(xd), "cnnlGetTransposeWorkspaceSize")
        call.submit(lambda: kernels.transpose(x_view, order, y_view), flops=0, dtype=yd.dtype)


@api("cnnlTranspose_v2")
def transpose_v2(handle, desc, x_desc, x, y_desc, y, workspace, workspace_size) -> None:
    """cnnlTranspose_v2(handle, desc, x_desc, x, y_desc, y, workspace, workspace_size): y = x with its axes
    permuted by the transpose descriptor."""
    _transpose("cnnlTranspose_v2", handle, desc, x_desc, x, y_desc, y, workspace, workspace_size,
               checks_workspace=True)


@api("cnnlTranspose")
def transpose(handle, desc, x_desc, x, y_desc, y) -> None:
    """cnnlTranspose(handle, desc, x_desc, x, y_desc, y): the workspace-free form of cnnlTranspose_v2."""
    _transpose("cnnlTranspose", handle, desc, x_desc, x, y_desc, y)


# ---- concat / split -----------------------------------------------------------------------------------------------

def _pieces(descs, pointers, descs_arg: str, pointers_arg: str):
    for value, arg in ((descs, descs_arg), (pointers, pointers_arg)):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
            raise ArgumentFault(f"expected a sequence, got {type(value).__name__}", arg)
    if len(descs) != len(pointers):
        raise ArgumentFault(f"{len(descs)} descriptors but {len(pointers)} pointers", pointers_arg)
    if not descs:
        raise ArgumentFault("needs at least one tensor", descs_arg)
    return [tensor_arg(d, f"{descs_arg}[{i}]") for i, d in enumerate(descs)]


def _check_pieces(pieces, pieces_arg: str, whole, whole_arg: str, axis_value, c_name: str) -> int:
    """The normalised axis along which `pieces` make up `whole`."""
    checks.supported_dtype(whole, whole_arg, D.ALL, c_name)
    axis = checks.axis(axis_value, len(whole.dims), "axis")
    total = 0
    for i, piece in enumerate(pieces):
        arg = f"{pieces_arg}[{i}]"
        checks.same_dtype(whole, whole_arg, (piece, arg))
        if len(piece.dims) != len(whole.dims) or any(p != w for d, (p, w) in enumerate(zip(piece.dims, whole.dims))
                                                     if d != axis):
            raise ArgumentFault(f"dims {list(piece.dims)} differ from {whole_arg}'s {list(whole.dims)} off axis "
                                f"{axis}", arg)
        total += piece.dims[axis]
    if total != whole.dims[axis]:
        raise ArgumentFault(f"the pieces add up to {total} along axis {axis}, {whole_arg} has {whole.dims[axis]}",
                            whole_arg)
    return axis


def _count(value, arg: str) -> int:
    return as_int(value, arg, minimum=1)


@api("cnnlGetConcatWorkspaceSize")
def getConcatWorkspaceSize(handle, concat_num: int) -> int:
    """cnnlGetConcatWorkspaceSize(handle, concat_num, size_t *size) -> size."""
    handle_arg(handle)
    return W.pointer_table(_count(concat_num, "concat_num"))


@api("cnnlConcat")
def concat(handle, axis, inputs_desc, inputs, workspace, workspace_size, output_desc, output) -> None:
    """cnnlConcat(handle, concat_num, axis, inputs_desc[], inputs[], workspace, workspace_size, output_desc, output):
    output = the inputs joined along `axis`; concat_num is the length of the two sequences."""
    with OpCall("cnnlConcat", handle) as call:
        pieces = _pieces(inputs_desc, inputs, "inputs_desc", "inputs")
        out = tensor_arg(output_desc, "output_desc")
        dim = _check_pieces(pieces, "inputs_desc", out, "output_desc", axis, "cnnlConcat")
        views = [call.input(d, p, f"inputs[{i}]") for i, (d, p) in enumerate(zip(pieces, inputs))]
        out_view = call.output(out, output, "output")
        call.workspace(workspace, workspace_size, W.pointer_table(len(pieces)), "cnnlGetConcatWorkspaceSize")
        call.submit(lambda: kernels.concat(views, dim, out_view), flops=0, dtype=out.dtype)


@api("cnnlGetSplitWorkspaceSize")
def getSplitWorkspaceSize(handle, split_num: int) -> int:
    """cnnlGetSplitWorkspaceSize(handle, split_num, size_t *size) -> size."""
    handle_arg(handle)
    return W.pointer_table(_count(split_num, "split_num"))


@api("cnnlSplit")
def split(handle, axis, input_desc, input, workspace, workspace_size, outputs_desc, outputs) -> None:
    """cnnlSplit(handle, split_num, axis, input_desc, input, workspace, workspace_size, outputs_desc[], outputs[]):
    each output receives its consecutive piece of input along `axis`; split_num is the length of the sequences."""
    with OpCall("cnnlSplit", handle) as call:
        src = tensor_arg(input_desc, "input_desc")
        pieces = _pieces(outputs_desc, outputs, "outputs_desc", "outputs")
        dim = _check_pieces(pieces, "outputs_desc", src, "input_desc", axis, "cnnlSplit")
        src_view = call.input(src, input, "input")
        views = [call.output(d, p, f"outputs[{i}]") for i, (d, p) in enumerate(zip(pieces, outputs))]
        call.workspace(workspace, workspace_size, W.pointer_table(len(pieces)), "cnnlGetSplitWorkspaceSize")
        call.submit(lambda: kernels.split(src_view, dim, views), flops=0, dtype=src.dtype)


# ---- strided slice ------------------------------------------------------------------------------------------------

def _slice_shape(dims, begin, end, stride):
    """(begin, end, stride, output dims) of a strided slice of `dims`, validated."""
    ndim = len(dims)
    starts = as_int_sequence(begin, "begin", length=ndim)
    stops = as_int_sequence(end, "end", length=ndim)
    steps = as_int_sequence(stride, "stride", length=ndim)
    for i, step in enumerate(steps):
        if step == 0:
            raise ArgumentFault("a stride of 0", f"stride[{i}]")
    shape = tuple(len(range(*slice(b, e, s).indices(n))) for b, e, s, n in zip(starts, stops, steps, dims))
    return starts, stops, steps, shape


@api("cnnlStridedSlice")
def stridedSlice(handle, input_desc, input, begin, end, stride, output_desc, output) -> None:
    """cnnlStridedSlice(handle, input_desc, input, begin[], end[], stride[], output_desc, output):
    output = input[begin:end:stride] on every axis, with Python slice rules (negative indices count from the end,
    out-of-range bounds clamp, negative strides walk backwards)."""
    with OpCall("cnnlStridedSlice", handle) as call:
        src, dst = tensor_arg(input_desc, "input_desc"), tensor_arg(output_desc, "output_desc")
        checks.supported_dtype(src, "input_desc", D.ALL, "cnnlStridedSlice")
        checks.same_dtype(src, "input_desc", (dst, "output_desc"))
        starts, stops, steps, shape = _slice_shape(src.dims, begin, end, stride)
        if dst.dims != shape:
            raise ArgumentFault(f"dims {list(dst.dims)}, the slice has {list(shape)}", "output_desc")
        src_view, dst_view = call.input(src, input, "input"), call.output(dst, output, "output")
        call.submit(lambda: kernels.strided_slice(src_view, starts, stops, steps, dst_view), flops=0,
                    dtype=dst.dtype)
