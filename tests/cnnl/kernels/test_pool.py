"""Max pooling with indices and its backward in NCHW memory (the layout torch tensors give the kernels, seen
channel-last) against direct numpy references: the first maximum in window order wins, NaN wins when propagated
and is skipped otherwise, padding never wins; the backward sums the gradients of overlapping windows into the
positions their indices name and refuses an index outside the plane."""
import numpy as np
import pytest

from cnnl.kernels import pool as P
from cnnl.kernels.pool import operands as pool_operands


def _channel_last(values):
    """An (N, C, H, W) array's memory seen as (N, H, W, C)."""
    return np.moveaxis(values, 1, -1)


def reference_max(x, kernel, stride, pad, ceil_mode, propagate_nan):
    n, c, h, w = x.shape
    oh = P.pooled_extent(h, kernel, pad, pad, stride, 1, ceil_mode)
    ow = P.pooled_extent(w, kernel, pad, pad, stride, 1, ceil_mode)
    y = np.empty((n, c, oh, ow), x.dtype)
    index = np.empty((n, c, oh, ow), np.int64)
    for i in range(oh):
        for j in range(ow):
            rows = [a for a in range(i * stride - pad, i * stride - pad + kernel) if 0 <= a < h]
            cols = [b for b in range(j * stride - pad, j * stride - pad + kernel) if 0 <= b < w]
            for p in range(n):
                for q in range(c):
                    best, where = None, None
                    for a in rows:
                        for b in cols:
                            v = x[p, q, a, b]
                            if best is None:
                                best, where = v, a * w + b
                            elif propagate_nan and np.isnan(v):  # every NaN wins: the last one's index (torch)
                                best, where = v, a * w + b
                            elif not propagate_nan and np.isnan(best) and not np.isnan(v):
                                best, where = v, a * w + b
                            elif v > best:
                                best, where = v, a * w + b
                    y[p, q, i, j], index[p, q, i, j] = best, where
    return y, index


@pytest.mark.parametrize("kernel, stride, pad, ceil_mode", [(2, 2, 0, False), (3, 2, 1, False), (3, 2, 1, True),
                                                            (2, 1, 0, False)])
@pytest.mark.parametrize("propagate_nan", [True, False])
def test_max_pool_with_index_in_nchw_memory(kernel, stride, pad, ceil_mode, propagate_nan):
    rng = np.random.default_rng(kernel * 10 + stride)
    x = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    x[0, 0, :3, :3] = np.nan
    x[1, 1, 4, 4] = np.nan
    x[1, 2] = np.round(x[1, 2])  # ties: the first maximum wins
    want_y, want_index = reference_max(x, kernel, stride, pad, ceil_mode, propagate_nan)
    y, index = np.empty_like(want_y), np.empty_like(want_index)
    windows = P.Windows((9, 8), want_y.shape[2:], (kernel, kernel), (stride, stride), (1, 1), [(pad, pad)] * 2)
    P.max_pool_forward(_channel_last(x), _channel_last(y), windows, _channel_last(index), propagate_nan)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(index, want_index)


@pytest.mark.parametrize("alpha, beta", [(1.0, 0.0), (2.0, 0.5)])
def test_max_pool_backward_sums_overlapping_windows(alpha, beta):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    y, index = reference_max(x, 3, 1, 1, False, True)  # overlapping windows: inputs chosen several times
    dy = rng.standard_normal(y.shape).astype(np.float32)
    old = rng.standard_normal(x.shape).astype(np.float32)
    want = beta * old.astype(np.float64)
    for p, q, i, j in np.ndindex(*y.shape):
        a, b = divmod(index[p, q, i, j], 8)
        want[p, q, a, b] += alpha * dy[p, q, i, j]
    dx = old.copy()
    P.max_pool_backward(_channel_last(dy), _channel_last(index), _channel_last(dx), alpha, beta)
    np.testing.assert_allclose(dx, want, rtol=1e-6, atol=1e-6)


def test_max_pool_backward_refuses_an_index_outside_the_plane():
    dy = np.ones((1, 2, 2, 2), np.float32)
    index = np.zeros((1, 2, 2, 2), np.int64)
    index[0, 1, 1, 1] = 16  # the plane is 4x4
    with pytest.raises(ValueError, match="outside the input plane"):
        P.max_pool_backward(_channel_last(dy), _channel_last(index), _channel_last(np.zeros((1, 2, 4, 4),
                                                                                            np.float32)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("propagate_nan", [True, False])
@pytest.mark.parametrize("height, width", [(8, 64), (6, 9), (16, 16), (3, 34)])
def test_two_by_two_windows_take_the_general_paths_winners(monkeypatch, dtype, propagate_nan, height, width):
    """max_pool2d(x, 2) in NCHW memory reads its four taps without the tap tables: the same values and indices as
    the general kernel, ties (the first tap wins, -0.0 against 0.0), several NaN in a window and -inf included."""
    rng = np.random.default_rng(4)
    values = rng.integers(-2, 3, size=(3, 5, height, width)).astype(dtype)
    values[rng.random(values.shape) < 0.1] = np.nan
    values[rng.random(values.shape) < 0.1] = -np.inf
    values[rng.random(values.shape) < 0.1] = -0.0
    x = np.moveaxis(values, 1, -1)
    windows = P.Windows((height, width), (height // 2, width // 2), (2, 2), (2, 2), (1, 1), ((0, 0), (0, 0)))
    assert all(axis.is_pairs() for axis in windows.axes())

    def pooled():
        out = np.moveaxis(np.full((3, 5, height // 2, width // 2), 7, dtype), 1, -1)
        index = np.moveaxis(np.full((3, 5, height // 2, width // 2), -1, np.int64), 1, -1)
        P.max_pool_forward(x, out, windows, index, propagate_nan=propagate_nan)
        return out, index

    fast = pooled()
    monkeypatch.setattr(P.TapAxis, "is_pairs", lambda self: False)
    general = pooled()
    assert np.array_equal(fast[0].view(f"u{fast[0].itemsize}"), general[0].view(f"u{fast[0].itemsize}"))
    np.testing.assert_array_equal(fast[1], general[1])


@pytest.mark.parametrize("blocked", [False, True])
def test_max_pool_and_its_backward_give_the_same_bits_in_blocks_on_the_pool(monkeypatch, blocked):
    """Small problems run in one block on the calling thread, larger ones in blocks of output rows (planes for
    the backward) shared out over the pool: both against the reference, forward and backward."""
    from mlusim.host import threads as host_threads
    monkeypatch.setattr(host_threads, "_cores", 2)
    if blocked:
        monkeypatch.setattr(pool_operands, "INLINE_ELEMENTS", 0)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 5, 9, 8)).astype(np.float32)
    x[2, 4, 1, 1] = np.nan
    want_y, want_index = reference_max(x, 3, 2, 1, True, True)
    y, index = np.empty_like(want_y), np.empty_like(want_index)
    windows = P.Windows((9, 8), want_y.shape[2:], (3, 3), (2, 2), (1, 1), [(1, 1)] * 2)
    P.max_pool_forward(_channel_last(x), _channel_last(y), windows, _channel_last(index), True)
    np.testing.assert_array_equal(y, want_y)
    np.testing.assert_array_equal(index, want_index)
    dy = rng.standard_normal(y.shape).astype(np.float32)
    want = np.zeros(x.shape)
    for p, q, i, j in np.ndindex(*y.shape):
        a, b = divmod(index[p, q, i, j], 8)
        want[p, q, a, b] += dy[p, q, i, j]
    dx = np.full(x.shape, np.nan, np.float32)
    P.max_pool_backward(_channel_last(dy), _channel_last(index), _channel_last(dx))
    np.testing.assert_allclose(dx, want, rtol=1e-6, atol=1e-6)
