"""Rotary embedding: cnnlCreate/Destroy/SetRotaryEmbeddingDescriptor and cnnlRotaryEmbedding.

Argument order from DeepLink DIOPI's Cambricon backend (functions_ext/rotaryEmbedding.cpp), which passes the two
halves of the head vectors as two strided views of one tensor (the first and second half of the last axis, or its
even and odd elements when interleaved) with the descriptors of a [N, T, B, C/2] NTBC tensor, and cos/sin as
[T, 1, C/2]. Here x1, x2, y1, y2 share dims and data type (HALF, BFLOAT16, FLOAT, DOUBLE); cos and sin are float
tensors that broadcast against them (numpy rules, so the sequence layout only names the axes); outputs may alias
inputs. No workspace is needed. Numerics in `cnnl.kernels.rotary`.
"""
from __future__ import annotations

from mlusim.validate import as_enum

from .. import checks
from .. import enums as E
from ..descriptors import Descriptor, lifecycle, live, ready
from ..kernels import rotary as K
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from . import nn_common as N


class RotaryEmbeddingDescriptor(Descriptor):
    """cnnlRotaryEmbeddingDescriptor_t: conjugate rotation or not, and the sequence layout."""

    c_type = "cnnlRotaryEmbeddingDescriptor_t"
    setter = "cnnlSetRotaryEmbeddingDescriptor"

    def __init__(self):
        super().__init__()
        self.conj = False
        self.layout = E.CNNL_SEQDATA_NTBC


createRotaryEmbeddingDescriptor, destroyRotaryEmbeddingDescriptor = lifecycle(
    RotaryEmbeddingDescriptor, "cnnlCreateRotaryEmbeddingDescriptor", "cnnlDestroyRotaryEmbeddingDescriptor")


@api("cnnlSetRotaryEmbeddingDescriptor")
def setRotaryEmbeddingDescriptor(desc, conj, seq_layout) -> None:
    """cnnlSetRotaryEmbeddingDescriptor(desc, bool conj, cnnlSeqDataLayout_t seq_layout)."""
    target = live(desc, RotaryEmbeddingDescriptor, "desc")
    conjugate = checks.flag(conj, "conj")
    target.layout = as_enum(seq_layout, "seq_layout", E.SEQ_DATA_LAYOUTS, "cnnlSeqDataLayout_t")
    target.conj = conjugate
    target.is_set = True


@api("cnnlRotaryEmbedding")
def rotaryEmbedding(handle, desc, x1_desc, x1, x2_desc, x2, cos_desc, cos, sin_desc, sin, workspace,
                    workspace_size, y1_desc, y1, y2_desc, y2) -> None:
    """cnnlRotaryEmbedding(handle, desc, x1_desc, x1, x2_desc, x2, cos_desc, cos, sin_desc, sin, workspace,
    workspace_size, y1_desc, y1, y2_desc, y2): y1 = x1 cos - x2 sin, y2 = x1 sin + x2 cos (conj: the inverse
    rotation)."""
    op = "cnnlRotaryEmbedding"
    with OpCall(op, handle) as call:
        rotary = ready(desc, RotaryEmbeddingDescriptor, "desc")
        a = tensor_arg(x1_desc, "x1_desc")
        N.float_tensor(a, "x1_desc", op)
        others = [(tensor_arg(d, arg), arg) for d, arg in ((x2_desc, "x2_desc"), (y1_desc, "y1_desc"),
                                                           (y2_desc, "y2_desc"))]
        checks.same_dtype(a, "x1_desc", *others)
        checks.same_shape(a, "x1_desc", *others)
        angles = []
        for d, arg in ((cos_desc, "cos_desc"), (sin_desc, "sin_desc")):
            target = tensor_arg(d, arg)
            N.float_tensor(target, arg, op)
            checks.broadcasts_to(a, "x1_desc", (target, arg))
            angles.append(target)
        checks.same_shape(angles[0], "cos_desc", (angles[1], "sin_desc"))
        views = [call.input(a, x1, "x1"), call.input(others[0][0], x2, "x2"), call.input(angles[0], cos, "cos"),
                 call.input(angles[1], sin, "sin")]
        outputs = [call.output(others[1][0], y1, "y1"), call.output(others[2][0], y2, "y2")]
        call.workspace(workspace, workspace_size, 0, "cnnlRotaryEmbedding")
        conj = rotary.conj
        call.submit(lambda: K.rotary_embedding(*views, *outputs, conj), flops=6 * a.size, dtype=a.dtype)
