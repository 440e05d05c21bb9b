"""The one error of the mlu numba code generator: what it cannot write (a store mode, an argument kind, a dtype).

Inductor turns it into a compile error (BackendCompilerFailed naming the construct), never a wrong result; the ops
the generator knows it lacks are given the per-node eager fallback instead (overrides.UNSUPPORTED, fallback.py)."""


class Unsupported(NotImplementedError):
    """A construct the mlu numba code generator does not write."""
