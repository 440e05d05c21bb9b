"""Random numbers from the mlu generators through cnnl's Philox generator: normal_, uniform_, bernoulli_ (float p),
native_dropout and its backward. An mlu generator is a (seed, offset) pair: each call hands both to a cnnl Philox
generator (cnnlRandSetPseudoRandomGeneratorSeed / ...Offset) and stores back the offset the call advanced it to,
so the same seed gives the same numbers. Other random ops run on the CPU fallback with a CPU generator seeded from
the mlu generator's state (csrc/mlu.cpp), so torch.mlu.manual_seed governs them too."""
from __future__ import annotations

import threading

import torch

import cnnl

from .. import _state
from ._core import FLOATING, TORCH_TO_CNNL, aten, desc, fallback, handle, register, workspace
from .copy import copy_into
from .fill import device_scalar

_local = threading.local()


def default_generator(device: torch.device) -> torch.Generator:
    return _state.C.default_generator(device.index)


def _philox(generator: torch.Generator):
    """This thread's cnnl Philox generator, set to the torch generator's seed and offset."""
    made = getattr(_local, "generator", None)
    if made is None:
        made = _local.generator = cnnl.randCreateGenerator(cnnl.CNNL_RAND_RNG_PHILOX)
    cnnl.randSetPseudoRandomGeneratorSeed(made, generator.initial_seed())
    cnnl.randSetPseudoRandomGeneratorOffset(made, generator.get_offset())
    return made


def _draw(self: torch.Tensor, generator, draw) -> torch.Tensor:
    """Fill `self` with draw(handle, philox, dense_target); the torch generator advances as cnnl's did."""
    if self.numel() == 0:
        return self
    source = generator if generator is not None else default_generator(self.device)
    if source.device.type != self.device.type:
        raise RuntimeError(f"Expected a '{self.device.type}' device type for generator but found "
                           f"'{source.device.type}'")
    if source.device != self.device:
        raise RuntimeError(f"Expected a generator on {self.device}, but the generator is on {source.device}")
    target = self if self.is_contiguous() else torch.empty(self.shape, dtype=self.dtype, device=self.device)
    philox = _philox(source)
    draw(handle(target), philox, target)
    source.set_offset(cnnl.randGetPseudoRandomGeneratorOffset(philox))
    if target is not self:
        copy_into(target, self)
    return self


@register("aten::normal_")
def normal_(self: torch.Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> torch.Tensor:
    """aten::normal_(self, mean, std, *, generator) (cnnlRandGenerateNormal)."""
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    if self.dtype not in FLOATING:
        return fallback(aten.normal_.default, self, mean, std, generator=generator)
    return _draw(self, generator, lambda h, philox, target: cnnl.randGenerateNormal(
        h, philox, TORCH_TO_CNNL[target.dtype], None, target.numel(), mean, std, target.data_ptr()))


@register("aten::uniform_")
def uniform_(self: torch.Tensor, from_: float = 0.0, to: float = 1.0, *, generator=None) -> torch.Tensor:
    """aten::uniform_(self, from, to, *, generator): [from, to) (cnnlRandGenerateUniform)."""
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}")
    if self.dtype not in FLOATING:
        return fallback(aten.uniform_.default, self, from_, to, generator=generator)
    return _draw(self, generator, lambda h, philox, target: cnnl.randGenerateUniform(
        h, philox, TORCH_TO_CNNL[target.dtype], None, target.numel(), from_, to, target.data_ptr()))


@register("aten::bernoulli_.float")
def bernoulli_(self: torch.Tensor, p: float = 0.5, *, generator=None) -> torch.Tensor:
    """aten::bernoulli_.float(self, p, *, generator): 1 with probability p (uniform < p, cnnlLogicOp)."""
    if not 0 <= p <= 1:  # p as C++ prints a double (2, not 2.0)
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p:g}")
    if self.dtype not in TORCH_TO_CNNL:
        return fallback(aten.bernoulli_.float, self, p, generator=generator)
    if self.numel() == 0:
        return self
    uniform = uniform_(torch.empty(self.shape, dtype=torch.float32, device=self.device), 0.0, 1.0,
                       generator=generator)
    threshold = device_scalar(p, torch.float32, self.device)
    hits = torch.empty(self.shape, dtype=torch.bool, device=self.device)
    h = handle(hits)
    size = cnnl.getLogicOpWorkspaceSize(h, desc(uniform), desc(threshold), desc(hits))
    ws, _keep = workspace(size, self.device)
    cnnl.logicOp(h, cnnl.CNNL_LOGIC_OP_LT, desc(uniform), uniform.data_ptr(), desc(threshold),
                 threshold.data_ptr(), ws, size, desc(hits), hits.data_ptr())
    copy_into(hits, self)
    return self


def _dropout(input: torch.Tensor, drop: float, generator=None) -> tuple[torch.Tensor, torch.Tensor]:
    """(input * mask / (1 - drop), bool mask keeping each element with probability 1 - drop), 0 < drop < 1, for a
    non-empty floating input (cnnlFusedDropout_v2)."""
    source = generator if generator is not None else default_generator(input.device)
    dense = input if input.is_contiguous() else input.contiguous()
    output = torch.empty(dense.shape, dtype=dense.dtype, device=dense.device)
    mask = torch.empty(dense.shape, dtype=torch.bool, device=dense.device)
    philox = _philox(source)
    cnnl.fusedDropout_v2(handle(output), philox, desc(dense), dense.data_ptr(), drop, None, desc(mask),
                         mask.data_ptr(), desc(output), output.data_ptr())
    source.set_offset(cnnl.randGetPseudoRandomGeneratorOffset(philox))
    return output, mask


@register("aten::native_dropout")
def native_dropout(input: torch.Tensor, p: float, train) -> tuple[torch.Tensor, torch.Tensor]:
    """aten::native_dropout(input, p, train) -> (output, mask) (cnnlFusedDropout_v2): mask keeps an element with
    probability 1 - p, output = input * mask / (1 - p)."""
    if not train or not 0 < p < 1 or input.dtype not in FLOATING or input.numel() == 0:
        return fallback(aten.native_dropout.default, input, p, train)
    return _dropout(input, p)


@register("aten::_fused_dropout")
def fused_dropout(input: torch.Tensor, p: float, generator=None) -> tuple[torch.Tensor, torch.Tensor]:
    """aten::_fused_dropout(input, p, generator) -> (output, uint8 mask): torch's CUDA-only dropout that
    torch_mlu has too; `p` is the probability of KEEPING an element, output = input * mask / p. Its backward is
    _masked_scale(grad, mask, 1 / p)."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if input.dtype not in FLOATING:
        raise RuntimeError(f"_fused_dropout: expected a floating input, got {input.dtype}")
    if p == 1 or input.numel() == 0:
        return input.clone(memory_format=torch.contiguous_format), torch.ones(input.shape, dtype=torch.uint8,
                                                                            device=input.device)
    if p == 0:  # nothing kept (the limit of input * mask / p; CUDA's kernel would divide 0 by 0)
        return torch.zeros(input.shape, dtype=input.dtype, device=input.device), \
            torch.zeros(input.shape, dtype=torch.uint8, device=input.device)
    output, mask = _dropout(input, 1 - p, generator)
    return output, mask.to(torch.uint8)


@register("aten::_masked_scale")
def masked_scale(input: torch.Tensor, mask: torch.Tensor, scale: float) -> torch.Tensor:
    """aten::_masked_scale(input, mask, scale) = input * mask * scale (torch's CUDA-only kernel behind
    _fused_dropout's backward; the mask is uint8)."""
    if mask.dtype != torch.uint8:
        raise RuntimeError("mask should be torch.uint8 dtype")
    if input.dtype not in FLOATING:
        raise RuntimeError(f"_masked_scale: expected a floating input, got {input.dtype}")
    return (input * mask.to(input.dtype) * scale).contiguous()


@register("aten::native_dropout_backward")
def native_dropout_backward(grad_output: torch.Tensor, mask: torch.Tensor, scale: float) -> torch.Tensor:
    """aten::native_dropout_backward(grad_output, mask, scale) = grad_output * mask * scale."""
    if grad_output.dtype not in FLOATING:
        return fallback(aten.native_dropout_backward.default, grad_output, mask, scale)
    return grad_output * mask.to(grad_output.dtype) * scale
