"""Small models made locally with fixed seeds and exported with torch.onnx.export (the TorchScript exporter):
ResNet-, MobileNet- and YOLO-style CNNs and a tiny BERT."""
import warnings

import torch
from torch import nn


class Residual(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a = nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                               nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout))
        self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)) \
            if stride != 1 or cin != cout else nn.Identity()

    def forward(self, x):
        return torch.relu(self.a(x) + self.skip(x))


class ResNetish(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 7, 2, 3, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        self.blocks = nn.Sequential(Residual(8, 8, 1), Residual(8, 16, 2))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1), 1))


class MobileBlock(nn.Module):
    def __init__(self, c, expand):
        super().__init__()
        h = c * expand
        self.body = nn.Sequential(nn.Conv2d(c, h, 1), nn.BatchNorm2d(h), nn.ReLU6(),
                                  nn.Conv2d(h, h, 3, 1, 1, groups=h), nn.BatchNorm2d(h), nn.Hardswish())
        self.se = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(h, 4, 1), nn.ReLU(), nn.Conv2d(4, h, 1),
                                nn.Hardsigmoid())
        self.project = nn.Sequential(nn.Conv2d(h, c, 1), nn.BatchNorm2d(c))

    def forward(self, x):
        y = self.body(x)
        return x + self.project(y * self.se(y))


class MobileNetish(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.Hardswish())
        self.blocks = nn.Sequential(MobileBlock(8, 3), MobileBlock(8, 2))
        self.head = nn.Sequential(nn.AvgPool2d(2), nn.Flatten(), nn.Linear(8 * 8 * 8, 5), nn.Softmax(-1))

    def forward(self, x):
        return self.head(self.blocks(self.stem(x)))


class Yoloish(nn.Module):
    """Two detection heads (strides 8 and 16) with an upsample + concat neck, SiLU activations."""

    def __init__(self, classes=3, anchors=3):
        super().__init__()
        out = anchors * (5 + classes)
        self.c1 = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.BatchNorm2d(8), nn.SiLU(),
                                nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.SiLU(),
                                nn.Conv2d(16, 16, 3, 2, 1), nn.SiLU())
        self.c2 = nn.Sequential(nn.Conv2d(16, 32, 3, 2, 1), nn.SiLU())
        self.up = nn.Upsample(scale_factor=2, mode="nearest")
        self.neck = nn.Sequential(nn.Conv2d(48, 16, 1), nn.LeakyReLU(0.1))
        self.h8, self.h16 = nn.Conv2d(16, out, 1), nn.Conv2d(32, out, 1)

    def forward(self, x):
        p3 = self.c1(x)
        p4 = self.c2(p3)
        f = self.neck(torch.cat([self.up(p4), p3], 1))
        n = x.shape[0]
        return torch.sigmoid(self.h8(f)).view(n, 3, -1, f.shape[2] * f.shape[3]).permute(0, 1, 3, 2), \
            torch.sigmoid(self.h16(p4))


class TinyBert(nn.Module):
    def __init__(self, vocab=50, d=32, heads=4, layers=2, classes=3):
        super().__init__()
        self.embed, self.position = nn.Embedding(vocab, d), nn.Embedding(64, d)
        self.norm = nn.LayerNorm(d)
        self.layers = nn.ModuleList(nn.ModuleDict({"qkv": nn.Linear(d, 3 * d), "o": nn.Linear(d, d),
                                                   "n1": nn.LayerNorm(d), "f1": nn.Linear(d, 2 * d),
                                                   "f2": nn.Linear(2 * d, d), "n2": nn.LayerNorm(d)})
                                    for _ in range(layers))
        self.heads, self.cls = heads, nn.Linear(d, classes)

    def forward(self, ids, mask):
        b, s = ids.shape
        pos = torch.arange(s).unsqueeze(0)
        x = self.norm(self.embed(ids) + self.position(pos))
        bias = (1.0 - mask[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            q, k, v = layer["qkv"](x).chunk(3, -1)
            split = lambda t: t.reshape(b, s, self.heads, -1).transpose(1, 2)  # noqa: E731
            q, k, v = split(q), split(k), split(v)
            att = torch.softmax(q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5) + bias, -1)
            y = (att @ v).transpose(1, 2).reshape(b, s, -1)
            x = layer["n1"](x + layer["o"](y))
            x = layer["n2"](x + layer["f2"](nn.functional.gelu(layer["f1"](x))))
        return self.cls(x[:, 0])


def export(model, args, path, names, outputs, dynamic=None, opset=17):
    """Export with a fixed seed's weights, in eval mode (BN uses running stats, randomised here)."""
    torch.manual_seed(0)
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
            module.weight.data.uniform_(0.5, 1.5)
            module.bias.data.uniform_(-0.2, 0.2)
    model.eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, path, input_names=names, output_names=outputs, dynamic_axes=dynamic,
                          opset_version=opset, dynamo=False)
    return path
