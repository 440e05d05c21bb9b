"""The builder's optimizations, each shown to happen (the layers left, the fused kernel's source, the folded
weights, the transposes) and to keep the results: BN and scale folding into conv, conv/matmul + bias + activation
+ residual fusion, elementwise chains in one generated kernel, layout conversion (NCHW -> NHWC inside, the
model's I/O layouts), a transpose of unit axes as a reshape."""
import numpy as np
import pytest
import torch

import magicmind.python.runtime as mm

from .helpers import build, const, run

rng = np.random.default_rng(7)
NO_FUSION = '{"debug_config": {"fusion_enable": false}}'


def _conv_bn_relu_net(with_residual=False):
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims([2, 4, 9, 9]))
    w = rng.standard_normal((6, 4, 3, 3)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    conv = net.add_i_conv_node(x, const(net, w), const(net, b))
    conv.set_pad(1, 1, 1, 1)
    bn = [rng.uniform(0.5, 1.5, 6), rng.uniform(-0.3, 0.3, 6), rng.uniform(-0.5, 0.5, 6), rng.uniform(0.5, 2, 6)]
    scale, shift, mean, var = (np.asarray(v, np.float32) for v in bn)
    y = net.add_i_fused_batch_norm_node(conv.get_output(0), const(net, mean), const(net, var), const(net, scale),
                                        const(net, shift)).get_output(0)
    skip = None
    if with_residual:
        skip_w = rng.standard_normal((6, 4, 1, 1)).astype(np.float32)
        skip = net.add_i_conv_node(x, const(net, skip_w)).get_output(0)
        y = net.add_i_elementwise_node(y, skip, mm.IElementwise.ADD).get_output(0)
    net.mark_output(net.add_i_activation_node(y, mm.IActivation.RELU).get_output(0))

    def reference(data):
        t = torch.nn.functional.conv2d(torch.from_numpy(data), torch.from_numpy(w), torch.from_numpy(b), padding=1)
        t = (t - torch.from_numpy(mean)[:, None, None]) / torch.sqrt(torch.from_numpy(var)[:, None, None] + 1e-5) \
            * torch.from_numpy(scale)[:, None, None] + torch.from_numpy(shift)[:, None, None]
        if with_residual:
            t = t + torch.nn.functional.conv2d(torch.from_numpy(data), torch.from_numpy(skip_w))
        return torch.relu(t).numpy()
    return net, reference, w


def test_batch_norm_folds_into_the_conv_and_relu_joins_its_epilogue():
    net, reference, w = _conv_bn_relu_net()
    model = build(net)
    steps = model.program.steps
    assert [s.op for s in steps] == ["permute", "conv", "permute"]  # NCHW in and out, the layer in NHWC
    info = model.get_build_info()
    assert info["bn_folded"] == 1 and info["epilogue_ops"] == 1 and info["layers"] == 3
    conv = steps[1]
    folded = model.program.values[conv.ins[1]].const
    assert folded.shape == (1, 6, 36) and not np.allclose(folded, w.transpose(0, 2, 3, 1).reshape(1, 6, 36))
    assert [n.get("fn") for n in conv.attrs["epilogue"]["nodes"] if n["op"] != "input"] == ["add", "relu"]
    data = rng.standard_normal((2, 4, 9, 9)).astype(np.float32)
    np.testing.assert_allclose(run(model, [data])[0], reference(data), rtol=1e-4, atol=1e-4)


def test_fusion_off_keeps_every_layer_and_computes_the_same_bits():
    net, reference, _ = _conv_bn_relu_net(with_residual=True)
    fused, unfused = build(net), build(net, NO_FUSION)
    assert [s.op for s in fused.program.steps].count("conv") == 2 and len(fused.program.steps) == 4
    assert fused.get_build_info()["epilogue_ops"] == 2  # the residual add and the relu: in the last conv
    assert [s.op for s in unfused.program.steps].count("binary") == 1 and len(unfused.program.steps) == 6
    data = rng.standard_normal((2, 4, 9, 9)).astype(np.float32)
    got, plain = run(fused, [data])[0], run(unfused, [data])[0]
    np.testing.assert_array_equal(got, plain)
    np.testing.assert_allclose(got, reference(data), rtol=1e-4, atol=1e-4)


def test_per_channel_scales_fold_into_the_conv_unless_conv_scale_fold_is_off():
    def network():
        net = mm.Network()
        x = net.add_input(mm.DataType.FLOAT32, mm.Dims([1, 3, 8, 8]))
        w = np.ones((5, 3, 1, 1), np.float32)
        y = net.add_i_conv_node(x, const(net, w)).get_output(0)
        y = net.add_i_elementwise_node(y, const(net, np.arange(1, 6, dtype=np.float32).reshape(5, 1, 1)),
                                       mm.IElementwise.MUL).get_output(0)
        y = net.add_i_elementwise_node(const(net, np.full((1, 5, 1, 1), 0.5, np.float32)), y,
                                       mm.IElementwise.ADD).get_output(0)
        net.mark_output(y)
        return net
    data = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    want = data.sum(1, keepdims=True) * np.arange(1, 6, dtype=np.float32).reshape(1, 5, 1, 1) + 0.5
    folded = build(network())
    assert folded.get_build_info()["scales_folded"] == 2 and "epilogue" not in folded.program.steps[1].attrs
    kept = build(network(), '{"opt_config": {"conv_scale_fold": false}}')
    assert kept.get_build_info()["scales_folded"] == 0
    assert [n.get("fn") for n in kept.program.steps[1].attrs["epilogue"]["nodes"] if n["op"] != "input"] == \
        ["mul", "add"]
    for model in (folded, kept):
        np.testing.assert_allclose(run(model, [data])[0], want, rtol=1e-5, atol=1e-5)


def test_an_elementwise_chain_is_one_generated_kernel():
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims([3, 1000]))
    bias = net.add_input(mm.DataType.FLOAT32, mm.Dims([1000]))
    y = net.add_i_elementwise_node(x, bias, mm.IElementwise.ADD).get_output(0)
    y = net.add_i_activation_node(y, mm.IActivation.SIGMOID).get_output(0)
    y = net.add_i_elementwise_node(y, x, mm.IElementwise.MUL).get_output(0)
    y = net.add_i_activation_node(y, mm.IActivation.TANH).get_output(0)
    net.mark_output(y)
    model = build(net)
    (step,) = model.program.steps
    assert step.op == "fused" and model.get_build_info()["fused_ops"] == 3
    from magicmind.graph import ops as O
    from magicmind.graph.ops import Info
    source = O.get("fused").prepare(step.attrs, [Info((3, 1000), np.float32), Info((1000,), np.float32)],
                                    [Info((3, 1000), np.float32)]).source
    assert "math.exp" in source and "math.tanh" in source and source.count("for ") == 2  # one pass, 2 loops
    a = rng.standard_normal((3, 1000)).astype(np.float32)
    b = rng.standard_normal(1000).astype(np.float32)
    want = np.tanh(a / (1 + np.exp(-(a + b))))
    np.testing.assert_allclose(run(model, [a, b])[0], want, rtol=1e-6, atol=1e-6)
    # exp and tanh are numba's (the C library's) here and numpy's one by one: they may differ in the last ulp
    np.testing.assert_allclose(run(model, [a, b])[0], run(build(net, NO_FUSION), [a, b])[0], rtol=4e-7, atol=0)


def test_matmul_bias_and_gelu_are_one_layer():
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims([-1, 8]))
    w = rng.standard_normal((8, 16)).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    h = net.add_i_matmul_node(x, const(net, w)).get_output(0)
    h = net.add_i_elementwise_node(h, const(net, b), mm.IElementwise.ADD).get_output(0)
    net.mark_output(net.add_i_activation_node(h, mm.IActivation.GELU).get_output(0))
    model = build(net, '{"graph_shape_mutable": true}')
    (step,) = model.program.steps
    assert step.op == "matmul" and [n.get("fn") for n in step.attrs["epilogue"]["nodes"] if n["op"] != "input"] \
        == ["add", "gelu"]
    data = rng.standard_normal((5, 8)).astype(np.float32)
    want = torch.nn.functional.gelu(torch.from_numpy(data @ w + b)).numpy()
    np.testing.assert_allclose(run(model, [data])[0], want, rtol=1e-5, atol=1e-5)


def _conv_net(shape=(1, 3, 6, 6)):
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims(list(shape)))
    w1 = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((2, 4, 1, 1)).astype(np.float32)
    c1 = net.add_i_conv_node(x, const(net, w1))
    c1.set_pad(1, 1, 1, 1)
    h = net.add_i_activation_node(c1.get_output(0), mm.IActivation.RELU).get_output(0)
    net.mark_output(net.add_i_conv_node(h, const(net, w2)).get_output(0))

    def reference(data):
        t = torch.relu(torch.nn.functional.conv2d(torch.from_numpy(data), torch.from_numpy(w1), padding=1))
        return torch.nn.functional.conv2d(t, torch.from_numpy(w2)).numpy()
    return net, reference


def test_layout_conversion_runs_the_convs_in_nhwc_with_one_transpose_at_each_end():
    net, reference = _conv_net()
    model = build(net)
    ops = [s.op for s in model.program.steps]
    assert ops == ["permute", "conv", "conv", "permute"]
    assert all(s.attrs.get("layout") == "NHWC" for s in model.program.steps if s.op == "conv")
    assert model.get_build_info()["transposes"] == 2
    data = rng.standard_normal((1, 3, 6, 6)).astype(np.float32)
    np.testing.assert_allclose(run(model, [data])[0], reference(data), rtol=1e-4, atol=1e-4)


def test_converted_io_layouts_need_no_transpose_and_dim_range_is_given_in_nchw():
    net, reference = _conv_net((-1, 3, 6, 6))
    model = build(net, ['{"convert_input_layout": {"0": {"src": "NCHW", "dst": "NHWC"}}}',
                        '{"convert_output_layout": {"0": {"src": "NCHW", "dst": "NHWC"}}}',
                        '{"graph_shape_mutable": true}',
                        '{"dim_range": {"0": {"min": [1, 3, 6, 6], "max": [4, 3, 6, 6]}}}'])
    assert [s.op for s in model.program.steps] == ["conv", "conv"]
    assert model.get_input_dimensions()[0].GetDims() == [-1, 6, 6, 3]
    assert model.get_output_dimensions()[0].GetDims() == [-1, 6, 6, 2]
    data = rng.standard_normal((3, 3, 6, 6)).astype(np.float32)
    got = run(model, [np.ascontiguousarray(data.transpose(0, 2, 3, 1))])[0]
    np.testing.assert_allclose(got, reference(data).transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)
    context = model.create_i_engine().create_i_context()
    inputs = context.create_inputs()
    inputs[0].from_numpy(np.zeros((5, 6, 6, 3), np.float32))
    assert context.enqueue(inputs, [], mm.Device().create_queue()).code() == mm.Code.OUT_OF_RANGE


def test_a_transpose_of_unit_axes_is_a_reshape():
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims([2, 3, 5, 5]))
    c = net.add_i_conv_node(x, const(net, rng.standard_normal((8, 3, 3, 3)).astype(np.float32))).get_output(0)
    pooled = net.add_i_pool2d_node(c, mm.IPoolingMode.AVERAGE_COUNT_EXCLUDE_PADDING, (3, 3)).get_output(0)  # (2, 8, 1, 1)
    flat = net.add_i_reshape_node(pooled, const(net, np.array([2, 8], np.int64))).get_output(0)
    net.mark_output(flat)
    model = build(net)
    info = model.get_build_info()
    assert info["view_transposes"] == 1 and info["transposes"] == 1
    assert [s.op for s in model.program.steps] == ["permute", "conv", "pool", "reshape", "reshape"]
    data = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    unfused = build(net, NO_FUSION)
    np.testing.assert_allclose(run(model, [data])[0], run(unfused, [data])[0], rtol=1e-6, atol=1e-6)


def test_insert_bn_before_firstnode_takes_uint8_input_in_nhwc():
    net, reference = _conv_net((1, 3, 6, 6))
    mean, var = [120.0, 110.0, 100.0], [3600.0, 2500.0, 1600.0]
    model = build(net, ['{"insert_bn_before_firstnode": {"0": {"mean": %s, "var": %s}}}' % (mean, var),
                        '{"convert_input_layout": {"0": {"src": "NCHW", "dst": "NHWC"}}}'])
    assert model.get_input_data_types() == [mm.DataType.UINT8]
    assert model.get_input_dimensions()[0].GetDims() == [1, 6, 6, 3]
    assert [s.op for s in model.program.steps] == ["fused", "conv", "conv", "permute"]  # cast, sub, mul: 1 kernel
    pixels = rng.integers(0, 256, (1, 6, 6, 3), dtype=np.uint8)
    normalized = ((pixels.astype(np.float32) - np.float32(mean)) / np.sqrt(np.float32(var))).transpose(0, 3, 1, 2)
    np.testing.assert_allclose(run(model, [pixels])[0], reference(np.ascontiguousarray(normalized)), rtol=1e-4,
                               atol=1e-4)
    config = mm.BuilderConfig()
    assert config.parse_from_string('{"insert_bn_before_firstnode": {"0": {"mean": [1, 2], "var": [1, 1]}}}').ok()
    builder = mm.Builder()
    assert builder.build_model("bad", net, config) is None and "2 channels" in str(builder.last_status)
