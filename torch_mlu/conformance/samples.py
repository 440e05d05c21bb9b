"""Moving OpInfo samples and results between mlu and the CPU.

Samples are made on the mlu device, as PyTorch's device-generic tests make them (factory kwargs such as
`device=` then name the device under test). Their CPU twins keep every tensor's values and `requires_grad`; a
`device` argument naming an mlu device names the CPU instead, so factory functions build the CPU reference there.
"""
from __future__ import annotations

import torch
from torch.utils._pytree import tree_flatten, tree_map

from .._host import same_layout_on_cpu, value_on_cpu

CPU = torch.device("cpu")


def tensor_to_cpu(tensor: torch.Tensor) -> torch.Tensor:
    """A CPU copy of `tensor` with the same values, layout and requires_grad (a new leaf when it requires grad)."""
    copy = same_layout_on_cpu(tensor)
    if tensor.requires_grad:
        copy.requires_grad_(True)
    return copy


def value_to_cpu(value):
    """One argument of a sample, on the CPU: tensors copied, mlu devices replaced by the CPU, the rest as is."""
    if isinstance(value, torch.Tensor):
        return tensor_to_cpu(value)
    return value_on_cpu(value)


def sample_to_cpu(sample):
    """The CPU twin of an OpInfo SampleInput made on mlu (the `device` kwarg and device arguments too)."""
    twin = sample.transform(value_to_cpu)
    twin.args = tuple(value_on_cpu(a) if not isinstance(a, torch.Tensor) else a for a in twin.args)
    twin.kwargs = {key: value_on_cpu(v) if not isinstance(v, torch.Tensor) else v for key, v in twin.kwargs.items()}
    return twin


def results_to_cpu(value):
    """A result (tensors, sequences, dicts, numbers) with every tensor detached and copied to the CPU."""
    return tree_map(lambda item: item.detach().to(CPU) if isinstance(item, torch.Tensor) else item, value)


def tensors(value) -> list[torch.Tensor]:
    """The tensors in a nested value (sequences, dicts), in order."""
    leaves, _ = tree_flatten(value)
    return [leaf for leaf in leaves if isinstance(leaf, torch.Tensor)]


def sample_tensors(sample) -> list[torch.Tensor]:
    """The tensors of a sample: its input, args and kwargs, in order."""
    return tensors([sample.input, list(sample.args), dict(sample.kwargs)])


def movable(sample) -> bool:
    """False for samples holding tensors the device cannot hold (sparse, quantized, nested, complex...)."""
    for tensor in sample_tensors(sample):
        if tensor.layout != torch.strided or tensor.is_quantized or tensor.is_nested:
            return False
    return True
