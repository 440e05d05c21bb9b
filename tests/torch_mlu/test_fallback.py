"""The CPU fallback: aten ops without an mlu kernel give CPU's results, warn once per op name, are counted per op
name, and MLUSIM_TORCH_FALLBACK=error (or torch_mlu.fallback.mode("error")) turns them into errors."""
import warnings

import pytest
import torch

import torch_mlu
from torch_mlu import fallback


def test_results_match_the_cpu_and_each_op_warns_once():
    x = torch.linspace(-3, 3, 50)
    with fallback.mode("warn"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = torch.special.i0(x.to("mlu"))
        second = torch.special.i0(x.to("mlu") * 2)
    torch.testing.assert_close(first.cpu(), torch.special.i0(x))
    torch.testing.assert_close(second.cpu(), torch.special.i0(x * 2))
    assert first.device.type == "mlu"
    messages = [str(w.message) for w in caught if "no native mlu kernel" in str(w.message)]
    assert messages == ["mlu: aten::i0.out has no native mlu kernel yet and runs on the CPU (its tensors are copied to "
                        "the host and back); torch_mlu.fallback.counts() counts such ops, "
                        "MLUSIM_TORCH_FALLBACK=error forbids them"]
    assert fallback.counts()["aten::i0.out"] == 2  # structured ops reach the fallback as their out= form


def test_in_place_and_out_forms_write_the_device_tensors():
    x = torch.linspace(0.1, 2, 10, device="mlu")
    address = x.data_ptr()
    x.lgamma_()
    assert x.data_ptr() == address
    torch.testing.assert_close(x.cpu(), torch.linspace(0.1, 2, 10).lgamma())
    out = torch.empty(10, device="mlu")
    torch.special.i0(x, out=out)
    torch.testing.assert_close(out.cpu(), torch.special.i0(torch.linspace(0.1, 2, 10).lgamma()))
    values, indices = torch.kthvalue(torch.tensor([[3.0, 1.0, 2.0]], device="mlu"), 2)
    assert values.device.type == indices.device.type == "mlu"
    assert values.cpu().tolist() == [2.0] and indices.cpu().tolist() == [2]
    assert fallback.counts()["aten::lgamma.out"] == 1  # lgamma_ reaches the fallback as lgamma.out


def test_error_mode_refuses_a_fallback_and_names_the_op():
    x = torch.ones(4, device="mlu")
    with fallback.mode("error"):
        assert (x + x).cpu().tolist() == [2.0] * 4  # native: allowed
        with pytest.raises(NotImplementedError, match="aten::i0.out has no native mlu kernel, and "
                                                      "MLUSIM_TORCH_FALLBACK=error forbids"):
            torch.special.i0(x)
    assert fallback.get_mode() == "silent"
    with pytest.raises(ValueError, match="expected one of warn, silent, error"):
        fallback.set_mode("loud")


def test_a_native_kernel_falls_back_for_what_it_does_not_serve():
    values = torch.tensor([1 + 2j, 3 - 1j], device="mlu")
    assert (values * values).cpu().tolist() == [(1 + 2j) ** 2, (3 - 1j) ** 2]  # complex: no cnnl kernel, the CPU
    assert fallback.counts()["aten::mul.Tensor"] == 1
    flags = torch.tensor([True, False], device="mlu")
    with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool tensors"):
        flags - flags  # the CPU kernel's own error


def test_mixed_devices_in_a_fallback_op_are_the_usual_error():
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least two "
                                           "devices, mlu:0 and cpu"):
        torch.atan2(torch.ones(3, device="mlu"), torch.ones(3))
    # a 0-d cpu tensor is a scalar operand, as on CUDA
    assert torch.atan2(torch.ones(2, device="mlu"), torch.tensor(1.0)).device.type == "mlu"
    # cpu indices into a device tensor are allowed, as on CUDA
    assert torch.arange(5.0, device="mlu")[torch.tensor([4, 0])].cpu().tolist() == [4.0, 0.0]


def test_counts_reset():
    torch.special.i0(torch.ones(1, device="mlu"))
    assert "aten::i0.out" in fallback.counts()
    fallback.reset()
    assert fallback.counts() == {}


def test_environment_variable_sets_error_mode(fresh_process, monkeypatch):
    assert fresh_process["fallback_mode"] == "error"  # MLUSIM_TORCH_FALLBACK=error in that process
    assert "aten::i0.out has no native mlu kernel" in fresh_process["refused"]
    monkeypatch.setenv("MLUSIM_TORCH_FALLBACK", "sometimes")
    with pytest.raises(ValueError, match="MLUSIM_TORCH_FALLBACK='sometimes': expected one of warn, silent, error"):
        fallback._mode_from_environment()
    monkeypatch.setenv("MLUSIM_TORCH_FALLBACK", "Silent")
    assert fallback._mode_from_environment() == "silent"


def test_registered_native_ops_do_not_fall_back():
    a = torch.randn(8, 8, device="mlu")
    with fallback.mode("error"):
        b = (a + a) * a - a / (a.abs() + 1) if False else (a + a) * a - a / 2
        c = a @ b
        torch.addmm(a, b, c).zero_().fill_(2.0)
        b.copy_(c).cpu()
    assert not any(name in fallback.counts() for name in torch_mlu.ops.registered())


def test_batch_norm_running_statistics_update_on_the_device():
    # native_batch_norm's schema does not mark the running statistics as written; they must move anyway
    torch.manual_seed(0)
    x = torch.randn(16, 3) * 2 + 1
    reference = torch.nn.BatchNorm1d(3)
    on_device = torch.nn.BatchNorm1d(3).mlu()
    reference(x)
    on_device(x.mlu())
    torch.testing.assert_close(on_device.running_mean.cpu(), reference.running_mean)
    torch.testing.assert_close(on_device.running_var.cpu(), reference.running_var)
    assert on_device.num_batches_tracked.item() == 1
    reference.eval()
    on_device.eval()
    torch.testing.assert_close(on_device(x.mlu()).cpu(), reference(x))


def test_an_op_without_a_kernel_falls_back_in_forward_and_backward_and_matches_cpu():
    # bilinear upsampling has no native kernel: its forward and its backward (in the autograd engine's device
    # thread) both run on the CPU fallback, and the gradient matches the CPU's
    forward, backward = "aten::upsample_bilinear2d.out", "aten::upsample_bilinear2d_backward.grad_input"
    assert forward not in torch_mlu.ops.registered() and backward not in torch_mlu.ops.registered()
    torch.manual_seed(0)
    x = torch.randn(1, 2, 5, 5, requires_grad=True)
    weights = torch.randn(1, 2, 10, 10)
    xd = x.detach().mlu().requires_grad_()
    upsampled = torch.nn.functional.interpolate(xd, scale_factor=2, mode="bilinear")
    assert upsampled.device.type == "mlu"
    (upsampled * weights.mlu()).sum().backward()
    (torch.nn.functional.interpolate(x, scale_factor=2, mode="bilinear") * weights).sum().backward()
    torch.testing.assert_close(upsampled.detach().cpu(), torch.nn.functional.interpolate(x, scale_factor=2,
                                                                                         mode="bilinear").detach())
    torch.testing.assert_close(xd.grad.cpu(), x.grad)
    assert fallback.counts()[forward] == 1 and fallback.counts()[backward] == 1
