"""mlusim.bang: BANG C-style kernels in Python, numba-compiled and run on the simulated MLU cores.

| BANG C                                   | mlusim.bang                                        |
|------------------------------------------|----------------------------------------------------|
| `__mlu_global__ void k(float *x, int n)` | `@bang.kernel def k(ctx, x: bang.gdram(bang.float32), n: int)` |
| `__mlu_func__`                           | `@bang.func`                                       |
| `taskId`, `clusterId`, `coreDim`, ...    | `ctx.taskId`, `ctx.clusterId`, `ctx.coreDim`, ...  |
| `__nram__ float b[N];`                   | `b = bang.nram(ctx, "b", bang.float32, N)`         |
| `__wram__`, `__mlu_shared__`             | `bang.wram(...)`, `bang.sram(...)`                 |
| `__memcpy(d, s, bytes, GDRAM2NRAM)`      | `bang.memcpy(ctx, d, s, bytes, bang.GDRAM2NRAM)`   |
| `__bang_add(d, a, b, n)`                 | `bang.add(ctx, d, a, b, n)`                        |
| `__sync_cluster()`, `__sync_all()`       | `bang.sync_cluster(ctx)`, `bang.sync_all(ctx)`     |
| `k<<<dim, type, queue>>>(...)`           | `k[dim, type, queue](...)` or `cnrt.invokeKernel`  |

See docs/bang.md.
"""
from .activations import (ACTIVATIONS, active_abs, active_cos, active_exp2, active_exp_less_0, active_exphp,
                          active_gelu, active_gelup, active_log, active_loghp, active_pow2, active_recip,
                          active_recip_greater_1, active_reciphp, active_rsqrt, active_rsqrthp, active_sign,
                          active_sin, active_sqrt, active_sqrthp)
from .barriers import sync_all, sync_cluster
from .context import Ctx, nram, sram, wram
from .dtypes import ELEMENT_TYPES, ElementType, bfloat16, float32, half, int8, int16, int32, uint8
from .faults import KernelAssert, KernelTrap, KernelUserTrap
from .intrinsics import (active_exp, active_relu, active_sigmoid, active_tanh, add, add_scalar, matmul, maximum,
                         minimum, mul, mul_scalar, reduce_max, reduce_sum, sub, transpose, write_value)
from .kernel import Kernel, LaunchRecord, func, gdram, kernel
from .dma import DIRECTION_NAMES, memcpy, memcpy_async, memcpy_strided, sync
from .pointer import Ptr
from .traps import assert_, trap
from .work import WorkCounts, modelled_us

from . import dma as _dma

for _name in DIRECTION_NAMES:
    globals()[_name] = getattr(_dma, _name)
del _name, _dma

sync_io = sync

__all__ = [
    "kernel", "func", "gdram", "Kernel", "LaunchRecord", "Ctx", "Ptr", "ElementType", "ELEMENT_TYPES",
    "float32", "half", "bfloat16", "int32", "int16", "int8", "uint8",
    "nram", "wram", "sram", "memcpy", "memcpy_async", "memcpy_strided", "sync", "sync_io", "sync_cluster", "sync_all",
    "add", "sub", "mul", "maximum", "minimum", "mul_scalar", "add_scalar", "write_value", "active_relu",
    "active_sigmoid", "active_exp", "active_tanh", *ACTIVATIONS, "reduce_sum", "reduce_max", "transpose", "matmul",
    "assert_", "trap", "KernelTrap", "KernelAssert", "KernelUserTrap", "WorkCounts", "modelled_us",
    "DIRECTION_NAMES", *DIRECTION_NAMES,
]
