"""Flash attention: the descriptor (cnnlCreate/Destroy/SetFlashAttentionDescriptor,
cnnlSetFlashAttentionBackwardDescriptor, cnnlSetFlashAttentionSlidingWindowSize), cnnlFlashAttentionForward(_v2),
cnnlFlashAttentionBackward(_v2), their workspace queries and cnnlGetFlashAttentionGeneratedRandomNumbers.

Argument order from DeepLink DIOPI's Cambricon backend (impl/camb/functions_ext/flash_attention*.cpp) and
torch_mlu. Packed mode (what both pass): q [total_q, heads_q, d], k [total_k, heads_k, d], v [total_k, heads_k, dv],
out [total_q, heads_q, dv], cu_seqlens_q/k INT32 or INT64 [batch + 1] L.offsets in device memory, softmax_lse FLOAT
[heads_q, total_q]. Non-L.packed mode: q [batch, seq_q, heads_q, d], k/v [batch, seq_k, heads_k, d], out like q,
softmax_lse [batch, heads_q, seq_q], NULL cu_seqlens. heads_k divides heads_q. q, k, v, out (and dout, dq, dk, dv)
share one data type: HALF, BFLOAT16, FLOAT or DOUBLE; head dims up to 256. The numerics, mask modes and dropout
stream are those of `cnnl.kernels.attention`: the host `rng_state` (seed, offset) (a sequence of two ints, or NULL
without dropout) selects the Philox stream of cnnl's random-number ops, element (b, h, i, j) of the
[batch, heads_q, max_seq_q, max_seq_kv] grid drawing number ((b * heads_q + h) * max_seq_q + i) * max_seq_kv + j;
cnnlGetFlashAttentionGeneratedRandomNumbers reports how many numbers that is, so a caller advances its generator
offset by ceil(count / 4) counter steps.
"""
from __future__ import annotations

import math

import numpy as np

from mlusim import cost
from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.validate import as_enum, as_int, as_number

from .. import checks
from .. import dtypes as D
from .. import enums as E
from ..descriptors import Descriptor, lifecycle, live, ready
from ..handle import handle_arg
from ..kernels import attention as K
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from ..views import pointer_value
from . import flash_attention_operands as L
from . import nn_common as N

_COMPUTE_TYPES = (E.CNNL_DTYPE_FLOAT, E.CNNL_DTYPE_DOUBLE)
_MASK_TYPES = N.NN_FLOATS + (E.CNNL_DTYPE_UINT8, E.CNNL_DTYPE_BOOL)


class FlashAttentionDescriptor(Descriptor):
    """cnnlFlashAttentionDescriptor_t: mask mode, packing, sequence maxima, dropout, softmax scale, sliding window."""

    c_type = "cnnlFlashAttentionDescriptor_t"
    setter = "cnnlSetFlashAttentionDescriptor"

    def __init__(self):
        super().__init__()
        self.compute_dtype = E.CNNL_DTYPE_FLOAT
        self.mask_mode = E.CNNL_ATTN_MASK_NONE
        self.is_pack_mode = True
        self.is_out_zero = False
        self.return_mask = False
        self.max_seq_q = self.max_seq_k = 0
        self.dropout = 0.0
        self.scale = 1.0
        self.window = (-1, -1)
        self.dilation = 1

    def mask(self) -> K.Mask:
        return K.Mask(self.mask_mode, *self.window)


createFlashAttentionDescriptor, destroyFlashAttentionDescriptor = lifecycle(
    FlashAttentionDescriptor, "cnnlCreateFlashAttentionDescriptor", "cnnlDestroyFlashAttentionDescriptor")


def _set(desc, compute_dtype, prefer, attn_mask_mode, is_pack_mode, is_out_zero, flag, max_seq_len_q,
         max_seq_len_kv, dropout_p, softmax_scale) -> None:
    target = live(desc, FlashAttentionDescriptor, "desc")
    compute = as_enum(compute_dtype, "compute_dtype", D.ITEMSIZES, "cnnlDataType_t")
    if compute not in _COMPUTE_TYPES:
        raise NotSupportedFault("flash attention computes in FLOAT (or DOUBLE)", "compute_dtype")
    as_enum(prefer, "prefer", (0, 1, 2), "cnnlActivationPreference_t / cnnlComputationPreference_t")
    mode = as_enum(attn_mask_mode, "attn_mask_mode", E.ATTN_MASK_MODES, "cnnlAttentionMaskMode_t")
    values = dict(compute_dtype=compute, mask_mode=mode, is_pack_mode=checks.flag(is_pack_mode, "is_pack_mode"),
                  is_out_zero=checks.flag(is_out_zero, "is_out_zero"),
                  return_mask=checks.flag(flag, "return_dropout"),
                  max_seq_q=as_int(max_seq_len_q, "max_seq_len_q", minimum=0, maximum=2 ** 31 - 1),
                  max_seq_k=as_int(max_seq_len_kv, "max_seq_len_kv", minimum=0, maximum=2 ** 31 - 1))
    p = float(as_number(dropout_p, "dropout_p"))
    if not 0 <= p < 1:
        raise ArgumentFault(f"dropout probability {p} is outside [0, 1)", "dropout_p")
    scale = float(as_number(softmax_scale, "softmax_scale"))
    if not math.isfinite(scale):
        raise ArgumentFault(f"softmax scale {scale} is not finite", "softmax_scale")
    for name, value in values.items():
        setattr(target, name, value)
    target.dropout, target.scale = p, scale
    target.is_set = True


@api("cnnlSetFlashAttentionDescriptor")
def setFlashAttentionDescriptor(desc, compute_dtype, prefer, attn_mask_mode, is_pack_mode, is_out_zero,
                                return_softmax, max_seq_len_q, max_seq_len_kv, dropout_p, softmax_scale) -> None:
    """cnnlSetFlashAttentionDescriptor(desc, compute_dtype, prefer, attn_mask_mode, is_pack_mode, is_out_zero,
    return_softmax, max_seq_len_q, max_seq_len_kv, dropout_p, softmax_scale): `return_softmax` asks the forward
    for the dropout mask (its dropout_mask output)."""
    _set(desc, compute_dtype, prefer, attn_mask_mode, is_pack_mode, is_out_zero, return_softmax, max_seq_len_q,
         max_seq_len_kv, dropout_p, softmax_scale)


@api("cnnlSetFlashAttentionBackwardDescriptor")
def setFlashAttentionBackwardDescriptor(desc, compute_dtype, prefer, attn_mask_mode, is_pack_mode, is_out_zero,
                                        is_store_softmax_d, max_seq_len_q, max_seq_len_kv, dropout_p,
                                        softmax_scale) -> None:
    """cnnlSetFlashAttentionBackwardDescriptor(desc, compute_dtype, prefer, attn_mask_mode, is_pack_mode,
    is_out_zero, is_store_softmax_d, max_seq_len_q, max_seq_len_kv, dropout_p, softmax_scale): the same fields
    for the backward; `is_store_softmax_d` asks it for D = rowsum(dout * out) (its softmax_d output)."""
    _set(desc, compute_dtype, prefer, attn_mask_mode, is_pack_mode, is_out_zero, is_store_softmax_d, max_seq_len_q,
         max_seq_len_kv, dropout_p, softmax_scale)


@api("cnnlSetFlashAttentionSlidingWindowSize")
def setFlashAttentionSlidingWindowSize(desc, window_size_left, window_size_right, dilation) -> None:
    """cnnlSetFlashAttentionSlidingWindowSize(desc, window_size_left, window_size_right, dilation): keys at most
    `left` before and `right` after a query's diagonal (-1: unbounded). Only dilation 1 is computed; others are
    NOT_SUPPORTED at the op call."""
    target = live(desc, FlashAttentionDescriptor, "desc")
    left = as_int(window_size_left, "window_size_left", minimum=-1, maximum=2 ** 31 - 1)
    right = as_int(window_size_right, "window_size_right", minimum=-1, maximum=2 ** 31 - 1)
    target.dilation = as_int(dilation, "dilation", minimum=1, maximum=2 ** 31 - 1)
    target.window = (left, right)


# ---- workspace and random-number queries -------------------------------------------------------------------------

@api("cnnlGetFlashAttentionForwardWorkspaceSize")
def getFlashAttentionForwardWorkspaceSize(handle, desc, q_desc, k_desc, v_desc) -> int:
    """cnnlGetFlashAttentionForwardWorkspaceSize(handle, desc, q_desc, k_desc, v_desc, &size) -> size (0: the
    blockwise forward keeps its running statistics on chip)."""
    handle_arg(handle)
    _head_checks(ready(desc, FlashAttentionDescriptor, "desc"), q_desc, k_desc, v_desc)
    return 0


def _head_checks(fa, q_desc, k_desc, v_desc) -> TensorDescriptor:
    """The checks a workspace query can make without the cu_seqlens (L.packed mode)."""
    q, k, v = tensor_arg(q_desc, "q_desc"), tensor_arg(k_desc, "k_desc"), tensor_arg(v_desc, "v_desc")
    N.float_tensor(q, "q_desc", "cnnlFlashAttention")
    checks.same_dtype(q, "q_desc", (k, "k_desc"), (v, "v_desc"))
    rank = 3 if fa.is_pack_mode else 4
    for desc, arg in ((q, "q_desc"), (k, "k_desc"), (v, "v_desc")):
        if len(desc.dims) != rank:
            raise ArgumentFault(f"{len(desc.dims)} dims; expected {rank}", arg)
    return q


@api("cnnlGetFlashAttentionBackwardWorkspaceSize")
def getFlashAttentionBackwardWorkspaceSize(handle, desc, q_desc, k_desc, v_desc) -> int:
    """cnnlGetFlashAttentionBackwardWorkspaceSize(handle, desc, q_desc, k_desc, v_desc, &size) -> size: a float32
    accumulator of dq for HALF/BFLOAT16 inputs, else 0."""
    handle_arg(handle)
    fa = ready(desc, FlashAttentionDescriptor, "desc")
    q = _head_checks(fa, q_desc, k_desc, v_desc)
    return q.size * 4 if q.dtype in (E.CNNL_DTYPE_HALF, E.CNNL_DTYPE_BFLOAT16) else 0


@api("cnnlGetFlashAttentionGeneratedRandomNumbers")
def getFlashAttentionGeneratedRandomNumbers(handle, desc, q_desc, v_desc, cu_seqlens_q_desc) -> int:
    """cnnlGetFlashAttentionGeneratedRandomNumbers(handle, desc, q_desc, v_desc, cu_seqlens_q_desc, &num) -> how
    many random numbers a call with this descriptor draws: batch * heads_q * max_seq_len_q * max_seq_len_kv (0
    without dropout). A generator advances its offset by ceil(num / 4) counter steps."""
    handle_arg(handle)
    fa = ready(desc, FlashAttentionDescriptor, "desc")
    q, v = tensor_arg(q_desc, "q_desc"), tensor_arg(v_desc, "v_desc")
    if fa.is_pack_mode:
        cq = tensor_arg(cu_seqlens_q_desc, "cu_seqlens_q_desc")
        if len(cq.dims) != 1 or cq.dims[0] < 2:
            raise ArgumentFault(f"dims {list(cq.dims)}; L.offsets are [batch + 1]", "cu_seqlens_q_desc")
        batch, heads = cq.dims[0] - 1, q.dims[-2]
        max_q, max_k = fa.max_seq_q, fa.max_seq_k
    else:
        if len(q.dims) != 4 or len(v.dims) != 4:
            raise ArgumentFault("non-L.packed q and v are 4-D", "q_desc")
        batch, max_q, heads, _ = q.dims
        max_k = v.dims[1]
    return K.random_numbers(batch, heads, max_q, max_k) if fa.dropout > 0 else 0


# ---- forward -----------------------------------------------------------------------------------------------------

def _forward(op, handle, desc, q_desc, q, k_desc, k, v_desc, v, csq_desc, csq, csk_desc, csk, rng_state, workspace,
             workspace_size, mask_desc, mask_ptr, lse_desc, lse, out_desc, out, used=(None, None),
             bias=(None, None)) -> None:
    with OpCall(op, handle) as call:
        fa = ready(desc, FlashAttentionDescriptor, "desc")
        qd, kd, vd = tensor_arg(q_desc, "q_desc"), tensor_arg(k_desc, "k_desc"), tensor_arg(v_desc, "v_desc")
        layout = L.Layout(op, fa, qd, kd, vd, csq_desc, csk_desc)
        od = L.matching(out_desc, "out_desc", layout.out_dims(qd.dims), qd)
        ld = L.lse_tensor(lse_desc, "softmax_lse_desc", layout)
        md = None
        if mask_desc is not None:
            md = tensor_arg(mask_desc, "dropout_mask_desc")
            checks.supported_dtype(md, "dropout_mask_desc", _MASK_TYPES, op)
            if md.dims != layout.mask_dims():
                raise ArgumentFault(f"dims {list(md.dims)}; expected {list(layout.mask_dims())}",
                                    "dropout_mask_desc")
        stream = L.rng_stream(fa, rng_state)
        ud, bd = L.used_tensor(op, used[0], layout), L.bias_tensor(op, bias[0], layout, qd)
        views = [call.input(qd, q, "q"), call.input(kd, k, "k"), call.input(vd, v, "v")]
        cu_views = [call.input(layout.cu[0], csq, "cu_seqlens_q"),
                    call.input(layout.cu[1], csk, "cu_seqlens_kv")] if layout.pack else []
        used_view = call.input(ud, used[1], "seqused_k") if ud is not None else None
        bias_view = call.input(bd, bias[1], "attn_mask") if bd is not None else None
        ov, lv = call.output(od, out, "out"), call.output(ld, lse, "softmax_lse")
        mv = call.output(md, mask_ptr, "dropout_mask") if md is not None else None
        call.workspace(workspace, workspace_size, 0, "cnnlGetFlashAttentionForwardWorkspaceSize")
        dropout = K.Dropout(fa.dropout, *stream, layout.max_q, layout.max_k) if stream else None
        mask, scale, zero = fa.mask(), fa.scale, fa.is_out_zero

        def run():
            if not layout.total_q:
                return
            cu_q, cu_k = L.offsets(layout, cu_views)
            matrix, finish = L.lse_matrix(lv, layout)
            debug = None
            if mv is not None:
                debug = mv if mv.dtype in (np.float32, np.float64) else np.zeros(mv.shape, np.float32)
            target = L.PackedOutput(ov, layout)
            K.flash_forward(*[L.packed(view, layout) for view in views], cu_q, cu_k, target.array, matrix,
                            scale, layout.max_q, layout.max_k, mask, dropout, debug, zero, bias_view,
                            None if used_view is None else np.array(used_view, np.int64))
            target.finish()
            finish()
            if debug is not None and debug is not mv:
                mv[...] = debug.astype(mv.dtype)

        call.submit(run, flops=layout.flops(), dtype=qd.dtype, unit=cost.TENSOR)


@api("cnnlFlashAttentionForward")
def flashAttentionForward(handle, desc, q_desc, q, k_desc, k, v_desc, v, cu_seqlens_q_desc, cu_seqlens_q,
                          cu_seqlens_kv_desc, cu_seqlens_kv, rng_state, workspace, workspace_size, dropout_mask_desc,
                          dropout_mask, softmax_lse_desc, softmax_lse, out_desc, out) -> None:
    """cnnlFlashAttentionForward(handle, desc, q_desc, q, k_desc, k, v_desc, v, cu_seqlens_q_desc, cu_seqlens_q,
    cu_seqlens_kv_desc, cu_seqlens_kv, rng_state, workspace, workspace_size, dropout_mask_desc, dropout_mask,
    softmax_lse_desc, softmax_lse, out_desc, out): out = softmax(scale q k^T, masked) (dropped out) v, blockwise;
    softmax_lse = the log-sum-exp of each row's scaled scores. `dropout_mask` (optional, [batch, heads_q,
    max_seq_q, max_seq_kv]) receives 1 where a probability was kept, 0 where dropped or masked."""
    _forward("cnnlFlashAttentionForward", handle, desc, q_desc, q, k_desc, k, v_desc, v, cu_seqlens_q_desc,
             cu_seqlens_q, cu_seqlens_kv_desc, cu_seqlens_kv, rng_state, workspace, workspace_size,
             dropout_mask_desc, dropout_mask, softmax_lse_desc, softmax_lse, out_desc, out)


@api("cnnlFlashAttentionForward_v2")
def flashAttentionForward_v2(handle, desc, q_desc, q, k_desc, k, v_desc, v, cu_seqlens_q_desc, cu_seqlens_q,
                             cu_seqlens_kv_desc, cu_seqlens_kv, seqused_k_desc, seqused_k, attn_mask_desc, attn_mask,
                             alibi_slopes_desc, alibi_slopes, rng_state, workspace, workspace_size,
                             dropout_mask_desc, dropout_mask, softmax_lse_desc, softmax_lse, out_desc, out) -> None:
    """cnnlFlashAttentionForward_v2(handle, desc, q_desc, q, k_desc, k, v_desc, v, cu_seqlens_q_desc, cu_seqlens_q,
    cu_seqlens_kv_desc, cu_seqlens_kv, seqused_k_desc, seqused_k, attn_mask_desc, attn_mask, alibi_slopes_desc,
    alibi_slopes, rng_state, workspace, workspace_size, dropout_mask_desc, dropout_mask, softmax_lse_desc,
    softmax_lse, out_desc, out): as cnnlFlashAttentionForward, plus optional seqused_k ([batch] INT32/INT64: keys
    used per sequence) and an additive attention bias `attn_mask` (float, broadcasting to [batch, heads_q,
    max_seq_q, max_seq_kv]); ALiBi slopes are NOT_SUPPORTED."""
    L.no_alibi(alibi_slopes_desc, alibi_slopes)
    _forward("cnnlFlashAttentionForward_v2", handle, desc, q_desc, q, k_desc, k, v_desc, v, cu_seqlens_q_desc,
             cu_seqlens_q, cu_seqlens_kv_desc, cu_seqlens_kv, rng_state, workspace, workspace_size,
             dropout_mask_desc, dropout_mask, softmax_lse_desc, softmax_lse, out_desc, out,
             used=(seqused_k_desc, seqused_k), bias=(attn_mask_desc, attn_mask))


# ---- backward ----------------------------------------------------------------------------------------------------

def _backward(op, handle, desc, dout_desc, dout, q_desc, q, k_desc, k, v_desc, v, out_desc, out, lse_desc, lse,
              csq_desc, csq, csk_desc, csk, rng_state, workspace, workspace_size, dq_desc, dq, dk_desc, dk, dv_desc,
              dv, dropout_mask_desc, dropout_mask, softmax_d_desc, softmax_d, used=(None, None),
              bias=(None, None)) -> None:
    with OpCall(op, handle) as call:
        fa = ready(desc, FlashAttentionDescriptor, "desc")
        qd, kd, vd = tensor_arg(q_desc, "q_desc"), tensor_arg(k_desc, "k_desc"), tensor_arg(v_desc, "v_desc")
        layout = L.Layout(op, fa, qd, kd, vd, csq_desc, csk_desc)
        od = L.matching(out_desc, "out_desc", layout.out_dims(qd.dims), qd)
        dod = L.matching(dout_desc, "diff_out_desc", layout.out_dims(qd.dims), qd)
        dqd = L.matching(dq_desc, "diff_q_desc", qd.dims, qd)
        dkd = L.matching(dk_desc, "diff_k_desc", kd.dims, qd)
        dvd = L.matching(dv_desc, "diff_v_desc", vd.dims, qd)
        ld = L.lse_tensor(lse_desc, "softmax_lse_desc", layout)
        if dropout_mask_desc is not None or pointer_value(dropout_mask, "dropout_mask"):
            raise NotSupportedFault("the backward takes no dropout mask (it regenerates it from rng_state)",
                                    "dropout_mask_desc")
        sd = L.lse_tensor(softmax_d_desc, "softmax_d_desc", layout) if softmax_d_desc is not None else None
        stream = L.rng_stream(fa, rng_state)
        ud, bd = L.used_tensor(op, used[0], layout), L.bias_tensor(op, bias[0], layout, qd)
        views = [call.input(qd, q, "q"), call.input(kd, k, "k"), call.input(vd, v, "v"),
                 call.input(od, out, "out"), call.input(dod, dout, "diff_out")]
        lv = call.input(ld, lse, "softmax_lse")
        cu_views = [call.input(layout.cu[0], csq, "cu_seqlens_q"),
                    call.input(layout.cu[1], csk, "cu_seqlens_kv")] if layout.pack else []
        used_view = call.input(ud, used[1], "seqused_k") if ud is not None else None
        bias_view = call.input(bd, bias[1], "attn_mask") if bd is not None else None
        grads = [call.output(dqd, dq, "diff_q"), call.output(dkd, dk, "diff_k"), call.output(dvd, dv, "diff_v")]
        sv = call.output(sd, softmax_d, "softmax_d") if sd is not None else None
        call.workspace(workspace, workspace_size, getFlashAttentionBackwardWorkspaceSize(handle, desc, q_desc,
                       k_desc, v_desc), "cnnlGetFlashAttentionBackwardWorkspaceSize")
        dropout = K.Dropout(fa.dropout, *stream, layout.max_q, layout.max_k) if stream else None
        mask, scale = fa.mask(), fa.scale

        def run():
            if not (layout.total_q or layout.total_k):
                return
            cu_q, cu_k = L.offsets(layout, cu_views)
            lse = lv if layout.pack else np.ascontiguousarray(
                np.asarray(lv).transpose(1, 0, 2).reshape(layout.heads_q, layout.total_q))
            delta, finish = L.lse_matrix(sv, layout) if sv is not None else (None, lambda: None)
            q_, k_, v_, o_, do_ = (L.packed(view, layout) for view in views)
            targets = [L.PackedOutput(view, layout) for view in grads]
            K.flash_backward(q_, k_, v_, o_, do_, lse, cu_q, cu_k, *[t.array for t in targets], scale,
                             layout.max_q, layout.max_k, mask, dropout, bias_view,
                             None if used_view is None else np.array(used_view, np.int64), delta)
            for target in targets:
                target.finish()
            finish()

        call.submit(run, flops=2.5 * layout.flops(), dtype=qd.dtype, unit=cost.TENSOR)


@api("cnnlFlashAttentionBackward")
def flashAttentionBackward(handle, desc, diff_out_desc, diff_out, q_desc, q, k_desc, k, v_desc, v, out_desc, out,
                           softmax_lse_desc, softmax_lse, cu_seqlens_q_desc, cu_seqlens_q, cu_seqlens_kv_desc,
                           cu_seqlens_kv, rng_state, workspace, workspace_size, diff_q_desc, diff_q, diff_k_desc,
                           diff_k, diff_v_desc, diff_v, dropout_mask_desc, dropout_mask, softmax_d_desc,
                           softmax_d) -> None:
    """cnnlFlashAttentionBackward(handle, desc, diff_out_desc, diff_out, q_desc, q, k_desc, k, v_desc, v, out_desc,
    out, softmax_lse_desc, softmax_lse, cu_seqlens_q_desc, cu_seqlens_q, cu_seqlens_kv_desc, cu_seqlens_kv,
    rng_state, workspace, workspace_size, diff_q_desc, diff_q, diff_k_desc, diff_k, diff_v_desc, diff_v,
    dropout_mask_desc, dropout_mask, softmax_d_desc, softmax_d): the gradients of cnnlFlashAttentionForward from
    its out and softmax_lse, recomputing the scores blockwise (and the dropout mask from the same rng_state).
    dropout_mask must be NULL; softmax_d (optional, FLOAT like softmax_lse) receives rowsum(diff_out * out)."""
    _backward("cnnlFlashAttentionBackward", handle, desc, diff_out_desc, diff_out, q_desc, q, k_desc, k, v_desc, v,
              out_desc, out, softmax_lse_desc, softmax_lse, cu_seqlens_q_desc, cu_seqlens_q, cu_seqlens_kv_desc,
              cu_seqlens_kv, rng_state, workspace, workspace_size, diff_q_desc, diff_q, diff_k_desc, diff_k,
              diff_v_desc, diff_v, dropout_mask_desc, dropout_mask, softmax_d_desc, softmax_d)


@api("cnnlFlashAttentionBackward_v2")
def flashAttentionBackward_v2(handle, desc, diff_out_desc, diff_out, q_desc, q, k_desc, k, v_desc, v, out_desc, out,
                              softmax_lse_desc, softmax_lse, cu_seqlens_q_desc, cu_seqlens_q, cu_seqlens_kv_desc,
                              cu_seqlens_kv, seqused_k_desc, seqused_k, attn_mask_desc, attn_mask, rng_state,
                              workspace, workspace_size, diff_q_desc, diff_q, diff_k_desc, diff_k, diff_v_desc,
                              diff_v, dropout_mask_desc, dropout_mask, softmax_d_desc, softmax_d) -> None:
    """cnnlFlashAttentionBackward_v2(handle, desc, diff_out_desc, diff_out, q_desc, q, k_desc, k, v_desc, v,
    out_desc, out, softmax_lse_desc, softmax_lse, cu_seqlens_q_desc, cu_seqlens_q, cu_seqlens_kv_desc,
    cu_seqlens_kv, seqused_k_desc, seqused_k, attn_mask_desc, attn_mask, rng_state, workspace, workspace_size,
    diff_q_desc, diff_q, diff_k_desc, diff_k, diff_v_desc, diff_v, dropout_mask_desc, dropout_mask, softmax_d_desc,
    softmax_d): as cnnlFlashAttentionBackward with the optional seqused_k and attention bias of the _v2 forward
    (the four arguments after cu_seqlens_kv; their names are not public, the order follows the forward)."""
    _backward("cnnlFlashAttentionBackward_v2", handle, desc, diff_out_desc, diff_out, q_desc, q, k_desc, k, v_desc,
              v, out_desc, out, softmax_lse_desc, softmax_lse, cu_seqlens_q_desc, cu_seqlens_q, cu_seqlens_kv_desc,
              cu_seqlens_kv, rng_state, workspace, workspace_size, diff_q_desc, diff_q, diff_k_desc, diff_k,
              diff_v_desc, diff_v, dropout_mask_desc, dropout_mask, softmax_d_desc, softmax_d,
              used=(seqused_k_desc, seqused_k), bias=(attn_mask_desc, attn_mask))
