"""Indexing: cnnlIndexSelect, cnnlGather, cnnlScatter, cnnlEmbeddingForward_v2, cnnlEmbeddingBackward,
cnnlMasked_v3 (FILL, SELECT), cnnlIndexPut, cnnlNumTrue_v2, cnnlWhere_v2 (nonzero) and their workspace queries.

Index tensors are INT32 or INT64 and are range-checked when the op runs (an out-of-range index fails the queued op,
reported at the next sync). Data may be any type the library computes on; scatter add, index put with accumulate
and embedding backward need a numeric type. Sequences replace C arrays with their counts: cnnlIndexPut takes the
index descriptors and pointers as two lists (None entries take a whole axis). No op needs a workspace.
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.validate import as_enum, as_int

from .. import checks
from .. import dtypes as D
from .. import enums as E
from ..handle import handle_arg
from ..kernels import indexing as K
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from . import nn_common as N


def _data(desc, arg, op, allowed=D.ALL) -> TensorDescriptor:
    tensor = tensor_arg(desc, arg)
    checks.supported_dtype(tensor, arg, allowed, op)
    return tensor


def _index(desc, arg, op) -> TensorDescriptor:
    return N.index_tensor(tensor_arg(desc, arg), arg, op)


@api("cnnlIndexSelect")
def indexSelect(handle, dim, x_desc, x, index_desc, index, y_desc, y) -> None:
    """cnnlIndexSelect(handle, dim, x_desc, x, index_desc, index, y_desc, y): y = x taken at the 1-D `index` along
    `dim` (y's dim `dim` has len(index) entries, the others x's)."""
    op = "cnnlIndexSelect"
    with OpCall(op, handle) as call:
        xd, yd, idx = _data(x_desc, "x_desc", op), tensor_arg(y_desc, "y_desc"), _index(index_desc, "index_desc", op)
        axis = checks.axis(dim, len(xd.dims), "dim")
        checks.same_dtype(xd, "x_desc", (yd, "y_desc"))
        if len(idx.dims) != 1:
            raise ArgumentFault(f"{len(idx.dims)} dims; the index is 1-D", "index_desc")
        expected = xd.dims[:axis] + (idx.dims[0],) + xd.dims[axis + 1:]
        if yd.dims != expected:
            raise ArgumentFault(f"dims {list(yd.dims)}; selecting {idx.dims[0]} entries gives {list(expected)}",
                                "y_desc")
        xv, iv, yv = call.input(xd, x, "x"), call.input(idx, index, "index"), call.output(yd, y, "y")
        call.submit(lambda: K.index_select(xv, axis, iv, yv), flops=yd.size, dtype=xd.dtype)


def _fits_along(index: TensorDescriptor, data: TensorDescriptor, axis: int, arg: str) -> None:
    """torch.gather/scatter's rule: same rank, index no larger than data on the axes other than `axis`."""
    if len(index.dims) != len(data.dims):
        raise ArgumentFault(f"{len(index.dims)} dims; the data has {len(data.dims)}", arg)
    for d, (have, limit) in enumerate(zip(index.dims, data.dims)):
        if d != axis and have > limit:
            raise ArgumentFault(f"dims {list(index.dims)} exceed {list(data.dims)} on axis {d}", arg)


@api("cnnlGather")
def gather(handle, dim, x_desc, x, index_desc, index, y_desc, y) -> None:
    """cnnlGather(handle, dim, x_desc, x, index_desc, index, y_desc, y): y[..i..] = x[..index[..i..]..] along
    `dim` (torch.gather); y has the index's dims."""
    op = "cnnlGather"
    with OpCall(op, handle) as call:
        xd, yd, idx = _data(x_desc, "x_desc", op), tensor_arg(y_desc, "y_desc"), _index(index_desc, "index_desc", op)
        axis = checks.axis(dim, len(xd.dims), "dim")
        checks.same_dtype(xd, "x_desc", (yd, "y_desc"))
        _fits_along(idx, xd, axis, "index_desc")
        checks.same_shape(idx, "index_desc", (yd, "y_desc"))
        xv, iv, yv = call.input(xd, x, "x"), call.input(idx, index, "index"), call.output(yd, y, "y")
        call.submit(lambda: K.gather(xv, axis, iv, yv), flops=yd.size, dtype=xd.dtype)


@api("cnnlScatter")
def scatter(handle, dim, input_desc, input, index_desc, index, src_desc, src, output_desc, output, mode) -> None:
    """cnnlScatter(handle, dim, input_desc, input, index_desc, index, src_desc, src, output_desc, output, mode):
    output = input with src scattered (CNNL_SCATTER) or added (CNNL_SCATTER_ADD) at `index` along `dim`
    (torch.scatter / scatter_add); output may be input."""
    op = "cnnlScatter"
    with OpCall(op, handle) as call:
        add = as_enum(mode, "mode", E.SCATTER_MODES, "cnnlScatterMode_t") == E.CNNL_SCATTER_ADD
        xd = _data(input_desc, "input_desc", op, D.NUMERIC if add else D.ALL)
        idx, sd, od = _index(index_desc, "index_desc", op), tensor_arg(src_desc, "src_desc"), tensor_arg(
            output_desc, "output_desc")
        axis = checks.axis(dim, len(xd.dims), "dim")
        checks.same_dtype(xd, "input_desc", (sd, "src_desc"), (od, "output_desc"))
        checks.same_shape(xd, "input_desc", (od, "output_desc"))
        _fits_along(idx, xd, axis, "index_desc")
        if len(sd.dims) != len(idx.dims) or any(s < i for s, i in zip(sd.dims, idx.dims)):
            raise ArgumentFault(f"dims {list(sd.dims)} are smaller than the index's {list(idx.dims)}", "src_desc")
        xv, iv, sv = call.input(xd, input, "input"), call.input(idx, index, "index"), call.input(sd, src, "src")
        ov = call.output(od, output, "output")
        call.submit(lambda: K.scatter(xv, axis, iv, sv, ov, add), flops=xd.size + idx.size, dtype=xd.dtype)


# ---- embedding -----------------------------------------------------------------------------------------------------

def _embedding_shapes(weight: TensorDescriptor, w_arg: str, indices: TensorDescriptor, out: TensorDescriptor,
                      out_arg: str) -> None:
    if len(weight.dims) != 2:
        raise ArgumentFault(f"{len(weight.dims)} dims; the embedding table is [num_embeddings, dim]", w_arg)
    expected = indices.dims + weight.dims[1:]
    if out.dims != expected:
        raise ArgumentFault(f"dims {list(out.dims)}; indices {list(indices.dims)} give {list(expected)}", out_arg)


def _padding_index(value, rows) -> int:
    index = as_int(value, "padding_idx")
    if not -1 <= index < rows:
        raise ArgumentFault(f"padding_idx {index} is outside [-1, {rows})", "padding_idx")
    return index


@api("cnnlEmbeddingForward_v2")
def embeddingForward_v2(handle, weight_desc, weight, indices_desc, indices, padding_idx, max_norm, norm_type,
                        output_desc, output) -> None:
    """cnnlEmbeddingForward_v2(handle, weight_desc, weight, indices_desc, indices, padding_idx, max_norm, norm_type,
    output_desc, output): output[...] = weight[indices[...]]; max_norm and norm_type must be NULL (renormalising
    rows is not supported)."""
    op = "cnnlEmbeddingForward_v2"
    with OpCall(op, handle) as call:
        wd, idx, od = _data(weight_desc, "weight_desc", op), _index(indices_desc, "indices_desc", op), tensor_arg(
            output_desc, "output_desc")
        checks.same_dtype(wd, "weight_desc", (od, "output_desc"))
        _embedding_shapes(wd, "weight_desc", idx, od, "output_desc")
        _padding_index(padding_idx, wd.dims[0])
        if max_norm is not None or norm_type is not None:
            raise NotSupportedFault("max_norm renormalisation is not supported; pass NULL", "max_norm")
        wv, iv, ov = call.input(wd, weight, "weight"), call.input(idx, indices, "indices"), call.output(od, output,
                                                                                                       "output")
        call.submit(lambda: K.embedding_forward(wv, iv, ov), flops=od.size, dtype=wd.dtype)


@api("cnnlGetEmbeddingBackwardWorkspaceSize")
def getEmbeddingBackwardWorkspaceSize(handle, diff_desc, output_desc, scale_grad_by_freq) -> int:
    """cnnlGetEmbeddingBackwardWorkspaceSize(handle, diff_desc, output_desc, scale_grad_by_freq, &size) -> 0."""
    handle_arg(handle)
    tensor_arg(diff_desc, "diff_desc")
    tensor_arg(output_desc, "output_desc")
    checks.flag(scale_grad_by_freq, "scale_grad_by_freq")
    return 0


@api("cnnlEmbeddingBackward")
def embeddingBackward(handle, padding_idx, scale_grad_by_freq, indices_desc, indices, diff_desc, diff, workspace,
                      workspace_size, output_desc, output) -> None:
    """cnnlEmbeddingBackward(handle, padding_idx, scale_grad_by_freq, indices_desc, indices, diff_desc, diff,
    workspace, workspace_size, output_desc, output): output (the table's gradient) = the sum of the gradient rows
    of each index, none for padding_idx, divided by the index's frequency when scale_grad_by_freq."""
    op = "cnnlEmbeddingBackward"
    with OpCall(op, handle) as call:
        od, idx, dd = tensor_arg(output_desc, "output_desc"), _index(indices_desc, "indices_desc", op), tensor_arg(
            diff_desc, "diff_desc")
        N.float_tensor(od, "output_desc", op)
        checks.same_dtype(od, "output_desc", (dd, "diff_desc"))
        _embedding_shapes(od, "output_desc", idx, dd, "diff_desc")
        pad = _padding_index(padding_idx, od.dims[0])
        scale = checks.flag(scale_grad_by_freq, "scale_grad_by_freq")
        iv, dv, ov = call.input(idx, indices, "indices"), call.input(dd, diff, "diff"), call.output(od, output,
                                                                                                   "output")
        call.workspace(workspace, workspace_size, 0, "cnnlGetEmbeddingBackwardWorkspaceSize")
        call.submit(lambda: K.embedding_backward(iv, dv, pad, scale, ov), flops=dd.size, dtype=od.dtype)


# ---- masked ----------------------------------------------------------------------------------------------------------

@api("cnnlGetMaskedWorkspaceSize")
def getMaskedWorkspaceSize(handle, masked_op, input_desc, mask_desc, value_desc, output_desc) -> int:
    """cnnlGetMaskedWorkspaceSize(handle, masked_op, input_desc, mask_desc, value_desc, output_desc, &size) -> 0
    (for cnnlMasked_v3 and cnnlMasked_v4, whose ops it takes)."""
    handle_arg(handle)
    as_enum(masked_op, "masked_op", E.MASKED_OPS_V4, "cnnlMaskedOp_t")
    for desc, arg in ((input_desc, "input_desc"), (mask_desc, "mask_desc"), (output_desc, "output_desc")):
        tensor_arg(desc, arg)
    return 0


@api("cnnlMasked_v3")
def masked_v3(handle, masked_op, input_desc, input, mask_desc, mask, value_desc, value, workspace, workspace_size,
              output_desc, output, number) -> None:
    """cnnlMasked_v3(handle, masked_op, input_desc, input, mask_desc, mask, value_desc, value, workspace,
    workspace_size, output_desc, output, number): FILL writes the one-element `value` where the mask (broadcast to
    the input) is nonzero; SELECT packs the selected elements into the start of the output (input's dims) and their
    count into `number` (one INT32 on the device). MASKED_SCATTER is NOT_SUPPORTED."""
    op = "cnnlMasked_v3"
    with OpCall(op, handle) as call:
        mode = as_enum(masked_op, "masked_op", E.MASKED_OPS, "cnnlMaskedOp_t")
        if mode == E.CNNL_MASKED_SCATTER:
            raise NotSupportedFault("CNNL_MASKED_SCATTER is not supported", "masked_op")
        xd, md, od = _data(input_desc, "input_desc", op), _data(mask_desc, "mask_desc", op), tensor_arg(
            output_desc, "output_desc")
        checks.same_dtype(xd, "input_desc", (od, "output_desc"))
        checks.broadcasts_to(xd, "input_desc", (md, "mask_desc"))
        if mode == E.CNNL_MASKED_FILL:
            checks.same_shape(xd, "input_desc", (od, "output_desc"))
            vd = tensor_arg(value_desc, "value_desc")
            checks.same_dtype(xd, "input_desc", (vd, "value_desc"))
            N.elements_match(vd, "value_desc", 1, "the fill value")
        else:
            N.elements_match(od, "output_desc", xd.size, "the selected elements")
        xv, mv = call.input(xd, input, "input"), call.input(md, mask, "mask")
        mv = mv.reshape((1,) * (len(xd.dims) - len(md.dims)) + mv.shape)
        if mode == E.CNNL_MASKED_FILL:
            vv, ov = call.input(vd, value, "value"), call.output(od, output, "output")
            run = lambda: K.masked_fill(xv, mv, vv, ov)  # noqa: E731
        else:
            ov = call.output(od, output, "output")
            nv = call.output(N.raw_buffer(E.CNNL_DTYPE_INT32, 1, "number"), number, "number")
            run = lambda: K.masked_select(xv, mv, ov, nv)  # noqa: E731
        call.workspace(workspace, workspace_size, 0, "cnnlGetMaskedWorkspaceSize")
        call.submit(run, flops=xd.size, dtype=xd.dtype)


# ---- index put, nonzero ----------------------------------------------------------------------------------------------

def _index_put_operands(op, input_desc, indices_descs, value_desc):
    xd, vd = _data(input_desc, "input_desc", op), tensor_arg(value_desc, "value_desc")
    checks.same_dtype(xd, "input_desc", (vd, "value_desc"))
    if isinstance(indices_descs, (str, bytes)) or not hasattr(indices_descs, "__len__"):
        raise ArgumentFault("expected a sequence of index descriptors", "indices_descs")
    if not 1 <= len(indices_descs) <= len(xd.dims):
        raise ArgumentFault(f"{len(indices_descs)} indices for {len(xd.dims)} dims", "indices_descs")
    descs = []
    for i, desc in enumerate(indices_descs):
        if desc is None:
            descs.append(None)
            continue
        index = tensor_arg(desc, f"indices_descs[{i}]")
        checks.supported_dtype(index, f"indices_descs[{i}]", N.INDEX_TYPES + (E.CNNL_DTYPE_BOOL,), op)
        descs.append(index)
    if all(d is None for d in descs):
        raise ArgumentFault("every index is NULL", "indices_descs")
    return xd, descs, vd


@api("cnnlGetIndexPutWorkspaceSize")
def getIndexPutWorkspaceSize(handle, input_desc, indices_descs, value_desc, accumulate) -> int:
    """cnnlGetIndexPutWorkspaceSize(handle, input_desc, indices_descs[], indices_num, value_desc, accumulate,
    &size) -> 0 (`indices_descs` is one sequence)."""
    handle_arg(handle)
    _index_put_operands("cnnlIndexPut", input_desc, indices_descs, value_desc)
    checks.flag(accumulate, "accumulate")
    return 0


@api("cnnlIndexPut")
def indexPut(handle, input_desc, input, indices_descs, indices, value_desc, value, workspace, workspace_size,
             accumulate, inplace, output_desc, output) -> None:
    """cnnlIndexPut(handle, input_desc, input, indices_descs[], indices[], indices_num, value_desc, value, workspace,
    workspace_size, accumulate, inplace, output_desc, output): output = input with value written (or added, with
    accumulate) at input[indices] (torch.index_put_); value broadcasts to the indexed shape."""
    op = "cnnlIndexPut"
    with OpCall(op, handle) as call:
        xd, descs, vd = _index_put_operands(op, input_desc, indices_descs, value_desc)
        add = checks.flag(accumulate, "accumulate")
        checks.flag(inplace, "inplace")
        if add:
            checks.supported_dtype(xd, "input_desc", D.NUMERIC, op + " with accumulate")
        od = tensor_arg(output_desc, "output_desc")
        checks.same_dtype(xd, "input_desc", (od, "output_desc"))
        checks.same_shape(xd, "input_desc", (od, "output_desc"))
        pointers = list(indices) if hasattr(indices, "__len__") else None
        if pointers is None or len(pointers) != len(descs):
            raise ArgumentFault(f"expected {len(descs)} index pointers", "indices")
        xv = call.input(xd, input, "input")
        index_views = [None if d is None else call.input(d, p, f"indices[{i}]")
                       for i, (d, p) in enumerate(zip(descs, pointers))]
        vv, ov = call.input(vd, value, "value"), call.output(od, output, "output")
        call.workspace(workspace, workspace_size, 0, "cnnlGetIndexPutWorkspaceSize")
        call.submit(lambda: K.index_put(xv, index_views, vv, add, ov), flops=xd.size + vd.size, dtype=xd.dtype)


def _count(desc, arg) -> TensorDescriptor:
    count = tensor_arg(desc, arg)
    checks.supported_dtype(count, arg, N.INDEX_TYPES, "the nonzero count")
    N.elements_match(count, arg, 1, "the count")
    return count


@api("cnnlNumTrue_v2")
def numTrue_v2(handle, x_desc, x, num_true_desc, num_true) -> None:
    """cnnlNumTrue_v2(handle, x_desc, x, num_true_desc, num_true): num_true (one INT32/INT64) = the number of
    nonzero elements of x."""
    op = "cnnlNumTrue_v2"
    with OpCall(op, handle) as call:
        xd, nd = _data(x_desc, "x_desc", op), _count(num_true_desc, "num_true_desc")
        xv, nv = call.input(xd, x, "x"), call.output(nd, num_true, "num_true")
        call.submit(lambda: K.num_true(xv, nv), flops=xd.size, dtype=xd.dtype)


@api("cnnlGetWhereWorkspaceSize")
def getWhereWorkspaceSize(handle, num_true_desc) -> int:
    """cnnlGetWhereWorkspaceSize(handle, num_true_desc, &size) -> 0."""
    handle_arg(handle)
    _count(num_true_desc, "num_true_desc")
    return 0


@api("cnnlWhere_v2")
def where_v2(handle, x_desc, x, num_true_desc, num_true, as_tuple, workspace, workspace_size, y_desc, y) -> None:
    """cnnlWhere_v2(handle, x_desc, x, num_true_desc, num_true, as_tuple, workspace, workspace_size, y_desc, y):
    the coordinates of x's nonzero elements (torch.nonzero) as y [num_true, rank] INT32/INT64, or [rank,
    num_true] when as_tuple; num_true comes from cnnlNumTrue_v2 and must match y's dims when the op runs."""
    op = "cnnlWhere_v2"
    with OpCall(op, handle) as call:
        xd, nd, yd = _data(x_desc, "x_desc", op), _count(num_true_desc, "num_true_desc"), _index(y_desc, "y_desc",
                                                                                                 op)
        tuple_form = checks.flag(as_tuple, "as_tuple")
        rank = len(xd.dims)
        if len(yd.dims) != 2 or yd.dims[0 if tuple_form else 1] != rank:
            raise ArgumentFault(f"dims {list(yd.dims)}; expected {'[rank, n]' if tuple_form else '[n, rank]'} with "
                                f"rank {rank}", "y_desc")
        xv, nv, yv = call.input(xd, x, "x"), call.input(nd, num_true, "num_true"), call.output(yd, y, "y")
        call.workspace(workspace, workspace_size, 0, "cnnlGetWhereWorkspaceSize")
        call.submit(lambda: K.nonzero(xv, nv, yv, tuple_form), flops=xd.size, dtype=xd.dtype)

