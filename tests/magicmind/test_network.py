"""Networks built node by node (the add_i_*_node family) run on the simulator, against numpy / torch CPU."""
import numpy as np
import pytest
import torch

import magicmind.python.runtime as mm

from .helpers import build, const, run

rng = np.random.default_rng(0)


def test_small_cnn_against_torch():
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims([2, 3, 16, 16]))
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(8).astype(np.float32)
    conv = net.add_i_conv_node(x, const(net, w), const(net, b))
    assert conv.set_pad(1, 1, 1, 1).ok() and conv.set_stride(2, 2).ok()
    relu = net.add_i_activation_node(conv.get_output(0), mm.IActivation.RELU)
    pool = net.add_i_pool2d_node(relu.get_output(0), mm.IPoolingMode.MAX)
    assert pool.set_kernel(2, 2).ok() and pool.set_stride(2, 2).ok()
    flat = net.add_i_reshape_node(pool.get_output(0), const(net, np.array([2, -1], np.int64)))
    fc_w = rng.standard_normal((5, 128)).astype(np.float32)
    fc = net.add_i_inner_product_node(flat.get_output(0), const(net, fc_w), const(net, np.ones(5, np.float32)))
    soft = net.add_i_softmax_node(fc.get_output(0), 1)
    assert soft.get_output(0).get_dimension().GetDims() == [2, 5]
    assert net.mark_output(soft.get_output(0)).ok()
    data = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
    (got,) = run(build(net), [data])
    t = torch.nn.functional
    ref = t.max_pool2d(t.relu(t.conv2d(torch.tensor(data), torch.tensor(w), torch.tensor(b), 2, 1)), 2)
    ref = torch.softmax(ref.reshape(2, -1) @ torch.tensor(fc_w).T + 1, 1).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-6)


def test_elementwise_logic_cast_where():
    net = mm.Network()
    a = net.add_input(mm.DataType.FLOAT32, mm.Dims([3, 4]))
    b = net.add_input(mm.DataType.FLOAT32, mm.Dims([4]))
    s = net.add_i_elementwise_node(a, b, mm.IElementwise.SUB).get_output(0)
    lt = net.add_i_logic_node(a, b, mm.ILogic.LT).get_output(0)
    assert lt.get_data_type() == mm.DataType.BOOL
    cast = net.add_i_cast_node(lt, mm.DataType.INT32).get_output(0)
    where = net.add_i_where_node(lt, s, net.add_i_activation_node(s, mm.IActivation.TANH).get_output(0))
    for t in (s, cast, where.get_output(0)):
        net.mark_output(t)
    x, y = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    sub, ints, chosen = run(build(net), [x, y])
    np.testing.assert_array_equal(sub, x - y)
    np.testing.assert_array_equal(ints, (x < y).astype(np.int32))
    np.testing.assert_allclose(chosen, np.where(x < y, x - y, np.tanh(x - y)), rtol=1e-6)


def test_permute_concat_split_gather_reduce():
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims([2, 3, 4]))
    p = net.add_i_permute_node(x, const(net, np.array([2, 0, 1], np.int64))).get_output(0)
    c = net.add_i_concat_node([p, p], 1).get_output(0)
    parts = net.add_i_split_node(c, 2, [1, 2])
    g = net.add_i_gather_node(x, const(net, np.array([2, 0], np.int64)), 2).get_output(0)
    r = net.add_i_reduce_node(x, [1], mm.IReduce.MAX, True).get_output(0)
    for t in (c, parts.get_output(1), g, r):
        net.mark_output(t)
    data = rng.standard_normal((2, 3, 4)).astype(np.float32)
    cat, second, gathered, reduced = run(build(net), [data])
    perm = data.transpose(2, 0, 1)
    np.testing.assert_array_equal(cat, np.concatenate([perm, perm], 1))
    np.testing.assert_array_equal(second, np.concatenate([perm, perm], 1)[:, :, 1:])
    np.testing.assert_array_equal(gathered, data[:, :, [2, 0]])
    np.testing.assert_array_equal(reduced, data.max(1, keepdims=True))


def test_data_dependent_slice_range_fill():
    """tacotron2's pattern: a slice whose end comes from a reduction of the data, a range and a fill sized by it."""
    net = mm.Network()
    lengths = net.add_input(mm.DataType.INT32, mm.Dims([3]))
    seq = net.add_input(mm.DataType.FLOAT32, mm.Dims([3, 10]))
    longest = net.add_i_reduce_node(lengths, [0], mm.IReduce.MAX, True).get_output(0)
    zero = const(net, np.array([0], np.int32))
    one = const(net, np.array([1], np.int32))
    positions = net.add_i_range_node(zero, longest, one).get_output(0)
    mask = net.add_i_logic_node(net.add_i_unsqueeze_node(positions, [0]).get_output(0),
                                net.add_i_unsqueeze_node(lengths, [1]).get_output(0), mm.ILogic.LT).get_output(0)
    cut = net.add_i_slice_node(seq, const(net, np.array([0], np.int32)), longest,
                               const(net, np.array([1], np.int32))).get_output(0)
    shape = net.add_i_cast_node(net.add_i_shape_node(cut).get_output(0), mm.DataType.INT32).get_output(0)
    filled = net.add_i_fill_node(shape, const(net, np.array([2.5], np.float32))).get_output(0)
    assert cut.get_dimension().GetDims() == [3, -1]
    for t in (mask, cut, filled):
        net.mark_output(t)
    model = build(net)
    context = model.create_i_engine().create_i_context()
    assert context.infer_output_shape(_inputs(context, [np.array([2, 5, 3], np.int32),
                                                        np.zeros((3, 10), np.float32)])).code() == mm.Code.UNAVAILABLE
    data = rng.standard_normal((3, 10)).astype(np.float32)
    for lens in ([2, 5, 3], [7, 1, 1]):
        got_mask, got_cut, got_fill = run(model, [np.array(lens, np.int32), data], context)
        n = max(lens)
        np.testing.assert_array_equal(got_mask, np.arange(n)[None, :] < np.array(lens)[:, None])
        np.testing.assert_array_equal(got_cut, data[:, :n])
        np.testing.assert_array_equal(got_fill, np.full((3, n), 2.5, np.float32))


def _inputs(context, arrays):
    tensors = context.create_inputs()
    for t, a in zip(tensors, arrays):
        t.from_numpy(a)
    return tensors


def test_unmark_output_moves_the_next_one_up():
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims([4]))
    a = net.add_i_activation_node(x, mm.IActivation.RELU).get_output(0)
    b = net.add_i_activation_node(x, mm.IActivation.SIGMOID).get_output(0)
    net.mark_output(a)
    net.mark_output(b)
    assert net.mark_output(a).code() == mm.Code.ALREADY_EXISTS
    assert net.unmark_output(net.get_output(0)).ok()
    assert net.get_output_count() == 1 and net.get_output(0) is b
    (got,) = run(build(net), [np.array([-1, 0, 1, 2], np.float32)])
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-np.array([-1, 0, 1, 2]))), rtol=1e-6)


def test_detection_output_finds_a_planted_box():
    net = mm.Network()
    head = net.add_input(mm.DataType.FLOAT32, mm.Dims([1, 3 * 7, 4, 4]))
    anchors = const(net, np.array([10, 10, 20, 20, 40, 40], np.float32))
    det = net.add_i_detection_output_node([head], anchors)
    for setter, value in ((det.set_num_class, 2), (det.set_num_anchor, 3), (det.set_num_box_limit, 8),
                          (det.set_algo, mm.IDetectionOutputAlgo.YOLOV5), (det.set_confidence_thresh, 0.5)):
        assert setter(value).ok()
    assert det.set_image_shape(64, 64).ok()
    assert det.set_num_class(0).code() == mm.Code.INVALID_ARGUMENT
    net.mark_output(det.get_output(0))
    net.mark_output(det.get_output(1))
    t = np.full((1, 3, 7, 4, 4), -8.0, np.float32)
    t[0, 1, :4, 2, 1] = 0.0       # anchor 1 at cell (y=2, x=1): centre (1.5 * 16, 2.5 * 16), size 20 x 20
    t[0, 1, 4, 2, 1] = 8.0        # objectness
    t[0, 1, 6, 2, 1] = 8.0        # class 1
    boxes, counts = run(build(net), [t.reshape(1, 21, 4, 4)])
    assert counts.tolist() == [1]
    image, cls, score, x1, y1, x2, y2 = boxes[0, 0]
    assert (image, cls) == (0, 1) and score > 0.99
    np.testing.assert_allclose([x1, y1, x2, y2], [24 - 10, 40 - 10, 24 + 10, 40 + 10], atol=1e-3)


def test_errors_name_the_argument():
    net = mm.Network()
    x = net.add_input(mm.DataType.FLOAT32, mm.Dims([1, 3, 8, 8]))
    with pytest.raises(mm.MagicMindError, match="input channels"):
        net.add_i_conv_node(x, const(net, np.zeros((4, 2, 3, 3), np.float32)))
    with pytest.raises(mm.MagicMindError, match="elements"):
        net.add_i_const_node(mm.DataType.FLOAT32, mm.Dims([2, 2]), [1.0, 2.0])
    with pytest.raises(mm.MagicMindError, match="not a tensor of this network"):
        net.add_i_activation_node(mm.Network().add_input(mm.DataType.FLOAT32, mm.Dims([1])), mm.IActivation.RELU)
    with pytest.raises(mm.MagicMindError, match="IActivation"):
        net.add_i_activation_node(x, "SWISHY")
    assert net.mark_output("x").code() == mm.Code.INVALID_ARGUMENT
    assert x.set_dimension([1, -3]).code() == mm.Code.INVALID_ARGUMENT
    assert net.get_output_count() == 0 and net.get_node_count() == 1  # the weight const; the failed conv is gone
    assert mm.Builder().build_model("empty", net) is None
    a = net.add_i_activation_node(x, mm.IActivation.RELU)
    assert a.get_output(0).set_dimension([1]).code() == mm.Code.INVALID_ARGUMENT
    with pytest.raises(mm.MagicMindError):
        net.add_i_elementwise_node(x, const(net, np.zeros((2, 5), np.float32)), mm.IElementwise.ADD)


def test_set_data_type_on_an_input_converts_it_to_the_network_s_type():
    """As transformer samples do: a network on int64 ids takes INT32 from the model's user; with insert_bn a UINT8
    input set explicitly is normalised the same way."""
    net = mm.Network()
    ids = net.add_input(mm.DataType.INT64, mm.Dims([2, 3]))
    table = net.add_i_const_node(mm.DataType.FLOAT32, mm.Dims([5, 2]),
                                 np.arange(10, dtype=np.float32).reshape(5, 2)).get_output(0)
    net.mark_output(net.add_i_gather_node(table, ids, 0).get_output(0))
    assert ids.set_data_type(mm.DataType.INT32).ok() and ids.get_data_type() == mm.DataType.INT32
    model = build(net)
    assert model.get_input_data_types() == [mm.DataType.INT32]
    got = run(model, [np.array([[0, 4, 2], [1, 1, 3]], np.int32)])[0]
    np.testing.assert_array_equal(got, np.arange(10, dtype=np.float32).reshape(5, 2)[[[0, 4, 2], [1, 1, 3]]])
    image = mm.Network()
    x = image.add_input(mm.DataType.FLOAT32, mm.Dims([1, 2, 1, 1]))
    image.mark_output(image.add_i_activation_node(x, mm.IActivation.RELU).get_output(0))
    assert x.set_data_type(mm.DataType.UINT8).ok()
    normalized = build(image, '{"insert_bn_before_firstnode": {"0": {"mean": [1, 2], "var": [4, 16]}}}')
    assert normalized.get_input_data_types() == [mm.DataType.UINT8]
    got = run(normalized, [np.array([5, 1], np.uint8).reshape(1, 2, 1, 1)])[0]
    np.testing.assert_allclose(got.reshape(-1), [2.0, 0.0])
