"""cnnl: a Python clone of Cambricon's CNNL op library over the simulated MLU (mlusim).

Names follow the one rule of docs/architecture.md: `cnnlOpTensor` is `cnnl.opTensor` (and `cnnl.cnnlOpTensor`); output
parameters are returned; arrays with their counts are one sequence; host scalars are Python numbers; device
pointers are ints. A failure raises `CnnlError` whose `.code` is the cnnlStatus_t value. Every op validates its
arguments at the call and enqueues one command on the handle's queue.
"""
from . import status as _status
from . import handle, tensor  # noqa: F401  (register the API functions)
from .ops import activation, binary, cast, fill, matmul, movement, reduce, scan, select, topk, unary  # noqa: F401
from .ops import batch_norm, convolution, indexing, layer_norm, losses, pooling, random, softmax  # noqa: F401
from .ops import advanced_indexing, arithmetic, bias, creation, padding, placement, special, statistics  # noqa: F401
from .ops import frozen_batch_norm, optimizers, thresholds, unique, view_backward  # noqa: F401
# part 3: attention, interpolation, normalisation, vision, linear algebra, random numbers
from .ops import cdist, ctc_loss, deform_conv, flash_attention, im2col, interpolate, linalg, losses_v2  # noqa: F401
from .ops import nms, pooling_nd, random_sampling, rotary, sync_batch_norm, trigon  # noqa: F401
from .dtypes import CAST_NAMES as _CAST_NAMES
from .enums import *  # noqa: F401,F403
from .handle import Handle as cnnlHandle_t  # noqa: F401
from .ops.activation import ActivationDescriptor as cnnlActivationDescriptor_t  # noqa: F401
from .ops.binary import OpTensorDescriptor as cnnlOpTensorDescriptor_t  # noqa: F401
from .ops.convolution import ConvolutionDescriptor as cnnlConvolutionDescriptor_t  # noqa: F401
from .ops.ctc_loss import CTCLossDescriptor as cnnlCTCLossDescriptor_t  # noqa: F401
from .ops.deform_conv import DCNDescriptor as cnnlDCNDescriptor_t  # noqa: F401
from .ops.flash_attention import FlashAttentionDescriptor as cnnlFlashAttentionDescriptor_t  # noqa: F401
from .ops.interpolate import InterpDescriptor as cnnlInterpDescriptor_t  # noqa: F401
from .ops.nms import NmsDescriptor as cnnlNmsDescriptor_t  # noqa: F401
from .ops.rotary import RotaryEmbeddingDescriptor as cnnlRotaryEmbeddingDescriptor_t  # noqa: F401
from .ops.trigon import TrigonDescriptor as cnnlTrigonDescriptor_t  # noqa: F401
from .ops.matmul import MatMulAlgo as cnnlMatMulAlgo_t  # noqa: F401
from .ops.matmul import MatMulDescriptor as cnnlMatMulDescriptor_t  # noqa: F401
from .ops.matmul import MatMulHeuristicResult as cnnlMatMulHeuristicResult_t  # noqa: F401
from .ops.pooling import PoolingDescriptor as cnnlPoolingDescriptor_t  # noqa: F401
from .ops.random import RandGenerator as cnnlRandGenerator_t  # noqa: F401
from .ops.movement import TransposeDescriptor as cnnlTransposeDescriptor_t  # noqa: F401
from .ops.reduce import ReduceDescriptor as cnnlReduceDescriptor_t  # noqa: F401
from .ops.statistics import StdVarMeanDescriptor as cnnlStdVarMeanDescriptor_t  # noqa: F401
from .ops.unique import UniqueDescriptor as cnnlUniqueDescriptor_t  # noqa: F401
from .status import CnnlError, api as _api  # noqa: F401
from .tensor import TensorDescriptor as cnnlTensorDescriptor_t  # noqa: F401

globals().update(_CAST_NAMES)
globals().update({name: value for name, value in vars(_status).items() if name.startswith("CNNL_STATUS_")})

_api.export(globals())

cnnlStatus_t = int
