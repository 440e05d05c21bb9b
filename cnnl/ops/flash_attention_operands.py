"""The operands of a flash-attention call: the geometry of q, k and v (packed [total, heads, dim] with cu_seqlens
offsets, or padded [batch, seq, heads, dim]) checked against the descriptor `fa`, the checks of the other tensors
against it, and the packed views the kernels (`cnnl.kernels.attention`) take."""
from __future__ import annotations

import numpy as np

from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.validate import as_int

from .. import checks
from .. import enums as E
from ..tensor import TensorDescriptor, tensor_arg
from ..views import pointer_value
from . import nn_common as N

MAX_HEAD_DIM = 256
SEED_RANGE = 2 ** 64


class Layout:
    """The checked geometry of one call: batch, heads, dims, packed or padded."""

    def __init__(self, op, fa, q: TensorDescriptor, k: TensorDescriptor,
                 v: TensorDescriptor, csq, csk):
        if fa.dilation != 1:
            raise NotSupportedFault(f"sliding-window dilation {fa.dilation} is not supported (only 1)", "desc")
        N.float_tensor(q, "q_desc", op)
        checks.same_dtype(q, "q_desc", (k, "k_desc"), (v, "v_desc"))
        rank = 3 if fa.is_pack_mode else 4
        for desc, arg in ((q, "q_desc"), (k, "k_desc"), (v, "v_desc")):
            if len(desc.dims) != rank:
                raise ArgumentFault(f"{len(desc.dims)} dims; {'packed' if rank == 3 else 'non-packed'} mode takes "
                                    f"{rank}", arg)
        self.pack = fa.is_pack_mode
        self.heads_q, self.d = q.dims[-2], q.dims[-1]
        self.heads_k, self.dv = v.dims[-2], v.dims[-1]
        if k.dims[:-1] != v.dims[:-1] or k.dims[-1] != self.d:
            raise ArgumentFault(f"dims {list(k.dims)} do not match q {list(q.dims)} and v {list(v.dims)}", "k_desc")
        if self.heads_k == 0 or self.heads_q % self.heads_k:
            raise ArgumentFault(f"{self.heads_k} key/value heads do not divide {self.heads_q} query heads", "k_desc")
        if max(self.d, self.dv) > MAX_HEAD_DIM:
            raise NotSupportedFault(f"head dims {self.d}/{self.dv} exceed {MAX_HEAD_DIM}", "q_desc")
        if self.pack:
            self.total_q, self.total_k = q.dims[0], k.dims[0]
            if csq is None or csk is None:
                raise ArgumentFault("packed mode needs cu_seqlens_q and cu_seqlens_kv", "cu_seqlens_q_desc")
            cq, ck = tensor_arg(csq, "cu_seqlens_q_desc"), tensor_arg(csk, "cu_seqlens_kv_desc")
            for desc, arg in ((cq, "cu_seqlens_q_desc"), (ck, "cu_seqlens_kv_desc")):
                N.index_tensor(desc, arg, op)
                if len(desc.dims) != 1 or desc.dims[0] < 2:
                    raise ArgumentFault(f"dims {list(desc.dims)}; offsets are [batch + 1] with batch >= 1", arg)
            if cq.dims != ck.dims:
                raise ArgumentFault(f"dims {list(ck.dims)} differ from cu_seqlens_q's {list(cq.dims)}",
                                    "cu_seqlens_kv_desc")
            self.batch = cq.dims[0] - 1
            self.cu = (cq, ck)
            self.max_q, self.max_k = fa.max_seq_q, fa.max_seq_k
        else:
            if csq is not None or csk is not None:
                raise ArgumentFault("non-packed mode takes no cu_seqlens (pass NULL)", "cu_seqlens_q_desc")
            if q.dims[0] != k.dims[0]:
                raise ArgumentFault(f"batch {k.dims[0]} differs from q's {q.dims[0]}", "k_desc")
            self.batch, self.seq_q, self.seq_k = q.dims[0], q.dims[1], k.dims[1]
            self.total_q, self.total_k = self.batch * self.seq_q, self.batch * self.seq_k
            self.cu = None
            self.max_q, self.max_k = self.seq_q, self.seq_k

    def out_dims(self, q_dims):
        return q_dims[:-1] + (self.dv,)

    def lse_dims(self):
        return (self.heads_q, self.total_q) if self.pack else (self.batch, self.heads_q, self.seq_q)

    def mask_dims(self):
        return (self.batch, self.heads_q, self.max_q, self.max_k)

    def flops(self) -> float:
        """Multiply-adds of the two products (upper bound: every sequence at its maximum length), as flops."""
        return 4.0 * self.batch * self.heads_q * self.max_q * self.max_k * (self.d + self.dv) / 2


def matching(desc, arg, dims, dtype_of: TensorDescriptor):
    target = tensor_arg(desc, arg)
    checks.same_dtype(dtype_of, "q_desc", (target, arg))
    if target.dims != tuple(dims):
        raise ArgumentFault(f"dims {list(target.dims)}; expected {list(dims)}", arg)
    return target


def lse_tensor(desc, arg, layout: Layout):
    target = tensor_arg(desc, arg)
    if target.dtype != E.CNNL_DTYPE_FLOAT:
        raise ArgumentFault("softmax_lse is FLOAT", arg)
    if target.dims != layout.lse_dims():
        raise ArgumentFault(f"dims {list(target.dims)}; expected {list(layout.lse_dims())}", arg)
    return target


def rng_stream(fa, rng_state):
    """(seed, offset) from the host rng_state when the descriptor drops out, else None."""
    if fa.dropout == 0:
        return None
    if not isinstance(rng_state, (list, tuple, np.ndarray)) or len(rng_state) != 2:
        raise ArgumentFault("dropout needs rng_state = (seed, offset) (two size_t values)", "rng_state")
    seed = as_int(rng_state[0], "rng_state[0]", minimum=0, maximum=SEED_RANGE - 1)
    offset = as_int(rng_state[1], "rng_state[1]", minimum=0, maximum=SEED_RANGE - 1)
    return seed, offset


def bias_tensor(op, desc, layout: Layout, q: TensorDescriptor, arg="attn_mask_desc"):
    if desc is None:
        return None
    target = tensor_arg(desc, arg)
    N.float_tensor(target, arg, op)
    full = layout.mask_dims()
    if len(target.dims) != 4 or any(n not in (1, m) for n, m in zip(target.dims, full)):
        raise ArgumentFault(f"dims {list(target.dims)} do not broadcast to {list(full)}", arg)
    return target


def used_tensor(op, desc, layout: Layout):
    if desc is None:
        return None
    target = tensor_arg(desc, "seqused_k_desc")
    N.index_tensor(target, "seqused_k_desc", op)
    if target.dims != (layout.batch,):
        raise ArgumentFault(f"dims {list(target.dims)}; expected [{layout.batch}]", "seqused_k_desc")
    return target


def no_alibi(desc, pointer):
    if desc is not None or pointer_value(pointer, "alibi_slopes"):
        raise NotSupportedFault("ALiBi slopes are not supported (pass NULL)", "alibi_slopes_desc")


def packed(view, layout: Layout):
    """A (total, heads, dim) view of a q/k/v-like input (reshaped from (batch, seq, heads, dim))."""
    if layout.pack:
        return view
    return view.reshape((-1,) + view.shape[2:])


class PackedOutput:
    """A (total, heads, dim) array to write a q/k/v-like output through: the output itself (packed mode), a
    reshaped view of it, or a buffer that `finish()` copies back when its strides allow no view."""

    def __init__(self, view, layout: Layout):
        self.view, self.buffer = view, None
        if layout.pack:
            self.array = view
            return
        shape = (-1,) + view.shape[2:]
        try:
            self.array = view.reshape(shape, copy=False)
        except ValueError:
            self.buffer = self.array = np.empty((view.shape[0] * view.shape[1],) + view.shape[2:], view.dtype)

    def finish(self):
        if self.buffer is not None:
            self.view[...] = self.buffer.reshape(self.view.shape)


def offsets(layout: Layout, cu_views):
    """The cu_seqlens as host arrays when the op runs (packed), or the uniform ones of the padded layout."""
    if layout.pack:
        return [np.array(view, np.int64) for view in cu_views]
    return [np.arange(layout.batch + 1, dtype=np.int64) * n for n in (layout.seq_q, layout.seq_k)]


def lse_matrix(view, layout: Layout):
    """(heads, total_q) array to compute lse in, and the function that stores it into the lse output."""
    if layout.pack:
        return view, (lambda: None)
    matrix = np.empty((layout.heads_q, layout.total_q), np.float32)

    def finish():
        view[...] = matrix.reshape(layout.heads_q, layout.batch, layout.seq_q).transpose(1, 0, 2)
    return matrix, finish
