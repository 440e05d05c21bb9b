"""Random numbers and dropout: reproducible from (seed, offset), statistically right (Kolmogorov-Smirnov and
moment checks at fixed seeds), device states that continue a stream; dropout forward and its composed backward."""
import math

import numpy as np
import pytest

import cnnl

from .nn_helpers import BF16, F16, F32, F64, assert_near, blank, placed, raises_status, sync

PHILOX, MTGP32 = cnnl.CNNL_RAND_RNG_PHILOX, cnnl.CNNL_RAND_RNG_MTGP32


def generator(seed, kind=PHILOX):
    gen = cnnl.randCreateGenerator(kind)
    cnnl.randSetPseudoRandomGeneratorSeed(gen, seed)
    return gen


def uniform(handle, gen, count, code=F32, low=0.0, high=1.0, state=None):
    out = blank((count,), code)
    cnnl.randGenerateUniform(handle, gen, code, state, count, low, high, out.ptr)
    sync(handle)
    return out.read().astype(np.float64)


def normal(handle, gen, count, code=F32, mean=0.0, std=1.0):
    out = blank((count,), code)
    cnnl.randGenerateNormal(handle, gen, code, None, count, mean, std, out.ptr)
    sync(handle)
    return out.read().astype(np.float64)


def ks_statistic(samples, cdf):
    ordered = np.sort(samples)
    n = ordered.size
    values = cdf(ordered)
    return max(np.max(np.arange(1, n + 1) / n - values), np.max(values - np.arange(n) / n))


KS_CRITICAL_1_PERCENT = 1.63


def test_same_seed_same_numbers(handle):
    a = uniform(handle, generator(42), 1000)
    b = uniform(handle, generator(42), 1000)
    c = uniform(handle, generator(43), 1000)
    np.testing.assert_array_equal(a, b)
    assert np.mean(a == c) < 0.01


def test_offset_continues_and_replays_the_stream(handle):
    gen = generator(7)
    first, second = uniform(handle, gen, 8), uniform(handle, gen, 8)
    assert cnnl.randGetPseudoRandomGeneratorOffset(gen) == 4
    np.testing.assert_array_equal(np.concatenate([first, second]), uniform(handle, generator(7), 16))
    cnnl.randSetPseudoRandomGeneratorOffset(gen, 2)
    np.testing.assert_array_equal(uniform(handle, gen, 8), second)


@pytest.mark.parametrize("kind", [PHILOX, MTGP32, cnnl.CNNL_RAND_RNG_FAST])
def test_uniform_distribution(handle, kind):
    samples = uniform(handle, generator(1, kind), 100_000, F64, -2.0, 3.0)
    assert samples.min() >= -2.0 and samples.max() < 3.0
    statistic = ks_statistic(samples, lambda v: (v + 2.0) / 5.0)
    assert statistic < KS_CRITICAL_1_PERCENT / math.sqrt(samples.size)


def test_normal_distribution(handle):
    samples = normal(handle, generator(2), 50_001, F32, 1.5, 2.0)
    erf = np.vectorize(math.erf)
    statistic = ks_statistic(samples, lambda v: 0.5 * (1 + erf((v - 1.5) / (2.0 * math.sqrt(2)))))
    assert statistic < KS_CRITICAL_1_PERCENT / math.sqrt(samples.size)
    assert abs(samples.mean() - 1.5) < 4 * 2.0 / math.sqrt(samples.size)
    assert abs(samples.std() - 2.0) < 0.05


@pytest.mark.parametrize("code", [F16, BF16])
def test_half_precision_outputs(handle, code):
    samples = uniform(handle, generator(3), 4096, code, 0.0, 1.0)
    assert samples.min() >= 0 and samples.max() <= 1.0 and abs(samples.mean() - 0.5) < 0.03
    assert abs(normal(handle, generator(3), 4096, code).std() - 1) < 0.05


def test_device_state_continues_one_stream(handle):
    gen = generator(0)
    state = blank((cnnl.randGetMTGP32StateSize(gen),), cnnl.CNNL_DTYPE_INT8)
    cnnl.randMakeMTGP32KernelState(handle, state.ptr, None, None, 99)
    first = uniform(handle, gen, 8, state=state.ptr)
    second = uniform(handle, gen, 8, state=state.ptr)
    np.testing.assert_array_equal(np.concatenate([first, second]), uniform(handle, generator(99), 16))
    assert cnnl.randGetPseudoRandomGeneratorOffset(gen) == 0  # the generator's own stream was not used


def dropout(handle, gen, x, p, code=F32, mask_code=cnnl.CNNL_DTYPE_UINT8):
    xt, mt, yt = placed(x, code), blank(x.shape, mask_code), blank(x.shape, code)
    cnnl.fusedDropout_v2(handle, gen, xt.desc, xt.ptr, p, None, mt.desc, mt.ptr, yt.desc, yt.ptr)
    sync(handle)
    return mt.read(), yt.read(), (xt, mt, yt)


@pytest.mark.parametrize("code", [F32, F16, BF16])
def test_dropout_forward(handle, code):
    x = np.random.default_rng(0).uniform(1, 2, (200, 100))
    x = x.astype(np.float16).astype(np.float64)
    mask, y, _ = dropout(handle, generator(5), x, 0.3, code)
    kept = mask.astype(bool)
    n = x.size
    assert abs(kept.mean() - 0.7) < 4 * math.sqrt(0.7 * 0.3 / n)
    assert_near(y, np.where(kept, x / 0.7, 0), code)
    again, _, _ = dropout(handle, generator(5), x, 0.3, code)
    np.testing.assert_array_equal(mask, again)


def test_dropout_extremes(handle):
    x = np.ones((4, 4))
    mask, y, _ = dropout(handle, generator(1), x, 0.0, mask_code=cnnl.CNNL_DTYPE_BOOL)
    assert mask.all() and np.array_equal(y, x)
    mask, y, _ = dropout(handle, generator(1), x, 1.0)
    assert not mask.any() and not y.any()


def test_dropout_backward_composed_on_the_device(handle):
    """dx = dy * mask / (1 - p): cast the mask to FLOAT, then one opTensor MUL with alpha1 = 1 / (1 - p)."""
    rng = np.random.default_rng(6)
    x, dy = rng.standard_normal((8, 16)), rng.standard_normal((8, 16))
    mask, _, (_, mt, _) = dropout(handle, generator(8), x, 0.25)
    mask_float, dyt, dxt = blank(x.shape, F32), placed(dy, F32), blank(x.shape, F32)
    cnnl.castDataType(handle, mt.desc, mt.ptr, cnnl.CNNL_CAST_UINT8_TO_FLOAT, mask_float.desc, mask_float.ptr)
    mul = cnnl.createOpTensorDescriptor()
    cnnl.setOpTensorDescriptor(mul, cnnl.CNNL_OP_TENSOR_MUL, F32, cnnl.CNNL_NOT_PROPAGATE_NAN)
    cnnl.opTensor(handle, mul, 1 / 0.75, mask_float.desc, mask_float.ptr, 1.0, dyt.desc, dyt.ptr, None, 0, 0.0,
                  dxt.desc, dxt.ptr)
    sync(handle)
    assert_near(dxt.read(), dy * mask / 0.75, F32)


def test_rejects(handle):
    gen = generator(0)
    out = blank((8,), F32)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="rng_type"):
        cnnl.randCreateGenerator(9)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="seed"):
        cnnl.randSetPseudoRandomGeneratorSeed(gen, -1)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="dtype"):  # a data type, not computed here
        cnnl.randGenerateUniform(handle, gen, cnnl.CNNL_DTYPE_INT32, None, 8, 0, 1, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="dtype"):  # no data type at all
        cnnl.randGenerateUniform(handle, gen, 99, None, 8, 0, 1, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="min"):
        cnnl.randGenerateUniform(handle, gen, F32, None, 8, 2, 1, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output"):
        cnnl.randGenerateUniform(handle, gen, F32, None, 9, 0, 1, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="std"):
        cnnl.randGenerateNormal(handle, gen, F32, None, 8, 0, -1, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="state"):
        cnnl.randGenerateUniform(handle, gen, F32, out.ptr + 24, 8, 0, 1, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="params"):
        cnnl.randMakeMTGP32KernelState(handle, out.ptr, object(), None, 1)
    x = blank((8,), F32)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="p"):
        cnnl.fusedDropout_v2(handle, gen, x.desc, x.ptr, 1.5, None, blank((8,), cnnl.CNNL_DTYPE_UINT8).desc, x.ptr,
                             x.desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="mask_desc"):
        cnnl.fusedDropout_v2(handle, gen, x.desc, x.ptr, 0.5, None, x.desc, x.ptr, x.desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="mask_desc"):
        cnnl.fusedDropout_v2(handle, gen, x.desc, x.ptr, 0.5, None, blank((4,), cnnl.CNNL_DTYPE_UINT8).desc, x.ptr,
                             x.desc, x.ptr)
    cnnl.randDestroyGenerator(gen)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="generator"):
        cnnl.randGenerateUniform(handle, gen, F32, None, 8, 0, 1, out.ptr)


def test_state_and_seed_rejects(handle):
    gen = generator(0)
    state = blank((2,), cnnl.CNNL_DTYPE_INT64)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="seed"):
        cnnl.randMakeMTGP32KernelState(handle, state.ptr, None, None, 2 ** 64)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="state"):
        cnnl.randMakeMTGP32KernelState(handle, state.ptr + 8, None, None, 1)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="offset"):
        cnnl.randSetPseudoRandomGeneratorOffset(gen, -1)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="num"):
        cnnl.randGenerateUniform(handle, gen, F32, None, -1, 0, 1, state.ptr)
