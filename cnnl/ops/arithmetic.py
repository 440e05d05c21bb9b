"""Elementwise arithmetic beyond opTensor: cnnlAddcmul, cnnlAddcdiv, cnnlLerp, cnnlAtan2, cnnlFloorDiv_v2,
cnnlFloorDivTrunc, cnnlFloorMod, cnnlMulN, cnnlTransform_v2, cnnlClip_v2 and cnnlBitCompute_v2, with their workspace
queries.

All tensors of one call share a data type; inputs broadcast (numpy rules) to the output's dims. Workspaces follow
the rule of the other broadcasting ops: a dense output-shaped copy of every input that is broadcast or strided.
Numerics and the exact formulas (PyTorch's) are in `cnnl.kernels.arithmetic`.
"""
from __future__ import annotations

from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum

from .. import checks
from .. import dtypes as D
from .. import enums as E
from .. import workspace as W
from ..handle import handle_arg
from ..kernels import arithmetic as K
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from ..validated import ValidatedCalls
from . import pointer_scalars as P

#: modelled operations per element of the transcendental atan2
_ATAN2_FLOPS = 10
_BITWISE = {E.CNNL_CYCLE_BAND_OP: "and", E.CNNL_CYCLE_BOR_OP: "or", E.CNNL_CYCLE_BXOR_OP: "xor",
            E.CNNL_BNOT_OP: "not", E.CNNL_BLEFT_SHIFT_OP_V: "left_shift", E.CNNL_BRIGHT_SHIFT_OP_V: "right_shift"}
_INT_OR_BOOL = D.INTEGER + (E.CNNL_DTYPE_BOOL,)


def _inputs(op: str, allowed, *pairs):
    """The live input descriptors (desc, arg name) of one data type among `allowed`."""
    descs = [(tensor_arg(desc, arg), arg) for desc, arg in pairs]
    first, first_arg = descs[0]
    checks.supported_dtype(first, first_arg, allowed, op)
    checks.same_dtype(first, first_arg, *descs[1:])
    return descs


def _output(desc, arg: str, inputs):
    out = tensor_arg(desc, arg)
    checks.same_dtype(inputs[0][0], inputs[0][1], (out, arg))
    checks.broadcasts_to(out, arg, *inputs)
    return out


def _staged(out_dims, inputs) -> int:
    return W.staged_inputs(tuple(out_dims), *(desc for desc, _ in inputs))


def _elementwise(c_name: str, query: str, handle, allowed, tensors, output, workspace, workspace_size, kernel,
                 flops_per_element: int = 1, exact: bool = False) -> None:
    """One broadcasting elementwise op: `tensors` are (desc, pointer, arg) inputs, `output` (desc, pointer, arg);
    `kernel(*input_views, out_view)` runs on the queue. `exact`: the output has exactly the inputs' broadcast dims
    (ops whose workspace query takes no output descriptor)."""
    with OpCall(c_name, handle) as call:
        inputs = _inputs(c_name, allowed, *((d, f"{a}_desc") for d, _, a in tensors))
        out_desc, out_pointer, out_arg = output
        out = _output(out_desc, f"{out_arg}_desc", inputs)
        if exact and out.dims != checks.broadcast_dims(*inputs):
            raise ArgumentFault(f"dims {list(out.dims)} differ from the inputs' broadcast dims "
                                f"{list(checks.broadcast_dims(*inputs))}", f"{out_arg}_desc")
        views = [call.input(desc, pointer, arg) for (desc, _), (_, pointer, arg) in zip(inputs, tensors)]
        out_view = call.output(out, out_pointer, out_arg)
        if query:
            call.workspace(workspace, workspace_size, _staged(out.dims, inputs), query)
        call.submit(lambda: kernel(*views, out_view), flops=out.size * flops_per_element, dtype=out.dtype)


def _workspace_query(c_name: str, allowed, handle, pairs, output=None) -> int:
    """Size of the staged broadcast inputs; without an output descriptor the inputs' broadcast dims are used."""
    handle_arg(handle)
    inputs = _inputs(c_name, allowed, *pairs)
    if output is None:
        return _staged(checks.broadcast_dims(*inputs), inputs)
    out = _output(output[0], output[1], inputs)
    return _staged(out.dims, inputs)


# ---- addcmul / addcdiv -----------------------------------------------------------------------------------------

def _addc(c_name, query, allowed, kernel, handle, input_desc, input, alpha, tensor1_desc, tensor1, tensor2_desc,
          tensor2, workspace, workspace_size, output_desc, output):
    dtype = tensor_arg(input_desc, "input_desc").dtype
    value = checks.scalar(alpha, "alpha", 1, dtype)
    _elementwise(c_name, query, handle, allowed,
                 ((input_desc, input, "input"), (tensor1_desc, tensor1, "tensor1"), (tensor2_desc, tensor2, "tensor2")),
                 (output_desc, output, "output"), workspace, workspace_size,
                 lambda x, t1, t2, out: kernel(x, t1, t2, value, out), flops_per_element=3, exact=True)


@api("cnnlGetAddcmulWorkspaceSize")
def getAddcmulWorkspaceSize(handle, input_desc, tensor1_desc, tensor2_desc) -> int:
    """cnnlGetAddcmulWorkspaceSize(handle, input_desc, tensor1_desc, tensor2_desc, size_t *size) -> size."""
    return _workspace_query("cnnlAddcmul", D.NUMERIC, handle, ((input_desc, "input_desc"),
                                                               (tensor1_desc, "tensor1_desc"),
                                                               (tensor2_desc, "tensor2_desc")))


@api("cnnlAddcmul")
def addcmul(handle, input_desc, input, alpha, tensor1_desc, tensor1, tensor2_desc, tensor2, workspace,
            workspace_size, output_desc, output) -> None:
    """cnnlAddcmul(handle, input_desc, input, alpha, tensor1_desc, tensor1, tensor2_desc, tensor2, workspace,
    workspace_size, output_desc, output): output = input + alpha * tensor1 * tensor2 (torch.addcmul); the output
    has the three inputs' broadcast dims; alpha is a host number (NULL = 1)."""
    _addc("cnnlAddcmul", "cnnlGetAddcmulWorkspaceSize", D.NUMERIC, K.addcmul, handle, input_desc, input, alpha,
          tensor1_desc, tensor1, tensor2_desc, tensor2, workspace, workspace_size, output_desc, output)


@api("cnnlGetAddcdivWorkspaceSize")
def getAddcdivWorkspaceSize(handle, input_desc, tensor1_desc, tensor2_desc) -> int:
    """cnnlGetAddcdivWorkspaceSize(handle, input_desc, tensor1_desc, tensor2_desc, size_t *size) -> size."""
    return _workspace_query("cnnlAddcdiv", D.FLOATING, handle, ((input_desc, "input_desc"),
                                                                (tensor1_desc, "tensor1_desc"),
                                                                (tensor2_desc, "tensor2_desc")))


@api("cnnlAddcdiv")
def addcdiv(handle, input_desc, input, alpha, tensor1_desc, tensor1, tensor2_desc, tensor2, workspace,
            workspace_size, output_desc, output) -> None:
    """cnnlAddcdiv(handle, input_desc, input, alpha, tensor1_desc, tensor1, tensor2_desc, tensor2, workspace,
    workspace_size, output_desc, output): output = input + alpha * tensor1 / tensor2 (torch.addcdiv; floating
    types only, as in PyTorch)."""
    _addc("cnnlAddcdiv", "cnnlGetAddcdivWorkspaceSize", D.FLOATING, K.addcdiv, handle, input_desc, input, alpha,
          tensor1_desc, tensor1, tensor2_desc, tensor2, workspace, workspace_size, output_desc, output)


# ---- lerp / atan2 ------------------------------------------------------------------------------------------------

@api("cnnlGetLerpWorkspaceSize")
def getLerpWorkspaceSize(handle, input_desc, end_desc, weight_desc, output_desc) -> int:
    """cnnlGetLerpWorkspaceSize(handle, input_desc, end_desc, weight_desc, output_desc, size_t *size) -> size."""
    return _workspace_query("cnnlLerp", D.FLOATING, handle, ((input_desc, "input_desc"), (end_desc, "end_desc"),
                                                             (weight_desc, "weight_desc")),
                            (output_desc, "output_desc"))


@api("cnnlLerp")
def lerp(handle, input_desc, input, end_desc, end, weight_desc, weight, workspace, workspace_size, output_desc,
         output) -> None:
    """cnnlLerp(handle, input_desc, input, end_desc, end, weight_desc, weight, workspace, workspace_size,
    output_desc, output): output = input + weight * (end - input) (torch.lerp), all broadcasting."""
    _elementwise("cnnlLerp", "cnnlGetLerpWorkspaceSize", handle, D.FLOATING,
                 ((input_desc, input, "input"), (end_desc, end, "end"), (weight_desc, weight, "weight")),
                 (output_desc, output, "output"), workspace, workspace_size, K.lerp, flops_per_element=4)


@api("cnnlGetAtan2WorkspaceSize")
def getAtan2WorkspaceSize(handle, input1_desc, input2_desc, output_desc) -> int:
    """cnnlGetAtan2WorkspaceSize(handle, input1_desc, input2_desc, output_desc, size_t *size) -> size."""
    return _workspace_query("cnnlAtan2", D.FLOATING, handle, ((input1_desc, "input1_desc"),
                                                              (input2_desc, "input2_desc")),
                            (output_desc, "output_desc"))


@api("cnnlAtan2")
def atan2(handle, prefer, input1_desc, input1, input2_desc, input2, workspace, workspace_size, output_desc,
          output) -> None:
    """cnnlAtan2(handle, prefer, input1_desc, input1, input2_desc, input2, workspace, workspace_size, output_desc,
    output): output = atan2(input1, input2) (torch.atan2: the angle of the point (input2, input1))."""
    checks.preference(prefer)
    _elementwise("cnnlAtan2", "cnnlGetAtan2WorkspaceSize", handle, D.FLOATING,
                 ((input1_desc, input1, "input1"), (input2_desc, input2, "input2")),
                 (output_desc, output, "output"), workspace, workspace_size, K.atan2, flops_per_element=_ATAN2_FLOPS)


# ---- floor division, truncating division, floor modulo ------------------------------------------------------------

def _division(c_name, query, op, handle, input_desc, input, other_desc, other, output_desc, output, workspace,
              workspace_size):
    _elementwise(c_name, query, handle, D.NUMERIC, ((input_desc, input, "input"), (other_desc, other, "other")),
                 (output_desc, output, "output"), workspace, workspace_size,
                 lambda a, b, out: K.divide(op, a, b, out), flops_per_element=4)


def _division_workspace(c_name, handle, input_desc, other_desc, output_desc) -> int:
    return _workspace_query(c_name, D.NUMERIC, handle, ((input_desc, "input_desc"), (other_desc, "other_desc")),
                            (output_desc, "output_desc"))


@api("cnnlGetFloorDivWorkspaceSize")
def getFloorDivWorkspaceSize(handle, input_desc, other_desc, output_desc) -> int:
    """cnnlGetFloorDivWorkspaceSize(handle, input_desc, other_desc, output_desc, size_t *size) -> size."""
    return _division_workspace("cnnlFloorDiv_v2", handle, input_desc, other_desc, output_desc)


@api("cnnlFloorDiv_v2")
def floorDiv_v2(handle, prefer, input_desc, input, other_desc, other, output_desc, output, workspace,
                workspace_size) -> None:
    """cnnlFloorDiv_v2(handle, prefer, input_desc, input, other_desc, other, output_desc, output, workspace,
    workspace_size): output = floor(input / other) (torch.div(rounding_mode="floor")), broadcasting. Integer
    division by zero gives 0."""
    checks.preference(prefer)
    _division("cnnlFloorDiv_v2", "cnnlGetFloorDivWorkspaceSize", "floor_div", handle, input_desc, input,
              other_desc, other, output_desc, output, workspace, workspace_size)


@api("cnnlGetFloorDivTruncWorkspaceSize")
def getFloorDivTruncWorkspaceSize(handle, input_desc, other_desc, output_desc) -> int:
    """cnnlGetFloorDivTruncWorkspaceSize(handle, input_desc, other_desc, output_desc, size_t *size) -> size."""
    return _division_workspace("cnnlFloorDivTrunc", handle, input_desc, other_desc, output_desc)


@api("cnnlFloorDivTrunc")
def floorDivTrunc(handle, prefer, input_desc, input, other_desc, other, output_desc, output, workspace,
                  workspace_size) -> None:
    """cnnlFloorDivTrunc(handle, prefer, input_desc, input, other_desc, other, output_desc, output, workspace,
    workspace_size): output = trunc(input / other) (torch.div(rounding_mode="trunc")), broadcasting."""
    checks.preference(prefer)
    _division("cnnlFloorDivTrunc", "cnnlGetFloorDivTruncWorkspaceSize", "trunc_div", handle, input_desc, input,
              other_desc, other, output_desc, output, workspace, workspace_size)


@api("cnnlGetFloorModWorkspaceSize")
def getFloorModWorkspaceSize(handle, input_desc, other_desc, output_desc) -> int:
    """cnnlGetFloorModWorkspaceSize(handle, input_desc, other_desc, output_desc, size_t *size) -> size."""
    return _division_workspace("cnnlFloorMod", handle, input_desc, other_desc, output_desc)


@api("cnnlFloorMod")
def floorMod(handle, input_desc, input, other_desc, other, output_desc, output, workspace, workspace_size) -> None:
    """cnnlFloorMod(handle, input_desc, input, other_desc, other, output_desc, output, workspace, workspace_size):
    output = input - floor(input / other) * other, the sign of `other` (torch.remainder), broadcasting."""
    _division("cnnlFloorMod", "cnnlGetFloorModWorkspaceSize", "floor_mod", handle, input_desc, input, other_desc,
              other, output_desc, output, workspace, workspace_size)


@api("cnnlGetFloorModTruncWorkspaceSize")
def getFloorModTruncWorkspaceSize(handle, input_desc, other_desc, output_desc) -> int:
    """cnnlGetFloorModTruncWorkspaceSize(handle, input_desc, other_desc, output_desc, size_t *size) -> size."""
    return _division_workspace("cnnlFloorModTrunc", handle, input_desc, other_desc, output_desc)


@api("cnnlFloorModTrunc")
def floorModTrunc(handle, input_desc, input, other_desc, other, output_desc, output, workspace,
                  workspace_size) -> None:
    """cnnlFloorModTrunc(handle, input_desc, input, other_desc, other, output_desc, output, workspace,
    workspace_size): output = input - trunc(input / other) * other, the sign of `input` (torch.fmod, C's fmod),
    broadcasting. Integer modulo by zero gives 0."""
    _division("cnnlFloorModTrunc", "cnnlGetFloorModTruncWorkspaceSize", "trunc_mod", handle, input_desc, input,
              other_desc, other, output_desc, output, workspace, workspace_size)


# ---- product of N, transform, clip -----------------------------------------------------------------------------------

@api("cnnlMulN")
def mulN(handle, inputs_desc, inputs, output_desc, output) -> None:
    """cnnlMulN(handle, inputs_desc[], inputs[], input_num, output_desc, output): output = the product of the
    inputs (broadcasting); `input_num` is the length of the two sequences."""
    for value, arg in ((inputs_desc, "inputs_desc"), (inputs, "inputs")):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
            raise ArgumentFault(f"expected a sequence, got {type(value).__name__}", arg)
    if len(inputs_desc) != len(inputs):
        raise ArgumentFault(f"{len(inputs_desc)} descriptors but {len(inputs)} pointers", "inputs")
    if len(inputs_desc) == 0:
        raise ArgumentFault("needs at least one input", "inputs_desc")
    tensors = tuple((d, p, f"inputs[{i}]") for i, (d, p) in enumerate(zip(inputs_desc, inputs)))
    _elementwise("cnnlMulN", "", handle, D.NUMERIC, tensors, (output_desc, output, "output"), None, 0,
                 lambda *views: K.mul_n(views[:-1], views[-1]), flops_per_element=max(1, len(tensors) - 1))


def _scalar_type(dtype: int) -> int:
    """The data type of transform's alpha and beta in device memory: FLOAT for 16- and 32-bit floats."""
    return E.CNNL_DTYPE_FLOAT if dtype in D.HALF_PRECISION else dtype


_validated_transforms = ValidatedCalls("cnnlTransform_v2")


def _transform_operands(input_desc, output_desc):
    """The (input, output) descriptors of cnnlTransform_v2, validated (once per unchanged pair)."""
    key = (input_desc, output_desc)
    found = _validated_transforms.lookup(key, key)
    if found is not None:
        return found
    x, out = tensor_arg(input_desc, "input_desc"), tensor_arg(output_desc, "output_desc")
    checks.supported_dtype(x, "input_desc", D.NUMERIC, "cnnlTransform_v2")
    checks.same_dtype(x, "input_desc", (out, "output_desc"))
    checks.same_shape(x, "input_desc", (out, "output_desc"))
    found = (x, out)
    _validated_transforms.remember(key, key, found)
    return found


@api("cnnlTransform_v2")
def transform_v2(handle, pointer_mode, alpha, input_desc, input, beta, output_desc, output) -> None:
    """cnnlTransform_v2(handle, pointer_mode, alpha, input_desc, input, beta, output_desc, output):
    output = alpha * input + beta. HOST mode: alpha and beta are Python numbers; DEVICE mode: device addresses of
    one FLOAT (half, bfloat16, float tensors), DOUBLE or integer of the tensor's type each. IEEE arithmetic of the
    computation type (-0.0 * 2 + 0.0 is +0.0; with beta -0.0 it stays -0.0)."""
    with OpCall("cnnlTransform_v2", handle) as call:
        mode = P.pointer_mode(pointer_mode)
        x, out = _transform_operands(input_desc, output_desc)
        kind = _scalar_type(x.dtype)
        read_alpha = P.scalar_reader(call, mode, alpha, kind, "alpha")
        read_beta = P.scalar_reader(call, mode, beta, kind, "beta")
        x_view, out_view = call.input(x, input, "input"), call.output(out, output, "output")
        call.submit(lambda: K.transform(x_view, read_alpha()[()], read_beta()[()], out_view), flops=2 * out.size,
                    dtype=out.dtype)


@api("cnnlClip_v2")
def clip_v2(handle, pointer_mode, input_desc, input, min, max, output_desc, output) -> None:
    """cnnlClip_v2(handle, pointer_mode, input_desc, input, min, max, output_desc, output): output = input clamped
    to [min, max] (torch.clamp); either bound may be NULL (not both). The bounds are of the input's data type:
    Python numbers (HOST mode, rounded to that type) or device addresses of one element (DEVICE mode)."""
    with OpCall("cnnlClip_v2", handle) as call:
        mode = P.pointer_mode(pointer_mode)
        x, out = tensor_arg(input_desc, "input_desc"), tensor_arg(output_desc, "output_desc")
        checks.supported_dtype(x, "input_desc", D.NUMERIC, "cnnlClip_v2")
        checks.same_dtype(x, "input_desc", (out, "output_desc"))
        checks.same_shape(x, "input_desc", (out, "output_desc"))
        read_low = P.scalar_reader(call, mode, min, x.dtype, "min", optional=True)
        read_high = P.scalar_reader(call, mode, max, x.dtype, "max", optional=True)
        if read_low is None and read_high is None:
            raise ArgumentFault("min and max are both NULL", "min")
        x_view, out_view = call.input(x, input, "input"), call.output(out, output, "output")
        call.submit(lambda: K.clip(x_view, read_low and read_low(), read_high and read_high(), out_view),
                    flops=2 * out.size, dtype=out.dtype)


# ---- bitwise ---------------------------------------------------------------------------------------------------

def _bit_inputs(op: int, input1_desc, input2_desc):
    allowed = _INT_OR_BOOL if _BITWISE[op] in ("and", "or", "xor", "not") else D.INTEGER
    if op == E.CNNL_BNOT_OP:
        return _inputs("cnnlBitCompute_v2", allowed, (input1_desc, "input1_desc"))
    return _inputs("cnnlBitCompute_v2", allowed, (input1_desc, "input1_desc"), (input2_desc, "input2_desc"))


@api("cnnlGetBitComputeWorkspaceSize")
def getBitComputeWorkspaceSize(handle, input1_desc, input2_desc, output_desc) -> int:
    """cnnlGetBitComputeWorkspaceSize(handle, input1_desc, input2_desc, output_desc, size_t *size) -> size
    (input2_desc may be NULL, for CNNL_BNOT_OP)."""
    handle_arg(handle)
    pairs = [(input1_desc, "input1_desc")] + ([(input2_desc, "input2_desc")] if input2_desc is not None else [])
    inputs = _inputs("cnnlBitCompute_v2", _INT_OR_BOOL, *pairs)
    out = _output(output_desc, "output_desc", inputs)
    return _staged(out.dims, inputs)


@api("cnnlBitCompute_v2")
def bitCompute_v2(handle, op, input1_desc, input1, input2_desc, input2, output_desc, output, workspace,
                  workspace_size) -> None:
    """cnnlBitCompute_v2(handle, cnnlBitComputeOp_t op, input1_desc, input1, input2_desc, input2, output_desc,
    output, workspace, workspace_size): bitwise and/or/xor (CNNL_CYCLE_B*_OP, broadcasting), not (CNNL_BNOT_OP,
    reads only input1; input2 may be NULL) and shifts (CNNL_BLEFT/BRIGHT_SHIFT_OP_V, integers) as PyTorch's
    bitwise ops. Integer types and BOOL (not for shifts)."""
    code = as_enum(op, "op", _BITWISE, "cnnlBitComputeOp_t")
    name = _BITWISE[code]
    with OpCall("cnnlBitCompute_v2", handle) as call:
        inputs = _bit_inputs(code, input1_desc, input2_desc)
        out = _output(output_desc, "output_desc", inputs)
        views = [call.input(inputs[0][0], input1, "input1")]
        if code != E.CNNL_BNOT_OP:
            views.append(call.input(inputs[1][0], input2, "input2"))
        out_view = call.output(out, output, "output")
        call.workspace(workspace, workspace_size, _staged(out.dims, inputs), "cnnlGetBitComputeWorkspaceSize")
        second = views[1] if len(views) > 1 else None
        call.submit(lambda: K.bitwise(name, views[0], second, out_view), flops=out.size, dtype=out.dtype)
