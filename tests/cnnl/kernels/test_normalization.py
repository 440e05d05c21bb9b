"""The batch norm kernels (cnnl/kernels/normalization.py over channel_stats.py) against a float64 numpy reference,
in channel-first and channel-last memory, small (one block on the calling thread) and large (blocks of channels
or of rows on the pool), float32/float64/half/bfloat16, non-contiguous input, in place, alpha/beta blending, a
NaN confined to its channel, and the empty batch."""
import ml_dtypes
import numpy as np
import pytest

from cnnl.kernels import normalization as nm

EPS = 1e-5


def reference(x, weight, bias, dy, axis):
    """float64 (y, mean, invstd, dx, dweight, dbias) of training-mode batch norm over every axis but `axis`."""
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    axes = tuple(a for a in range(x.ndim) if a != axis)
    shape = [1] * x.ndim
    shape[axis] = -1
    mean = x.mean(axis=axes)
    invstd = 1 / np.sqrt(x.var(axis=axes) + EPS)
    x_hat = (x - mean.reshape(shape)) * invstd.reshape(shape)
    y = x_hat * weight.reshape(shape) + bias.reshape(shape)
    count = x.size // x.shape[axis]
    dbias, dweight = dy.sum(axis=axes), (dy * x_hat).sum(axis=axes)
    dx = (weight * invstd).reshape(shape) / count * (count * dy - dbias.reshape(shape) - x_hat * dweight.reshape(shape))
    return y, mean, invstd, dx, dweight, dbias


TOLERANCE = {np.float32: 2e-5, np.float64: 1e-12, np.float16: 4e-3, ml_dtypes.bfloat16: 3e-2}


def _check(shape, axis, dtype, seed=0, transform=None):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(shape) * 2 + 0.5).astype(dtype)
    dy = rng.standard_normal(shape).astype(dtype)
    if transform is not None:
        x, dy = transform(x), transform(dy)
    channels = x.shape[axis]
    weight = rng.standard_normal(channels).astype(dtype)
    bias = rng.standard_normal(channels).astype(dtype)
    y, dx = np.empty(x.shape, dtype), np.empty(x.shape, dtype)
    save_mean, save_invstd = np.empty(channels, dtype), np.empty(channels, dtype)
    running_mean, running_var = np.zeros(channels, dtype), np.ones(channels, dtype)
    dweight, dbias = np.empty(channels, dtype), np.empty(channels, dtype)
    nm.batch_norm_training(x, weight, bias, y, axis, EPS, 0.1, running_mean, running_var, save_mean, save_invstd)
    nm.batch_norm_backward(x, dy, weight, save_mean, save_invstd, dx, dweight, dbias, axis)
    want = reference(x, weight.astype(np.float64), bias.astype(np.float64), dy, axis)
    tolerance = TOLERANCE[dtype]
    for name, got, expected in zip(("y", "mean", "invstd", "dx", "dweight", "dbias"),
                                   (y, save_mean, save_invstd, dx, dweight, dbias), want):
        scale = 1 + np.abs(expected).max()
        np.testing.assert_allclose(got.astype(np.float64), expected, rtol=0, atol=tolerance * scale * 8,
                                   err_msg=name)
    count = x.size // channels
    unbiased = x.astype(np.float64).var(axis=tuple(a for a in range(x.ndim) if a != axis)) * count / (count - 1)
    np.testing.assert_allclose(running_var.astype(np.float64), 0.9 + 0.1 * unbiased, rtol=tolerance * 8)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, ml_dtypes.bfloat16])
@pytest.mark.parametrize("shape, axis", [
    ((4, 3, 5, 6), 1),          # NCHW, small: one block
    ((4, 5, 6, 3), 3),          # NHWC, small
    ((7, 5), 1),                # (N, C)
    ((16, 24, 24, 16), 1),      # NCHW, blocks of channels on the pool
    ((16, 24, 24, 16), 3),      # NHWC, blocks of rows on the pool
    ((3, 9, 40, 40), 1),        # channels not a multiple of the blocks
])
def test_training_and_backward_match_the_reference(shape, axis, dtype, monkeypatch):
    monkeypatch.setattr(nm, "CHANNEL_INLINE_ELEMENTS", 1 << 17)  # the larger shapes here go to the pool
    _check(shape, axis, dtype)


@pytest.mark.parametrize("shape, axis", [((6, 8, 30, 30), 1), ((6, 30, 30, 8), 3)])
def test_non_contiguous_input(shape, axis, monkeypatch):
    monkeypatch.setattr(nm, "CHANNEL_INLINE_ELEMENTS", 1 << 17)
    _check(shape, axis, np.float32, 1, lambda a: np.swapaxes(np.swapaxes(a, 1, 2).copy(), 1, 2))
    _check(shape, axis, np.float32, 2, lambda a: np.repeat(a, 2, axis=0)[::2])


def test_in_place_alpha_beta_and_nan_channel():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 6, 40, 40)).astype(np.float32)
    x[2, 4, 7, 7] = np.nan
    weight, bias = np.ones(6, np.float32), np.zeros(6, np.float32)
    y = rng.standard_normal(x.shape).astype(np.float32)
    plain = np.empty_like(x)
    nm.batch_norm_training(x, weight, bias, plain, 1, EPS, 0.1)
    assert np.isnan(plain[:, 4]).all() and not np.isnan(np.delete(plain, 4, axis=1)).any()
    blended = y.copy()
    nm.batch_norm_training(x, weight, bias, blended, 1, EPS, 0.1, alpha=2.0, beta=0.5)
    np.testing.assert_allclose(blended, 2 * plain + 0.5 * y, rtol=1e-6, atol=1e-6)
    inplace = x.copy()
    nm.batch_norm_training(inplace, weight, bias, inplace, 1, EPS, 0.1)
    np.testing.assert_array_equal(inplace, plain)


def test_empty_batch():
    x = np.empty((0, 4, 3, 3), np.float32)
    running_mean, running_var = np.full(4, 2.0, np.float32), np.full(4, 3.0, np.float32)
    save_mean, save_invstd = np.empty(4, np.float32), np.empty(4, np.float32)
    nm.batch_norm_training(x, np.ones(4, np.float32), np.zeros(4, np.float32), np.empty_like(x), 1, EPS, 0.1,
                           running_mean, running_var, save_mean, save_invstd)
    assert (running_mean == 2).all() and (running_var == 3).all() and (save_mean == 0).all()
    dx, dweight, dbias = np.empty_like(x), np.full(4, 7.0, np.float32), np.full(4, 7.0, np.float32)
    nm.batch_norm_backward(x, x, np.ones(4, np.float32), save_mean, save_invstd, dx, dweight, dbias, 1)
    assert (dweight == 0).all() and (dbias == 0).all()
