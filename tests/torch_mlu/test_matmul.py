"""Products of torch_mlu/ops/matmul.py: the vector product (linalg_cross) natively on mlu against torch CPU, over
shapes, dims, broadcasting, strides and dtypes, and its errors (torch's, and torch_mlu's for mixed dtypes)."""
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torch_mlu import fallback

_DTYPES = [torch.float32, torch.float16, torch.float64, torch.int32, torch.int64, torch.int8]


def _random(shape, dtype):
    if dtype.is_floating_point:
        return torch.randn(shape).to(dtype)
    return torch.randint(-5, 6, shape).to(dtype)


@settings(max_examples=25, deadline=None)
@given(rank=st.integers(1, 4), dtype=st.sampled_from(_DTYPES), data=st.data())
def test_linalg_cross_matches_cpu(rank, dtype, data):
    axis = data.draw(st.integers(0, rank - 1))
    shape = [data.draw(st.integers(0, 3)) for _ in range(rank)]
    shape[axis] = 3
    other = [1 if data.draw(st.booleans()) and i != axis else s for i, s in enumerate(shape)]  # broadcast
    a, b = _random(shape, dtype), _random(other, dtype)
    dim = axis - rank if data.draw(st.booleans()) else axis
    expected = torch.linalg.cross(a, b, dim=dim)
    before = sum(fallback.counts().values())
    got = torch.linalg.cross(a.mlu(), b.mlu(), dim=dim)
    assert sum(fallback.counts().values()) == before  # native: no op of it ran on the CPU
    assert got.shape == expected.shape and got.dtype == dtype
    torch.testing.assert_close(got.cpu(), expected, rtol=1e-2 if dtype == torch.float16 else 1e-6,
                               atol=1e-2 if dtype == torch.float16 else 1e-6)


def test_cross_of_special_values_strided_inputs_and_out():
    a = torch.tensor([[float("inf"), 1.0, -0.0], [float("nan"), 2.0, 3.0]])
    b = torch.tensor([[1.0, 0.0, 2.0], [1.0, 1.0, 1.0]])
    torch.testing.assert_close(torch.linalg.cross(a.mlu(), b.mlu()).cpu(), torch.linalg.cross(a, b), equal_nan=True)
    strided = torch.randn(3, 5).t()
    out = torch.empty(0, device="mlu")
    result = torch.linalg.cross(strided.mlu(), (strided * 2 + 1).mlu(), out=out)
    assert result is out
    torch.testing.assert_close(out.cpu(), torch.linalg.cross(strided, strided * 2 + 1))
    torch.testing.assert_close(torch.cross(a.mlu(), b.mlu(), dim=1).cpu(), torch.cross(a, b, dim=1), equal_nan=True)


def test_cross_errors():
    a = torch.randn(2, 3).mlu()
    with pytest.raises(RuntimeError, match="^Found dtype Half but expected Float$"):  # torch_mlu's TensorIterator
        torch.cross(a, a.half(), dim=1)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float, but got double instead"):
        torch.linalg.cross(a, a, out=torch.empty(2, 3, dtype=torch.double, device="mlu"))
    with pytest.raises(RuntimeError, match="inputs dimension -1 must have length 3. Got 4 and 4"):
        torch.linalg.cross(torch.randn(2, 4).mlu(), torch.randn(2, 4).mlu())
    with pytest.raises(RuntimeError, match="inputs must have the same number of dimensions"):
        torch.linalg.cross(a, a[None])
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.linalg.cross(a, a, dim=2)
    with pytest.raises(NotImplementedError, match="\"cross\" not implemented for 'Bool'"):
        torch.linalg.cross(a > 0, a > 0)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device|mlu"):
        torch.linalg.cross(a, a.cpu())
