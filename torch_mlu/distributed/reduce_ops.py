"""torch dtypes and ReduceOps in cncl's terms, and how each (op, dtype) pair is carried out.

cncl reduces half, bfloat16, float and the 8- to 64-bit integers with sum, prod, max and min. The rest of what
torch.distributed offers is built on top:
- AVG: a cncl sum, then a division by the group size on the cncl queue (integers: truncating, as NCCL);
- PREMUL_SUM(factor): the input times the factor (into a scratch tensor), then a cncl sum;
- bool: the bytes reduced as uint8 (sum and max are a logical or, prod and min a logical and, as NCCL);
- complex (sum, avg, premul_sum): the real view;
- BAND/BOR/BXOR (integers and bool), and float64 or any dtype cncl cannot reduce: the inputs of every rank are
  gathered (cnclAllGather of their bytes) and combined in rank order on the device, so every rank gets the same
  bits.
"""
from __future__ import annotations

import functools

import torch

import cncl

# torch.distributed.ReduceOp.RedOpType values (c10d::ReduceOp::RedOpType)
SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR, PREMUL_SUM = range(9)
OP_NAMES = {SUM: "SUM", AVG: "AVG", PRODUCT: "PRODUCT", MIN: "MIN", MAX: "MAX", BAND: "BAND", BOR: "BOR",
            BXOR: "BXOR", PREMUL_SUM: "PREMUL_SUM"}

#: torch dtypes cncl reduces, and their cnclDataType_t
CNCL_TYPES = {
    torch.float32: cncl.cnclFloat32, torch.float16: cncl.cnclFloat16, torch.bfloat16: cncl.cnclBfloat16,
    torch.int8: cncl.cnclInt8, torch.int16: cncl.cnclInt16, torch.int32: cncl.cnclInt32, torch.int64: cncl.cnclInt64,
    torch.uint8: cncl.cnclUint8, torch.uint16: cncl.cnclUint16, torch.uint32: cncl.cnclUint32,
    torch.uint64: cncl.cnclUint64,
}
_CNCL_OPS = {SUM: cncl.cnclSum, PRODUCT: cncl.cnclProd, MIN: cncl.cnclMin, MAX: cncl.cnclMax}
_BOOL_OPS = {SUM: cncl.cnclMax, MAX: cncl.cnclMax, PRODUCT: cncl.cnclMin, MIN: cncl.cnclMin}
_COMBINE = {SUM: torch.add, PRODUCT: torch.mul, MIN: torch.minimum, MAX: torch.maximum, BAND: torch.bitwise_and,
            BOR: torch.bitwise_or, BXOR: torch.bitwise_xor}
_BITWISE = (BAND, BOR, BXOR)


def op_name(op: int) -> str:
    return f"ReduceOp.{OP_NAMES.get(op, op)}"


def movement_type(tensor: torch.Tensor) -> tuple[int, int]:
    """(cnclDataType_t, count) that moves `tensor`'s bytes unchanged: its own type when cncl has it, else bytes."""
    code = CNCL_TYPES.get(tensor.dtype)
    if code is not None:
        return code, tensor.numel()
    return cncl.cnclUint8, tensor.numel() * tensor.element_size()


class Plan:
    """How one reduction of one dtype is done: `view` is applied to the tensors handed to cncl; `cncl_op`,
    `cncl_type` are the cncl arguments (None: emulated by gathering); `average` divides the result by the group
    size; `premul` scales the input first."""

    __slots__ = ("op", "cncl_op", "cncl_type", "view", "average", "premul")

    def __init__(self, op, cncl_op, cncl_type, view=None, average=False, premul=None):
        self.op, self.cncl_op, self.cncl_type = op, cncl_op, cncl_type
        self.view, self.average, self.premul = view, average, premul

    @property
    def emulated(self) -> bool:
        return self.cncl_op is None


_REAL = {torch.complex64: torch.float32, torch.complex128: torch.float64, torch.complex32: torch.float16}


def _real(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.view(_REAL[tensor.dtype])  # the (re, im) pairs; view_as_real has no mlu kernel


def _as_bytes(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.view(torch.uint8)


@functools.lru_cache(maxsize=None)
def _plan(op: int, dtype: torch.dtype) -> Plan:
    if op not in OP_NAMES:
        raise ValueError(f"cncl: unknown reduce op {op}")
    if dtype.is_complex:
        if op not in (SUM, AVG, PREMUL_SUM):
            raise ValueError(f"Cannot use {op_name(op)} with complex inputs (only SUM, AVG and PREMUL_SUM)")
        real = _plan(op, dtype.to_real())
        return Plan(real.op, real.cncl_op, real.cncl_type, _real, real.average, real.premul)
    if dtype == torch.bool:
        if op == AVG:
            raise ValueError("Cannot use ReduceOp.AVG with boolean inputs")
        if op == PREMUL_SUM:
            raise ValueError("Cannot use ReduceOp.PREMUL_SUM with boolean inputs")
        if op in _BITWISE:
            return Plan(op, None, None)
        return Plan(op, _BOOL_OPS[op], cncl.cnclUint8, _as_bytes)
    if op in _BITWISE:
        if dtype.is_floating_point:
            raise ValueError(f"Cannot use {op_name(op)} with floating point inputs ({dtype})")
        return Plan(op, None, None)
    code = CNCL_TYPES.get(dtype)
    average = op == AVG
    base = SUM if op in (AVG, PREMUL_SUM) else op
    if code is None:  # float64 and others cncl cannot reduce: gather and combine
        return Plan(base, None, None, None, average)
    return Plan(base, _CNCL_OPS[base], code, None, average)


def plan(op: int, factor, dtype: torch.dtype) -> Plan:
    """The Plan of reducing `dtype` with ReduceOp `op` (PREMUL_SUM's `factor`: a number or 1-element tensor)."""
    found = _plan(op, dtype)
    if op == PREMUL_SUM:
        if factor is None:
            raise ValueError("ReduceOp.PREMUL_SUM needs a factor (torch.distributed._make_nccl_premul_sum)")
        return Plan(found.op, found.cncl_op, found.cncl_type, found.view, False, factor)
    return found


def combine_in_rank_order(gathered: torch.Tensor, op: int) -> torch.Tensor:
    """The reduction of gathered[0], gathered[1], ... in that order (same bits on every rank)."""
    combine = _COMBINE[op]
    result = gathered[0].clone()
    for part in gathered[1:]:
        result = combine(result, part)
    return result
