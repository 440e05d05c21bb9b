"""The convolution kernels (cnnl/kernels/conv/) against a float64 direct-summation reference: forward, data
gradient and filter gradient for 1 to 3 spatial axes, groups, strides, dilations, asymmetric pads,
in channel-last, channel-first (NCHW memory seen channel-last, the API layer's view) and non-dense memory; the
contiguous-run path of stride-1 "same" convolutions and the thread-pool path of large problems."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from cnnl.kernels import conv
from cnnl.kernels.conv import geometry as conv_geometry


def _extent(n, before, after, k, s, d):
    return (n + before + after - d * (k - 1) - 1) // s + 1


def _windows(x_shape, w_shape, pads, strides, dilations):
    """(output spatial shape, [(kernel position, window slices of the padded input)])."""
    out = tuple(_extent(n, b, a, k, s, d) for n, (b, a), k, s, d in zip(x_shape[1:-1], pads, w_shape[1:-1], strides,
                                                                        dilations))
    positions = []
    for position in itertools.product(*[range(k) for k in w_shape[1:-1]]):
        positions.append((position, tuple(slice(p * d, p * d + s * (o - 1) + 1, s)
                                          for p, d, s, o in zip(position, dilations, strides, out))))
    return out, positions


def reference(x, w, dy, pads, strides, dilations, groups):
    """float64 (y, dx, dw) of y = conv(x, w) and the gradients of sum(y * dy)."""
    x, w, dy = x.astype(np.float64), w.astype(np.float64), dy.astype(np.float64)
    out, positions = _windows(x.shape, w.shape, pads, strides, dilations)
    padded = np.pad(x, [(0, 0)] + list(pads) + [(0, 0)])
    grad_padded = np.zeros_like(padded)
    per_group, out_per_group = w.shape[-1], w.shape[0] // groups
    y = np.zeros((x.shape[0],) + out + (w.shape[0],))
    dw = np.zeros_like(w)
    for g in range(groups):
        gi, go = slice(g * per_group, (g + 1) * per_group), slice(g * out_per_group, (g + 1) * out_per_group)
        for position, window in positions:
            index = (slice(None),) + window + (gi,)
            taps = w[(go,) + position]  # (Co_g, C_g)
            y[..., go] += padded[index] @ taps.T
            grad_padded[index] += dy[..., go] @ taps
            dw[(go,) + position] += dy[..., go].reshape(-1, out_per_group).T @ padded[index].reshape(-1, per_group)
    inner = (slice(None),) + tuple(slice(b, b + n) for n, (b, _) in zip(x.shape[1:-1], pads)) + (slice(None),)
    return y, grad_padded[inner], dw


def _in_memory(values, memory):
    """A (N, *S, C) view of `values` whose memory is channel-last, channel-first, or not dense (every other
    element of a larger array)."""
    if memory == "channel_last":
        return np.ascontiguousarray(values)
    if memory == "channel_first":
        return np.moveaxis(np.ascontiguousarray(np.moveaxis(values, -1, 1)), 1, -1)
    wide = np.zeros(values.shape[:-1] + (2 * values.shape[-1],), values.dtype)
    wide[..., ::2] = values
    return wide[..., ::2]


def _run(x, w, dy, pads, strides, dilations, groups, memory, dtype):
    x, w, dy = (_in_memory(a.astype(dtype), memory) for a in (x, w, dy))
    y = _in_memory(np.full(dy.shape, np.nan, dtype), memory)
    dx = _in_memory(np.full(x.shape, np.nan, dtype), memory)
    dw = _in_memory(np.full(w.shape, np.nan, dtype), memory)
    conv.conv_forward(x, w, y, pads, strides, dilations, groups)
    conv.conv_backward_data(dy, w, dx, pads, strides, dilations, groups)
    conv.conv_backward_filter(x, dy, dw, pads, strides, dilations, groups)
    return y, dx, dw


def _check(rng, batch, spatial, channels, out_channels, kernel, pads, strides, dilations, groups, memory,
           dtype=np.float32):
    x = rng.standard_normal((batch,) + spatial + (channels,))
    w = rng.standard_normal((out_channels,) + kernel + (channels // groups,))
    out = tuple(_extent(n, b, a, k, s, d) for n, (b, a), k, s, d in zip(spatial, pads, kernel, strides, dilations))
    dy = rng.standard_normal((batch,) + out + (out_channels,))
    want = reference(x, w, dy, pads, strides, dilations, groups)
    got = _run(x, w, dy, pads, strides, dilations, groups, memory, dtype)
    tolerance = 1e-4 if dtype == np.float32 else 1e-11
    for name, g, r in zip(("y", "dx", "dw"), got, want):
        scale = 1 + np.abs(r).max()
        np.testing.assert_allclose(g, r, rtol=0, atol=tolerance * scale * 10, err_msg=name)


MEMORIES = ["channel_last", "channel_first", "strided"]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_kernels_match_the_reference(data):
    rank = data.draw(st.integers(1, 3), label="rank")
    groups = data.draw(st.sampled_from([1, 2]), label="groups")
    channels = groups * data.draw(st.integers(1, 3))
    out_channels = groups * data.draw(st.integers(1, 3))
    kernel = tuple(data.draw(st.integers(1, 3)) for _ in range(rank))
    dilations = tuple(data.draw(st.integers(1, 2)) for _ in range(rank))
    pads = tuple((data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))) for _ in range(rank))
    strides = tuple(data.draw(st.integers(1, 3)) for _ in range(rank))
    spatial = tuple(data.draw(st.integers(max(1, d * (k - 1) + 1 - b - a), 7))
                    for k, d, (b, a) in zip(kernel, dilations, pads))
    memory = data.draw(st.sampled_from(MEMORIES), label="memory")
    dtype = data.draw(st.sampled_from([np.float32, np.float64]), label="dtype")
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    _check(rng, data.draw(st.integers(1, 3)), spatial, channels, out_channels, kernel, pads, strides, dilations,
           groups, memory, dtype)


@pytest.mark.parametrize("memory", MEMORIES)
@pytest.mark.parametrize("kernel, pads, dilations", [
    ((3, 3), ((1, 1), (1, 1)), (1, 1)),      # "same": the contiguous-run path in channel-first memory
    ((5, 3), ((2, 2), (1, 1)), (1, 1)),
    ((3, 3), ((2, 2), (2, 2)), (2, 2)),      # dilated "same"
    ((1, 3), ((0, 0), (1, 1)), (1, 1)),
    ((3, 3), ((1, 2), (2, 0)), (1, 1)),      # as wide as the input, asymmetric
])
def test_stride_one_same_convolutions(memory, kernel, pads, dilations):
    _check(np.random.default_rng(1), 3, (6, 5), 4, 5, kernel, pads, (1, 1), dilations, 1, memory)


@pytest.mark.parametrize("memory", ["channel_last", "channel_first"])
def test_large_problem_on_the_thread_pool(memory):
    """Enough work for blocks of lines on the pool; a 3-D convolution of depth 1 with depth padding too."""
    rng = np.random.default_rng(2)
    _check(rng, 4, (20, 18), 8, 12, (3, 3), ((1, 1), (1, 1)), (1, 1), (1, 1), 2, memory)
    _check(rng, 2, (1, 14, 16), 6, 7, (3, 3, 3), ((1, 1), (1, 1), (1, 1)), (1, 1, 1), (1, 1, 1), 1, memory)


def test_nan_and_inf_reach_only_their_windows():
    """A NaN in x makes NaN exactly the outputs whose windows hold it; padding is never read as NaN."""
    x = np.zeros((1, 5, 5, 1), np.float32)
    x[0, 0, 0, 0] = np.nan
    w = np.ones((1, 3, 3, 1), np.float32)
    y = np.empty((1, 5, 5, 1), np.float32)
    conv.conv_forward(np.moveaxis(np.ascontiguousarray(np.moveaxis(x, -1, 1)), 1, -1), w, y, ((1, 1), (1, 1)),
                      (1, 1), (1, 1), 1)
    assert np.isnan(y[0, :2, :2, 0]).all()
    assert not np.isnan(y[0, 2:, :, 0]).any() and not np.isnan(y[0, :, 2:, 0]).any()


@pytest.mark.parametrize("memory", MEMORIES)
@pytest.mark.parametrize("groups", [1, 2])
def test_bias_is_added_to_every_output(memory, groups):
    """alpha 1, beta 0: the bias is added block by block; a block as long as it is wide (positions == channels)
    must not broadcast it along the wrong axis."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 2, 2, 4))
    w = rng.standard_normal((4, 1, 1, 4 // groups))
    bias = rng.standard_normal(4)
    want = reference(x, w, np.zeros((2, 2, 2, 4)), ((0, 0), (0, 0)), (1, 1), (1, 1), groups)[0] + bias
    for strides in ((1, 1), (2, 1)):
        xs = x[:, ::strides[0]] if strides[0] > 1 else x  # a strided input: the column path, not the 1x1 GEMM
        y = _in_memory(np.full(xs.shape[:-1] + (4,), np.nan, np.float32), memory)
        conv.conv_forward(_in_memory(xs.astype(np.float32), memory), _in_memory(w.astype(np.float32), memory), y,
                          ((0, 0), (0, 0)), (1, 1), (1, 1), groups, bias=bias.astype(np.float32))
        np.testing.assert_allclose(y, want[:, ::strides[0]], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("memory", MEMORIES)
def test_wide_layers_take_one_whole_batch_gemm(memory):
    """More than WIDE_CHANNELS output channels: the whole batch's im2col matrix and one GEMM per direction."""
    assert conv_geometry.WIDE_CHANNELS < 130
    _check(np.random.default_rng(6), 3, (5, 4), 3, 130, (3, 3), ((1, 1), (0, 1)), (1, 2), (1, 1), 1, memory)
    _check(np.random.default_rng(7), 2, (9, 9), 4, 132, (3, 3), ((1, 1), (1, 1)), (1, 1), (1, 1), 1, memory)
    rng = np.random.default_rng(8)
    x, w, bias = rng.standard_normal((2, 6, 5, 3)), rng.standard_normal((140, 3, 3, 3)), rng.standard_normal(140)
    want = reference(x, w, np.zeros((2, 6, 5, 140)), ((1, 1), (1, 1)), (1, 1), (1, 1), 1)[0] + bias
    y = _in_memory(np.full((2, 6, 5, 140), np.nan, np.float32), memory)
    conv.conv_forward(_in_memory(x.astype(np.float32), memory), _in_memory(w.astype(np.float32), memory), y,
                      ((1, 1), (1, 1)), (1, 1), (1, 1), 1, bias=bias.astype(np.float32))
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("strides, dilations", [((1, 1), (1, 1)), ((2, 1), (1, 2))])
def test_samples_above_the_matrix_limit_go_by_blocks_of_lines(monkeypatch, strides, dilations):
    """Channel-first memory, one group, samples whose im2col matrix is above SAMPLE_MATRIX_LIMIT_BYTES: no runs of
    whole samples; each sample is cut into blocks of lines (forward, data and filter gradients)."""
    from mlusim.host import threads as host_threads
    monkeypatch.setattr(host_threads, "_cores", 2)
    monkeypatch.setattr(conv_geometry, "INLINE_COLUMN_ELEMENTS", 0)
    monkeypatch.setattr(conv_geometry, "SAMPLE_MATRIX_LIMIT_BYTES", 64)
    monkeypatch.setattr(conv_geometry, "COLUMN_BLOCK_BYTES", 3 * 3 * 4 * 8 * 4 * 2)  # two output lines per block
    monkeypatch.setattr(conv_geometry, "MIN_BLOCK_POSITIONS", 1)
    geometry = conv_geometry.Geometry((5, 9, 8, 4), (9, 8), (3, 3), ((1, 1), (1, 1)), (1, 1), (1, 1), 1)
    assert conv_geometry.sample_runs(geometry, 4) is None
    assert len(geometry.units(4, split=True)) == 5 * 5  # 9 lines in blocks of 2
    _check(np.random.default_rng(10), 5, (9, 8), 4, 6, (3, 3), ((1, 1), (1, 1)), strides, dilations, 1,
           "channel_first")


@pytest.mark.parametrize("strides, dilations", [((1, 1), (1, 1)), ((2, 1), (1, 2))])
def test_runs_of_whole_samples_on_the_pool(monkeypatch, strides, dilations):
    """Channel-first memory, one group, small samples: the batch goes by runs of whole samples (one gather and one
    batched GEMM per run), uneven runs shared out over the pool; the bias is added to each run's outputs."""
    from mlusim.host import threads as host_threads
    monkeypatch.setattr(host_threads, "_cores", 2)
    monkeypatch.setattr(conv_geometry, "INLINE_COLUMN_ELEMENTS", 0)
    rng = np.random.default_rng(9)
    sample_bytes = 3 * 3 * 4 * 7 * 8 * 4  # (K * C, L) float32 of one sample at stride 1
    monkeypatch.setattr(conv_geometry, "SAMPLE_RUN_BYTES", 3 * sample_bytes)
    _check(rng, 37, (7, 8), 4, 5, (3, 3), ((1, 1), (1, 1)), strides, dilations, 1, "channel_first")
    x, w, bias = rng.standard_normal((37, 7, 8, 4)), rng.standard_normal((5, 3, 3, 4)), rng.standard_normal(5)
    geometry = conv_geometry.Geometry(x.shape, (7, 8), (3, 3), ((1, 1), (1, 1)), (1, 1), (1, 1), 1)
    assert len(conv_geometry.sample_runs(geometry, 4)) > 8  # several runs per thread
    want = reference(x, w, np.zeros((37, 7, 8, 5)), ((1, 1), (1, 1)), (1, 1), (1, 1), 1)[0] + bias
    y = _in_memory(np.full((37, 7, 8, 5), np.nan, np.float32), "channel_first")
    conv.conv_forward(_in_memory(x.astype(np.float32), "channel_first"), w.astype(np.float32), y, ((1, 1), (1, 1)),
                      (1, 1), (1, 1), 1, bias=bias.astype(np.float32))
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
