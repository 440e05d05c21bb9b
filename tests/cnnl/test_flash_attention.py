"""Flash attention through the API: forward against softmax(scale q k^T) v in float64 (every mask mode, sliding
windows, variable lengths, grouped-query heads, the online softmax over several key blocks), the backward against
central differences, dropout against the random-number stream of cnnlRandGenerateUniform, the _v2 extras, the
non-packed layout, empty inputs, bad arguments, and the blockwise memory bound; the batched path of sequences of one
length against the blockwise one."""
import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cnnl
from cnnl.kernels import attention as A

from .nn_helpers import (BF16, F16, F32, F64, assert_near, blank, directional_check, placed, raises_status,
                                  rounded, sync)

INT32 = cnnl.CNNL_DTYPE_INT32
ALL_MODES = [cnnl.CNNL_ATTN_MASK_NONE, cnnl.CNNL_ATTN_MASK_CAUSAL, cnnl.CNNL_ATTN_MASK_CAUSAL_TOP_LEFT,
             cnnl.CNNL_ATTN_MASK_CAUSAL_BOTTOM_RIGHT, cnnl.CNNL_ATTN_MASK_LOCAL_TOP_LEFT,
             cnnl.CNNL_ATTN_MASK_LOCAL_BOTTOM_RIGHT]


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 4 x 3 scores, so that short sequences walk several query and key blocks (never the batched path of
    sequences of one length)."""
    monkeypatch.setattr(A, "QUERY_BLOCK", 4)
    monkeypatch.setattr(A, "KEY_BLOCK", 3)
    monkeypatch.setattr(A, "BATCHED_SCORES", -1)


def allowed(mode, left, right, len_q, len_k):
    """The (len_q, len_k) mask the documented rules give, built directly from the index grid."""
    i, j = np.arange(len_q)[:, None], np.arange(len_k)[None, :]
    diagonal = i + (len_k - len_q if mode in (cnnl.CNNL_ATTN_MASK_CAUSAL_BOTTOM_RIGHT,
                                              cnnl.CNNL_ATTN_MASK_LOCAL_BOTTOM_RIGHT) else 0)
    ok = np.ones((len_q, len_k), bool)
    if mode in (cnnl.CNNL_ATTN_MASK_CAUSAL, cnnl.CNNL_ATTN_MASK_CAUSAL_TOP_LEFT,
                cnnl.CNNL_ATTN_MASK_CAUSAL_BOTTOM_RIGHT):
        ok &= j <= diagonal
    if left >= 0:
        ok &= j >= diagonal - left
    if right >= 0:
        ok &= j <= diagonal + right
    return ok


def reference(q, k, v, cu_q, cu_k, scale, mode=0, left=-1, right=-1, keep=None, bias=None):
    """Dense float64 attention per sequence and head; `keep` (batch, heads, max_q, max_k) dropout factors."""
    total_q, heads, _ = q.shape
    group = heads // k.shape[1]
    out, lse = np.zeros((total_q, heads, v.shape[2])), np.zeros((heads, total_q))
    for b in range(len(cu_q) - 1):
        rq, rk = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b], cu_k[b + 1])
        ok = allowed(mode, left, right, rq.stop - rq.start, rk.stop - rk.start)
        for h in range(heads):
            scores = scale * q[rq, h] @ k[rk, h // group].T
            if bias is not None:
                scores = scores + bias[min(b, bias.shape[0] - 1), min(h, bias.shape[1] - 1)][:scores.shape[0],
                                                                                              :scores.shape[1]]
            scores = np.where(ok, scores, -np.inf)
            top = np.max(scores, axis=1, keepdims=True, initial=-np.inf)
            weights = np.exp(scores - np.where(np.isfinite(top), top, 0))
            total = weights.sum(axis=1, keepdims=True)
            probs = np.divide(weights, total, out=np.zeros_like(weights), where=total > 0)
            if keep is not None:
                probs = probs * keep[b, h, :probs.shape[0], :probs.shape[1]]
            out[rq, h] = probs @ v[rk, h // group]
            lse[h, rq] = np.where(total[:, 0] > 0, np.log(np.where(total[:, 0] > 0, total[:, 0], 1))
                                  + np.where(np.isfinite(top[:, 0]), top[:, 0], 0), np.inf)
    return out, lse


def descriptor(mode=0, dropout=0.0, scale=0.5, max_q=8, max_k=8, window=(-1, -1), pack=True, zero=False,
               backward=False, return_mask=False):
    desc = cnnl.createFlashAttentionDescriptor()
    setter = cnnl.setFlashAttentionBackwardDescriptor if backward else cnnl.setFlashAttentionDescriptor
    setter(desc, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_ACTIVATION_HIGH_PRECISION, mode, pack, zero, return_mask, max_q,
           max_k, dropout, scale)
    cnnl.setFlashAttentionSlidingWindowSize(desc, *window, 1)
    return desc


class Problem:
    """Device operands of one packed attention problem."""

    def __init__(self, q, k, v, cu_q, cu_k, code):
        self.code = code
        self.q, self.k, self.v = placed(q, code), placed(k, code), placed(v, code)
        self.cu_q, self.cu_k = placed(np.asarray(cu_q), INT32), placed(np.asarray(cu_k), INT32)
        self.out = blank(q.shape[:2] + (v.shape[2],), code)
        self.lse = blank((q.shape[1], q.shape[0]), F32)

    def forward(self, handle, desc, rng=None, mask=None):
        cnnl.flashAttentionForward(handle, desc, self.q.desc, self.q.ptr, self.k.desc, self.k.ptr, self.v.desc,
                                   self.v.ptr, self.cu_q.desc, self.cu_q.ptr, self.cu_k.desc, self.cu_k.ptr, rng,
                                   None, 0, None if mask is None else mask.desc, None if mask is None else mask.ptr,
                                   self.lse.desc, self.lse.ptr, self.out.desc, self.out.ptr)
        sync(handle)
        return self.out.read(), self.lse.read()

    def backward(self, handle, desc, dout, rng=None):
        grad = placed(dout, self.code)
        dq, dk, dv = blank(self.q.dims, self.code), blank(self.k.dims, self.code), blank(self.v.dims, self.code)
        size = cnnl.getFlashAttentionBackwardWorkspaceSize(handle, desc, self.q.desc, self.k.desc, self.v.desc)
        workspace = blank((max(size, 1),), cnnl.CNNL_DTYPE_INT8).ptr if size else None
        cnnl.flashAttentionBackward(handle, desc, grad.desc, grad.ptr, self.q.desc, self.q.ptr, self.k.desc,
                                    self.k.ptr, self.v.desc, self.v.ptr, self.out.desc, self.out.ptr, self.lse.desc,
                                    self.lse.ptr, self.cu_q.desc, self.cu_q.ptr, self.cu_k.desc, self.cu_k.ptr, rng,
                                    workspace, size, dq.desc, dq.ptr, dk.desc, dk.ptr, dv.desc, dv.ptr, None, None,
                                    None, None)
        sync(handle)
        return dq.read(), dk.read(), dv.read()


def operands(rng, lengths_q, lengths_k, heads=4, heads_k=2, d=8, dv=6, code=F64):
    cu_q, cu_k = np.concatenate(([0], np.cumsum(lengths_q))), np.concatenate(([0], np.cumsum(lengths_k)))
    q = rounded(rng, (cu_q[-1], heads, d), code)
    k = rounded(rng, (cu_k[-1], heads_k, d), code)
    v = rounded(rng, (cu_k[-1], heads_k, dv), code)
    return q, k, v, cu_q, cu_k


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("window", [(-1, -1), (2, 1)])
def test_forward_masks_windows_varlen_gqa(handle, small_blocks, mode, window):
    rng = np.random.default_rng(mode)
    q, k, v, cu_q, cu_k = operands(rng, [5, 0, 7], [6, 3, 7])
    problem = Problem(q, k, v, cu_q, cu_k, F64)
    out, lse = problem.forward(handle, descriptor(mode, window=window))
    want, want_lse = reference(q, k, v, cu_q, cu_k, 0.5, mode, *window)
    np.testing.assert_allclose(out, want, atol=1e-12)
    np.testing.assert_allclose(lse, want_lse, atol=1e-12)


@pytest.mark.parametrize("code", [F32, F16, BF16])
def test_forward_dtypes(handle, code):
    rng = np.random.default_rng(1)
    q, k, v, cu_q, cu_k = operands(rng, [9, 4], [9, 6], heads=2, heads_k=1, d=16, dv=16, code=code)
    out, lse = Problem(q, k, v, cu_q, cu_k, code).forward(handle, descriptor(cnnl.CNNL_ATTN_MASK_CAUSAL, max_q=9,
                                                                              max_k=9))
    want, want_lse = reference(q, k, v, cu_q, cu_k, 0.5, cnnl.CNNL_ATTN_MASK_CAUSAL)
    assert_near(out, want, code, scale=2)
    assert_near(lse, want_lse, F32 if code == F32 else code, scale=4)


def test_fully_masked_rows_give_zero_and_infinite_lse(handle):
    rng = np.random.default_rng(2)
    q, k, v, cu_q, cu_k = operands(rng, [6], [3], heads=1, heads_k=1)
    # bottom-right causal with len_q > len_k: the first len_q - len_k queries see no key
    out, lse = Problem(q, k, v, cu_q, cu_k, F64).forward(handle, descriptor(cnnl.CNNL_ATTN_MASK_CAUSAL_BOTTOM_RIGHT))
    assert np.all(out[:3] == 0) and np.all(np.isposinf(lse[:, :3]))
    np.testing.assert_allclose(out, reference(q, k, v, cu_q, cu_k, 0.5, cnnl.CNNL_ATTN_MASK_CAUSAL_BOTTOM_RIGHT)[0],
                               atol=1e-12)


@pytest.mark.parametrize("mode", [cnnl.CNNL_ATTN_MASK_NONE, cnnl.CNNL_ATTN_MASK_CAUSAL,
                                  cnnl.CNNL_ATTN_MASK_LOCAL_BOTTOM_RIGHT])
def test_backward_is_the_gradient(handle, small_blocks, mode):
    rng = np.random.default_rng(3)
    q, k, v, cu_q, cu_k = operands(rng, [5, 6], [7, 4], heads=2, heads_k=1, d=4, dv=3)
    window = (2, 1) if mode == cnnl.CNNL_ATTN_MASK_LOCAL_BOTTOM_RIGHT else (-1, -1)
    desc = descriptor(mode, window=window)
    problem = Problem(q, k, v, cu_q, cu_k, F64)
    out, _ = problem.forward(handle, desc)
    dout = rng.standard_normal(out.shape)
    dq, dk, dv = problem.backward(handle, descriptor(mode, window=window, backward=True), dout)

    def loss(qq=q, kk=k, vv=v):
        return float(np.sum(reference(qq, kk, vv, cu_q, cu_k, 0.5, mode, *window)[0] * dout))

    directional_check(lambda x: loss(qq=x), q, dq, rng)
    directional_check(lambda x: loss(kk=x), k, dk, rng)
    directional_check(lambda x: loss(vv=x), v, dv, rng)


def test_dropout_follows_the_uniform_stream(handle, small_blocks):
    rng = np.random.default_rng(4)
    lengths = [5, 7]
    q, k, v, cu_q, cu_k = operands(rng, lengths, [6, 7], heads=2, heads_k=2, d=4, dv=4)
    p, seed, offset = 0.3, 1234, 5
    max_q, max_k = 7, 8
    desc = descriptor(dropout=p, max_q=max_q, max_k=max_k, return_mask=True)
    count = cnnl.getFlashAttentionGeneratedRandomNumbers(handle, desc, placed(q, F64).desc, placed(v, F64).desc,
                                                         placed(cu_q, INT32).desc)
    assert count == 2 * 2 * max_q * max_k
    # the numbers cnnlRandGenerateUniform draws from the same (seed, offset)
    generator = cnnl.randCreateGenerator(cnnl.CNNL_RAND_RNG_PHILOX)
    cnnl.randSetPseudoRandomGeneratorSeed(generator, seed)
    cnnl.randSetPseudoRandomGeneratorOffset(generator, offset)
    uniform = blank((count,), F64)
    cnnl.randGenerateUniform(handle, generator, F64, None, count, 0.0, 1.0, uniform.ptr)
    sync(handle)
    keep = (uniform.read() >= p).reshape(2, 2, max_q, max_k) / (1 - p)
    problem = Problem(q, k, v, cu_q, cu_k, F64)
    mask = blank((2, 2, max_q, max_k), F32)
    out, _ = problem.forward(handle, desc, (seed, offset), mask)
    want, _ = reference(q, k, v, cu_q, cu_k, 0.5, keep=keep)
    np.testing.assert_allclose(out, want, atol=1e-12)
    flags = mask.read()
    for b, (lq, lk) in enumerate(zip(lengths, [6, 7])):
        np.testing.assert_array_equal(flags[b, :, :lq, :lk], keep[b, :, :lq, :lk] > 0)
        assert not flags[b, :, lq:].any() and not flags[b, :, :, lk:].any()
    # the backward regenerates the same mask: it is the gradient of the dropped-out forward
    dout = rng.standard_normal(out.shape)
    dq, dk, dv = problem.backward(handle, descriptor(dropout=p, max_q=max_q, max_k=max_k, backward=True), dout,
                                  (seed, offset))

    def loss(qq=q, kk=k, vv=v):
        return float(np.sum(reference(qq, kk, vv, cu_q, cu_k, 0.5, keep=keep)[0] * dout))

    directional_check(lambda x: loss(qq=x), q, dq, rng)
    directional_check(lambda x: loss(kk=x), k, dk, rng)
    directional_check(lambda x: loss(vv=x), v, dv, rng)


def test_v2_seqused_bias_and_softmax_d(handle, small_blocks):
    rng = np.random.default_rng(5)
    q, k, v, cu_q, cu_k = operands(rng, [4, 5], [6, 6], heads=2, heads_k=1, d=4, dv=4)
    problem = Problem(q, k, v, cu_q, cu_k, F64)
    used = placed(np.array([4, 6]), INT32)
    bias = rng.standard_normal((1, 2, 8, 8))
    bias_t = placed(bias, F64)
    desc = descriptor()
    cnnl.flashAttentionForward_v2(handle, desc, problem.q.desc, problem.q.ptr, problem.k.desc, problem.k.ptr,
                                  problem.v.desc, problem.v.ptr, problem.cu_q.desc, problem.cu_q.ptr,
                                  problem.cu_k.desc, problem.cu_k.ptr, used.desc, used.ptr, bias_t.desc, bias_t.ptr,
                                  None, None, None, None, 0, None, None, problem.lse.desc, problem.lse.ptr,
                                  problem.out.desc, problem.out.ptr)
    sync(handle)
    # sequence 0 uses its first 4 keys only: the reference sees cut key sequences
    keys = np.concatenate([k[0:4], k[6:12]])
    values = np.concatenate([v[0:4], v[6:12]])
    want, want_lse = reference(q, keys, values, cu_q, [0, 4, 10], 0.5, bias=bias)
    np.testing.assert_allclose(problem.out.read(), want, atol=1e-12)
    np.testing.assert_allclose(problem.lse.read(), want_lse, atol=1e-12)
    dout = rng.standard_normal(want.shape)
    grad, dq, dk, dv = placed(dout, F64), blank(q.shape, F64), blank(k.shape, F64), blank(v.shape, F64)
    softmax_d = blank((2, 9), F32)
    cnnl.flashAttentionBackward_v2(handle, descriptor(backward=True), grad.desc, grad.ptr, problem.q.desc,
                                   problem.q.ptr, problem.k.desc, problem.k.ptr, problem.v.desc, problem.v.ptr,
                                   problem.out.desc, problem.out.ptr, problem.lse.desc, problem.lse.ptr,
                                   problem.cu_q.desc, problem.cu_q.ptr, problem.cu_k.desc, problem.cu_k.ptr,
                                   used.desc, used.ptr, bias_t.desc, bias_t.ptr, None, None, 0, dq.desc, dq.ptr,
                                   dk.desc, dk.ptr, dv.desc, dv.ptr, None, None, softmax_d.desc, softmax_d.ptr)
    sync(handle)
    assert np.all(dk.read()[4:6] == 0) and np.all(dv.read()[4:6] == 0)  # unused keys get no gradient
    np.testing.assert_allclose(softmax_d.read(), np.einsum("thd,thd->ht", dout, want), rtol=1e-6)

    def loss(qq=q):
        return float(np.sum(reference(qq, keys, values, cu_q, [0, 4, 10], 0.5, bias=bias)[0] * dout))

    directional_check(loss, q, dq.read(), rng)


def test_non_packed_layout(handle):
    rng = np.random.default_rng(6)
    q, k, v = rng.standard_normal((2, 5, 2, 4)), rng.standard_normal((2, 6, 1, 4)), rng.standard_normal((2, 6, 1, 3))
    qt, kt, vt = placed(q, F64), placed(k, F64), placed(v, F64)
    out, lse = blank((2, 5, 2, 3), F64), blank((2, 2, 5), F32)
    desc = descriptor(cnnl.CNNL_ATTN_MASK_CAUSAL_BOTTOM_RIGHT, pack=False)
    cnnl.flashAttentionForward(handle, desc, qt.desc, qt.ptr, kt.desc, kt.ptr, vt.desc, vt.ptr, None, None, None,
                               None, None, None, 0, None, None, lse.desc, lse.ptr, out.desc, out.ptr)
    sync(handle)
    want, want_lse = reference(q.reshape(10, 2, 4), k.reshape(12, 1, 4), v.reshape(12, 1, 3), [0, 5, 10],
                               [0, 6, 12], 0.5, cnnl.CNNL_ATTN_MASK_CAUSAL_BOTTOM_RIGHT)
    np.testing.assert_allclose(out.read(), want.reshape(2, 5, 2, 3), atol=1e-12)
    np.testing.assert_allclose(lse.read(), want_lse.reshape(2, 2, 5).transpose(1, 0, 2), rtol=1e-6)


def test_out_zero_and_empty_inputs(handle):
    rng = np.random.default_rng(7)
    q, k, v, cu_q, cu_k = operands(rng, [3], [3], heads=1, heads_k=1)
    q = np.concatenate([q, np.ones((2, 1, 8))])  # two packed rows no sequence covers
    problem = Problem(q, k, v, cu_q, cu_k, F64)
    problem.out.write(np.full(problem.out.dims, 7.0))
    out, lse = problem.forward(handle, descriptor(zero=True))
    assert np.all(out[3:] == 0) and np.all(np.isneginf(lse[:, 3:]))
    empty = Problem(np.zeros((0, 2, 4)), np.zeros((0, 1, 4)), np.zeros((0, 1, 4)), [0, 0], [0, 0], F64)
    out, lse = empty.forward(handle, descriptor())
    assert out.shape == (0, 2, 4) and lse.shape == (2, 0)


def test_rejects_bad_arguments(handle):
    rng = np.random.default_rng(8)
    q, k, v, cu_q, cu_k = operands(rng, [3], [3], heads=4, heads_k=2)
    problem = Problem(q, k, v, cu_q, cu_k, F64)
    desc = descriptor()
    BAD, UNSUPPORTED = cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED
    with raises_status(BAD, arg="attn_mask_mode"):
        cnnl.setFlashAttentionDescriptor(desc, cnnl.CNNL_DTYPE_FLOAT, 0, 9, True, False, False, 8, 8, 0.0, 1.0)
    with raises_status(BAD, arg="dropout_p"):
        cnnl.setFlashAttentionDescriptor(desc, cnnl.CNNL_DTYPE_FLOAT, 0, 0, True, False, False, 8, 8, 1.0, 1.0)
    with raises_status(UNSUPPORTED, arg="compute_dtype"):
        cnnl.setFlashAttentionDescriptor(desc, cnnl.CNNL_DTYPE_INT32, 0, 0, True, False, False, 8, 8, 0.0, 1.0)
    with raises_status(BAD, arg="window_size_left"):
        cnnl.setFlashAttentionSlidingWindowSize(desc, -2, 0, 1)
    with raises_status(BAD, arg="desc"):
        cnnl.flashAttentionForward(handle, cnnl.createFlashAttentionDescriptor(), problem.q.desc, problem.q.ptr,
                                   problem.k.desc, problem.k.ptr, problem.v.desc, problem.v.ptr, problem.cu_q.desc,
                                   problem.cu_q.ptr, problem.cu_k.desc, problem.cu_k.ptr, None, None, 0, None, None,
                                   problem.lse.desc, problem.lse.ptr, problem.out.desc, problem.out.ptr)

    def forward(**change):
        args = dict(q_desc=problem.q.desc, k_desc=problem.k.desc, v_desc=problem.v.desc, csq=problem.cu_q.desc,
                    lse_desc=problem.lse.desc, out_desc=problem.out.desc, rng=None, desc=desc)
        args.update(change)
        cnnl.flashAttentionForward(handle, args["desc"], args["q_desc"], problem.q.ptr, args["k_desc"], problem.k.ptr,
                                   args["v_desc"], problem.v.ptr, args["csq"], problem.cu_q.ptr, problem.cu_k.desc,
                                   problem.cu_k.ptr, args["rng"], None, 0, None, None, args["lse_desc"],
                                   problem.lse.ptr, args["out_desc"], problem.out.ptr)

    with raises_status(BAD, arg="k_desc"):  # 3 key heads do not divide 4 query heads
        forward(k_desc=blank((3, 3, 8), F64).desc)
    with raises_status(BAD, arg="k_desc"):  # data types differ
        forward(q_desc=blank((3, 4, 8), F32).desc)
    with raises_status(UNSUPPORTED, arg="q_desc"):
        forward(q_desc=blank((3, 4, 8), INT32).desc, k_desc=blank((3, 2, 8), INT32).desc,
                v_desc=blank((3, 2, 6), INT32).desc)
    with raises_status(UNSUPPORTED, arg="q_desc"):  # head dim above 256
        forward(q_desc=blank((3, 4, 300), F64).desc, k_desc=blank((3, 2, 300), F64).desc)
    with raises_status(BAD, arg="cu_seqlens_q_desc"):
        forward(csq=blank((2, 1), INT32).desc)
    with raises_status(BAD, arg="softmax_lse_desc"):
        forward(lse_desc=blank((4, 3), F64).desc)
    with raises_status(BAD, arg="out_desc"):
        forward(out_desc=blank((3, 4, 8), F64).desc)
    with raises_status(BAD, arg="rng_state"):  # dropout without a stream
        forward(desc=descriptor(dropout=0.5))
    with raises_status(BAD, arg=r"rng_state\[0\]"):
        forward(desc=descriptor(dropout=0.5), rng=(-1, 0))
    dilated = descriptor()
    cnnl.setFlashAttentionSlidingWindowSize(dilated, 2, 2, 2)
    with raises_status(UNSUPPORTED, arg="desc"):
        forward(desc=dilated)
    with raises_status(BAD, arg="q"):
        cnnl.flashAttentionForward(handle, desc, problem.q.desc, None, problem.k.desc, problem.k.ptr, problem.v.desc,
                                   problem.v.ptr, problem.cu_q.desc, problem.cu_q.ptr, problem.cu_k.desc,
                                   problem.cu_k.ptr, None, None, 0, None, None, problem.lse.desc, problem.lse.ptr,
                                   problem.out.desc, problem.out.ptr)


def test_sequences_longer_than_the_maximum_fail_at_sync(handle):
    rng = np.random.default_rng(9)
    q, k, v, cu_q, cu_k = operands(rng, [6], [6], heads=1, heads_k=1)
    problem = Problem(q, k, v, cu_q, cu_k, F64)
    with pytest.raises(Exception, match="longer than the descriptor's maximum"):
        problem.forward(handle, descriptor(max_q=4, max_k=8))


@settings(max_examples=12)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=3), st.sampled_from([(1, 1), (2, 1), (4, 2)]),
       st.integers(1, 9), st.sampled_from(ALL_MODES), st.integers(-1, 4), st.integers(-1, 4))
def test_forward_property(lengths, heads, depth, mode, left, right):
    handle = cnnl.create()
    rng = np.random.default_rng(len(lengths) * 100 + depth)
    q, k, v, cu_q, cu_k = operands(rng, lengths, lengths[::-1], *heads, d=depth, dv=depth)
    problem = Problem(q, k, v, cu_q, cu_k, F64)
    out, lse = problem.forward(handle, descriptor(mode, scale=1 / math.sqrt(depth), max_q=9, max_k=9,
                                                  window=(left, right)))
    want, want_lse = reference(q, k, v, cu_q, cu_k, 1 / math.sqrt(depth), mode, left, right)
    np.testing.assert_allclose(out, want, atol=1e-12)
    np.testing.assert_allclose(lse, want_lse, atol=1e-12)


def test_memory_is_linear_in_the_sequence():
    """A 4096-long sequence: the blockwise forward and backward allocate far less than one score matrix (their
    blocks are capped at QUERY_BLOCK x KEY_BLOCK scores per thread)."""
    length, depth = 4096, 16
    rng = np.random.default_rng(10)
    q, k, v = (rng.standard_normal((length, 1, depth)).astype(np.float32) for _ in range(3))
    cu = np.array([0, length])
    out, lse = np.zeros_like(q), np.zeros((1, length), np.float32)
    tracemalloc.start()
    try:
        A.flash_forward(q, k, v, cu, cu, out, lse, 0.2, length, length)
        forward_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        grads = [np.zeros_like(q) for _ in range(3)]
        A.flash_backward(q, k, v, out, out, lse, cu, cu, *grads, 0.2, length, length)
        backward_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    matrix = length * length * 4
    assert forward_peak < matrix / 4, forward_peak
    assert backward_peak < matrix / 2, backward_peak


def _both_paths(monkeypatch, function, *arguments):
    """function(*arguments) on the batched path (sequences of one length) and on the blockwise one; the copies of
    every array argument each wrote."""
    results = []
    for batched in (True, False):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in arguments]
        with monkeypatch.context() as patched:
            if not batched:
                patched.setattr(A, "BATCHED_SCORES", -1)
            function(*copies)
        results.append(copies)
    return results


@pytest.mark.parametrize("mode", ALL_MODES)
@pytest.mark.parametrize("window", [(-1, -1), (2, 1)])
@pytest.mark.parametrize("lengths", [(6, 6), (7, 4), (3, 8)])
def test_batched_path_matches_blockwise(monkeypatch, mode, window, lengths):
    """Sequences of one length take the batched path; its out, lse, gradients and D are the blockwise path's (every
    mask mode and window, grouped-query heads, rows that see no key, a broadcast bias)."""
    rng = np.random.default_rng(11)
    len_q, len_k = lengths
    q, k, v, cu_q, cu_k = operands(rng, [len_q] * 3, [len_k] * 3)
    mask = A.Mask(mode if mode != cnnl.CNNL_ATTN_MASK_CAUSAL else A.CAUSAL, *window)
    for bias in (None, rng.standard_normal((1, 4, len_q, 1))):
        out, lse = np.zeros((q.shape[0], 4, 6)), np.zeros((4, q.shape[0]))
        batched, blockwise = _both_paths(monkeypatch, lambda o, l: A.flash_forward(
            q, k, v, cu_q, cu_k, o, l, 0.5, len_q, len_k, mask, bias=bias), out, lse)
        for got, want in zip(batched, blockwise):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        out, lse = blockwise
        dout = rng.standard_normal(out.shape)
        grads = [np.full_like(x, np.nan) for x in (q, k, v)] + [np.zeros((4, q.shape[0]))]
        batched, blockwise = _both_paths(monkeypatch, lambda dq, dk, dv, delta: A.flash_backward(
            q, k, v, out, dout, lse, cu_q, cu_k, dq, dk, dv, 0.5, len_q, len_k, mask, bias=bias, delta=delta), *grads)
        for got, want in zip(batched, blockwise):
            assert np.isfinite(got).all()
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_batched_path_only_for_small_uniform_problems(monkeypatch):
    """Variable lengths, dropout and score matrices beyond BATCHED_SCORES take the blockwise path."""
    taken = []
    monkeypatch.setattr(A, "_batched_forward", lambda *args: taken.append(True))
    rng = np.random.default_rng(12)
    for lengths, dropout, limit in (([5, 5], None, A.BATCHED_SCORES), ([5, 4], None, A.BATCHED_SCORES),
                                    ([5, 5], A.Dropout(0.1, 1, 0, 5, 5), A.BATCHED_SCORES), ([5, 5], None, 199)):
        q, k, v, cu_q, cu_k = operands(rng, lengths, lengths)
        monkeypatch.setattr(A, "BATCHED_SCORES", limit)
        A.flash_forward(q, k, v, cu_q, cu_k, np.zeros((q.shape[0], 4, 6)), np.zeros((4, q.shape[0])), 0.5, 5, 5,
                        dropout=dropout)
    assert taken == [True]  # 2 sequences x 4 heads x 5 x 5 = 200 scores: over a limit of 199


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(1, 7), min_size=1, max_size=3), st.data())
def test_fully_masked_rows_in_every_entry_point_give_zero_and_no_nan(lengths, data):
    """Query rows that see no key (a bias row of -inf, a sequence whose used key count is 0, bottom-right causal
    with more queries than keys): forward, forward_v2, backward and backward_v2, in float64/float32/half, on the
    batched and the blockwise path: out 0 and lse +inf on those rows (torch 2.13's SDPA gives 0 there too), the
    rest as the dense reference, and gradients with no NaN, 0 for those queries."""
    handle = cnnl.create()
    code = data.draw(st.sampled_from([F64, F32, F16]))
    blockwise = data.draw(st.booleans())
    saved = A.BATCHED_SCORES
    A.BATCHED_SCORES = -1 if blockwise else saved
    try:
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
        lengths_k = [data.draw(st.integers(1, 7)) for _ in lengths]
        q, k, v, cu_q, cu_k = operands(rng, lengths, lengths_k, heads=2, heads_k=1, d=4, dv=4, code=code)
        problem = Problem(q, k, v, cu_q, cu_k, code)
        if data.draw(st.booleans()):  # forward and backward with a mask mode that leaves rows without keys
            mode = cnnl.CNNL_ATTN_MASK_CAUSAL_BOTTOM_RIGHT
            out, lse = problem.forward(handle, descriptor(mode))
            want, want_lse = reference(q, k, v, cu_q, cu_k, 0.5, mode)
            grads = problem.backward(handle, descriptor(mode, backward=True), rng.standard_normal(want.shape))
        else:  # _v2 with -inf bias rows and sequences that use no key
            used = np.array([data.draw(st.integers(0, n)) for n in lengths_k])
            bias = rng.standard_normal((1, 2, 8, 8))
            bias[:, :, rng.random(8) < 0.4, :] = -np.inf
            used_t, bias_t = placed(used, INT32), placed(bias, code)
            cnnl.flashAttentionForward_v2(handle, descriptor(), problem.q.desc, problem.q.ptr, problem.k.desc,
                                          problem.k.ptr, problem.v.desc, problem.v.ptr, problem.cu_q.desc,
                                          problem.cu_q.ptr, problem.cu_k.desc, problem.cu_k.ptr, used_t.desc,
                                          used_t.ptr, bias_t.desc, bias_t.ptr, None, None, None, None, 0, None, None,
                                          problem.lse.desc, problem.lse.ptr, problem.out.desc, problem.out.ptr)
            sync(handle)
            out, lse = problem.out.read(), problem.lse.read()
            keep = np.concatenate([np.arange(cu_k[b], cu_k[b] + used[b]) for b in range(len(used))]).astype(int)
            want, want_lse = reference(q, k[keep], v[keep], cu_q, np.concatenate(([0], np.cumsum(used))), 0.5,
                                       bias=bias)
            dout = placed(rng.standard_normal(want.shape), code)
            grads = [blank(t.shape, code) for t in (q, k, v)]
            size = cnnl.getFlashAttentionBackwardWorkspaceSize(handle, descriptor(backward=True), problem.q.desc,
                                                               problem.k.desc, problem.v.desc)
            space = blank((max(size, 1),), cnnl.CNNL_DTYPE_INT8).ptr if size else None
            cnnl.flashAttentionBackward_v2(handle, descriptor(backward=True), dout.desc, dout.ptr, problem.q.desc,
                                           problem.q.ptr, problem.k.desc, problem.k.ptr, problem.v.desc,
                                           problem.v.ptr, problem.out.desc, problem.out.ptr, problem.lse.desc,
                                           problem.lse.ptr, problem.cu_q.desc, problem.cu_q.ptr, problem.cu_k.desc,
                                           problem.cu_k.ptr, used_t.desc, used_t.ptr, bias_t.desc, bias_t.ptr, None,
                                           space, size, grads[0].desc, grads[0].ptr, grads[1].desc, grads[1].ptr,
                                           grads[2].desc, grads[2].ptr, None, None, None, None)
            sync(handle)
            grads = [g.read() for g in grads]
    finally:
        A.BATCHED_SCORES = saved
    masked = np.isinf(want_lse)  # (heads, total_q): the rows that see no key
    assert not np.isnan(out).any() and np.all(out.transpose(1, 0, 2)[masked] == 0)
    assert np.all(np.isposinf(lse[masked]))
    assert_near(out, want, code, scale=4)
    assert all(not np.isnan(g).any() for g in grads)
    assert np.all(np.asarray(grads[0]).transpose(1, 0, 2)[masked] == 0)
