"""a + scale * b of 1-D float arrays in one compiled pass (cnnlOpTensor's add/sub with alpha2, `binary._scaled_add`):
one fused multiply-add per element where the host has FMAs, which is how PyTorch's CPU add with alpha rounds."""
from numba import njit

from .fastmath import FUSED_MULTIPLY_ADD


@njit(nogil=True, cache=True, fastmath=FUSED_MULTIPLY_ADD)
def scaled_add(a, b, scale, out):
    """out = a + scale * b of 1-D floats in one pass, as one FMA per element where the host has FMAs: PyTorch's CPU
    add with alpha (its vectorised loop is fmadd(b, alpha, a)); out may be a itself."""
    for i in range(out.size):
        out[i] = a[i] + scale * b[i]


@njit(nogil=True, cache=True, fastmath=FUSED_MULTIPLY_ADD)
def scaled_add_into(b, scale, out):
    """`scaled_add` with a = out (`add_`): two streams, and no aliasing that keeps LLVM's loop scalar."""
    for i in range(out.size):
        out[i] = out[i] + scale * b[i]
