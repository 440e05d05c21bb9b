"""Pooling writes its outputs: max pooling its values and indices straight into the outputs torch allocated (and
its gradient straight into grad_input) when their layout allows, else through a temporary: both ways match torch's
CPU kernels, for batched and unbatched inputs, channels-last memory, user out= tensors of other strides, empty
inputs and NaN; adaptive average pooling into an out= of any layout."""
import pytest
import torch
import torch.nn.functional as F

from torch_mlu import fallback


def _input(*shape, seed=0):
    values = torch.randn(shape, generator=torch.Generator().manual_seed(seed))
    values[..., 1, 2] = float("nan")  # NaN wins its windows (its index too); one per plane
    values[..., 3, 3] = -0.0
    return values


def _forward_and_backward(x, memory_format=torch.contiguous_format, **window):
    results = {}
    for device in ("cpu", "mlu"):
        moved = x.to(device).contiguous(memory_format=memory_format).detach().requires_grad_()
        with fallback.mode("error"):
            values, indices = F.max_pool2d(moved, return_indices=True, **window)
            values.backward(torch.arange(values.numel(), dtype=x.dtype).reshape(values.shape).to(device))
        results[device] = (values.detach().cpu(), indices.cpu(), moved.grad.cpu(), values.is_contiguous(),
                           moved.grad.is_contiguous(memory_format=memory_format))
    return results


@pytest.mark.parametrize("shape, memory_format", [
    ((2, 3, 8, 8), torch.contiguous_format), ((3, 8, 6), torch.contiguous_format),
    ((2, 5, 8, 8), torch.channels_last), ((0, 3, 8, 8), torch.contiguous_format)])
@pytest.mark.parametrize("window", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1)])
def test_max_pool_matches_cpu_values_indices_and_gradient(shape, memory_format, window):
    if len(shape) == 3 and memory_format != torch.contiguous_format:
        pytest.skip("channels_last needs a batch")
    results = _forward_and_backward(_input(*shape), memory_format, **window)
    cpu, mlu = results["cpu"], results["mlu"]
    torch.testing.assert_close(mlu[0], cpu[0], equal_nan=True, rtol=0, atol=0)
    assert torch.equal(mlu[1], cpu[1])
    torch.testing.assert_close(mlu[2], cpu[2], rtol=0, atol=0)
    assert mlu[3:] == cpu[3:]  # the same memory formats as torch's CPU results


def test_max_pool_out_tensors_of_other_layouts_and_dtypes_get_the_results():
    x = _input(2, 3, 6, 6, seed=1)
    expected, expected_indices = torch.ops.aten.max_pool2d_with_indices(x, [2, 2], [2, 2])
    device_x = x.to("mlu")
    values = torch.full((3, 2, 3, 3), 7.0, device="mlu").permute(1, 0, 2, 3)  # right shape, other strides
    indices = torch.empty(0, dtype=torch.int64, device="mlu")  # resized by the op
    with fallback.mode("error"):
        torch.ops.aten.max_pool2d_with_indices.out(device_x, [2, 2], [2, 2], out=values, indices=indices)
    torch.testing.assert_close(values.cpu(), expected, equal_nan=True, rtol=0, atol=0)
    assert torch.equal(indices.cpu(), expected_indices)
    grad = torch.randn(expected.shape)
    grad_input = torch.full((2, 3, 6, 6), 5.0, device="mlu").transpose(2, 3)  # non-contiguous grad_input
    with fallback.mode("error"):
        torch.ops.aten.max_pool2d_with_indices_backward.grad_input(
            grad.to("mlu"), device_x, [2, 2], [2, 2], [0, 0], [1, 1], False, indices, grad_input=grad_input)
    reference = torch.ops.aten.max_pool2d_with_indices_backward(grad, x, [2, 2], [2, 2], [0, 0], [1, 1], False,
                                                                expected_indices)
    torch.testing.assert_close(grad_input.cpu(), reference, rtol=0, atol=0)


@pytest.mark.parametrize("memory_format", [torch.contiguous_format, torch.channels_last])
def test_avg_pool_gradient_into_its_destination_matches_cpu(memory_format):
    x = _input(2, 3, 7, 7, seed=2)
    x[..., 1, 2] = 1.5  # (averages of a NaN are NaN: finite values here, the NaN rules are max pooling's)
    grads = {}
    for device in ("cpu", "mlu"):
        moved = x.to(device).contiguous(memory_format=memory_format).detach().requires_grad_()
        with fallback.mode("error"):
            out = F.avg_pool2d(moved, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False)
            out.backward(torch.linspace(-1, 1, out.numel()).reshape(out.shape).to(device))
        grads[device] = moved.grad
    assert grads["mlu"].is_contiguous(memory_format=memory_format)
    torch.testing.assert_close(grads["mlu"].cpu(), grads["cpu"], rtol=1e-6, atol=1e-7)


def test_max_pooling_indices_of_nan_windows_are_torchs():
    """torch's CPU kernels let every NaN win a max window, so the index is the window's last NaN (2-D, 3-D and
    adaptive); the gradient follows it."""
    import torch.nn.functional as F
    nan = float("nan")
    x = torch.tensor([[[[nan, 1.0, 5.0, nan], [nan, 2.0, nan, nan], [0.0, -1.0, 3.0, 4.0], [nan, 7.0, 8.0, 9.0]]]])
    for pool in (lambda t: F.max_pool2d(t, 2, return_indices=True),
                 lambda t: F.max_pool2d(t, 3, stride=1, padding=1, return_indices=True),
                 lambda t: F.adaptive_max_pool2d(t, (3, 2), return_indices=True),
                 lambda t: F.max_pool3d(torch.stack([t, t.flip(-1)], 2), 2, return_indices=True)):
        want_values, want_indices = pool(x)
        values, indices = pool(x.to("mlu"))
        torch.testing.assert_close(values.cpu(), want_values, equal_nan=True)
        assert torch.equal(indices.cpu(), want_indices)


@pytest.mark.parametrize("make_out", [
    lambda: torch.randn(2, 8, 4, 4, 3, device="mlu").contiguous(memory_format=torch.channels_last_3d),
    lambda: torch.randn(2, 8, 4, 4, 4, device="mlu")[..., :-1],
    lambda: torch.empty(0, device="mlu"),
], ids=["channels_last", "strided", "resized"])
def test_adaptive_avg_pool3d_out_of_any_layout_holds_the_pooled_values(make_out):
    # torch's CPU kernel writes such outs as if they were contiguous; the functional form is the reference
    x = torch.randn(2, 8, 6, 7, 9)
    expected = torch._C._nn.adaptive_avg_pool3d(x, (4, 4, 3))
    out = make_out()
    for source in (x.mlu(), x.mlu().contiguous(memory_format=torch.channels_last_3d)):
        assert torch._C._nn.adaptive_avg_pool3d(source, (4, 4, 3), out=out) is out
        torch.testing.assert_close(out.cpu(), expected)
    with pytest.raises(RuntimeError, match="double"):
        torch._C._nn.adaptive_avg_pool3d(x.mlu(), (4, 4, 3), out=torch.empty(0, dtype=torch.double, device="mlu"))
