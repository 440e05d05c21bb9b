"""MagicMind's own kernels: the conv and matmul layers (float against torch CPU, quantized against exact integer
arithmetic) and the elementwise code generator (broadcast patterns, 16-bit rounding, NaN)."""
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from magicmind.kernels import codegen
from magicmind.kernels.codegen import Elementwise, ExpressionBuilder, bias_epilogue, collapse
from magicmind.kernels.conv import Conv, Quantization, pack_weights
from magicmind.kernels.matmul import MatMul

rng = np.random.default_rng(11)


def _conv(x, w, b, stride, pad, dilation, groups, quant=None):
    """Our conv of NCHW-style operands (run channel-last), as NC<spatial>."""
    spatial = x.ndim - 2
    xc = np.ascontiguousarray(np.moveaxis(x, 1, -1))
    out_spatial = [(n + 2 * pad - dilation * (k - 1) - 1) // stride + 1 for n, k in zip(x.shape[2:], w.shape[2:])]
    out = np.empty((x.shape[0],) + tuple(out_spatial) + (w.shape[0],), np.float32)
    layer = Conv(xc.shape, w.shape[2:], w.shape[0], groups, (stride,) * spatial, ((pad, pad),) * spatial,
                 (dilation,) * spatial, out.shape, bias_epilogue(np.float32, np.float32), [(w.shape[0],)], quant)
    layer(xc, pack_weights(w, groups), [b], out)
    return np.moveaxis(out, -1, 1)


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 2), cin=st.integers(1, 3), cout=st.integers(1, 3), groups=st.sampled_from([1, 2, 3]),
       size=st.integers(3, 9), k=st.integers(1, 3), stride=st.integers(1, 2), pad=st.integers(0, 2),
       dilation=st.integers(1, 2), spatial=st.sampled_from([1, 2, 3]))
def test_conv_matches_torch_on_any_geometry(batch, cin, cout, groups, size, k, stride, pad, dilation, spatial):
    cin, cout = cin * groups, cout * groups
    if size + 2 * pad < dilation * (k - 1) + 1:
        return
    x = rng.standard_normal((batch, cin) + (size,) * spatial).astype(np.float32)
    w = rng.standard_normal((cout, cin // groups) + (k,) * spatial).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)
    fn = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d, 3: torch.nn.functional.conv3d}[spatial]
    want = fn(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), stride, pad, dilation, groups).numpy()
    np.testing.assert_allclose(_conv(x, w, b, stride, pad, dilation, groups), want, rtol=1e-4, atol=1e-4)


def test_depthwise_pointwise_and_wide_paths_match_torch():
    for (c, co, k, groups, pad, size) in [(16, 16, 3, 16, 1, 12), (64, 160, 1, 1, 0, 20), (8, 200, 3, 1, 1, 14)]:
        x = rng.standard_normal((2, c, size, size)).astype(np.float32)
        w = rng.standard_normal((co, c // groups, k, k)).astype(np.float32)
        b = rng.standard_normal(co).astype(np.float32)
        want = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), torch.from_numpy(b), 1, pad, 1,
                                          groups).numpy()
        np.testing.assert_allclose(_conv(x, w, b, 1, pad, 1, groups), want, rtol=1e-4, atol=2e-4)


@pytest.mark.parametrize("bits, zero, channels", [(8, 0, 24), (8, 0, 600), (8, 7, 200), (16, 0, 40)])
def test_quantized_conv_is_exact_integer_arithmetic(bits, zero, channels):
    """600 channels x 9 taps = 5400 terms: more than one exact float32 chunk (int8 sums are chunked)."""
    x = rng.standard_normal((1, channels, 6, 6)).astype(np.float32)
    w = rng.integers(-127, 128, (8, channels, 3, 3)).astype(np.float32)
    quant = Quantization(bits, float(np.abs(x).max()) / ((1 << (bits - 1)) - 1), zero)
    got = _conv(x, w, np.zeros(8, np.float32), 1, 1, 1, 1, quant)
    q = np.clip(np.rint(x.astype(np.float64) * quant.inverse) + zero, quant.qmin, quant.qmax) - zero
    want = torch.nn.functional.conv2d(torch.from_numpy(q.astype(np.int64)), torch.from_numpy(w.astype(np.int64)),
                                      padding=1).numpy()  # integer convolution, exact
    np.testing.assert_array_equal(got, want.astype(np.float32))
    assert quant.qmax == (255 if zero else (1 << (bits - 1)) - 1)


@pytest.mark.parametrize("a_shape, b_shape, trans_a, trans_b", [
    ((7, 5), (5, 3), False, False), ((300, 64), (64, 96), False, False), ((2, 4, 6, 5), (2, 4, 5, 3), False, False),
    ((3, 5, 6), (6,), False, False), ((6,), (2, 6, 4), False, False), ((5, 7), (3, 5), True, True),
    ((2, 1, 4, 5), (3, 5, 2), False, False)])
def test_matmul_follows_numpy_semantics(a_shape, b_shape, trans_a, trans_b):
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    ta = a.swapaxes(-1, -2) if trans_a else a
    tb = b.swapaxes(-1, -2) if trans_b else b
    want = np.matmul(ta, tb)
    out = np.empty(want.shape, np.float32)
    MatMul(a_shape, b_shape, trans_a, trans_b, want.shape, bias_epilogue(None, np.float32), [])(a, b, [], out)
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_quantized_matmul_is_exact_and_the_epilogue_dequantizes():
    a = rng.standard_normal((40, 3000)).astype(np.float32)
    w = rng.integers(-127, 128, (3000, 16)).astype(np.int8)
    quant = Quantization(8, float(np.abs(a).max()) / 127)
    scale = np.full((1, 16), quant.scale * 0.01, np.float32)
    build = ExpressionBuilder()
    build.node("binary", [build.input(0, np.float32), build.input(1, np.float32)], np.float32, fn="mul")
    out = np.empty((40, 16), np.float32)
    MatMul(a.shape, w.shape, False, False, out.shape, build.expression(), [scale.shape], quant, None,
           b_integer=True, constant_b=True)(a, w, [scale], out)
    q = np.clip(np.rint(a.astype(np.float64) * quant.inverse), -127, 127).astype(np.int64)
    want = (q @ w.astype(np.int64)).astype(np.float32) * scale
    np.testing.assert_array_equal(out, want)


def test_collapse_merges_axes_and_marks_broadcasts():
    dims, flags, strides = collapse((2, 3, 4, 5), [(2, 3, 4, 5), (1, 3, 1, 1), ()])
    assert dims == [2, 3, 20] and flags == ["fff", "bfb", "bbb"]
    assert strides[0] == [60, 20, 1] and strides[1] == [0, 1, 0] and strides[2] == [0, 0, 0]
    dims, flags, _ = collapse((2, 3, 4, 5), [(2, 3, 4, 5), (5,)])  # a last-axis vector splits the last two axes
    assert dims == [24, 5] and flags == ["ff", "bf"]
    assert collapse((4, 1, 6), [(4, 1, 6)])[0] == [24]


def test_a_float16_chain_rounds_each_node_into_half_and_keeps_nan():
    build = ExpressionBuilder()
    x = build.input(0, np.float16)
    y = build.node("binary", [x, build.input(1, np.float16)], np.float16, fn="mul")
    z = build.node("unary", [y], np.float16, fn="relu")
    build.node("binary", [z, x], np.float16, fn="add")
    a = np.array([1.0009765625, 300.0, np.nan, -2.0, 60000.0, -0.0], np.float16)
    b = np.array([1.0009765625, 300.0, 1.0, 3.0, 2.0, 1.0], np.float16)
    out = np.empty_like(a)
    Elementwise(build.expression(), [a.shape, b.shape], a.shape)([a, b], out)
    with np.errstate(all="ignore"):
        step = np.maximum(a * b, np.float16(0))   # numpy one by one, each result stored in half
        step = np.where(np.isnan(a * b), a * b, step)
        want = step + a
    np.testing.assert_array_equal(out.view(np.uint16), want.view(np.uint16))


def test_generated_kernels_are_cached_on_disk(tmp_path, monkeypatch):
    monkeypatch.setenv("MLUSIM_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(codegen, "_kernels", {})
    build = ExpressionBuilder()
    build.node("unary", [build.input(0, np.float32)], np.float32, fn="sin")
    kernel = Elementwise(build.expression(), [(3, 1000)], (3, 1000))
    x = rng.standard_normal((3, 1000)).astype(np.float32)
    out = np.empty_like(x)
    kernel([x], out)
    np.testing.assert_allclose(out, np.sin(x), rtol=1e-6, atol=1e-7)
    written = list(tmp_path.rglob("k*.py"))
    assert len(written) == 1 and "math.sin" in written[0].read_text()
