"""torch_mlu's `_foreach_*` kernels (torch_mlu/ops/foreach.py over cnnl/kernels/foreach.py): each tensor of a list
gets exactly what its single-tensor mlu op computes (bit for bit, on the first, validating call and on the
one-command calls after it), close to torch's CPU foreach; lists the native path cannot take (mixed dtypes,
non-contiguous, integers, mismatched shapes) still give torch's results; SGD with momentum, Adam and AdamW take
the foreach path, one command per list, and match their per-tensor loops."""
import pytest
import torch

import cnnl.opcall
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


def _adam_steps(foreach, a, b, c):
    """lerp, addcmul, addcdiv, sqrt and div with Scalar and ScalarList numbers (c holds no negative value), or
    (foreach=False) the single-tensor ops they stand for."""
    n = len(a)
    divisors, steps, weights = [0.5 + i for i in range(n)], [-0.01 * (i + 1) for i in range(n)], [0.3] * n
    if foreach:
        torch._foreach_lerp_(a, b, 0.1)
        torch._foreach_addcmul_(c, b, b, 0.001)
        d = torch._foreach_sqrt(c)
        torch._foreach_div_(d, divisors)
        torch._foreach_add_(d, 1e-3)
        torch._foreach_addcdiv_(a, b, d, steps)
        torch._foreach_addcmul_(a, b, c, weights)
        torch._foreach_addcdiv_(c, c, d, 0.7)
        torch._foreach_div_(a, 7.0)
        torch._foreach_sqrt_(c)
        return (list(a) + list(c) + list(d) + list(torch._foreach_lerp(a, c, 0.75))
                + list(torch._foreach_addcmul(a, b, c, 2.0)) + list(torch._foreach_addcdiv(a, b, d, steps))
                + list(torch._foreach_addcmul(a, b, d, weights)) + list(torch._foreach_addcdiv(a, b, d, 0.5))
                + list(torch._foreach_div(a, 3.0)) + list(torch._foreach_div(a, divisors)))
    d = []
    for t, o, s, divisor, step, weight in zip(a, b, c, divisors, steps, weights):
        t.lerp_(o, 0.1)
        s.addcmul_(o, o, value=0.001)
        root = torch.sqrt(s)
        root.div_(divisor)
        root.add_(1e-3)
        t.addcdiv_(o, root, value=step)
        t.addcmul_(o, s, value=weight)
        s.addcdiv_(s, root, value=0.7)
        t.div_(7.0)
        s.sqrt_()
        d.append(root)
    return (list(a) + list(c) + d + [torch.lerp(t, s, 0.75) for t, s in zip(a, c)]
            + [torch.addcmul(t, o, s, value=2.0) for t, o, s in zip(a, b, c)]
            + [torch.addcdiv(t, o, r, value=v) for t, o, r, v in zip(a, b, d, steps)]
            + [torch.addcmul(t, o, r, value=v) for t, o, r, v in zip(a, b, d, weights)]
            + [torch.addcdiv(t, o, r, value=0.5) for t, o, r in zip(a, b, d)]
            + [torch.div(t, 3.0) for t in a] + [torch.div(t, v) for t, v in zip(a, divisors)])


@pytest.mark.parametrize("dtype", FLOATS)
def test_adam_ops_give_each_tensor_its_single_tensor_result(dtype):
    a, b = _lists(dtype, 1)
    c = [t.abs() for t in _lists(dtype, 2)[0]]
    with fallback.mode("error"):
        for _ in range(2):  # the first call validates its descriptors, the second is one command per list
            got = _adam_steps(True, *([t.mlu() for t in x] for x in (a, b, c)))
            want = _adam_steps(False, *([t.mlu() for t in x] for x in (a, b, c)))
            for g, w in zip(got, want):
                assert g.device.type == "mlu" and g.dtype == dtype and g.shape == w.shape
                assert torch.equal(g.cpu(), w.cpu())
    cpu = _adam_steps(True, *([t.clone() for t in x] for x in (a, b, c)))
    for g, w in zip(got, cpu):
        torch.testing.assert_close(g.cpu(), w, **TOLERANCE.get(dtype, dict(rtol=1e-5, atol=1e-6)))


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
    torch._foreach_add_(ma, mb, alpha=0.5)  # (cnnl validates the descriptors)
    names = []
    submit = cnnl.opcall.OpCall.submit

    def counting(self, *args, **kwargs):
        names.append(self.name)
        return submit(self, *args, **kwargs)

    monkeypatch.setattr(cnnl.opcall.OpCall, "submit", counting)
    torch._foreach_add_(ma, mb, alpha=0.5)
    torch.mlu.synchronize()
    assert names == ["cnnlForeachBinaryOp"]
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
    submit = cnnl.opcall.OpCall.submit

    def counting(self, *args, **kwargs):
        names.append(self.name)
        return submit(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cnnl.opcall.OpCall, "submit", counting)
        torch._foreach_mul_(ma, 0.5)
        torch.mlu.synchronize()
    assert names == ["cnnlForeachBinaryOp"]


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


def test_adam_ops_off_the_native_path_match_cpu():
    a, b = _lists(torch.float32, 5, [(4, 6), (3, 3)])
    c = [t.abs() for t in _lists(torch.float32, 6, [(4, 6), (3, 3)])[0]]
    a[1], b[1], c[1] = a[1].double(), b[1].double(), c[1].double()  # mixed dtypes: the per-tensor loop
    got = _adam_steps(True, *([t.mlu() for t in x] for x in (a, b, c)))
    want = _adam_steps(True, a, b, c)
    for g, w in zip(got, want):
        torch.testing.assert_close(g.cpu(), w)


def test_mismatched_lists_raise():
    a, b = _lists(torch.float32)
    with pytest.raises(RuntimeError):
        torch._foreach_add_([t.mlu() for t in a], [t.mlu() for t in b[:-1]])
    with pytest.raises(RuntimeError):  # a shape mismatch inside the lists: add_'s own broadcast error
        torch._foreach_add_([torch.ones(3, device="mlu")], [torch.ones(4, device="mlu")])
    with pytest.raises(RuntimeError, match="same number of elements as scalar list"):
        torch._foreach_div_([t.mlu() for t in a], [2.0])
    with pytest.raises(RuntimeError, match="same number of tensors"):
        torch._foreach_addcmul_([t.mlu() for t in a], [t.mlu() for t in b], [t.mlu() for t in b[:-1]], 0.5)


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


@pytest.mark.parametrize("optimizer", [torch.optim.Adam, torch.optim.AdamW])
def test_adam_and_adamw_take_one_command_per_list_and_match_the_loop(optimizer, monkeypatch):
    torch.manual_seed(1)
    params = [torch.randn(5, 3), torch.randn(7), torch.randn(2, 2, 2)]
    grads = [[torch.randn_like(p) for p in params] for _ in range(4)]
    results, commands = [], []
    for foreach in (True, False):
        weights = [p.clone().mlu().requires_grad_() for p in params]
        adam = optimizer(weights, lr=0.05, weight_decay=0.01, foreach=foreach)
        for number, step in enumerate(grads):
            for w, g in zip(weights, step):
                w.grad = g.mlu()
            names = []
            if number == len(grads) - 1:  # the descriptors were validated by then
                submit = cnnl.opcall.OpCall.submit

                def counting(self, *args, **kwargs):
                    names.append(self.name)
                    return submit(self, *args, **kwargs)

                monkeypatch.setattr(cnnl.opcall.OpCall, "submit", counting)
            adam.step()
            torch.mlu.synchronize()
            monkeypatch.undo()
        commands.append(names)
        results.append([w.detach().cpu() for w in weights])
    for f, loop in zip(*results):
        assert torch.equal(f, loop)
    assert len(commands[0]) <= 10 < len(commands[1])  # per list, not per tensor
    assert "cnnlFill_v3" not in commands[0]
