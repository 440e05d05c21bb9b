"""Matrix products over cnnlMatMul and cnnlBatchMatMulBCast: mm, addmm, bmm, baddbmm, addmv (so mv), dot, vdot (and
their out= forms); torch.matmul and nn.Linear reach them through torch's own decompositions. The vector product
(linalg_cross) is three differences of products of mlu elementwise ops. A transposed operand is described as the dense matrix
it is a view of, with cnnl's transpose flag, so the product runs on dense BLAS without a copy."""
from __future__ import annotations

import torch

import cnnl

from ._core import FLOATING, aten, check_same_device, desc, fallback, handle, register, workspace
from ._iter import Destination, cpp_name, type_name
from .binary import scaled_sum
from .copy import copy_into


def _dense_operand(x: torch.Tensor):
    """(tensor to describe, transposed): op(tensor) == x and the described tensor is dense."""
    if x.is_contiguous():
        return x, False
    flipped = x.transpose(-1, -2)
    if flipped.is_contiguous():
        return flipped, True
    return x.contiguous(), False


def _check_pair(name: str, a: torch.Tensor, b: torch.Tensor, batched: bool) -> None:
    rank = 3 if batched else 2
    for tensor, arg in ((a, "self" if batched else "mat1"), (b, "mat2")):
        if tensor.dim() != rank:
            raise RuntimeError(f"{arg} must be a {'3D' if batched else 'matrix'}, got {tensor.dim()}-D tensor")
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected {'mat1' if not batched else 'self'} and mat2 to have the same dtype, but got: "
                           f"{_name(a.dtype)} != {_name(b.dtype)}")
    if batched:
        if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{a.shape[0]}, {a.shape[2]}] but got: [{b.shape[0]}, {b.shape[1]}].")
    elif a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")


def _name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def _native(*tensors: torch.Tensor) -> bool:
    return all(t.dtype in FLOATING for t in tensors)


def _matmul_into(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, alpha=1, beta=0) -> None:
    """out = alpha * a @ b + beta * out (out dense, of the operands' dtype)."""
    if out.numel() == 0:
        return
    if a.shape[1] == 0:  # an empty inner dimension: the product is zero
        if beta == 0:
            out.zero_()
        elif beta != 1:
            out.mul_(beta)
        return
    da, ta = _dense_operand(a)
    db, tb = _dense_operand(b)
    cnnl.matMul(handle(out), ta, tb, alpha, desc(da), da.data_ptr(), desc(db), db.data_ptr(), beta, desc(out),
                out.data_ptr())


@register("aten::mm")
def mm(self: torch.Tensor, mat2: torch.Tensor) -> torch.Tensor:
    """aten::mm(self, mat2) (cnnlMatMul)."""
    device = check_same_device(self, mat2)
    if device.type != "mlu" or not _native(self, mat2):
        return fallback(aten.mm.default, self, mat2)
    _check_pair("mm", self, mat2, batched=False)
    out = torch.empty((self.shape[0], mat2.shape[1]), dtype=self.dtype, device=device)
    _matmul_into(out, self, mat2)
    return out


@register("aten::mm.out")
def mm_out(self: torch.Tensor, mat2: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
    """aten::mm.out(self, mat2, *, out)."""
    result = mm(self, mat2)
    return _into_out(result, out)


def _into_out(result: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    check_same_device(result, out)
    if out.shape != result.shape:
        out.resize_(result.shape)
    copy_into(result, out)
    return out


@register("aten::addmm")
def addmm(self: torch.Tensor, mat1: torch.Tensor, mat2: torch.Tensor, *, beta=1, alpha=1) -> torch.Tensor:
    """aten::addmm(self, mat1, mat2, *, beta, alpha): beta * self + alpha * mat1 @ mat2 (self broadcast)."""
    device = check_same_device(self, mat1, mat2)
    if device.type != "mlu" or not _native(self, mat1, mat2):
        return fallback(aten.addmm.default, self, mat1, mat2, beta=beta, alpha=alpha)
    _check_pair("addmm", mat1, mat2, batched=False)
    if self.dtype != mat1.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got {_name(self.dtype)} and "
                           f"{_name(mat2.dtype)}")
    shape = (mat1.shape[0], mat2.shape[1])
    out = torch.empty(shape, dtype=mat1.dtype, device=device)
    if beta != 0:
        copy_into(self.expand(shape), out)
    _matmul_into(out, mat1, mat2, alpha=alpha, beta=beta)
    return out


@register("aten::addmm.out")
def addmm_out(self, mat1, mat2, *, beta=1, alpha=1, out):
    """aten::addmm.out(self, mat1, mat2, *, beta, alpha, out)."""
    return _into_out(addmm(self, mat1, mat2, beta=beta, alpha=alpha), out)


@register("aten::bmm")
def bmm(self: torch.Tensor, mat2: torch.Tensor) -> torch.Tensor:
    """aten::bmm(self, mat2) (cnnlBatchMatMulBCast)."""
    device = check_same_device(self, mat2)
    if device.type != "mlu" or not _native(self, mat2):
        return fallback(aten.bmm.default, self, mat2)
    _check_pair("bmm", self, mat2, batched=True)
    out = torch.empty((self.shape[0], self.shape[1], mat2.shape[2]), dtype=self.dtype, device=device)
    if out.numel() == 0:
        return out
    if self.shape[2] == 0:
        return out.zero_()
    da, ta = _dense_operand(self)
    db, tb = _dense_operand(mat2)
    h = handle(out)
    a_desc, b_desc, out_desc = desc(da), desc(db), desc(out)
    size = cnnl.getBatchMatMulBCastWorkspaceSize(h, a_desc, b_desc, out_desc)
    ws, _keep = workspace(size, device)
    cnnl.batchMatMulBCast(h, ta, tb, a_desc, da.data_ptr(), b_desc, db.data_ptr(), ws, size, out_desc,
                          out.data_ptr())
    return out


@register("aten::bmm.out")
def bmm_out(self: torch.Tensor, mat2: torch.Tensor, *, out: torch.Tensor) -> torch.Tensor:
    """aten::bmm.out(self, mat2, *, out)."""
    return _into_out(bmm(self, mat2), out)


# ---- vectors --------------------------------------------------------------------------------------------------------
def _check_vectors(name: str, a: torch.Tensor, b: torch.Tensor) -> None:
    if a.dim() != 1 or b.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.dim()}D and {b.dim()}D tensors")
    if a.dtype != b.dtype:
        raise RuntimeError(f"{name} : expected both vectors to have same dtype, but found {type_name(a.dtype)} and "
                           f"{type_name(b.dtype)}")
    if a.numel() != b.numel():
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.numel()}] and src [{b.numel()}] to have "
                           f"the same number of elements, but got {a.numel()} and {b.numel()} elements respectively")


@register("aten::dot")
def dot(self: torch.Tensor, tensor: torch.Tensor) -> torch.Tensor:
    """aten::dot(self, tensor): the inner product of two 1-D tensors (cnnlMatMul of [1, n] and [n, 1])."""
    device = check_same_device(self, tensor, argument_order=True)
    _check_vectors("dot", self, tensor)
    if device.type != "mlu" or not _native(self, tensor):
        return fallback(aten.dot.default, self, tensor)
    out = torch.empty((), dtype=self.dtype, device=device)
    n = self.numel()
    if n == 0:
        return out.zero_()
    _matmul_into(out.view(1, 1), self.reshape(1, n), tensor.reshape(n, 1))
    return out


@register("aten::vdot")
def vdot(self: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """aten::vdot(self, other): dot with the first vector conjugated (the same for real tensors)."""
    if self.is_complex() or other.is_complex():
        return fallback(aten.vdot.default, self, other)
    _check_vectors("vdot", self, other)
    return dot(self, other)


@register("aten::addmv.out")
def addmv_out(self, mat, vec, *, beta=1, alpha=1, out):
    """aten::addmv.out(self, mat, vec, *, beta, alpha, out): beta * self + alpha * mat @ vec (torch.mv too)."""
    device = check_same_device(self, mat, vec, out)
    if device.type != "mlu" or not _native(self, mat, vec) or out.dtype != mat.dtype:
        return fallback(aten.addmv.out, self, mat, vec, beta=beta, alpha=alpha, out=out)
    if mat.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.dim()}, {mat.dim()}, {vec.dim()}")
    if mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({mat.shape[0]}), mat ({mat.shape[0]}x{mat.shape[1]}), vec "
                           f"({vec.shape[0]})")
    if mat.dtype != vec.dtype or self.dtype != mat.dtype:
        found = vec.dtype if vec.dtype != mat.dtype else self.dtype
        raise RuntimeError(f"expected scalar type {mat.dtype} but found {found}")
    rows = mat.shape[0]
    target = Destination(out, (rows,), mat.dtype, (self, mat, vec))
    result = target.target if target.target.is_contiguous() else torch.empty(rows, dtype=mat.dtype, device=device)
    if rows:
        if beta != 0:
            copy_into(self.expand(rows), result)
        _matmul_into(result.view(rows, 1), mat, vec.reshape(-1, 1), alpha=alpha, beta=beta)
    if result is not target.target:
        copy_into(result, target.target)
    return target.finish()


@register("aten::baddbmm.out")
def baddbmm_out(self, batch1, batch2, *, beta=1, alpha=1, out):
    """aten::baddbmm.out(self, batch1, batch2, *, beta, alpha, out): beta * self + alpha * batch1 @ batch2."""
    device = check_same_device(self, batch1, batch2, out)
    if device.type != "mlu" or not _native(self, batch1, batch2) or out.dtype != batch1.dtype:
        return fallback(aten.baddbmm.out, self, batch1, batch2, beta=beta, alpha=alpha, out=out)
    product = bmm(batch1, batch2)
    target = Destination(out, product.shape, product.dtype, (self, batch1, batch2))
    if product.numel():
        if beta == 0:
            scaled_sum(product, alpha, product, 0, target.target)
        else:
            scaled_sum(product, alpha, self.to(product.dtype).expand(product.shape), beta, target.target)
    return target.finish()


_CROSS_TYPES = FLOATING | {torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.complex64,
                           torch.complex128}


@register("aten::linalg_cross.out")
def linalg_cross_out(self, other, *, dim=-1, out):
    """aten::linalg_cross.out(self, other, *, dim=-1, out): the vector product along `dim` (of length 3) of the two
    inputs broadcast together. Two inputs of different dtypes are refused with torch_mlu's (TensorIterator's)
    message "Found dtype <other> but expected <self>"; the other checks are torch's linalg_cross meta function's."""
    check_same_device(self, other, out)
    if self.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    axis = dim + self.dim() if -self.dim() <= dim < 0 else dim
    if not 0 <= axis < max(self.dim(), 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-self.dim()}, {self.dim() - 1}], "
                         f"but got {dim})")
    if self.shape[axis] != 3 or other.shape[axis] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {self.shape[axis]} and "
                           f"{other.shape[axis]}")
    if other.dtype != self.dtype:
        raise RuntimeError(f"Found dtype {type_name(other.dtype)} but expected {type_name(self.dtype)}")
    if out.dtype != self.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {cpp_name(self.dtype)}, but got "
                           f"{cpp_name(out.dtype)} instead")
    if self.dtype not in _CROSS_TYPES:
        raise NotImplementedError(f'"cross" not implemented for \'{type_name(self.dtype)}\'')
    shape = torch.broadcast_shapes(self.shape, other.shape)
    target = Destination(out, shape, self.dtype, (self, other))
    if target.target.numel():
        a = [self.expand(shape).select(axis, i) for i in range(3)]
        b = [other.expand(shape).select(axis, i) for i in range(3)]
        for i in range(3):
            j, k = (i + 1) % 3, (i + 2) % 3
            target.target.select(axis, i).copy_(a[j] * b[k] - a[k] * b[j])
    return target.finish()
