"""The workspace sizes the cnnlGet*WorkspaceSize queries report (one rule per kind of op, shared by each query and
the op that checks its caller's workspace against it).

The simulator itself needs no scratch memory; the sizes model what a device implementation stages, so that code
which forgets to allocate the workspace, or allocates too little, fails here as on hardware:
  - elementwise ops with broadcasting: one dense, output-shaped copy of every input that is broadcast or strided
  - half/bfloat16 accumulations (reduce, cumsum, matmul): a float32 buffer of the output
  - multi-tensor ops (concat, split): a table of POINTER_TABLE_BYTES per tensor
  - topk: an int32 index per input element
  - transpose: a dense copy of a strided input
"""
from __future__ import annotations

import math

from . import dtypes as D
from .tensor import TensorDescriptor

#: bytes per tensor of the device-side pointer/shape table of concat and split
POINTER_TABLE_BYTES = 64
FLOAT32_BYTES = 4
INDEX_BYTES = 4


def staged_inputs(out_dims: tuple[int, ...], *inputs: TensorDescriptor) -> int:
    """Dense copies, shaped like the output, of the inputs that are broadcast or not dense."""
    size = math.prod(out_dims)
    return sum(size * desc.itemsize for desc in inputs if desc.dims != out_dims or not desc.is_dense)


def float32_accumulator(out: TensorDescriptor, compute_dtype: int) -> int:
    """A float32 copy of the output when the arithmetic runs in half or bfloat16 storage."""
    return out.size * FLOAT32_BYTES if compute_dtype in D.HALF_PRECISION else 0


def pointer_table(tensors: int) -> int:
    return tensors * POINTER_TABLE_BYTES


def index_scratch(desc: TensorDescriptor) -> int:
    return desc.size * INDEX_BYTES


def dense_copy(desc: TensorDescriptor) -> int:
    return 0 if desc.is_dense else desc.size * desc.itemsize
