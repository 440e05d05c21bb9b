"""add / sub / mul / div: Tensor and Scalar forms, in place (add_) and out= (add.out), with torch's type promotion and
broadcasting, over cnnlOpTensor, cnnlTransform_v2 and cnnlDiv_v2.

Operands are first brought to the result dtype on the device (cnnlCastDataType); a Python or 0-d cpu scalar
becomes a one-element device tensor, except in the common case of add, sub or mul of a tensor and a number that
leaves the tensor's dtype, which is one cnnlTransform_v2 with the number as a host scalar (as Cambricon's torch_mlu
does). The common case of dense, same-shape, same-dtype operands is one cnnlOpTensor over one cached descriptor
(`_dense`): cnnl remembers what it validated on it (cnnl.validated), so a repeated call costs little more than its
pointers' checks.
"""
from __future__ import annotations

import numpy as np
import torch

import cnnl
from mlusim.memo import BoundedMemo

from ._core import FLOATING, TORCH_TO_CNNL, aten, check_same_device, desc, fallback, handle, register, workspace
from .copy import copy_into
from ._iter import check_castable, check_no_partial_overlap, is_non_overlapping_and_dense
from .fill import cast_number, device_number
from .logic import logic_op

ADD, SUB, MUL = cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_OP_TENSOR_SUB, cnnl.CNNL_OP_TENSOR_MUL
DIV = "div"
_KERNEL_NAMES = {ADD: "add", SUB: "sub", MUL: "mul"}
_op_descriptors = BoundedMemo(4096)  # made cnnl descriptors, by what they were set to


def _op_descriptor(op: int, dtype: torch.dtype):
    """A cached cnnlOpTensorDescriptor (computation in float for half/bfloat16)."""
    key = (op, dtype)
    found = _op_descriptors.get(key)
    if found is None:
        compute = cnnl.CNNL_DTYPE_FLOAT if dtype in (torch.float16, torch.bfloat16) else TORCH_TO_CNNL[dtype]
        found = cnnl.createOpTensorDescriptor()
        cnnl.setOpTensorDescriptor(found, op, compute, cnnl.CNNL_NOT_PROPAGATE_NAN)
        _op_descriptors.put(key, found)
    return found


def scaled_sum(a: torch.Tensor, alpha, b: torch.Tensor, beta, out: torch.Tensor) -> None:
    """out = alpha * a + beta * b (cnnlOpTensor ADD with alpha1/alpha2; a, b of out's dtype, broadcasting)."""
    h = handle(out)
    a_desc, b_desc, out_desc = desc(a), desc(b), desc(out)
    size = cnnl.getOpTensorWorkspaceSize(h, a_desc, b_desc, out_desc)
    ws, _keep = workspace(size, out.device)
    cnnl.opTensor(h, _op_descriptor(ADD, out.dtype), alpha, a_desc, a.data_ptr(), beta, b_desc, b.data_ptr(), ws,
                  size, 0, out_desc, out.data_ptr())


def _result_dtype(op, self: torch.Tensor, other) -> torch.dtype:
    dtype = torch.result_type(self, other)
    if op == DIV and not dtype.is_floating_point:
        return torch.get_default_dtype()
    return dtype


def _operand(value, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """`value` (a tensor or a number) as an mlu tensor of `dtype` on `device`; a number or a 0-d cpu tensor (a
    scalar operand) converted as torch's CPU kernels convert it (`cast_number`: 1e39 + a float32 tensor is inf)."""
    if isinstance(value, torch.Tensor) and value.device.type != "cpu":
        return value if value.dtype == dtype else value.to(dtype)
    number = value.item() if isinstance(value, torch.Tensor) else value
    return device_number(cast_number(number, dtype), dtype, device)


def _number(op, self: torch.Tensor, other, alpha):
    """The number `other` stands for, converted (`number_operand`), when `self op alpha * other` takes the
    one-command path of a tensor and a number (`_with_number`): add, sub or mul of an mlu tensor (any strides) and a
    Python number or 0-d cpu tensor that leaves self's dtype as it is; else None."""
    dtype = self.dtype
    if op == DIV or dtype not in _PLAIN_DTYPES or not _plain_alpha(alpha, dtype):
        return None
    if isinstance(other, torch.Tensor):
        if other.dim() != 0 or other.device.type != "cpu":
            return None
        value = other.item()
    elif type(other) in (int, float):
        value = other
    else:
        return None
    if self.device.type != "mlu" or torch.result_type(self, other) != dtype:
        return None
    return number_operand(op, value, dtype)[0]


def number_operand(op, value, dtype: torch.dtype) -> tuple:
    """(number, its dtype): a Python number operand of `tensor op number` converted as torch's CPU kernels convert
    it: to the tensor's dtype (`cast_number`), except a 16-bit float tensor's multiplier, which stays a float32
    (torch multiplies such a tensor in float32 by the float32 scalar: half(1e-3) * 1e5 is 100.06, not inf)."""
    if op == MUL and dtype in _HALF_PRECISION:
        return cast_number(value, torch.float32), torch.float32
    return cast_number(value, dtype), dtype


_HALF_PRECISION = (torch.float16, torch.bfloat16)


def _transform_scalars(op, number, alpha, dtype: torch.dtype) -> tuple:
    """cnnlTransform_v2's (alpha, beta) for `self op alpha * number`, `number` converted (`number_operand`): the product
    alpha * number in the op's computation type (float32 for 16-bit floats; integers wrap), as cnnlOpTensor would
    form it from a one-element operand, so the result is that op's bit for bit."""
    if op == MUL:
        return number, -0.0  # x + -0.0 is x for every x (+0.0 would turn a -0.0 product into +0.0)
    if alpha == 1 and op == ADD:
        return 1, number
    compute = _COMPUTE_TYPES[dtype]
    with np.errstate(over="ignore"):
        scaled = np.multiply(np.array(number, compute), np.array(alpha, compute), dtype=compute)
        if op == SUB and scaled == scaled:  # (a NaN keeps its sign: x - NaN is that NaN on the host, as x + NaN)
            scaled = np.negative(scaled)
    return 1, scaled.item()


#: the numpy type cnnl computes a dtype's arithmetic in
_COMPUTE_TYPES = {torch.float32: np.float32, torch.float16: np.float32, torch.bfloat16: np.float32,
                  torch.float64: np.float64, torch.int8: np.int8, torch.int16: np.int16, torch.int32: np.int32,
                  torch.int64: np.int64, torch.uint8: np.uint8}


def _with_number(op, self: torch.Tensor, number, out: torch.Tensor | None = None, alpha=1) -> torch.Tensor:
    """self op alpha*number into a new tensor or `out` (self itself for the in-place forms): one cnnlTransform_v2
    with the number as a host scalar (no fill, no device scalar)."""
    if out is None:
        out = torch.empty_like(self)
    scale, shift = _transform_scalars(op, number, alpha, self.dtype)
    cnnl.transform_v2(handle(out), cnnl.CNNL_POINTER_MODE_HOST, scale, desc(self), self.data_ptr(), shift, desc(out),
                      out.data_ptr())
    return out


#: the dtypes add, sub and mul with alpha 1 run natively in, bool aside (cnnlLogicOp)
_PLAIN_DTYPES = frozenset(TORCH_TO_CNNL) - {torch.bool}


def _supported(op, dtype: torch.dtype, alpha) -> bool:
    if dtype == torch.bool:  # bool add is or, mul is and (cnnlLogicOp)
        return op in (ADD, MUL) and alpha in (1, True)
    if dtype not in TORCH_TO_CNNL:
        return False
    if op == DIV:
        return dtype in FLOATING
    return alpha == 1 or dtype in FLOATING or float(alpha) == int(alpha)


def _compute(op, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, alpha) -> None:
    """out = a op alpha*b, every operand of out's dtype on out's device (a and b broadcast to out)."""
    if out.dtype == torch.bool:
        logic_op(cnnl.CNNL_LOGIC_OP_OR if op == ADD else cnnl.CNNL_LOGIC_OP_AND, a, b, out)
        return
    dtype = out.dtype
    h = handle(out)
    out_desc = desc(out)
    shape = out.shape
    a_desc = out_desc if a.shape == shape and a.is_contiguous() and out.is_contiguous() else desc(a)
    b_desc = out_desc if b.shape == shape and b.is_contiguous() and out.is_contiguous() else desc(b)
    a_ptr, b_ptr, out_ptr = a.data_ptr(), b.data_ptr(), out.data_ptr()
    if op == DIV:
        size = cnnl.getDivWorkspaceSize(h, a_desc, b_desc, out_desc)
        ws, _keep = workspace(size, out.device)
        cnnl.div_v2(h, cnnl.CNNL_COMPUTATION_HIGH_PRECISION, a_desc, a_ptr, b_desc, b_ptr, ws, size, out_desc,
                    out_ptr)
        return
    size = cnnl.getOpTensorWorkspaceSize(h, a_desc, b_desc, out_desc)
    ws, _keep = workspace(size, out.device)
    cnnl.opTensor(h, _op_descriptor(op, dtype), 1, a_desc, a_ptr, alpha, b_desc, b_ptr, ws, size, 0, out_desc,
                  out_ptr)


def _dense(op, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None, alpha=1) -> torch.Tensor:
    """a op alpha*b for dense operands of one shape, dtype and device, into a new tensor or `out` (a itself for the
    in-place forms): one cnnlOpTensor with one descriptor for all three. An alpha other than 1 only for floating
    dtypes (`_plain_alpha`), where cnnl takes it as it is."""
    if out is None:
        out = torch.empty_like(a)
    d = desc(out)
    cnnl.opTensor(handle(out), _op_descriptor(op, out.dtype), 1, d, a.data_ptr(), alpha, d, b.data_ptr(), None, 0, 0,
                  d, out.data_ptr())
    return out


def _plain_alpha(alpha, dtype: torch.dtype) -> bool:
    """Whether `_dense` takes this alpha for `dtype`: 1, or a Python number for a floating dtype."""
    return alpha == 1 or (dtype in FLOATING and type(alpha) in (int, float))


def _same_kind(op, self: torch.Tensor, other) -> bool:
    """Whether `other` is a tensor of self's shape and dtype on self's mlu device, in a dtype the op takes as it is
    (cnnlOpTensor; div_v2: floating): the common case, checked cheaply (what _supported says, as a set)."""
    dtype = self.dtype
    return (isinstance(other, torch.Tensor) and other.dtype == dtype
            and dtype in (FLOATING if op == DIV else _PLAIN_DTYPES) and (device := self.device).type == "mlu"
            and other.device == device and other.shape == self.shape)


def _new_result(self, other, shape, dtype: torch.dtype, device) -> torch.Tensor:
    """A new result of `shape`, laid out as torch's TensorIterator lays it out in the common cases: like the first
    operand of that shape that is dense but not contiguous (a channels-last input gives a channels-last result),
    else contiguous."""
    for operand in (self, other):
        if isinstance(operand, torch.Tensor) and operand.shape == shape and not operand.is_contiguous() \
                and is_non_overlapping_and_dense(operand):
            return torch.empty_like(operand, dtype=dtype, device=device)
    return torch.empty(shape, dtype=dtype, device=device)


def _broadcast(self: torch.Tensor, other) -> torch.Size:
    if not isinstance(other, torch.Tensor) or other.shape == self.shape:
        return self.shape
    return torch.broadcast_shapes(self.shape, other.shape)


def _binary(op, overload, self: torch.Tensor, other, alpha=1, out: torch.Tensor | None = None):
    """The shared body of the Tensor / Scalar / in-place / out= forms."""
    if alpha.__class__ is not int:  # (add/sub only; 1, the usual alpha, needs no check)
        _check_alpha(out.dtype if out is not None else _result_dtype(op, self, other), alpha)
    if out is None and isinstance(self, torch.Tensor) and _plain_alpha(alpha, self.dtype) and \
            _same_kind(op, self, other):
        if op != DIV and self.is_contiguous() and other.is_contiguous():
            return _dense(op, self, other, alpha=alpha)
        result = _new_result(self, other, self.shape, self.dtype, self.device)
        _compute(op, self, other, result, alpha)
        return result
    if out is None and isinstance(self, torch.Tensor):
        number = _number(op, self, other, alpha)
        if number is not None:
            return _with_number(op, self, number, alpha=alpha)
    operands = [value for value in (self, other) if isinstance(value, torch.Tensor)]  # a wrapped number is a
    device = check_same_device(*operands, *((out,) if out is not None else ()))     # Python number here
    dtype = _result_dtype(op, self, other)
    if device is None or device.type != "mlu" or not _supported(op, dtype, alpha):
        kwargs = {"alpha": alpha} if op in (ADD, SUB) and alpha != 1 else {}
        if not isinstance(other, torch.Tensor) and overload._overloadname == "Tensor":
            overload = overload.overloadpacket.Scalar  # a number the Tensor form cannot take (a complex)
        if out is not None and any(argument.name == "out" for argument in overload._schema.arguments):
            kwargs["out"] = out  # (an in-place overload writes self, its out)
        return fallback(overload, self, other, **kwargs)
    shape = _broadcast(self, other) if isinstance(self, torch.Tensor) else other.shape
    a = _operand(self, dtype, device)
    b = _operand(other, dtype, device)
    if out is None:
        result = _new_result(self, other, shape, dtype, device)
        _compute(op, a, b, result, alpha)
        return result
    check_no_partial_overlap(out, self, other)
    if out.dtype == dtype and out.shape == shape:
        target = out
    else:
        if out.shape != shape:
            out.resize_(shape)
        target = out if out.dtype == dtype else torch.empty(shape, dtype=dtype, device=device)
    _compute(op, a, b, target, alpha)
    if target is not out:
        copy_into(target, out)
    return out


def _inplace(op, overload, self: torch.Tensor, other, alpha=1):
    if alpha.__class__ is not int:
        _check_alpha(self.dtype, alpha)
    if op != DIV and _plain_alpha(alpha, self.dtype) and _same_kind(op, self, other) and self.is_contiguous() \
            and other.is_contiguous():
        check_no_partial_overlap(self, other)
        _dense(op, self, other, self, alpha)  # the common case (an optimizer's update, a running sum)
        return self
    number = _number(op, self, other, alpha) if self.is_contiguous() else None
    if number is not None:  # a counter's += 1, an optimizer's scaling
        return _with_number(op, self, number, self, alpha)
    dtype = _result_dtype(op, self, other)
    check_castable(dtype, self)
    shape = _broadcast(self, other)
    if shape != self.shape:
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(shape)}")
    return _binary(op, overload, self, other, alpha, out=self)


def _check_alpha(dtype: torch.dtype, alpha) -> None:
    """torch's alpha_check for add/sub: a bool alpha only for bool results, a float one not for integers, a complex
    one only for complex results (same errors, same messages)."""
    if isinstance(alpha, bool) and dtype != torch.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not (dtype.is_floating_point or dtype.is_complex) and isinstance(alpha, (float, complex)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
    if not dtype.is_complex and isinstance(alpha, complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex number.")


# ---- registrations -------------------------------------------------------------------------------------------------
def _register_family(name: str, op):
    tensor_op, scalar_op = getattr(aten, name).Tensor, getattr(aten, name).Scalar
    inplace_tensor, inplace_scalar = getattr(aten, f"{name}_").Tensor, getattr(aten, f"{name}_").Scalar
    out_op = getattr(aten, name).out
    with_alpha = op in (ADD, SUB)

    if with_alpha:
        def tensor_form(self, other, *, alpha=1):
            return _binary(op, tensor_op, self, other, alpha)

        def scalar_form(self, other, alpha=1):
            return _binary(op, scalar_op, self, other, alpha)

        def inplace_tensor_form(self, other, *, alpha=1):
            return _inplace(op, inplace_tensor, self, other, alpha)

        def inplace_scalar_form(self, other, alpha=1):
            return _inplace(op, inplace_scalar, self, other, alpha)

        def out_form(self, other, *, alpha=1, out):
            return _binary(op, out_op, self, other, alpha, out=out)
    else:
        def tensor_form(self, other):
            return _binary(op, tensor_op, self, other)

        def scalar_form(self, other):
            return _binary(op, scalar_op, self, other)

        def inplace_tensor_form(self, other):
            return _inplace(op, inplace_tensor, self, other)

        def inplace_scalar_form(self, other):
            return _inplace(op, inplace_scalar, self, other)

        def out_form(self, other, *, out):
            return _binary(op, out_op, self, other, out=out)

    for suffix, kernel in (("Tensor", tensor_form), ("Scalar", scalar_form)):
        kernel.__name__ = f"{name}_{suffix.lower()}"
        kernel.__doc__ = f"aten::{name}.{suffix}"
        register(f"aten::{name}.{suffix}")(kernel)
    for suffix, kernel in (("Tensor", inplace_tensor_form), ("Scalar", inplace_scalar_form)):
        kernel.__name__ = f"{name}__{suffix.lower()}"
        kernel.__doc__ = f"aten::{name}_.{suffix}"
        register(f"aten::{name}_.{suffix}")(kernel)
    out_form.__name__, out_form.__doc__ = f"{name}_out", f"aten::{name}.out"
    register(f"aten::{name}.out")(out_form)


_register_family("add", ADD)
_register_family("sub", SUB)
_register_family("mul", MUL)
_register_family("div", DIV)
