"""torch.backends.mlu / torch.backends.cnnl: the TF32 switches with torch_mlu's defaults, mlu's matmul switch
following set_float32_matmul_precision and not CUDA's flag (Cambricon's test/mlu/test_tf32_ctrl.py re-expressed)."""
import importlib

import pytest
import torch

import torch_mlu  # noqa: F401


@pytest.fixture
def restored():
    saved = (torch.get_float32_matmul_precision(), torch.backends.cnnl.allow_tf32,
             torch.backends.mlu.custom.allow_tf32)
    yield
    torch.set_float32_matmul_precision(saved[0])
    torch.backends.cnnl.allow_tf32, torch.backends.mlu.custom.allow_tf32 = saved[1:]


def test_defaults_and_setting(restored):
    assert torch.backends.cnnl.allow_tf32 is True and torch.backends.cnnl.is_available()
    assert torch.backends.mlu.custom.allow_tf32 is False and torch.backends.mlu.matmul.allow_tf32 is False
    torch.backends.cnnl.allow_tf32 = False
    torch.backends.mlu.custom.allow_tf32 = True
    assert torch.backends.cnnl.allow_tf32 is False and torch.backends.mlu.custom.allow_tf32 is True
    assert importlib.import_module("torch.backends.mlu") is torch.backends.mlu
    assert importlib.import_module("torch.backends.cnnl") is torch.backends.cnnl


def test_the_matmul_switch_follows_the_precision_not_cuda(restored):
    assert torch.get_float32_matmul_precision() == "highest"
    torch.backends.mlu.matmul.allow_tf32 = True
    torch.backends.cuda.matmul.allow_tf32 = False
    assert torch.backends.mlu.matmul.allow_tf32 is True
    for precision in ("medium", "high"):
        torch.set_float32_matmul_precision(precision)
        assert torch.get_float32_matmul_precision() == precision and torch.backends.mlu.matmul.allow_tf32
    torch.set_float32_matmul_precision("highest")
    assert torch.backends.mlu.matmul.allow_tf32 is False
    with pytest.warns(UserWarning, match="has no effect"):  # torch's answer to an unknown precision
        torch.set_float32_matmul_precision("fastest")
    assert torch.get_float32_matmul_precision() == "highest" and torch.backends.mlu.matmul.allow_tf32 is False


def test_float32_products_stay_float32_whatever_the_switch_says(restored):
    a, b = torch.randn(64, 64, dtype=torch.float32), torch.randn(64, 64, dtype=torch.float32)
    want = a.double() @ b.double()
    torch.set_float32_matmul_precision("medium")  # (torch's CPU kernels would now use bfloat16: not the reference)
    torch.testing.assert_close((a.mlu() @ b.mlu()).cpu().double(), want, rtol=1e-5, atol=1e-5)


def test_mlufusion_switch_sets_and_restores():
    assert torch.backends.mlufusion.enabled is True
    assert importlib.import_module("torch.backends.mlufusion") is torch.backends.mlufusion
    with torch.backends.mlufusion.flags(enabled=False):
        assert torch.backends.mlufusion.enabled is False
        assert torch_mlu._MLUC._get_mlufusion_enabled() is False
    assert torch.backends.mlufusion.enabled is True
    assert torch.backends.mlufusion.set_flags(False) == (True,)
    torch_mlu._MLUC._set_mlufusion_enabled(True)
    assert torch.backends.mlufusion.enabled is True
