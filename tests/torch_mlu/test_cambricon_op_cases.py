"""Cambricon's torch_ops cases, re-expressed (test/torch_ops of Cambricon/torch_mlu): errors raised with torch_mlu's
types and messages, torch's CUDA-only dropout ops that torch_mlu has, results laid out as torch lays them out, a
complex Python scalar."""
import re

import pytest
import torch
from torch import nn

from torch_mlu import fallback


def test_add_and_sub_check_alpha_as_torch():
    a, b = torch.randn(3).mlu(), torch.randn(3).mlu()
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results"):
        torch.add(a, b, alpha=True)
    with pytest.raises(RuntimeError, match="Boolean alpha only supported for Boolean results"):
        a.add_(b, alpha=False)
    with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must not be a floating point"):
        torch.add(a.int(), b.int(), alpha=2.1)
    with pytest.raises(RuntimeError, match="For integral input tensors, argument alpha must not be a floating point"):
        torch.sub(a.int(), 2, alpha=0.5)
    with pytest.raises(RuntimeError, match="For non-complex input tensors, argument alpha must not be a complex"):
        torch.sub(a, b, alpha=1j)
    assert torch.equal(torch.add(a.bool(), b.bool(), alpha=True).cpu(), torch.add(a.cpu().bool(), b.cpu().bool()))
    torch.testing.assert_close(torch.add(a, b, alpha=2.5).cpu(), torch.add(a.cpu(), b.cpu(), alpha=2.5))


def test_index_select_into_an_expanded_out_is_refused_before_resizing():
    out = torch.rand((1, 6)).mlu().expand((2, 6))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor refers to a single memory"):
        torch.index_select(torch.rand((3, 6)).mlu(), 1, torch.tensor([0, 1]).mlu(), out=out)


@pytest.mark.parametrize("backward", [torch._softmax_backward_data, torch._log_softmax_backward_data])
def test_softmax_backward_with_a_gradient_of_another_dtype(backward):
    output = torch._softmax(torch.randn(2, 10).mlu(), dim=1, half_to_float=False)
    with pytest.raises(RuntimeError, match="^expected input and grad types to match, or input to be at::Half and grad "
                                           "to be at::Float$"):
        backward(torch.randn(2, 10).half().mlu(), output, 1, torch.float)
    with pytest.raises(RuntimeError, match="^conversion is supported for Half type only$"):
        torch._softmax(torch.randn(3).mlu(), dim=0, half_to_float=True)
    halves = torch.randn(2, 10).half()
    result = torch._softmax(halves.mlu(), 1, True)  # half_to_float: a float gradient of a half input
    grad = torch.randn(2, 10)
    expected = torch._softmax_backward_data(grad, torch._softmax(halves.float(), 1, False), 1, torch.float)
    torch.testing.assert_close(torch._softmax_backward_data(grad.mlu(), result, 1, torch.half).cpu().float(),
                               expected, rtol=1e-3, atol=1e-3)


def test_batch_norm_parameters_of_another_dtype():
    module = nn.BatchNorm2d(3)
    module.running_mean = module.running_mean.int()
    module.to("mlu")
    message = (r"Expected tensor for argument #2 'weight' to have the same type as tensor for argument #4 "
               r"'running_mean'; but type mluFloatType does not equal mluIntType \(while checking arguments for "
               r"cnnl_native_batch_norm\)")
    with pytest.raises(RuntimeError, match=message):
        module(torch.randn(2, 3, 4, 4).mlu())


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128, torch.float32])
def test_multiplication_by_a_complex_python_scalar(dtype):
    values = torch.testing.make_tensor((1, 3, 8, 8), dtype=dtype, device="cpu")
    with fallback.mode("silent"):
        result = values.mlu() * (3.0 + 1j)
    torch.testing.assert_close(result.cpu(), values * (3.0 + 1j), rtol=1.3e-6, atol=1e-5)


def test_elementwise_results_keep_a_channels_last_layout():
    x = torch.randn(4, 3, 5, 5).contiguous(memory_format=torch.channels_last)
    noise = torch.randn(4, 3, 1, 1)
    for result, expected in (((x.mlu() * noise.mlu()), x * noise), ((x.mlu() + 0), x + 0),
                             ((x.mlu() * x.mlu()), x * x), ((noise.mlu() + x.mlu()), noise + x)):
        assert result.stride() == expected.stride()
        torch.testing.assert_close(result.cpu(), expected)


@pytest.mark.parametrize("dropout", [nn.Dropout2d, nn.Dropout3d])
def test_feature_dropout_on_channels_last(dropout):
    shape, layout = ((50, 3, 4, 4), torch.channels_last) if dropout is nn.Dropout2d else \
        ((50, 3, 2, 4, 4), torch.channels_last_3d)
    x = torch.full(shape, 0.8).mlu().contiguous(memory_format=layout).requires_grad_()
    y = dropout(0.2)(x)
    assert y.is_contiguous(memory_format=layout)
    kept = y.detach().cpu().flatten(2)
    assert bool(((kept == 0) | (kept == 1.0)).all()) and bool((kept == kept[:, :, :1]).all())  # whole channels
    y.backward(torch.ones_like(y))
    assert x.grad.is_contiguous(memory_format=layout)
    torch.testing.assert_close(x.grad.cpu(), (y.detach().cpu() / 0.8))


def test_fused_dropout_and_masked_scale():
    x = torch.randn(2000, requires_grad=True)
    output, mask = torch._fused_dropout(x.mlu(), p=0.8)  # p: the probability of keeping an element
    assert mask.dtype == torch.uint8 and output.is_contiguous()
    assert 0.75 < mask.float().mean().item() < 0.85
    torch.testing.assert_close(output.cpu(), x.detach() * mask.cpu() / 0.8)
    grad = torch.randn(2000)
    output.backward(grad.mlu())
    torch.testing.assert_close(x.grad, grad * mask.cpu() / 0.8)
    kept, all_ones = torch._fused_dropout(x.detach().mlu(), p=1.0)
    assert torch.equal(kept.cpu(), x.detach()) and bool((all_ones == 1).all())
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        torch._fused_dropout(x.detach().mlu(), 1.5)
    with pytest.raises(RuntimeError, match="mask should be torch.uint8 dtype"):
        torch._masked_scale(x.detach().mlu(), mask.bool(), 2.0)


def test_max_pool2d_refuses_the_windows_the_card_cannot_take():
    with pytest.raises(RuntimeError, match="max_pool2d: The kernel size should be smaller than 1535, while this kernel "
                                           "size is 1600"):
        nn.MaxPool2d(kernel_size=(40, 40), stride=(2, 2))(torch.randn(2, 3, 80, 80).mlu())
    x = torch.randn(2, 3, 80, 80)
    torch.testing.assert_close(nn.MaxPool2d(39, 2)(x.mlu()).cpu(), nn.MaxPool2d(39, 2)(x))


def test_where_names_the_condition_dtype_as_torch():
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor, but got a tensor with "
                                           "dtype Long$"):
        torch.where(torch.tensor(1).mlu(), torch.tensor(1).mlu(), torch.randn(1).mlu())


def test_an_mlu_op_draws_from_an_mlu_generator_only():
    p = torch.rand(4).mlu()
    for draw in (lambda g: torch.bernoulli(p, generator=g), lambda g: torch.randn(3, device="mlu", generator=g),
                 lambda g: torch.empty(3, device="mlu").normal_(generator=g)):
        with pytest.raises(RuntimeError, match="Expected a 'mlu' device type for generator but found 'cpu'"):
            draw(torch.Generator())
        assert draw(torch.Generator(device="mlu")).device.type == "mlu"
    with pytest.raises(RuntimeError, match=r"^bernoulli_ expects p to be in \[0, 1\], but got p=2$"):
        torch.empty(3, device="mlu").bernoulli_(2.0)


@pytest.mark.parametrize("call", [
    lambda x: nn.functional.max_pool3d(x, (2, 2)), lambda x: nn.functional.max_pool3d(x, 2, padding=(1, 1)),
    lambda x: nn.functional.avg_pool3d(x, 2, stride=(1, 1)), lambda x: nn.functional.avg_pool3d(x, (2, 2)),
    lambda x: nn.functional.max_pool2d(x[0], 2, dilation=(1, 1, 1)),
    lambda x: nn.functional.max_pool2d(x[0], 2, stride=(1, 1, 1)),
    lambda x: nn.functional.avg_pool2d(x[0], (2, 2, 2)), lambda x: nn.functional.avg_pool2d(x[0], 2, padding=(1, 1, 1)),
    lambda x: nn.functional.adaptive_avg_pool2d(x[0], (1, 1, 1))])
def test_pooling_parameter_errors_are_torchs(call):
    x = torch.randn(1, 1, 4, 4, 4)
    with pytest.raises(RuntimeError) as expected:
        call(x)
    with pytest.raises(RuntimeError, match=f"^{re.escape(str(expected.value))}$"):
        call(x.mlu())


def test_adaptive_average_pooling_of_a_wrong_rank_in_torch_mlus_words():
    with pytest.raises(RuntimeError, match=r"^adaptive_avg_pool2d\(\): Expected 3D or 4D tensor, but got: \[2, 3\]$"):
        nn.functional.adaptive_avg_pool2d(torch.randn(2, 3).mlu(), 2)


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128, torch.float32, torch.int64])
def test_conj_physical_in_place_and_out(dtype):
    x = torch.testing.make_tensor((4, 6), dtype=dtype, device="cpu")
    for view in (lambda t: t, lambda t: t[:, ::2], lambda t: t.t()):
        expected, device = view(x.clone()), view(x.clone().mlu())
        address = device.data_ptr()
        torch.conj_physical_(expected)
        assert torch.conj_physical_(device) is device and device.data_ptr() == address
        assert torch.equal(device.cpu(), expected)
        out = torch.empty(0, dtype=dtype, device="mlu")
        torch.conj_physical(view(x.mlu()), out=out)
        assert torch.equal(out.cpu(), torch.conj_physical(view(x)))


def test_dot_names_the_devices_in_argument_order():
    with pytest.raises(RuntimeError, match="found at least two devices, cpu and mlu:0!"):
        torch.dot(torch.randn(3), torch.randn(3).mlu())
    with pytest.raises(RuntimeError, match="found at least two devices, mlu:0 and cpu!"):
        torch.dot(torch.randn(3).mlu(), torch.randn(3))


@pytest.mark.parametrize("call", [
    lambda x: torch.prod(x, 1, dtype=torch.float64, out=torch.ones(3, device=x.device)),
    lambda x: torch.sum(x, 1, dtype=torch.int32, out=torch.ones(3, device=x.device, dtype=torch.int64)),
    lambda x: torch.max(x, 1, out=(torch.empty(0, device=x.device, dtype=torch.half),
                                   torch.empty(0, device=x.device, dtype=torch.int64))),
    lambda x: torch.min(x, 1, out=(torch.empty(0, device=x.device),
                                   torch.empty(0, device=x.device, dtype=torch.uint8)))])
def test_out_dtype_errors_name_the_cpp_types_as_torch(call):
    x = torch.ones(3, 4)
    with pytest.raises(RuntimeError) as expected:
        call(x)
    with pytest.raises(RuntimeError, match=f"^{re.escape(str(expected.value))}$"):
        call(x.mlu())


@pytest.mark.parametrize("shape, groups", [((2, 4, 3, 0), 2), ((0, 4, 3), 2), ((3, 6), 3)])
def test_group_norm_of_empty_groups_gives_torchs_statistics_and_gradients(shape, groups):
    torch.manual_seed(0)
    layer = nn.GroupNorm(groups, shape[1])
    x = torch.randn(shape, requires_grad=True)
    device_layer = nn.GroupNorm(groups, shape[1]).mlu()
    device_x = x.detach().mlu().requires_grad_()
    weight, bias = torch.ones(shape[1]), torch.zeros(shape[1])
    expected = torch.ops.aten.native_group_norm(x.detach(), weight, bias, shape[0], shape[1],
                                                x[0, 0].numel() if x.numel() else 0, groups, 1e-5)
    got = torch.ops.aten.native_group_norm(device_x.detach(), weight.mlu(), bias.mlu(), shape[0], shape[1],
                                           x[0, 0].numel() if x.numel() else 0, groups, 1e-5)
    # the rstd of a group of two values amplifies the rounding of its sums (float32 sums in another order differ):
    # the tolerance scales with the largest rstd
    rstd = torch.nan_to_num(expected[2], nan=0.0)
    scale = max(1.0, float(rstd.abs().max()) if rstd.numel() else 1.0)
    for want, have in zip(expected[1:], got[1:]):
        torch.testing.assert_close(have.cpu(), want, equal_nan=True, rtol=1e-5, atol=1e-6 * scale)
    layer(x).sum().backward()
    device_layer(device_x).sum().backward()
    for want, have in ((layer.weight.grad, device_layer.weight.grad), (layer.bias.grad, device_layer.bias.grad),
                       (x.grad, device_x.grad)):
        torch.testing.assert_close(have.cpu(), want, equal_nan=True, rtol=1e-5, atol=1e-5 * scale)


def test_index_put_with_more_indices_than_dims_is_torch_mlus_error():
    a = torch.rand(2, 3, 4).mlu()
    index = torch.tensor([0, 1, 0]).mlu()
    with pytest.raises(RuntimeError, match="^indices have more indices than self dim"):
        a.index_put_((index, index, index, index), torch.randn(1).mlu())


def test_index_put_checks_its_indices_before_the_values_dtype_as_torch():
    a = torch.rand(2, 3, 4).mlu()
    index, mask = torch.tensor([0, 1, 0]).mlu(), torch.ones(3, 4, dtype=torch.bool).mlu()
    mask[0, 0] = False
    with pytest.raises(IndexError) as raised:
        a.index_put_((index, mask), values=torch.randn(1).int().mlu())
    assert raised.value.args[0] == "shape mismatch: indexing tensors could not be broadcast together with shapes " \
                                   "[3], [11], [11]"
    with pytest.raises(RuntimeError) as raised:
        a.index_put_((index,), values=torch.randn(1).int().mlu())
    assert str(raised.value) == "Index put requires the source and destination dtypes match, got Float for the " \
                                "destination and Int for the source."


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_rrelu_takes_one_slope_per_call_as_torch_mlu_and_its_gradient_is_that_slope(dtype):
    torch.manual_seed(3)
    x = torch.randn(6, 7).to(dtype)
    negative = x < 0
    for training, low, high in ((True, 0.1, 0.3), (False, 0.1, 0.3), (True, 0.2, 0.2)):
        xm = x.mlu().requires_grad_()
        before = sum(fallback.counts().values())
        y = torch.nn.functional.rrelu(xm, low, high, training=training)
        assert sum(fallback.counts().values()) == before and y.dtype == dtype
        slopes = (y.detach().cpu()[negative].float() / x[negative].float())
        slope = float(slopes[0])
        assert low - 1e-3 <= slope <= high + 1e-3
        if not training:
            assert slope == pytest.approx((low + high) / 2, rel=1e-3)
        torch.testing.assert_close(y.detach().cpu(), torch.nn.functional.leaky_relu(x, slope), rtol=2e-3, atol=2e-3)
        y.backward(torch.ones_like(y))
        grad = xm.grad.cpu().float()
        assert torch.all(grad[~negative] == 1)
        torch.testing.assert_close(grad[negative], torch.full_like(grad[negative], slope), rtol=2e-3, atol=2e-3)
    inplace = x.mlu()
    torch.rrelu_(inplace, 0.25, 0.25, True)
    torch.testing.assert_close(inplace.cpu(), torch.nn.functional.leaky_relu(x, 0.25))
    assert torch.rrelu(torch.empty(0, 3, device="mlu"), training=True).shape == (0, 3)


def test_rrelu_slope_comes_from_the_cpu_generator():
    x = torch.randn(50).mlu()
    torch.manual_seed(11)
    first = torch.rrelu(x, 0.0, 1.0, True).cpu()
    torch.manual_seed(11)
    assert torch.equal(torch.rrelu(x, 0.0, 1.0, True).cpu(), first)
    assert not torch.equal(torch.rrelu(x, 0.0, 1.0, True).cpu(), first)
