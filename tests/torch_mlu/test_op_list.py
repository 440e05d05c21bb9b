"""The op list of the native-kernels issue, family by family: each op (forward, and backward where it has one) runs on
mlu with the CPU fallback in error mode, so none of them may leave the device, and its values and gradients must match
torch's CPU kernels. A family that falls back fails here with the name of the aten op that has no mlu kernel."""
import pytest
import torch
import torch.nn.functional as F

from torch_mlu import fallback

TOLERANCE = dict(rtol=1e-4, atol=1e-5)


def _random(*shape, seed=0, dtype=torch.float32, low=None):
    generator = torch.Generator().manual_seed(seed)
    values = torch.randn(shape, generator=generator)
    if low is not None:
        values = values.abs() + low
    return values.to(dtype)


def _integers(high, *shape, seed=0):
    return torch.randint(0, high, shape, generator=torch.Generator().manual_seed(seed))


def _run(case, inputs, grad_inputs=()):
    """case(*inputs) on `device`: its outputs (a tensor or a tuple) and, for the inputs at positions `grad_inputs`,
    the gradients of sum(output * fixed weights)."""

    def on(device):
        moved = []
        for position, value in enumerate(inputs):
            if isinstance(value, torch.Tensor):
                value = value.detach().to(device)
                if position in grad_inputs:
                    value.requires_grad_()
            moved.append(value)
        outputs = case(*moved)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        results = [o.detach().cpu() for o in outputs]
        if grad_inputs:
            total = 0
            for index, output in enumerate(outputs):
                if output.requires_grad:
                    weights = _random(*output.shape, seed=100 + index).to(output.dtype).to(device)
                    total = total + (output * weights).sum()
            total.backward()
            results += [moved[position].grad.cpu() for position in grad_inputs]
        return results

    with fallback.mode("error"):
        got = on("mlu")
    assert fallback.counts() == {}
    want = on("cpu")
    assert len(got) == len(want)
    for index, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype and g.shape == w.shape, index
        tolerance = TOLERANCE if g.dtype in (torch.float32, torch.float64) else {}
        torch.testing.assert_close(g, w, equal_nan=True, **tolerance, msg=lambda m: f"output {index}: {m}")


x34 = _random(3, 4, seed=1)
y34 = _random(3, 4, seed=2)
row4 = _random(4, seed=3)
positive34 = _random(3, 4, seed=4, low=0.5)
ints34 = _integers(20, 3, 4, seed=5) - 10
flags34 = x34 > 0

ELEMENTWISE = {
    "add": (lambda a, b: (a + b, torch.add(a, b, alpha=2), a + 1.5), (x34, row4), (0, 1)),
    "sub_rsub": (lambda a, b: (a - b, 3 - a, torch.sub(a, b, alpha=0.5)), (x34, y34), (0, 1)),
    "mul_div": (lambda a, b: (a * b, a / b, a * 3, a / 2), (x34, positive34), (0, 1)),
    "div_modes": (lambda a, b: (torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"),
                                a // b, a % b, torch.fmod(a, b)), (x34 * 10, positive34), ()),
    "integer_arithmetic": (lambda a, b: (a + b, a * b, a - 3, a // 3, a % 3), (ints34, ints34.flip(0)), ()),
    "comparison": (lambda a, b: (a == b, a != b, a < b, a <= b, a > b, a >= b, a > 0, a == 0.5,
                                 torch.maximum(a, b), torch.minimum(a, b)), (x34, y34.round()), (0, 1)),
    "logical": (lambda p, q: (p & q, p | q, p ^ q, ~p, torch.logical_and(p, q), torch.logical_or(p, q),
                              torch.logical_xor(p, q), torch.logical_not(p)), (flags34, flags34.flip(1)), ()),
    "bitwise": (lambda a, b: (a & b, a | b, a ^ b, ~a, a << 2, a >> 1), (ints34, ints34.flip(1)), ()),
    "where": (lambda c, a, b: (torch.where(c, a, b), torch.where(c, a, 0.0)), (flags34, x34, row4), (1, 2)),
    "clamp": (lambda a, low, high: (a.clamp(-0.5, 0.5), a.clamp(min=0), a.clamp(max=0.2), a.clamp(low, high),
                                    torch.clamp_min(a, low), torch.clamp_max(a, high)),
              (x34, row4 - 1, row4.abs() + 0.1), (0, 1, 2)),
    "pow": (lambda a, b: (a ** 2, a ** 0.5, a ** b, 2 ** b, torch.pow(a, -1.5)), (positive34, y34), (0, 1)),
}


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_elementwise_family(name):
    _run(*ELEMENTWISE[name])


def test_elementwise_in_place_out_and_strided_forms():
    def case(a, b):
        c = a.clone()
        c.add_(b.t()).mul_(2).sub_(1).div_(3).clamp_(-1, 1).pow_(2)
        out = torch.empty(0, device=a.device)
        torch.mul(a[::2], b.t()[::2], out=out)
        d = a.clone()
        d.masked_fill_(d > 0, -1.0)
        return c, out, torch.where(a.t() > 0, a.t(), b), d

    _run(case, (_random(6, 5, seed=1), _random(5, 6, seed=2)))


UNARY = ["exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh", "sigmoid", "abs", "neg", "reciprocal", "erf",
         "expm1", "log1p", "log2", "log10", "asin", "acos", "atan", "sinh", "cosh", "asinh", "atanh", "sign",
         "floor", "ceil", "round", "trunc", "frac", "erfinv"]
ACTIVATIONS = {
    "relu": F.relu, "gelu": F.gelu, "gelu_tanh": lambda a: F.gelu(a, approximate="tanh"), "silu": F.silu,
    "leaky_relu": lambda a: F.leaky_relu(a, 0.1), "elu": F.elu, "softplus": F.softplus, "hardtanh": F.hardtanh,
    "hardswish": F.hardswish, "hardsigmoid": F.hardsigmoid, "mish": F.mish, "logsigmoid": F.logsigmoid,
    "relu6": F.relu6, "threshold": lambda a: F.threshold(a, 0.1, -2.0), "sigmoid": torch.sigmoid,
    "tanh": torch.tanh,
}


@pytest.mark.parametrize("name", UNARY)
def test_unary_math_with_backward(name):
    domain = {"log": 0.1, "sqrt": 0.1, "rsqrt": 0.1, "log1p": 0.1, "log2": 0.1, "log10": 0.1, "reciprocal": 0.1}
    values = _random(4, 5, seed=7, low=domain.get(name))
    if name in ("asin", "acos", "atanh", "erfinv"):
        values = torch.tanh(values) * 0.9
    _run(getattr(torch, name), (values,), (0,))


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_with_backward(name):
    _run(ACTIVATIONS[name], (_random(4, 5, seed=8) * 3,), (0,))


def test_casts_copy_fill_zero():
    def case(a, ints):
        copied = torch.empty(5, 4, device=a.device, dtype=torch.float16)
        copied.copy_(a.t())  # strided and dtype-converting
        broadcast = torch.empty(3, 4, 5, device=a.device)
        broadcast.copy_(a)  # broadcasting copy
        filled = torch.empty(3, 4, device=a.device).fill_(2.5)
        zeroed = a.clone().zero_()
        part = a.clone()
        part[:, 1].fill_(-1)
        return (a.half(), a.bfloat16(), a.double(), a.int(), a.long(), a.bool(), ints.float(), ints.to(torch.uint8),
                copied, broadcast, filled, zeroed, part, torch.zeros(2, 3, device=a.device),
                torch.ones(2, dtype=torch.int32, device=a.device), torch.full((2,), 7.0, device=a.device))

    _run(case, (_random(4, 5, seed=9) * 5, ints34.abs()))


REDUCTIONS = {
    "sum": lambda a: (a.sum(), a.sum(1), a.sum((0, 2), keepdim=True)),
    "mean": lambda a: (a.mean(), a.mean(1), a.mean(-1, keepdim=True)),
    "prod": lambda a: (a.prod(), a.prod(1)),
    "max_min": lambda a: (a.max(), a.min(), *a.max(1), *a.min(2)),
    "amax_amin": lambda a: (a.amax(), a.amax((0, 1)), a.amin(2)),
    "argmax_argmin": lambda a: (a.argmax(), a.argmax(1), a.argmin(2, keepdim=True)),
    "var_std": lambda a: (a.var(), a.var(1), a.std(2, correction=0), a.std(), *torch.var_mean(a, 1)),
    "norm": lambda a: (a.norm(), a.norm(dim=1), torch.linalg.vector_norm(a, 1, dim=2), a.norm(p=float("inf"))),
}


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_with_backward(name):
    grads = () if name == "argmax_argmin" else (0,)
    values = _random(3, 4, 5, seed=10)
    if name == "prod":
        values = values.clamp(-1.5, 1.5)
    _run(REDUCTIONS[name], (values,), grads)


def test_any_all_and_integer_reductions():
    _run(lambda p, i: (p.any(), p.all(), p.any(1), p.all(0), i.sum(), i.sum(1), i.max(), i.amax(0), i.argmax()),
         (flags34, ints34))


def test_cumsum_with_backward():
    _run(lambda a, i: (a.cumsum(0), a.cumsum(1), i.cumsum(1)), (x34, ints34), (0,))


def test_sort_and_topk_with_backward():
    values = _random(4, 7, seed=11)
    _run(lambda a: (*a.sort(1), *a.sort(0, descending=True), *a.topk(3), *a.topk(2, 0, largest=False),
                    a.argsort(1)), (values,), (0,))


def test_matrix_products_with_backward():
    def case(a, b, c, bias, batch1, batch2, w):
        return (a @ b, torch.mm(a, b), torch.addmm(bias, a, b, beta=0.5, alpha=2), torch.bmm(batch1, batch2),
                torch.baddbmm(c, batch1, batch2, alpha=0.5), F.linear(a, w, bias), torch.matmul(batch1, b),
                torch.matmul(a[0], b))

    _run(case, (_random(5, 6, seed=1), _random(6, 3, seed=2), _random(2, 5, 3, seed=3), _random(3, seed=4),
                _random(2, 5, 6, seed=5), _random(2, 6, 3, seed=6), _random(3, 6, seed=7)), (0, 1, 2, 3, 4, 5, 6))


def test_convolutions_with_backward():
    def case(x, w, bias, grouped, x1, w1, wt):
        return (F.conv2d(x, w, bias, stride=2, padding=1), F.conv2d(x, grouped, groups=2, dilation=2, padding=2),
                F.conv1d(x1, w1, padding=1), F.conv_transpose2d(x, wt, stride=2))

    _run(case, (_random(2, 4, 7, 7, seed=1), _random(6, 4, 3, 3, seed=2), _random(6, seed=3),
                _random(4, 2, 3, 3, seed=4), _random(2, 3, 9, seed=5), _random(5, 3, 3, seed=6),
                _random(4, 3, 2, 2, seed=7)), (0, 1, 2, 3, 4, 5, 6))


def test_pooling_with_backward():
    def case(x):
        pooled, indices = F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
        adaptive, adaptive_indices = F.adaptive_max_pool2d(x, (3, 2), return_indices=True)
        return (pooled, indices, F.max_pool2d(x, 2), F.avg_pool2d(x, 3, stride=2, padding=1),
                F.avg_pool2d(x, 2, ceil_mode=True, count_include_pad=False), F.adaptive_avg_pool2d(x, (3, 2)),
                F.adaptive_avg_pool2d(x, 1), adaptive, adaptive_indices)

    _run(case, (_random(2, 3, 7, 7, seed=12),), (0,))


def test_normalizations_with_backward():
    def case(x, weight, bias, ln_weight, ln_bias, running_mean, running_var):
        train = F.batch_norm(x, running_mean, running_var, weight, bias, training=True, momentum=0.1)
        evaluated = F.batch_norm(x, running_mean.detach().clone(), running_var.detach().clone(), weight, bias,
                                 training=False)
        return (train, running_mean, running_var, evaluated, F.layer_norm(x, (5, 6), ln_weight, ln_bias),
                F.layer_norm(x, (6,)), F.group_norm(x, 2, weight, bias), F.rms_norm(x, (5, 6), ln_weight),
                F.rms_norm(x, (6,), eps=1e-3))

    _run(case, (_random(3, 4, 5, 6, seed=13), _random(4, seed=1), _random(4, seed=2), _random(5, 6, seed=3),
                _random(5, 6, seed=4), torch.zeros(4), torch.ones(4)), (0, 1, 2, 3, 4))


def test_softmax_log_softmax_with_backward():
    _run(lambda a: (F.softmax(a, 1), F.log_softmax(a, -1), F.softmax(a, 0), torch.softmax(a.half(), 1)),
         (_random(4, 5, 3, seed=14) * 4,), (0,))


def test_dropout_keeps_or_scales_each_element_and_backward_uses_the_same_mask():
    x = (_random(64, 64, seed=15).abs() + 0.5).to("mlu").requires_grad_()
    with fallback.mode("error"):
        torch.manual_seed(0)
        out = F.dropout(x, 0.25, training=True)
        out.backward(torch.ones_like(out))
        kept = out != 0
        torch.testing.assert_close(out[kept], x.detach()[kept] / 0.75)
        torch.testing.assert_close(x.grad, kept.float() / 0.75)
        share = kept.float().mean().item()
        torch.manual_seed(0)
        again = F.dropout(x.detach(), 0.25, training=True)
        assert torch.equal(again.cpu(), out.detach().cpu())  # the same seed, the same mask
        assert torch.equal(F.dropout(x.detach(), 0.25, training=False).cpu(), x.detach().cpu())
    assert 0.70 < share < 0.80


def test_embedding_with_dense_backward():
    tokens = torch.tensor([[1, 3, 3, 0], [5, 1, 0, 2]])
    _run(lambda weight, ids: (F.embedding(ids, weight), F.embedding(ids, weight, padding_idx=0)),
         (_random(6, 4, seed=16), tokens), (0,))


def test_indexing_family_with_backward():
    index = torch.tensor([2, 0, 2])
    gather_index = _integers(4, 3, 4, seed=17)

    def case(a, src, mask):
        put = a.detach().clone()
        put[torch.tensor([0, 2]), torch.tensor([1, 3])] = torch.tensor([9.0, 8.0], device=a.device)
        accumulated = a.detach().clone().index_put_((index.to(a.device),), torch.ones(4, device=a.device),
                                                    accumulate=True)
        return (a.index_select(0, index.to(a.device)), a.index_select(1, index.to(a.device)),
                a.gather(1, gather_index.to(a.device)), a.scatter(1, gather_index.to(a.device), src),
                a.scatter_add(1, gather_index.to(a.device), src), torch.zeros_like(a).scatter_(1, gather_index.to(
                    a.device), 5.0), put, accumulated, a[index.to(a.device)], a.masked_fill(mask, 0.5),
                torch.nonzero(mask), mask.nonzero(as_tuple=True)[1], a[mask])

    _run(case, (x34, y34, flags34), (0, 1))


def test_cat_stack_and_views_with_backward():
    def case(a, b):
        pieces = a.split(2, 1)
        return (torch.cat([a, b]), torch.cat([a, b], 1), torch.stack([a, b]), torch.stack([a, b], 2),
                a.view(4, 3), a.reshape(2, 6), a.t().contiguous(), a.permute(1, 0).reshape(-1), a.unsqueeze(1),
                a.unsqueeze(0).squeeze(0), a[:, None].expand(3, 2, 4).contiguous(), a.narrow(1, 1, 2), a.flatten(),
                pieces[0] * 1, pieces[1] * 1, *[c * 1 for c in a.chunk(3, 0)], *[u * 1 for u in a.unbind(1)],
                a.transpose(0, 1) @ b, a[1:, ::2].clone(), a.flip(1), a.roll(1, 0), a.tril(), a.triu(1))

    _run(case, (x34, y34), (0, 1))


def test_losses_with_backward():
    targets = torch.tensor([1, 0, 4, 4, 2])
    def case(logits, weight, prediction, target, probability, binary):
        return (F.nll_loss(F.log_softmax(logits, 1), targets.to(logits.device)),
                F.nll_loss(F.log_softmax(logits, 1), targets.to(logits.device), weight=weight, ignore_index=2),
                F.cross_entropy(logits, targets.to(logits.device)),
                F.cross_entropy(logits, targets.to(logits.device), reduction="none", label_smoothing=0.1),
                F.cross_entropy(logits, probability.softmax(1)),
                F.mse_loss(prediction, target), F.mse_loss(prediction, target, reduction="sum"),
                F.binary_cross_entropy(prediction.sigmoid(), binary),
                F.binary_cross_entropy(prediction.sigmoid(), binary, weight=target.detach().abs(), reduction="none"),
                F.binary_cross_entropy_with_logits(prediction, binary),
                F.binary_cross_entropy_with_logits(prediction, binary, pos_weight=weight[:4]),
                F.smooth_l1_loss(prediction, target), F.smooth_l1_loss(prediction, target, beta=0.5, reduction="none"),
                F.huber_loss(prediction, target, delta=0.7))

    _run(case, (_random(5, 5, seed=18), _random(5, seed=19, low=0.2), _random(3, 4, seed=20),
                _random(3, 4, seed=21), _random(5, 5, seed=22), (_random(3, 4, seed=23) > 0).float()),
         (0, 2, 3, 4))  # (nll_loss has no gradient for its class weights)


def test_scaled_dot_product_attention_with_backward():
    def case(q, k, v, bias):
        mask = torch.ones(5, 7, dtype=torch.bool, device=q.device).tril(2)
        return (F.scaled_dot_product_attention(q, k, v), F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=0.3),
                F.scaled_dot_product_attention(q[:, :, :5], k[:, :, :5], v[:, :, :5], is_causal=True))

    _run(case, (_random(2, 3, 5, 8, seed=24), _random(2, 3, 7, 8, seed=25), _random(2, 3, 7, 8, seed=26),
                _random(5, 7, seed=27)), (0, 1, 2, 3))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("lengths", [(5, 7), (70, 90)])
def test_scaled_dot_product_attention_of_fully_masked_rows_is_zero(dtype, lengths):
    """Query rows that a boolean mask or an additive -inf mask leaves without a key: torch 2.13 gives 0 there (and
    gradients without NaN); mlu gives the same."""
    len_q, len_k = lengths

    def case(q, k, v):
        boolean = torch.rand(len_q, len_k, generator=torch.Generator().manual_seed(5)) > 0.3
        boolean[1], boolean[len_q - 1] = False, False
        additive = torch.zeros(2, 1, len_q, len_k, dtype=q.dtype)
        additive[:, :, ::3] = float("-inf")
        boolean, additive = boolean.to(q.device), additive.to(q.device)
        return (F.scaled_dot_product_attention(q, k, v, attn_mask=boolean),
                F.scaled_dot_product_attention(q, k, v, attn_mask=additive, scale=0.2))

    inputs = (_random(2, 3, len_q, 8, seed=40, dtype=dtype), _random(2, 3, len_k, 8, seed=41, dtype=dtype),
              _random(2, 3, len_k, 8, seed=42, dtype=dtype))
    with fallback.mode("error"):
        mlu = _run_on(case, inputs, "mlu")
    cpu = _run_on(case, inputs, "cpu")
    tolerance = TOLERANCE if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
    for got, want in zip(mlu, cpu):
        assert not got.isnan().any()
        torch.testing.assert_close(got.float(), want.float(), **tolerance)
    assert (mlu[0][:, :, [1, len_q - 1]] == 0).all() and (mlu[1][:, :, ::3] == 0).all()


def _run_on(case, inputs, device):
    moved = [t.detach().to(device).requires_grad_() for t in inputs]
    outputs = case(*moved)
    total = sum((output.float() * (index + 1)).sum() for index, output in enumerate(outputs))
    total.backward()
    return [o.detach().cpu() for o in outputs] + [t.grad.cpu() for t in moved]


@pytest.mark.parametrize("optimizer, options", [
    (torch.optim.SGD, dict(lr=0.1)),
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (torch.optim.Adam, dict(lr=0.01)),
    (torch.optim.Adam, dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    (torch.optim.AdamW, dict(lr=0.01, weight_decay=0.1)),
])
def test_foreach_optimizer_steps(optimizer, options):
    def train(device):
        params = [_random(4, 3, seed=30).to(device).requires_grad_(), _random(3, seed=31).to(device).requires_grad_()]
        step = optimizer(params, foreach=True, **options)
        for index in range(3):
            step.zero_grad()
            ((params[0] @ params[1]).sin() * (index + 1)).sum().backward()
            step.step()
        return [p.detach().cpu() for p in params] + [v.cpu() for state in step.state.values()
                                                      for v in state.values() if isinstance(v, torch.Tensor)]

    with fallback.mode("error"):
        got = train("mlu")
    assert fallback.counts() == {}
    for g, w in zip(got, train("cpu"), strict=True):
        torch.testing.assert_close(g, w, **TOLERANCE)


def test_foreach_ops_directly():
    a, b = [_random(3, 4, seed=40), _random(5, seed=41)], [_random(3, 4, seed=42), _random(5, seed=43, low=0.5)]

    def case(*tensors):
        xs, ys = list(tensors[:2]), list(tensors[2:])
        xs = [x.clone() for x in xs]
        torch._foreach_mul_(xs, 0.9)
        torch._foreach_add_(xs, ys, alpha=0.1)
        torch._foreach_addcmul_(xs, ys, ys, value=0.5)
        torch._foreach_addcdiv_(xs, ys, torch._foreach_sqrt(ys), value=-0.1)
        torch._foreach_lerp_(xs, ys, 0.3)
        torch._foreach_maximum_(xs, ys)
        return (*xs, *torch._foreach_div(ys, 2.0), *torch._foreach_neg(ys), torch._foreach_norm(ys)[0])

    _run(case, (*a, *b))
