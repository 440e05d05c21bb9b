"""cnnl: a Python clone of Cambricon's CNNL op library over the simulated MLU (mlusim).

Names follow the one rule of docs/architecture.md: `cnnlOpTensor` is `cnnl.opTensor` (and `cnnl.cnnlOpTensor`); output
parameters are returned; arrays with their counts are one sequence; host scalars are Python numbers; device
pointers are ints. A failure raises `CnnlError` whose `.code` is the cnnlStatus_t value. Every op validates its
arguments at the call and enqueues one command on the handle's queue.

The op modules (and their kernels, and numba) are imported on first use of one of their functions or descriptor
types (`cnnl/function_index.py`): `import cnnl` loads only the handle, tensor descriptors, enums and statuses.
`dir(cnnl)`, `hasattr` and `from cnnl import *` see every function.
"""
import importlib as _importlib
import os as _os

from mlusim.lazymodule import MISSING, lazy_names

from . import status as _status
from . import handle, tensor  # noqa: F401  (register the API functions)
from ._function_index import FUNCTION_MODULES as _FUNCTION_MODULES
from .dtypes import CAST_NAMES as _CAST_NAMES
from .enums import *  # noqa: F401,F403
from .handle import Handle as cnnlHandle_t  # noqa: F401
from .status import CnnlError, api as _api  # noqa: F401
from .tensor import TensorDescriptor as cnnlTensorDescriptor_t  # noqa: F401

#: the op modules (cnnl.ops.<name>), imported on first use; importing one registers its functions with the API
OP_MODULES = (
    "activation", "advanced_indexing", "arithmetic", "batch_norm", "bias", "binary", "cast", "cdist", "convolution",
    "creation", "ctc_loss", "deform_conv", "fill", "flash_attention", "foreach", "frozen_batch_norm", "im2col", "indexing",
    "interpolate", "layer_norm", "linalg", "losses", "matmul", "movement", "nms", "optimizers", "padding",
    "placement", "pooling", "random", "random_sampling", "reduce", "rotary", "scan", "select", "softmax", "special",
    "statistics", "sync_batch_norm", "thresholds", "topk", "trigon", "unary", "unique", "view_backward",
)

#: C descriptor type -> (op module, class)
DESCRIPTOR_TYPES = {
    "cnnlActivationDescriptor_t": ("activation", "ActivationDescriptor"),
    "cnnlOpTensorDescriptor_t": ("binary", "OpTensorDescriptor"),
    "cnnlConvolutionDescriptor_t": ("convolution", "ConvolutionDescriptor"),
    "cnnlCTCLossDescriptor_t": ("ctc_loss", "CTCLossDescriptor"),
    "cnnlDCNDescriptor_t": ("deform_conv", "DCNDescriptor"),
    "cnnlFlashAttentionDescriptor_t": ("flash_attention", "FlashAttentionDescriptor"),
    "cnnlInterpDescriptor_t": ("interpolate", "InterpDescriptor"),
    "cnnlNmsDescriptor_t": ("nms", "NmsDescriptor"),
    "cnnlRotaryEmbeddingDescriptor_t": ("rotary", "RotaryEmbeddingDescriptor"),
    "cnnlTrigonDescriptor_t": ("trigon", "TrigonDescriptor"),
    "cnnlMatMulAlgo_t": ("matmul", "MatMulAlgo"),
    "cnnlMatMulDescriptor_t": ("matmul", "MatMulDescriptor"),
    "cnnlMatMulHeuristicResult_t": ("matmul", "MatMulHeuristicResult"),
    "cnnlPoolingDescriptor_t": ("pooling", "PoolingDescriptor"),
    "cnnlRandGenerator_t": ("random", "RandGenerator"),
    "cnnlTransposeDescriptor_t": ("movement", "TransposeDescriptor"),
    "cnnlReduceDescriptor_t": ("reduce", "ReduceDescriptor"),
    "cnnlStdVarMeanDescriptor_t": ("statistics", "StdVarMeanDescriptor"),
    "cnnlUniqueDescriptor_t": ("unique", "UniqueDescriptor"),
}

globals().update(_CAST_NAMES)
globals().update({name: value for name, value in vars(_status).items() if name.startswith("CNNL_STATUS_")})

_api.export(globals())

cnnlStatus_t = int

_all_loaded = False


def _load_module(module: str) -> None:
    """Import cnnl.ops.<module> and put what it registered (and its descriptor types) into this namespace. No lock
    of our own: imports are thread-safe and doing this twice is harmless, while a lock held across an import could
    deadlock against a thread importing an op module directly."""
    imported = _importlib.import_module(f"{__name__}.ops.{module}")
    globals()[module] = imported  # cnnl.<module> as before (a function of the same name takes it over below)
    _api.export(globals())
    for c_type, (owner, cls) in DESCRIPTOR_TYPES.items():
        if owner == module:
            globals()[c_type] = getattr(imported, cls)


def _load(name=None) -> None:
    """Register the functions of the module that defines `name` (all modules for None or a name the index does not
    know: the index only saves imports, it never hides a function)."""
    global _all_loaded
    if _all_loaded:
        return
    module = _FUNCTION_MODULES.get(name) if name is not None else None
    if module is not None:
        _load_module(module)
        return
    for module in OP_MODULES:
        _load_module(module)
    _all_loaded = True
    _api.defer(None)


_api.defer(_load)


def _submodules() -> frozenset:
    global _SUBMODULES
    if _SUBMODULES is None:
        _SUBMODULES = frozenset(entry.name.removesuffix(".py") for entry in _os.scandir(__path__[0])
                                if entry.name.endswith(".py") or entry.is_dir())
    return _SUBMODULES


_SUBMODULES = None


def _resolve(name: str):
    if name == "__all__":  # `from cnnl import *`: every public name
        _load()
        return [key for key in globals() if not key.startswith("_")]
    if name in _submodules():  # cnnl.kernels, cnnl.ops, `from . import checks` (which asks before importing)
        return _importlib.import_module(f"{__name__}.{name}")
    if name in DESCRIPTOR_TYPES:
        _load_module(DESCRIPTOR_TYPES[name][0])
    elif name in OP_MODULES:
        _load_module(name)
    else:
        _load(name)
    return globals().get(name, MISSING)


__getattr__, __dir__ = lazy_names(__name__, _resolve,
                                  lambda: set(_FUNCTION_MODULES) | set(DESCRIPTOR_TYPES) | set(OP_MODULES))
