"""Discrete uniform and multinomial sampling through the API: the numbers come from the uniform stream of
cnnlRandGenerateUniform (the same seed and offset give the documented transforms of the same uniforms), offsets
advance, frequencies match the weights, draws without replacement are distinct, zero weights are never drawn, and
bad arguments and bad weights fail."""
import numpy as np
import pytest

import cnnl

from .nn_helpers import F16, F32, F64, blank, placed, raises_status, sync

INT32, INT64 = cnnl.CNNL_DTYPE_INT32, cnnl.CNNL_DTYPE_INT64


def generator(seed=7, offset=0):
    gen = cnnl.randCreateGenerator(cnnl.CNNL_RAND_RNG_PHILOX)
    cnnl.randSetPseudoRandomGeneratorSeed(gen, seed)
    cnnl.randSetPseudoRandomGeneratorOffset(gen, offset)
    return gen


def uniforms(handle, count, seed=7, offset=0):
    out = blank((count,), F64)
    cnnl.randGenerateUniform(handle, generator(seed, offset), F64, None, count, 0.0, 1.0, out.ptr)
    sync(handle)
    return out.read()


@pytest.mark.parametrize("code", [F32, F16, INT32, INT64])
def test_discrete_uniform(handle, code):
    gen = generator()
    out = blank((1000,), code)
    cnnl.randGenerateDescreteUniform(handle, gen, code, None, 1000, -3, 5, out.ptr)
    sync(handle)
    got = out.read().astype(np.float64)
    np.testing.assert_array_equal(got, np.floor(-3 + uniforms(handle, 1000) * 8))
    assert set(np.unique(got)) == set(range(-3, 5))
    assert cnnl.randGetPseudoRandomGeneratorOffset(gen) == 250  # 4 numbers per counter step


def multinomial(handle, weights, samples, replacement, gen=None, code=F32, index=INT64, logits=False):
    xt = placed(np.asarray(weights), code)
    shape = np.asarray(weights).shape[:-1] + (samples,)
    yt = blank(shape, index)
    size = cnnl.getRandGenerateMultinomialWorkspaceSize(handle, xt.desc)
    ws = blank((size,), cnnl.CNNL_DTYPE_INT8).ptr if size else None
    cnnl.randGenerateMultinomial_v2(handle, gen or generator(), xt.desc, xt.ptr, replacement, logits, None, ws, size,
                                    yt.desc, yt.ptr)
    sync(handle)
    return yt.read()


def test_multinomial_with_replacement_uses_the_stream(handle):
    weights = np.array([[1.0, 0.0, 3.0, 4.0], [0.5, 0.5, 0.0, 0.0]])
    got = multinomial(handle, weights, 6, True, code=F64)
    u = uniforms(handle, 12).reshape(2, 6)
    cumulative = np.cumsum(weights, axis=1)
    want = [np.searchsorted(cumulative[r], u[r] * cumulative[r, -1], side="right") for r in range(2)]
    np.testing.assert_array_equal(got, want)


def test_multinomial_frequencies(handle):
    weights = np.array([0.1, 0.0, 0.6, 0.3])
    got = multinomial(handle, weights, 20000, True, code=F64)
    frequencies = np.bincount(got, minlength=4) / got.size
    assert frequencies[1] == 0
    np.testing.assert_allclose(frequencies, weights, atol=0.015)
    logits = multinomial(handle, np.log(weights[[0, 2, 3]]), 20000, True, code=F64, logits=True)
    np.testing.assert_allclose(np.bincount(logits, minlength=3) / logits.size, weights[[0, 2, 3]] / 1.0, atol=0.015)


def test_multinomial_without_replacement(handle):
    rng = np.random.default_rng(1)
    weights = rng.uniform(0, 1, (50, 8))
    weights[:, 3] = 0
    got = multinomial(handle, weights, 7, False, index=INT32)
    assert all(len(set(row)) == 7 and 3 not in row for row in got)
    # the first draw is distributed as the weights: count firsts over many rows of the same weights
    firsts = multinomial(handle, np.tile([1.0, 2.0, 5.0], (6000, 1)), 1, False)[:, 0]
    np.testing.assert_allclose(np.bincount(firsts, minlength=3) / 6000, [1 / 8, 2 / 8, 5 / 8], atol=0.02)
    gen = generator()
    multinomial(handle, weights, 2, False, gen=gen)
    assert cnnl.randGetPseudoRandomGeneratorOffset(gen) == 50 * 8 // 4


def test_bad_weights_fail_at_sync_and_rejects(handle):
    xt, yt = placed(np.array([1.0, -1.0]), F32), blank((3,), INT64)
    cnnl.randGenerateMultinomial_v2(handle, generator(), xt.desc, xt.ptr, True, False, None, blank((8,), F32).ptr, 8,
                                    yt.desc, yt.ptr)
    with pytest.raises(Exception, match="non-negative"):
        sync(handle)
    BAD, UNSUPPORTED = cnnl.CNNL_STATUS_BAD_PARAM, cnnl.CNNL_STATUS_NOT_SUPPORTED
    x = placed(np.ones((2, 3)), F32)
    args = [handle, generator(), x.desc, x.ptr, False, False, None, blank((24,), F32).ptr, 24,
            blank((2, 2), INT32).desc, blank((2, 2), INT32).ptr]
    for position, value, arg, status in [(9, blank((2, 4), INT32).desc, "y_desc", BAD),
                                         (9, blank((3, 2), INT32).desc, "y_desc", BAD),
                                         (9, blank((2, 2), F32).desc, "y_desc", UNSUPPORTED),
                                         (2, blank((2, 3), INT32).desc, "x_desc", UNSUPPORTED),
                                         (8, 4, "workspace_size", BAD), (1, None, "generator", BAD)]:
        bad = list(args)
        bad[position] = value
        with raises_status(status, arg=arg):
            cnnl.randGenerateMultinomial_v2(*bad)
    out = blank((4,), F32)
    with raises_status(BAD, arg="min"):
        cnnl.randGenerateDescreteUniform(handle, generator(), F32, None, 4, 5, 5, out.ptr)
    with raises_status(BAD, arg="dtype"):
        cnnl.randGenerateDescreteUniform(handle, generator(), cnnl.CNNL_DTYPE_BOOL, None, 4, 0, 5, out.ptr)
