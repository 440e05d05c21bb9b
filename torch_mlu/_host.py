"""Host copies of mlu tensors that keep their layout, for tools that rerun an op on the CPU (the conformance suite,
op_tools.autocompare): the copy holds the tensor's whole storage with its offset, sizes and strides, so views that
overlap, broadcast or reach outside their elements (as_strided) behave the same on the CPU."""
from __future__ import annotations

import torch

CPU = torch.device("cpu")


def same_layout_on_cpu(tensor: torch.Tensor) -> torch.Tensor:
    """A detached CPU tensor over a copy of `tensor`'s storage, with its offset, sizes and strides."""
    tensor = tensor.detach()
    if tensor.device.type == "cpu":
        return tensor.clone()
    if tensor.is_conj() or tensor.is_neg() or tensor.layout != torch.strided or tensor.is_quantized:
        return tensor.to(CPU)
    raw = torch.empty(0, dtype=torch.uint8, device=tensor.device).set_(tensor.untyped_storage())
    host = raw.cpu()
    return torch.empty(0, dtype=tensor.dtype).set_(host.untyped_storage(), tensor.storage_offset(), tensor.shape,
                                                   tensor.stride())


def is_mlu_device(value) -> bool:
    if isinstance(value, torch.device):
        return value.type == "mlu"
    if isinstance(value, str):
        return value == "mlu" or value.startswith("mlu:")
    return False


def value_on_cpu(value):
    """One op argument on the CPU: tensors copied (layout kept), mlu devices replaced by the CPU."""
    if isinstance(value, torch.Tensor):
        return same_layout_on_cpu(value)
    if is_mlu_device(value):
        return CPU if isinstance(value, torch.device) else "cpu"
    return value
