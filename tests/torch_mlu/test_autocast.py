"""torch.autocast("mlu") with torch's own op lists (lower precision, fp32, promote), torch.mlu.amp, and
torch.amp.GradScaler("mlu"): exact unscaling, skipped steps on inf/nan, scale growth and backoff."""
import pytest
import torch

LOW = [torch.float16, torch.bfloat16]


@pytest.mark.parametrize("dtype", LOW)
def test_lower_precision_ops_cast_down(dtype):
    a, b = torch.randn(8, 8, device="mlu"), torch.randn(8, 8, device="mlu")
    batch = torch.randn(2, 8, 8, device="mlu")
    with torch.autocast("mlu", dtype=dtype):
        assert torch.is_autocast_enabled("mlu") and torch.get_autocast_dtype("mlu") == dtype
        assert (a @ b).dtype == dtype                               # matmul -> mm
        assert torch.mm(a, b).dtype == dtype
        assert torch.addmm(a, a, b).dtype == dtype
        assert torch.bmm(batch, batch).dtype == dtype
        assert torch.nn.functional.linear(a, b).dtype == dtype
        assert (a + b).dtype == torch.float32                       # not on a list: unchanged
        product = a @ b
    assert torch.equal(product.cpu(), torch.mm(a.to(dtype), b.to(dtype)).cpu())  # the inputs were cast down
    assert not torch.is_autocast_enabled("mlu")


def test_fp32_and_promote_lists():
    x = torch.randn(4, 6, device="mlu", dtype=torch.float16)
    y = torch.randn(4, 6, device="mlu")
    with torch.autocast("mlu", dtype=torch.float16):
        assert torch.softmax(x, -1).dtype == torch.float32          # fp32_set_opt_dtype
        assert torch.exp(x).dtype == torch.float32                  # fp32
        assert torch.nn.functional.layer_norm(x, (6,)).dtype == torch.float32
        assert torch.nn.functional.mse_loss(x, x).dtype == torch.float32
        assert torch.addcmul(x, x, y).dtype == torch.float32       # promote: the widest input
        assert torch.atan2(x, y).dtype == torch.float32
        with torch.autocast("mlu", enabled=False):
            assert (y @ y.t()).dtype == torch.float32


def test_torch_mlu_amp_names_and_custom_fwd():
    a = torch.randn(4, 4, device="mlu")
    with torch.mlu.amp.autocast(dtype=torch.bfloat16):
        assert torch.mlu.amp.is_autocast_enabled() and torch.mlu.amp.get_autocast_dtype() == torch.bfloat16
        assert (a @ a).dtype == torch.bfloat16
    assert torch.mlu.get_amp_supported_dtype() == [torch.float16, torch.bfloat16]

    class Square(torch.autograd.Function):
        @staticmethod
        @torch.mlu.amp.custom_fwd(cast_inputs=torch.float32)
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @torch.mlu.amp.custom_bwd
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad

    h = torch.ones(3, device="mlu", dtype=torch.float16, requires_grad=True)
    with torch.autocast("mlu", dtype=torch.float16):
        out = Square.apply(h)
    assert out.dtype == torch.float32


def _train(device, scaler=None, steps=4):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 1)).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    data = torch.randn(16, 6).to(device), torch.randn(16, 1).to(device)
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(data[0]), data[1])
        if scaler is None:
            loss.backward()
            opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
    return [p.detach().cpu() for p in model.parameters()]


def test_grad_scaler_steps_match_unscaled_training():
    scaler = torch.amp.GradScaler("mlu", init_scale=2.0 ** 10, growth_interval=2)
    scaled = _train("mlu", scaler)
    plain = _train("cpu")
    for got, want in zip(scaled, plain):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    assert scaler.get_scale() == 2.0 ** 12  # grew twice (every 2 finite steps)
    assert isinstance(torch.mlu.amp.GradScaler(), torch.amp.GradScaler)


def test_grad_scaler_skips_non_finite_steps_and_backs_off():
    model = torch.nn.Linear(3, 1).to("mlu")
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    scaler = torch.amp.GradScaler("mlu", init_scale=8.0)
    before = [p.detach().cpu().clone() for p in model.parameters()]
    loss = model(torch.ones(2, 3, device="mlu")).sum() * float("inf")
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert all(torch.equal(b, p.detach().cpu()) for b, p in zip(before, model.parameters()))
    assert scaler.get_scale() == 4.0


def test_torch_mlus_autocast_state_functions():
    assert not torch.mlu.is_autocast_enabled()
    with torch.autocast("mlu", dtype=torch.bfloat16):
        assert torch.mlu.is_autocast_enabled() and torch.mlu.get_autocast_dtype() == torch.bfloat16
    assert not torch.mlu.is_autocast_enabled()
    before = torch.mlu.get_autocast_dtype()
    try:
        torch.mlu.set_autocast_enabled(True)
        torch.mlu.set_autocast_dtype(torch.bfloat16)
        a = torch.randn(8, 8).mlu()
        assert (a @ a).dtype == torch.bfloat16
    finally:
        torch.mlu.set_autocast_enabled(False)
        torch.mlu.set_autocast_dtype(before)
    assert (a @ a).dtype == torch.float32
    with pytest.raises(RuntimeError, match="float16 and bfloat16"):
        torch.mlu.set_autocast_dtype(torch.float64)
    with pytest.raises(TypeError, match="enabled must be a bool"):
        torch.mlu.set_autocast_enabled("yes")
