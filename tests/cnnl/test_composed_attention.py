"""Scaled dot-product attention with a causal mask, composed on the device from cnnlBatchMatMulBCast_v2 (scores,
with alpha = 1/sqrt(d)), cnnlMasked_v3 (fill the future with -inf), cnnlSoftmaxForward and cnnlBatchMatMulBCast
(probabilities @ V); CNNL's flash-attention op has its own tests (test_flash_attention.py)."""
import math

import numpy as np
import pytest

import cnnl

from .nn_helpers import F16, F32, assert_near, blank, placed, rounded, sync


def attention_reference(q, k, v, causal):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        scores = np.where(np.triu(np.ones(scores.shape[-2:], bool), 1), -np.inf, scores)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    return (weights / weights.sum(-1, keepdims=True)) @ v


def attention(handle, q, k, v, causal, code):
    batch, heads, length, depth = q.shape
    qt, kt, vt = placed(q, code), placed(k, code), placed(v, code)
    scores, out = blank((batch, heads, length, length), code), blank(q.shape, code)
    bmm = cnnl.matMulDescCreate()
    cnnl.setMatMulDescAttr(bmm, cnnl.CNNL_MATMUL_DESC_TRANSB, 1)
    algo, result = cnnl.matMulAlgoCreate(), cnnl.createMatMulHeuristicResult()
    cnnl.getBatchMatMulAlgoHeuristic(handle, bmm, qt.desc, kt.desc, scores.desc, None, 1, result)
    size = cnnl.getBatchMatMulHeuristicResult(result, algo)
    workspace = blank((size,), cnnl.CNNL_DTYPE_INT8).ptr if size else None
    cnnl.batchMatMulBCast_v2(handle, bmm, algo, 1 / math.sqrt(depth), qt.desc, qt.ptr, kt.desc, kt.ptr, 0.0,
                             scores.desc, scores.ptr, workspace, size)
    if causal:
        mask = placed(np.triu(np.ones((length, length), bool), 1), cnnl.CNNL_DTYPE_BOOL)
        minus_inf = placed(np.array([-np.inf]), code)
        cnnl.masked_v3(handle, cnnl.CNNL_MASKED_FILL, scores.desc, scores.ptr, mask.desc, mask.ptr, minus_inf.desc,
                       minus_inf.ptr, None, 0, scores.desc, scores.ptr, None)
    cnnl.softmaxForward(handle, cnnl.CNNL_SOFTMAX_ACCURATE, cnnl.CNNL_SOFTMAX_MODE_LOW_DIMENSION, None, scores.desc,
                        scores.ptr, None, scores.desc, scores.ptr)
    size = cnnl.getBatchMatMulBCastWorkspaceSize(handle, scores.desc, vt.desc, out.desc)
    workspace = blank((size,), cnnl.CNNL_DTYPE_INT8).ptr if size else None
    cnnl.batchMatMulBCast(handle, False, False, scores.desc, scores.ptr, vt.desc, vt.ptr, workspace, size, out.desc,
                          out.ptr)
    sync(handle)
    return out.read()


@pytest.mark.parametrize("code", [F32, F16])
@pytest.mark.parametrize("causal", [False, True])
def test_scaled_dot_product_attention(handle, code, causal):
    rng = np.random.default_rng(0)
    q, k, v = (rounded(rng, (2, 3, 5, 4), code) for _ in range(3))
    got = attention(handle, q, k, v, causal, code)
    assert_near(got, attention_reference(q, k, v, causal), code, scale=8)
    if causal:  # the first query sees only the first key
        assert_near(got[:, :, 0, :], v[:, :, 0, :], code, scale=8)
