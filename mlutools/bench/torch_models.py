"""Models the torch benchmarks train or run (and the training tests reuse): ResNet-18- and ResNet-50-style networks
(torchvision's layout: 7x7 stem, max pool, BasicBlocks [2, 2, 2, 2] / Bottlenecks [3, 4, 6, 3], adaptive average
pool, linear head; torchvision itself is not a dependency) and a GPT-style decoder block (token and position embeddings, pre-norm causal self-attention through
scaled_dot_product_attention, GELU MLP, tied-free language-model head)."""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with batch norm, and the identity (or a strided 1x1 projection) added back."""

    def __init__(self, inputs: int, outputs: int, stride: int = 1):
        super().__init__()
        self.conv1 = nn.Conv2d(inputs, outputs, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(outputs)
        self.conv2 = nn.Conv2d(outputs, outputs, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(outputs)
        self.shortcut = nn.Sequential()
        if stride != 1 or inputs != outputs:
            self.shortcut = nn.Sequential(nn.Conv2d(inputs, outputs, 1, stride, bias=False), nn.BatchNorm2d(outputs))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.shortcut(x))


class ResNet18(nn.Module):
    """ResNet-18 (BasicBlocks [2, 2, 2, 2]); `width` is the stem's channels (64 in the paper). `small_images`:
    the CIFAR variant's stem (a 3x3 convolution, no max pool) for 32x32 inputs, whose last stage then still sees
    4x4 maps (the ImageNet stem leaves 1x1 maps there, where batch norm over a small batch is ill-conditioned)."""

    def __init__(self, classes: int = 10, width: int = 64, small_images: bool = False):
        super().__init__()
        if small_images:
            self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        else:
            self.stem = nn.Sequential(nn.Conv2d(3, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
                                      nn.MaxPool2d(3, 2, 1))
        layers, channels = [], width
        for stage, blocks in enumerate((2, 2, 2, 2)):
            outputs = width * 2 ** stage
            for block in range(blocks):
                layers.append(BasicBlock(channels, outputs, 2 if stage and not block else 1))
                channels = outputs
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(channels, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


class Bottleneck(nn.Module):
    """1x1 reduce, 3x3 (strided), 1x1 expand (x4), each with batch norm; the identity or a strided 1x1 projection
    added back (torchvision's ResNet v1.5: the stride on the 3x3)."""

    def __init__(self, inputs: int, width: int, stride: int = 1):
        super().__init__()
        outputs = width * 4
        self.body = nn.Sequential(nn.Conv2d(inputs, width, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
                                  nn.Conv2d(width, width, 3, stride, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU(),
                                  nn.Conv2d(width, outputs, 1, bias=False), nn.BatchNorm2d(outputs))
        self.shortcut = nn.Sequential()
        if stride != 1 or inputs != outputs:
            self.shortcut = nn.Sequential(nn.Conv2d(inputs, outputs, 1, stride, bias=False), nn.BatchNorm2d(outputs))

    def forward(self, x):
        return F.relu(self.body(x) + self.shortcut(x))


class ResNet50(nn.Module):
    """ResNet-50 (Bottlenecks [3, 4, 6, 3], 1000 classes) for 224 x 224 images."""

    def __init__(self, classes: int = 1000):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        layers, channels = [], 64
        for stage, blocks in enumerate((3, 4, 6, 3)):
            width = 64 * 2 ** stage
            for block in range(blocks):
                layers.append(Bottleneck(channels, width, 2 if stage and not block else 1))
                channels = width * 4
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(channels, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def randomize_batch_norms(model: nn.Module, seed: int = 0) -> nn.Module:
    """Running statistics and affine parameters drawn from a fixed seed (fresh ones are 0/1: an inference
    benchmark would fold them to nothing), in eval mode."""
    generator = torch.Generator().manual_seed(seed)
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5, generator=generator)
            module.running_var.uniform_(0.5, 2.0, generator=generator)
            module.weight.data.uniform_(0.5, 1.5, generator=generator)
            module.bias.data.uniform_(-0.2, 0.2, generator=generator)
    return model.eval()


class GPTBlock(nn.Module):
    """A GPT-style decoder: embeddings, one pre-norm block (causal attention, GELU MLP), final norm and head."""

    def __init__(self, vocab: int = 256, dim: int = 128, heads: int = 4, context: int = 64):
        super().__init__()
        self.heads = heads
        self.tokens, self.positions = nn.Embedding(vocab, dim), nn.Embedding(context, dim)
        self.norm1, self.norm2, self.norm_out = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.projection = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"), nn.Linear(4 * dim, dim))
        self.dropout = nn.Dropout(0.1)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        batch, length = tokens.shape
        x = self.tokens(tokens) + self.positions(torch.arange(length, device=tokens.device))
        q, k, v = self.qkv(self.norm1(x)).split(x.shape[-1], dim=-1)
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.dropout(self.projection(attended.transpose(1, 2).reshape(batch, length, -1)))
        x = x + self.dropout(self.mlp(self.norm2(x)))
        return self.head(self.norm_out(x))
