"""Compiled models against eager: forward and gradients (AOTAutograd) of an MLP, a small CNN and a transformer block
(attention through SDPA, layer norm, GELU), and a compiled function queues fewer commands than eager."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

from .helpers import assert_close, commands_of, kernel_records


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1, self.l2 = nn.Linear(12, 32), nn.Linear(32, 5)

    def forward(self, x):
        return self.l2(F.relu(self.l1(x)))


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv, self.bn, self.fc = nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.Linear(4 * 4 * 4, 3)

    def forward(self, x):
        return self.fc(F.max_pool2d(F.relu(self.bn(self.conv(x))), 2).flatten(1))


class Block(nn.Module):
    def __init__(self, dim=16, heads=2):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x):
        batch, tokens, dim = x.shape
        q, k, v = (t.view(batch, tokens, self.heads, dim // self.heads).transpose(1, 2)
                   for t in self.qkv(self.ln1(x)).split(dim, -1))
        attention = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(attention.transpose(1, 2).reshape(batch, tokens, dim))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def check_forward_and_gradients(model_cls, shape, tol=1e-4):
    torch.manual_seed(0)
    reference = model_cls()
    model = copy.deepcopy(reference).to("mlu")
    x = torch.randn(*shape)
    compiled = torch.compile(model)
    out = compiled(x.to("mlu"))
    expected = reference(x)
    assert_close(out, expected, tol)
    (out * torch.linspace(-1, 1, out.numel(), device="mlu").view(out.shape)).sum().backward()
    (expected * torch.linspace(-1, 1, expected.numel()).view(expected.shape)).sum().backward()
    for (name, param), ref_param in zip(model.named_parameters(), reference.parameters()):
        assert_close(param.grad, ref_param.grad, tol)


def test_mlp_forward_and_gradients():
    check_forward_and_gradients(MLP, (7, 12))


def test_small_cnn_forward_and_gradients():
    check_forward_and_gradients(SmallCNN, (2, 3, 8, 8))


def test_transformer_block_forward_and_gradients():
    check_forward_and_gradients(Block, (2, 6, 16))


def test_training_steps_match_eager():
    torch.manual_seed(1)
    reference = MLP()
    model = copy.deepcopy(reference).to("mlu")
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in (reference, model)]
    compiled = torch.compile(model)
    for step in range(3):
        x, target = torch.randn(8, 12), torch.randint(0, 5, (8,))
        for net, optimizer, device in ((compiled, optimizers[1], "mlu"), (reference, optimizers[0], "cpu")):
            optimizer.zero_grad()
            F.cross_entropy(net(x.to(device)), target.to(device)).backward()
            optimizer.step()
    for param, ref_param in zip(model.parameters(), reference.parameters()):
        assert_close(param, ref_param, 1e-5)


def test_compiled_chain_queues_fewer_commands_than_eager():
    def chain(x, bias, residual):
        return F.layer_norm(F.gelu(x + bias) + residual, x.shape[-1:]).softmax(-1)
    args = [torch.randn(8, 40, device="mlu"), torch.randn(40, device="mlu"), torch.randn(8, 40, device="mlu")]
    eager = commands_of(chain, *args)
    compiled = commands_of(torch.compile(chain), *args)
    kernels = kernel_records(compiled)
    assert len(compiled) < len(eager)
    assert len(kernels) == len(compiled) == 1  # the whole chain: one fused kernel, one command
    assert sum(r.model_us for r in compiled) < sum(r.model_us for r in eager)
