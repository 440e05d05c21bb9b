"""The fast subset of the conformance suite: PyTorch's OpInfo tests for ops with native mlu kernels, forward
samples (reference inputs) and gradients compared with the CPU; these ops must not use the CPU fallback. The whole
op_db runs with `mlusim conformance torch`."""
from torch_mlu.conformance import suite

FAST_OPS = [
    "abs", "exp", "log", "sqrt", "sin", "sigmoid", "tanh", "erf", "floor", "sign",
    "add", "sub", "mul", "div.no_rounding_mode", "pow", "clamp", "eq", "lt", "logical_and", "maximum",
    "sum", "mean", "amax", "max.reduction_with_dim", "argmax", "any", "linalg.vector_norm",
    "sort", "topk", "cat", "stack", "index_select", "gather", "scatter_add", "masked_fill", "nonzero",
    "mm", "bmm", "addmm", "matmul", "transpose", "reshape",
]

TestMluConformanceMLU = suite.instantiate(globals(), names=FAST_OPS, native=True)
