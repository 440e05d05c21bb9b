"""torch_mlu's `_foreach_*` kernels (torch_mlu/ops/foreach.py over cnnl/kernels/foreach.py): each tensor of a list
gets exactly what its single-tensor mlu op computes (bit for bit, on the first, validating call and on the
one-command calls after it), close to torch's CPU foreach; lists the native path cannot take (mixed dtypes,
non-contiguous, integers, mismatched shapes) still give torch's results; SGD with momentum takes the foreach path
and matches the per-tensor loop."""
import pytest
import torch

import cnnl.launch
from torch_mlu import fallback

FLOATS = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
SHAPES = [(3, 4), (5,), (2, 3, 4), (0,), ()]
TOLERANCE = {torch.float16: dict(rtol=2e-3, atol=2e-3), torch.bfloat16: dict(rtol=2e-2, atol=2e-2)}


def _lists(dtype, seed=0, shapes=SHAPES):
    generator = torch.Generator().manual_seed(seed)
    return ([torch.randn(s, generator=generator).to(dtype) for s in shapes],
            [torch.randn(s, generator=generator).to(dtype) for s in shapes])


def _steps(foreach, a, b):
    """The SGD-style sequence of foreach ops, or (foreach=False) the single-tensor ops it stands for."""
    if foreach:
        torch._foreach_add_(a, b, alpha=-0.37)
        torch._foreach_mul_(a, 0.9)
        torch._foreach_add_(a, 1.5)
        torch._foreach_mul_(a, b)
        return list(a) + list(torch._foreach_add(a, b, alpha=2)) + list(torch._foreach_mul(a, 3.0)) + \
            list(torch._foreach_add(a, 0.25)) + list(torch._foreach_mul(a, b))
    for t, o in zip(a, b):
        t.add_(o, alpha=-0.37)
        t.mul_(0.9)
        t.add_(1.5)
        t.mul_(o)
    return (list(a) + [torch.add(t, o, alpha=2) for t, o in zip(a, b)] + [torch.mul(t, 3.0) for t in a]
            + [torch.add(t, 0.25) for t in a] + [torch.mul(t, o) for t, o in zip(a, b)])


@pytest.mark.parametrize("dtype", FLOATS)
def test_each_tensor_gets_its_single_tensor_result(dtype):
    a, b = _lists(dtype)
    with fallback.mode("error"):
        for _ in range(2):  # the first call validates its descriptors, the second is one command per list
            got = _steps(True, [t.mlu() for t in a], [t.mlu() for t in b])
            want = _steps(False, [t.mlu() for t in a], [t.mlu() for t in b])
            for g, w in zip(got, want):
                assert g.device.type == "mlu" and g.dtype == dtype and g.shape == w.shape
                assert torch.equal(g.cpu(), w.cpu())
    for g, c in zip(got, _steps(True, [t.clone() for t in a], b)):
        torch.testing.assert_close(g.cpu(), c, **TOLERANCE.get(dtype, {}))


def test_one_command_per_list(monkeypatch):
    a, b = _lists(torch.float32)
    ma, mb = [t.mlu() for t in a], [t.mlu() for t in b]
    torch._foreach_add_(ma, mb, alpha=0.5)  # validates
    names = []
    submit = cnnl.launch.OpCall.submit

    def counting(self, *args, **kwargs):
        names.append(self.name)
        return submit(self, *args, **kwargs)

    monkeypatch.setattr(cnnl.launch.OpCall, "submit", counting)
    torch._foreach_add_(ma, mb, alpha=0.5)
    torch.mlu.synchronize()
    assert names == ["cnnlOpTensor"]
    for t, o, m in zip(a, b, ma):
        torch.testing.assert_close(m.cpu(), t + 0.5 * o + 0.5 * o)


def test_nan_inf_and_negative_zero_pass_through():
    a = [torch.tensor([float("nan"), float("inf"), -0.0, 1.0])]
    b = [torch.tensor([1.0, -float("inf"), -0.0, float("nan")])]
    for _ in range(2):
        ma, mb = [t.mlu() for t in a], [t.mlu() for t in b]
        torch._foreach_add_(ma, mb)
        want = a[0] + b[0]
        got = ma[0].cpu()
        assert torch.equal(got.isnan(), want.isnan())
        assert torch.equal(torch.nan_to_num(got), torch.nan_to_num(want))
        assert torch.signbit(got[2]) and torch.signbit(want[2])  # -0.0 + -0.0 = -0.0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_scalars_beyond_the_dtype_convert_as_torch_cpu(dtype):
    """A Python number out of the tensors' range becomes inf, as TensorIterator converts it (fill_'s checked
    conversion would raise), on the validating call and on the one-command call after it; and the scalar path
    queues one command with no fill of a device scalar."""
    a, _ = _lists(dtype, 4, [(4, 6), (3,)])
    for _ in range(2):
        ma = [t.mlu() for t in a]
        torch._foreach_mul_(ma, 1e39)
        want = [t.clone() for t in a]
        torch._foreach_mul_(want, 1e39)
        for m, w in zip(ma, want):
            assert torch.equal(m.cpu(), w)
    names = []
    submit = cnnl.launch.OpCall.submit

    def counting(self, *args, **kwargs):
        names.append(self.name)
        return submit(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cnnl.launch.OpCall, "submit", counting)
        torch._foreach_mul_(ma, 0.5)
        torch.mlu.synchronize()
    assert names == ["cnnlOpTensor"]


@pytest.mark.parametrize("case", ["mixed_dtypes", "non_contiguous", "integers", "cpu_scalar_list"])
def test_lists_off_the_native_path_match_cpu(case):
    a, b = _lists(torch.float32, 3, [(4, 6), (3, 3)])
    if case == "mixed_dtypes":
        a[1], b[1] = a[1].double(), b[1].double()
    if case == "integers":
        a, b = [(t * 10).int() for t in a], [(t * 10).int() for t in b]
    ma, mb = [t.mlu() for t in a], [t.mlu() for t in b]
    if case == "non_contiguous":
        ma, mb = [t.t() for t in ma], [t.t() for t in mb]
        a, b = [t.t() for t in a], [t.t() for t in b]
    if case == "cpu_scalar_list":
        torch._foreach_mul_(ma, 2)
        torch._foreach_mul_(a, 2)
    else:
        torch._foreach_add_(ma, mb, alpha=2)
        torch._foreach_add_(a, b, alpha=2)
    for m, c in zip(ma, a):
        torch.testing.assert_close(m.cpu(), c)


def test_mismatched_lists_raise():
    a, b = _lists(torch.float32)
    with pytest.raises(RuntimeError):
        torch._foreach_add_([t.mlu() for t in a], [t.mlu() for t in b[:-1]])
    with pytest.raises(RuntimeError):  # a shape mismatch inside the lists: add_'s own broadcast error
        torch._foreach_add_([torch.ones(3, device="mlu")], [torch.ones(4, device="mlu")])


def test_sgd_with_momentum_uses_foreach_and_matches_the_loop():
    torch.manual_seed(0)
    params = [torch.randn(5, 3), torch.randn(7), torch.randn(2, 2, 2)]
    grads = [[torch.randn_like(p) for p in params] for _ in range(3)]
    results = []
    for foreach in (True, False):
        weights = [p.clone().mlu().requires_grad_() for p in params]
        optimizer = torch.optim.SGD(weights, lr=0.05, momentum=0.9, weight_decay=0.01, foreach=foreach)
        for step in grads:
            for w, g in zip(weights, step):
                w.grad = g.mlu()
            optimizer.step()
        results.append([w.detach().cpu() for w in weights])
    for f, loop in zip(*results):
        assert torch.equal(f, loop)
