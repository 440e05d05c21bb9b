"""End to end: a small CNN (conv, batch norm, relu, max pool, linear, cross entropy, SGD with momentum) and a small
transformer block (embedding, causal self-attention, layer norm, GELU, AdamW) train 20 steps on mlu, and a
ResNet-18 (BasicBlocks [2, 2, 2, 2]) 3 steps, with the CPU fallback in error mode (no op may leave the device), and
match the same models on the CPU: every loss, and the parameters at the end. (The tolerances allow for CPU kernels that sum
in another order in the autograd engine's device thread than in the main thread: a ReLU or max-pool tie that flips
on such a difference moves later steps a little.)"""
import torch
import torch.nn.functional as F
from torch import nn

from mlutools.bench.torch_models import ResNet18
from torch_mlu import fallback

STEPS = 20


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.conv2, self.bn2 = nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.fc(x.flatten(1))


class TransformerBlock(nn.Module):
    def __init__(self, vocab=50, dim=32, heads=4, seq=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.position = nn.Parameter(torch.randn(seq, dim) * 0.02)
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        # no projection biases: the key bias has a zero gradient in exact arithmetic, and AdamW turns the rounding
        # noise standing in for it into full-size steps, different on any two machines
        self.attention = nn.MultiheadAttention(dim, heads, batch_first=True, bias=False)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.head = nn.Linear(dim, vocab)

    def forward(self, tokens):
        x = self.embed(tokens) + self.position
        h = self.norm1(x)
        causal = torch.triu(torch.ones(tokens.shape[1], tokens.shape[1], dtype=torch.bool, device=tokens.device), 1)
        attended, _ = self.attention(h, h, h, attn_mask=causal, need_weights=False)
        x = x + attended
        return self.head(x + self.mlp(self.norm2(x)))


def _train_cnn(device):
    torch.manual_seed(0)
    model = SmallCNN().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9)
    generator = torch.Generator().manual_seed(1)
    images = torch.randn(2, 16, 3, 16, 16, generator=generator)  # two batches, seen in turn: the loss must fall
    labels = torch.randint(0, 10, (2, 16), generator=generator)
    losses = []
    for step in range(STEPS):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images[step % 2].to(device)), labels[step % 2].to(device))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, model


def _train_transformer(device):
    torch.manual_seed(0)
    model = TransformerBlock().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    data = torch.randint(0, 50, (2, 8, 17), generator=torch.Generator().manual_seed(2))
    losses = []
    for step in range(STEPS):
        optimizer.zero_grad()
        tokens, targets = data[step % 2, :, :-1].to(device), data[step % 2, :, 1:].to(device)
        loss = F.cross_entropy(model(tokens).reshape(-1, 50), targets.reshape(-1))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, model


def _train_resnet(device):
    # the CIFAR stem at half width: 32x32 inputs leave 4x4 maps in the last stage, where batch norm over the batch
    # of 2 is well conditioned (with 1x1 maps, float32 on the CPU itself differs from float64 by ~1e-3)
    torch.manual_seed(0)
    model = ResNet18(width=32, small_images=True).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    generator = torch.Generator().manual_seed(1)
    images, labels = torch.randn(2, 3, 32, 32, generator=generator), torch.randint(0, 10, (2,), generator=generator)
    losses = []
    for _ in range(3):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images.to(device)), labels.to(device))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, model


def _assert_same_training(train, rtol, atol):
    cpu_losses, cpu_model = train("cpu")
    with fallback.mode("error"):
        mlu_losses, mlu_model = train("mlu")
        torch.mlu.synchronize()
    assert fallback.counts() == {}
    assert all(p.device.type == "mlu" for p in mlu_model.parameters())
    assert mlu_losses[-1] < 0.8 * mlu_losses[0]  # it learns
    torch.testing.assert_close(torch.tensor(mlu_losses), torch.tensor(cpu_losses), rtol=rtol, atol=atol)
    for (name, want), got in zip(cpu_model.state_dict().items(), mlu_model.state_dict().values()):
        torch.testing.assert_close(got.cpu(), want, rtol=rtol, atol=atol, msg=name)


def test_small_cnn_trains_like_cpu():
    _assert_same_training(_train_cnn, rtol=1e-3, atol=1e-4)


def test_transformer_block_trains_like_cpu():
    _assert_same_training(_train_transformer, rtol=1e-3, atol=1e-4)


def test_resnet18_trains_like_cpu():
    _assert_same_training(_train_resnet, rtol=1e-3, atol=1e-4)
