"""Cases of softmax and attention (docs/cnnl_attention.md): softmax over the last dimension, flash attention (packed,
causal-free unless named; the reference is the same attention in float32 numpy one (sequence, head) at a time, so it
never holds more than one score matrix), rotary embedding."""
from __future__ import annotations

import math

import numpy as np

import cnnl

from .base import Arena, Case, SUITE_COLUMNS, SUITE_ROWS, f32
from ..op_bench import OpBench


def _softmax_rows(values: np.ndarray) -> np.ndarray:
    shifted = np.exp(values - values.max(axis=-1, keepdims=True))
    return shifted / shifted.sum(axis=-1, keepdims=True)


def softmax(v2: bool):
    """cnnlSoftmaxForward, or cnnlSoftmaxForward_v2 with high precision."""
    def build(arena, shape, dtype):
        (x, values), y = arena.random(shape, dtype), arena.empty(shape, dtype)
        leading = (cnnl.CNNL_SOFTMAX_ACCURATE, cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION)
        function = cnnl.softmaxForward_v2 if v2 else cnnl.softmaxForward
        if v2:
            leading += (cnnl.CNNL_COMPUTATION_HIGH_PRECISION,)
        return (lambda: function(arena.handle, *leading, None, x.desc, x.ptr, None, y.desc, y.ptr),
                lambda: _softmax_rows(values))
    return build


def softmax_backward(arena, shape, dtype):
    """dx = y (dy - sum(dy y)) for y a softmax."""
    (y, yv), (dy, dyv), dx = arena.between(shape, dtype, 0, 2 / shape[-1]), arena.random(shape, dtype), \
        arena.empty(shape, dtype)
    return (lambda: cnnl.softmaxBackward(arena.handle, cnnl.CNNL_SOFTMAX_ACCURATE,
                                         cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION, None, y.desc, y.ptr, dy.desc, dy.ptr,
                                         None, dx.desc, dx.ptr),
            lambda: yv * (dyv - (dyv * yv).sum(axis=-1, keepdims=True)))


#: (batch, heads, sequence, head dim) of flash attention
ATTENTION = {"small": (1, 4, 256, 64), "medium": (2, 8, 1024, 64), "large": (4, 16, 2048, 64)}


def attention_reference(q, k, v, batch, scale, causal=False):
    """The numpy reference: per sequence and head, in float32."""
    length = q.shape[0] // batch
    out = np.empty(q.shape, np.float32)
    future = np.triu(np.ones((length, length), bool), 1)
    for b in range(batch):
        rows = slice(b * length, (b + 1) * length)
        for h in range(q.shape[1]):
            scores = (q[rows, h] * np.float32(scale)) @ k[rows, h].T
            if causal:
                scores[future] = -np.inf
            scores -= scores.max(axis=1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(axis=1, keepdims=True)
            out[rows, h] = scores @ v[rows, h]
    return out


class _Flash:
    """Device operands of one packed flash attention problem (equal sequence lengths)."""

    def __init__(self, arena, shape, dtype):
        batch, heads, length, depth = shape
        total = batch * length
        (self.q, qv), (self.k, kv), (self.v, vv) = (arena.random((total, heads, depth), dtype) for _ in range(3))
        self.host = [a.astype(np.float32) for a in (qv, kv, vv)]
        self.offsets = arena.upload(np.arange(batch + 1, dtype=np.int32) * length, "int32")
        self.out = arena.empty((total, heads, depth), dtype)
        self.lse = arena.empty((heads, total), "float")
        self.scale = 1 / math.sqrt(depth)
        self.length = length

    def descriptor(self, backward=False, mask=cnnl.CNNL_ATTN_MASK_NONE):
        desc = cnnl.createFlashAttentionDescriptor()
        setter = cnnl.setFlashAttentionBackwardDescriptor if backward else cnnl.setFlashAttentionDescriptor
        setter(desc, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_ACTIVATION_HIGH_PRECISION, mask, True, False, False,
               self.length, self.length, 0.0, self.scale)
        return desc


def flash_attention_call(arena, shape, dtype):
    """(device call, packed float32 host q, k, v, softmax scale) of one flash attention forward of `shape`."""
    flash = _Flash(arena, shape, dtype)
    desc = flash.descriptor()
    q, k, v, offsets = flash.q, flash.k, flash.v, flash.offsets
    workspace, size = arena.workspace(cnnl.getFlashAttentionForwardWorkspaceSize(arena.handle, desc, q.desc, k.desc,
                                                                                 v.desc))

    def call():
        cnnl.flashAttentionForward(arena.handle, desc, q.desc, q.ptr, k.desc, k.ptr, v.desc, v.ptr, offsets.desc,
                                   offsets.ptr, offsets.desc, offsets.ptr, None, workspace, size, None, None,
                                   flash.lse.desc, flash.lse.ptr, flash.out.desc, flash.out.ptr)
    call.flash = flash
    return call, flash.host, flash.scale


def flash_attention(arena, shape, dtype):
    """cnnlFlashAttentionForward against float32 numpy attention."""
    call, (q, k, v), scale = flash_attention_call(arena, shape, dtype)
    return call, lambda: attention_reference(q, k, v, shape[0], scale)


#: (batch, sequence, heads, head dim) of rotary embedding: 64K, 2M, 16M elements
SEQUENCES = {"small": (1, 128, 8, 64), "medium": (4, 512, 16, 64), "large": (8, 1024, 32, 64)}


def flash_attention_v2(arena, shape, dtype):
    """cnnlFlashAttentionForward_v2 (causal, no extras) against float32 numpy attention."""
    flash = _Flash(arena, shape, dtype)
    desc = flash.descriptor(mask=cnnl.CNNL_ATTN_MASK_CAUSAL)
    q, k, v, offsets, out, lse = flash.q, flash.k, flash.v, flash.offsets, flash.out, flash.lse
    return (lambda: cnnl.flashAttentionForward_v2(arena.handle, desc, q.desc, q.ptr, k.desc, k.ptr, v.desc, v.ptr,
                                                  offsets.desc, offsets.ptr, offsets.desc, offsets.ptr, None, None,
                                                  None, None, None, None, None, None, 0, None, None, lse.desc,
                                                  lse.ptr, out.desc, out.ptr),
            lambda: attention_reference(*flash.host, shape[0], flash.scale, causal=True))


def attention_backward_reference(q, k, v, dout, batch, scale):
    """Dense float32 attention gradients per (sequence, head)."""
    length = q.shape[0] // batch
    grads = [np.empty_like(q), np.empty_like(k), np.empty_like(v)]
    for b in range(batch):
        rows = slice(b * length, (b + 1) * length)
        for h in range(q.shape[1]):
            scores = (q[rows, h] * np.float32(scale)) @ k[rows, h].T
            probs = np.exp(scores - scores.max(axis=1, keepdims=True))
            probs /= probs.sum(axis=1, keepdims=True)
            grads[2][rows, h] = probs.T @ dout[rows, h]
            dprobs = dout[rows, h] @ v[rows, h].T
            dscores = probs * (dprobs - (dprobs * probs).sum(axis=1, keepdims=True)) * np.float32(scale)
            grads[0][rows, h] = dscores @ k[rows, h]
            grads[1][rows, h] = dscores.T @ q[rows, h]
    return grads


def flash_attention_backward(v2: bool):
    """cnnlFlashAttentionBackward(_v2) (the forward runs in the build) against dense float32 gradients."""
    def build(arena, shape, dtype):
        batch, heads, length, depth = shape
        forward, host, scale = flash_attention_call(arena, shape, dtype)
        forward()
        arena.sync()
        flash = forward.flash
        q, k, v, out, lse, offsets = flash.q, flash.k, flash.v, flash.out, flash.lse, flash.offsets
        grad, gv = arena.random(flash.out.dims, dtype)
        dq, dk, dv = (arena.empty(flash.out.dims, dtype) for _ in range(3))
        desc = flash.descriptor(backward=True)
        workspace, size = arena.workspace(cnnl.getFlashAttentionBackwardWorkspaceSize(arena.handle, desc, q.desc,
                                                                                      k.desc, v.desc))
        extras = (None, None, None, None) if v2 else ()
        name = "flashAttentionBackward_v2" if v2 else "flashAttentionBackward"
        gradient = f32(gv)
        return (lambda: getattr(cnnl, name)(arena.handle, desc, grad.desc, grad.ptr, q.desc, q.ptr, k.desc, k.ptr,
                                            v.desc, v.ptr, out.desc, out.ptr, lse.desc, lse.ptr, offsets.desc,
                                            offsets.ptr, offsets.desc, offsets.ptr, *extras, None, workspace, size,
                                            dq.desc, dq.ptr, dk.desc, dk.ptr, dv.desc, dv.ptr, None, None, None,
                                            None),
                lambda: attention_backward_reference(*host, gradient, batch, scale))
    return build


def rotary(arena, shape, dtype):
    """cnnlRotaryEmbedding of split halves (NTBC) against the numpy rotation."""
    batch, length, heads, depth = shape
    (x, xv), y = arena.random(shape, dtype), arena.empty(shape, dtype)
    angles = arena.rng.uniform(-3, 3, (length, 1, depth // 2))
    cos_host, sin_host = np.cos(angles).astype(xv.dtype), np.sin(angles).astype(xv.dtype)
    cos, sin = arena.upload(cos_host, dtype), arena.upload(sin_host, dtype)
    item = xv.dtype.itemsize
    halves = []
    for base in (x, y):
        for part in range(2):
            desc = cnnl.createTensorDescriptor()
            cnnl.setTensorDescriptorEx(desc, cnnl.CNNL_LAYOUT_ARRAY, arena.code(dtype),
                                       [batch, length, heads, depth // 2],
                                       [length * heads * depth, heads * depth, depth, 1])
            halves += [desc, base.ptr + part * depth // 2 * item]
    desc = cnnl.createRotaryEmbeddingDescriptor()
    cnnl.setRotaryEmbeddingDescriptor(desc, False, cnnl.CNNL_SEQDATA_NTBC)
    values, c, s = f32(xv), f32(cos_host), f32(sin_host)

    def reference():
        first, second = values[..., :depth // 2], values[..., depth // 2:]
        return np.concatenate([first * c - second * s, first * s + second * c], -1)
    return (lambda: cnnl.rotaryEmbedding(arena.handle, desc, *halves[:4], cos.desc, cos.ptr, sin.desc, sin.ptr, None,
                                         0, *halves[4:]),
            reference)


#: the cases of this family, in the order the table lists them
CASES = (
    Case("softmax", "cnnlSoftmaxForward", softmax(v2=False)),
    Case("softmax v2", "cnnlSoftmaxForward_v2", softmax(v2=True)),
    Case("softmax bwd", "cnnlSoftmaxBackward", softmax_backward),
    Case("flash attention", "cnnlFlashAttentionForward", flash_attention, shapes=ATTENTION,
             dtypes=("half", "bfloat16"), reference="numpy attention float32"),
    Case("flash attention v2 causal", "cnnlFlashAttentionForward_v2", flash_attention_v2, shapes=ATTENTION,
             dtypes=("half",), reference="numpy attention float32"),
    Case("flash attention bwd", "cnnlFlashAttentionBackward", flash_attention_backward(False),
             shapes=ATTENTION, dtypes=("half",), reference="numpy attention gradients float32",
             exercises=("cnnlFlashAttentionForward",)),
    Case("flash attention bwd v2", "cnnlFlashAttentionBackward_v2", flash_attention_backward(True),
             shapes=ATTENTION, dtypes=("half",), reference="numpy attention gradients float32"),
    Case("rotary embedding", "cnnlRotaryEmbedding", rotary, shapes=SEQUENCES),
)


# ---- softmax rows of the nn suite (cnnl against vectorised numpy) ---------------------------------------------------

def softmax_rows_case(device: OpBench):
    """(synced cnnlSoftmaxForward, the vectorised numpy softmax) over (SUITE_ROWS, SUITE_COLUMNS) float32 rows."""
    x = np.random.default_rng(1).standard_normal((SUITE_ROWS, SUITE_COLUMNS), dtype=np.float32)
    desc = device.desc(x.shape)
    px, py = device.put(x), device.empty(x.nbytes)

    def op():
        cnnl.softmaxForward(device.handle, cnnl.CNNL_SOFTMAX_ACCURATE, cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION, None,
                            desc, px, None, desc, py)

    def reference():
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return device.synced(op), reference


# ---- the attention flash attention replaces (the nn-ext suite compares the two) -------------------------------------

def composed_attention(arena: Arena, shape, dtype):
    """The device call of attention composed from batch matmul, softmax and batch matmul on (B, H, S, D) tensors."""
    batch, heads, length, depth = shape
    q, k, v = (arena.random((batch, heads, length, depth), dtype)[0] for _ in range(3))
    scores = arena.empty((batch, heads, length, length), dtype)
    out = arena.empty((batch, heads, length, depth), dtype)
    bmm = cnnl.matMulDescCreate()
    cnnl.setMatMulDescAttr(bmm, cnnl.CNNL_MATMUL_DESC_TRANSB, 1)
    algo, result = cnnl.matMulAlgoCreate(), cnnl.createMatMulHeuristicResult()
    cnnl.getBatchMatMulAlgoHeuristic(arena.handle, bmm, q.desc, k.desc, scores.desc, None, 1, result)
    first, first_size = arena.workspace(cnnl.getBatchMatMulHeuristicResult(result, algo))
    second, second_size = arena.workspace(cnnl.getBatchMatMulBCastWorkspaceSize(arena.handle, scores.desc, v.desc,
                                                                                out.desc))

    def call():
        cnnl.batchMatMulBCast_v2(arena.handle, bmm, algo, 1 / math.sqrt(depth), q.desc, q.ptr, k.desc, k.ptr, 0.0,
                                 scores.desc, scores.ptr, first, first_size)
        cnnl.softmaxForward(arena.handle, cnnl.CNNL_SOFTMAX_ACCURATE, cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION, None,
                            scores.desc, scores.ptr, None, scores.desc, scores.ptr)
        cnnl.batchMatMulBCast(arena.handle, False, False, scores.desc, scores.ptr, v.desc, v.ptr, second,
                              second_size, out.desc, out.ptr)
    return call, batch * heads * length * length * np.dtype(np.float16).itemsize
