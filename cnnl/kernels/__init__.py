"""Device-independent numerical core of the CNNL clone: pure functions over numpy arrays.

Each function takes input arrays (any strides, broadcast zero strides allowed) and writes into a caller-provided
`out` array (any strides). There is no device, queue or descriptor here: the cnnl API layer calls these with numpy
views of device memory. Numerics follow the device: float16 and bfloat16 are stored in 16 bits, computed in
float32 and rounded once (round to nearest even); integer arithmetic wraps. Each module's docstring states its
exact rules.

Performance: large ops are cut into blocks and spread over the host cores (`parallel`); block functions use numpy
ufuncs (which release the GIL), host BLAS for products, and a handful of `nogil` numba kernels where numpy is slow
or has the wrong semantics (16-bit float conversion, activations). Few numba kernels means little compile time.

Modules: dtypes, parallel, cast, staging, elementwise, binary, unary, activation, reduce, scan, topk,
movement, matmul.
"""
import importlib as _importlib
import sys as _sys
import types as _types

from mlusim.lazymodule import MISSING, lazy_names

#: exported name -> (submodule, its name there); a submodule is imported on first use of one of its names, so an op
#: that needs no numba kernel (a float32 opTensor) does not import numba
_EXPORTS = {
    "ACTIVATION_MODES": ("activation", "MODES"), "activation_backward": ("activation", "activation_backward"),
    "activation_forward": ("activation", "activation_forward"),
    **{name: ("binary", name) for name in ("BINARY_OPS", "COMPARE_OPS", "LOGICAL_OPS", "OP_TENSOR_OPS", "binary",
                                           "compare", "logical", "logical_not", "op_tensor")},
    "cast": ("cast", "cast"),
    "matmul": ("matmul", "matmul"), "matmul_shape": ("matmul", "matmul_shape"),
    **{name: ("movement", name) for name in ("concat", "copy", "fill", "select", "split", "strided_slice",
                                             "transpose")},
    **{name: ("reduce", name) for name in ("REDUCE_OPS", "argmax", "argmin", "reduce", "reduced_shape")},
    "cumsum": ("scan", "cumsum"),
    "topk": ("topk", "topk"),
    "UNARY_OPS": ("unary", "UNARY_OPS"), "unary": ("unary", "unary"),
}


def _resolve(name: str):
    if name not in _EXPORTS:
        return MISSING
    module, attribute = _EXPORTS[name]
    value = globals()[name] = getattr(_importlib.import_module(f"{__name__}.{module}"), attribute)
    return value


__getattr__, __dir__ = lazy_names(__name__, _resolve, _EXPORTS.keys)


class _Kernels(_types.ModuleType):
    """Importing a submodule binds it on its package under its name; where that name is one of the exports (`cast`,
    `binary`, `reduce`, ...: the function of the same name), the export is bound instead, as the eager imports did."""

    def __setattr__(self, name, value):
        export = _EXPORTS.get(name)
        if export is not None and isinstance(value, _types.ModuleType) and value.__name__ == f"{__name__}.{export[0]}":
            value = getattr(value, export[1])
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Kernels


__all__ = [
    "ACTIVATION_MODES", "BINARY_OPS", "COMPARE_OPS", "LOGICAL_OPS", "OP_TENSOR_OPS", "REDUCE_OPS", "UNARY_OPS",
    "activation_backward", "activation_forward", "argmax", "argmin", "binary", "cast", "compare", "concat", "copy",
    "cumsum", "fill", "logical", "logical_not", "matmul", "matmul_shape", "op_tensor", "reduce", "reduced_shape",
    "select", "split", "strided_slice", "topk", "transpose", "unary",
]
