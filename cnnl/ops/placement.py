"""Ops that move elements to new places: cnnlRoll (+ workspace query), cnnlFlip, cnnlTile and cnnlTri
(torch.roll, torch.flip, Tensor.repeat, torch.triu / tril). Every data type; values move unchanged; any strides.
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault
from mlusim.validate import as_int, as_int_sequence

from .. import checks
from .. import dtypes as D
from .. import workspace as W
from ..handle import handle_arg
from ..kernels import placement as K
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg


def _same_type(c_name: str, input_desc, output_desc):
    xd, yd = tensor_arg(input_desc, "input_desc"), tensor_arg(output_desc, "output_desc")
    checks.supported_dtype(xd, "input_desc", D.ALL, c_name)
    checks.same_dtype(xd, "input_desc", (yd, "output_desc"))
    return xd, yd


@api("cnnlGetRollWorkspaceSize")
def getRollWorkspaceSize(handle, input_desc) -> int:
    """cnnlGetRollWorkspaceSize(handle, input_desc, size_t *size) -> size: a dense copy of a strided input, else 0."""
    handle_arg(handle)
    return W.dense_copy(tensor_arg(input_desc, "input_desc"))


def _axes(values, arg: str, ndim: int) -> tuple[int, ...]:
    return tuple(checks.axis(v, ndim, f"{arg}[{i}]") for i, v in enumerate(as_int_sequence(values, arg)))


@api("cnnlRoll")
def roll(handle, input_desc, input, shifts, dims, workspace, workspace_size, output_desc, output) -> None:
    """cnnlRoll(handle, input_desc, input, const int shifts[], int shift_num, const int dims[], int dim_num,
    workspace, workspace_size, output_desc, output): output = torch.roll(input, shifts, dims). `dims` None (or
    empty) rolls the flattened tensor by the one shift; otherwise shifts and dims pair up (repeated dims add)."""
    with OpCall("cnnlRoll", handle) as call:
        xd, yd = _same_type("cnnlRoll", input_desc, output_desc)
        checks.same_shape(xd, "input_desc", (yd, "output_desc"))
        steps = as_int_sequence(shifts, "shifts")
        axes = None if dims is None else (_axes(dims, "dims", len(xd.dims)) or None)
        if axes is None and len(steps) != 1:
            raise ArgumentFault(f"{len(steps)} shifts without dims; a flattened roll takes one", "shifts")
        if axes is not None and len(steps) != len(axes):
            raise ArgumentFault(f"{len(steps)} shifts for {len(axes)} dims", "shifts")
        x_view, y_view = call.input(xd, input, "input"), call.output(yd, output, "output")
        call.workspace(workspace, workspace_size, W.dense_copy(xd), "cnnlGetRollWorkspaceSize")
        call.submit(lambda: K.roll(x_view, steps, axes, y_view), flops=0, dtype=yd.dtype)


@api("cnnlFlip")
def flip(handle, dimension, input_desc, input, output_desc, output) -> None:
    """cnnlFlip(handle, const int dimension[], int dimension_len, input_desc, input, output_desc, output):
    output = input reversed along the listed axes (negative axes count from the end; repeats are BAD_PARAM)."""
    with OpCall("cnnlFlip", handle) as call:
        xd, yd = _same_type("cnnlFlip", input_desc, output_desc)
        checks.same_shape(xd, "input_desc", (yd, "output_desc"))
        axes = _axes(dimension, "dimension", len(xd.dims))
        if len(set(axes)) != len(axes):
            raise ArgumentFault(f"axes {list(axes)} repeat an axis", "dimension")
        x_view, y_view = call.input(xd, input, "input"), call.output(yd, output, "output")
        call.submit(lambda: K.flip(x_view, axes, y_view), flops=0, dtype=yd.dtype)


@api("cnnlTile")
def tile(handle, input_desc, input, output_desc, output) -> None:
    """cnnlTile(handle, input_desc, input, output_desc, output): output = input repeated along each axis; every
    output extent is a whole multiple of the input's (same rank)."""
    with OpCall("cnnlTile", handle) as call:
        xd, yd = _same_type("cnnlTile", input_desc, output_desc)
        if len(yd.dims) != len(xd.dims) or any((n_out % n_in if n_in else n_out) for n_in, n_out in
                                                zip(xd.dims, yd.dims)):
            raise ArgumentFault(f"dims {list(yd.dims)} are not whole multiples of the input's {list(xd.dims)}",
                                "output_desc")
        x_view, y_view = call.input(xd, input, "input"), call.output(yd, output, "output")
        call.submit(lambda: K.tile(x_view, y_view), flops=0, dtype=yd.dtype)


@api("cnnlTri")
def tri(handle, diagonal, tri_up_mode, input_desc, input, output_desc, output) -> None:
    """cnnlTri(handle, int diagonal, bool tri_up_mode, input_desc, input, output_desc, output): over the last two
    axes, keep the upper triangle from `diagonal` on (tri_up_mode, torch.triu) or the lower triangle up to it
    (torch.tril); zero the rest."""
    with OpCall("cnnlTri", handle) as call:
        xd, yd = _same_type("cnnlTri", input_desc, output_desc)
        checks.same_shape(xd, "input_desc", (yd, "output_desc"))
        if len(xd.dims) < 2:
            raise ArgumentFault(f"{len(xd.dims)} dims; a triangle needs at least 2", "input_desc")
        offset, upper = as_int(diagonal, "diagonal"), checks.flag(tri_up_mode, "tri_up_mode")
        x_view, y_view = call.input(xd, input, "input"), call.output(yd, output, "output")
        call.submit(lambda: K.tri(x_view, offset, upper, y_view), flops=yd.size, dtype=yd.dtype)
