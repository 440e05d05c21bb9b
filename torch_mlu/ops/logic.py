"""Comparisons (eq, ne, lt, le, gt, ge), logical and/or/xor/not (cnnlLogicOp), where (cnnlSelectV2), and the tests
isnan (x != x), isposinf and isneginf (x == +-inf; False for integers).

Operands are compared in their promoted dtype (torch.result_type), so `int_tensor < 2.5` compares in float; the
result is bool unless an out= tensor of another dtype asks for 0/1 in its dtype.
"""
from __future__ import annotations

import torch

import cnnl

from ._core import TORCH_TO_CNNL, aten, check_same_device, desc, fallback, handle, register, workspace
from ._iter import Destination, check_castable, on_device, resize_out, type_name
from .copy import copy_into
from .fill import device_scalar

_COMPARISONS = {"eq": cnnl.CNNL_LOGIC_OP_EQ, "ne": cnnl.CNNL_LOGIC_OP_NE, "lt": cnnl.CNNL_LOGIC_OP_LT,
                "le": cnnl.CNNL_LOGIC_OP_LE, "gt": cnnl.CNNL_LOGIC_OP_GT, "ge": cnnl.CNNL_LOGIC_OP_GE}
_LOGICALS = {"logical_and": cnnl.CNNL_LOGIC_OP_AND, "logical_or": cnnl.CNNL_LOGIC_OP_OR,
             "logical_xor": cnnl.CNNL_LOGIC_OP_XOR}


def _shape(*values) -> tuple:
    shapes = [v.shape for v in values if isinstance(v, torch.Tensor)]
    if len(shapes) == 1 or all(s == shapes[0] for s in shapes):
        return tuple(shapes[0])
    return tuple(torch.broadcast_shapes(*shapes))


def logic_op(op: int, a: torch.Tensor, b: torch.Tensor | None, result: torch.Tensor) -> None:
    """cnnlLogicOp into `result` (bool or a's dtype); a and b share a dtype and broadcast to result."""
    h = handle(result)
    a_desc, c_desc = desc(a), desc(result)
    b_desc = desc(b) if b is not None else None
    size = cnnl.getLogicOpWorkspaceSize(h, a_desc, b_desc if b is not None else a_desc, c_desc)
    ws, _keep = workspace(size, result.device)
    cnnl.logicOp(h, op, a_desc, a.data_ptr(), b_desc, b.data_ptr() if b is not None else None, ws, size, c_desc,
                 result.data_ptr())


def _logical_binary(op: int, overload, self, other, out: torch.Tensor) -> torch.Tensor:
    """out = self (op) other with torch's promotion; the body of the comparison and logical kernels."""
    device = check_same_device(*[v for v in (self, other) if isinstance(v, torch.Tensor)], out)
    dtype = torch.result_type(self, other)
    if device is None or device.type != "mlu" or dtype not in TORCH_TO_CNNL or out.dtype not in TORCH_TO_CNNL:
        return fallback(overload, self, other, out=out)
    shape = _shape(self, other)
    a, b = on_device(self, dtype, device), on_device(other, dtype, device)
    target = Destination(out, shape, out.dtype if out.dtype in (torch.bool, dtype) else torch.bool, (self, other))
    if target.target.numel():
        logic_op(op, a, b, target.target)
    return target.finish()


def _register_comparison(name: str, op: int) -> None:
    for overload_name in ("Tensor_out", "Scalar_out"):
        overload = getattr(getattr(aten, name), overload_name)

        def kernel(self, other, *, out, _op=op, _overload=overload):
            return _logical_binary(_op, _overload, self, other, out)

        kernel.__name__ = f"{name}_{overload_name.lower()}"
        kernel.__doc__ = f"aten::{name}.{overload_name}(self, other, *, out): bool result of the comparison."
        register(f"aten::{name}.{overload_name}")(kernel)


for _name, _op in _COMPARISONS.items():
    _register_comparison(_name, _op)


def _register_logical(name: str, op: int) -> None:
    overload = getattr(aten, name).out

    def kernel(self, other, *, out):
        return _logical_binary(op, overload, self, other, out)

    kernel.__name__ = f"{name}_out"
    kernel.__doc__ = f"aten::{name}.out(self, other, *, out): nonzero is true."
    register(f"aten::{name}.out")(kernel)


for _name, _op in _LOGICALS.items():
    _register_logical(_name, _op)


@register("aten::logical_not.out")
def logical_not_out(self, *, out):
    """aten::logical_not.out(self, *, out)."""
    check_same_device(self, out)
    if self.device.type != "mlu" or self.dtype not in TORCH_TO_CNNL or out.dtype not in TORCH_TO_CNNL:
        return fallback(aten.logical_not.out, self, out=out)
    target = Destination(out, self.shape, out.dtype if out.dtype in (torch.bool, self.dtype) else torch.bool,
                         (self,))
    if target.target.numel():
        logic_op(cnnl.CNNL_LOGIC_OP_NOT, self, None, target.target)
    return target.finish()


# ---- where ----------------------------------------------------------------------------------------------------------
def _where_into(condition: torch.Tensor, self, other, out: torch.Tensor) -> torch.Tensor:
    device = check_same_device(condition, *[v for v in (self, other) if isinstance(v, torch.Tensor)], out)
    if condition.dtype not in (torch.bool, torch.uint8):
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{type_name(condition.dtype)}")
    dtype = torch.result_type(self, other)
    if device.type != "mlu" or dtype not in TORCH_TO_CNNL:
        return fallback(aten.where.self_out, condition, self, other, out=out)
    check_castable(dtype, out)
    shape = _shape(condition, self, other)
    a, b = on_device(self, dtype, device), on_device(other, dtype, device)
    cond = on_device(condition, condition.dtype, device)
    target = Destination(out, shape, dtype, (condition, self, other))
    result = target.target
    if result.numel():
        h = handle(result)
        c_desc, a_desc, b_desc, o_desc = desc(cond), desc(a), desc(b), desc(result)
        size = cnnl.getSelectV2WorkspaceSize(h, c_desc, a_desc, b_desc)
        ws, _keep = workspace(size, device)
        cnnl.selectV2(h, c_desc, cond.data_ptr(), a_desc, a.data_ptr(), b_desc, b.data_ptr(), ws, size, o_desc,
                      result.data_ptr())
    return target.finish()


@register("aten::where.self_out")
def where_self_out(condition, self, other, *, out):
    """aten::where.self_out(condition, self, other, *, out)."""
    return _where_into(condition, self, other, out)


@register("aten::where.self")
def where_self(condition, self, other):
    """aten::where.self(condition, self, other): elements of self where condition, else of other."""
    device = check_same_device(condition, self, other)
    dtype = torch.result_type(self, other)
    out = torch.empty(_shape(condition, self, other), dtype=dtype, device=device)
    return _where_into(condition, self, other, out)


def _native(tensor: torch.Tensor) -> bool:
    return tensor.device.type == "mlu" and tensor.dtype in TORCH_TO_CNNL


# ---- isnan, isposinf, isneginf ---------------------------------------------------------------------------------------
@register("aten::isnan")
def isnan(self):
    """aten::isnan(self): x != x (False for integers)."""
    if not _native(self):
        return fallback(aten.isnan.default, self)
    result = torch.empty(self.shape, dtype=torch.bool, device=self.device)
    if result.numel():
        if self.is_floating_point():
            logic_op(cnnl.CNNL_LOGIC_OP_NE, self, self, result)
        else:
            result.zero_()
    return result


@register("aten::isnan.out")
def isnan_out(self, *, out):
    """aten::isnan.out(self, *, out)."""
    check_same_device(self, out)
    result = isnan(self)
    resize_out(out, result.shape)
    return copy_into(result, out)


def _infinity_test(name: str, sign: float, self, out):
    check_same_device(self, out)
    if not _native(self):
        return fallback(getattr(aten, name).out, self, out=out)
    target = Destination(out, self.shape, torch.bool, (self,))
    result = target.target
    if result.numel():
        if self.is_floating_point():
            logic_op(cnnl.CNNL_LOGIC_OP_EQ, self, device_scalar(sign * float("inf"), self.dtype, self.device),
                     result)
        else:
            result.zero_()
    return target.finish()


@register("aten::isposinf.out")
def isposinf_out(self, *, out):
    """aten::isposinf.out(self, *, out): x == +inf."""
    return _infinity_test("isposinf", 1.0, self, out)


@register("aten::isneginf.out")
def isneginf_out(self, *, out):
    """aten::isneginf.out(self, *, out): x == -inf."""
    return _infinity_test("isneginf", -1.0, self, out)
