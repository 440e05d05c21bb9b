"""Device-independent numerical core of the CNNL clone: pure functions over numpy arrays.

Each function takes input arrays (any strides, broadcast zero strides allowed) and writes into a caller-provided
`out` array (any strides). There is no device, queue or descriptor here: the cnnl API layer calls these with numpy
views of device memory. Numerics follow the device: float16 and bfloat16 are stored in 16 bits, computed in
float32 and rounded once (round to nearest even); integer arithmetic wraps. Each module's docstring states its
exact rules.

Performance: large ops are cut into blocks and spread over the host cores (`parallel`); block functions use numpy
ufuncs (which release the GIL), host BLAS for products, and a handful of `nogil` numba kernels where numpy is slow
or has the wrong semantics (16-bit float conversion, activations). Few numba kernels means little compile time.

Modules: dtypes, parallel, halfbits, cast, staging, elementwise, binary, unary, activation, reduce, scan, topk,
movement, matmul.
"""
from .activation import MODES as ACTIVATION_MODES, activation_backward, activation_forward
from .binary import BINARY_OPS, COMPARE_OPS, LOGICAL_OPS, OP_TENSOR_OPS, binary, compare, logical, logical_not, op_tensor
from .cast import cast
from .matmul import matmul, matmul_shape
from .movement import concat, copy, fill, select, split, strided_slice, transpose
from .reduce import REDUCE_OPS, argmax, argmin, reduce, reduced_shape
from .scan import cumsum
from .topk import topk
from .unary import UNARY_OPS, unary

__all__ = [
    "ACTIVATION_MODES", "BINARY_OPS", "COMPARE_OPS", "LOGICAL_OPS", "OP_TENSOR_OPS", "REDUCE_OPS", "UNARY_OPS",
    "activation_backward", "activation_forward", "argmax", "argmin", "binary", "cast", "compare", "concat", "copy",
    "cumsum", "fill", "logical", "logical_not", "matmul", "matmul_shape", "op_tensor", "reduce", "reduced_shape",
    "select", "split", "strided_slice", "topk", "transpose", "unary",
]
