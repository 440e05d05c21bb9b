"""The native mlu kernels (aten ops registered for PrivateUse1 over cnnl); every other aten op runs through the
CPU fallback. `registered()` lists the native ones. How to add an op: docs/torch.md."""
from . import (activations, attention, binary, convolution, copy, embedding, fill, foreach, indexing, logic,  # noqa: F401
               losses, masking, matmul, movement, normalization, pointwise, pooling, random, recurrent, reduce, shape,
               softmax, sorting, statistics, thresholds, unary)  # (importing them registers the kernels)
from ._core import REGISTERED, aten, check_same_device, desc, desc_for, fallback, handle, register, workspace  # noqa: F401


def registered() -> list[str]:
    """The aten overloads with a native mlu kernel, sorted."""
    return sorted(REGISTERED)
