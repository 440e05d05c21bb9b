"""The op set: one `Op` per node type, each with its shape rule (`infer`) and its kernel (`run`).

The same kernel serves three uses: the engine runs it over views of device memory inside one queued command
(`prepare` makes it for one set of shapes), the builder runs it on host arrays to fold constants, and the shape
planner runs it on small host values (shape tensors) so that shapes computed from shapes are known before a model
runs. Ops the engine runs through CNNL's public API (`magicmind/runtime/library.py`) have no host kernel
(`host_evaluable = False`): their values are never computed on the host.
"""
from __future__ import annotations

import abc
from typing import Optional, Sequence

import numpy as np

from mlusim import cost

from ...status import MagicMindError, invalid

#: shapes: a tuple of ints (-1 unknown), or None when even the rank is unknown
Shape = Optional[tuple]
#: host values of at most this many elements are propagated by the shape planner (shape arithmetic, not data)
HOST_VALUE_LIMIT = 1 << 12


class Info:
    """What is known of a tensor before it runs: its shape, its numpy dtype, and its value when known on the host."""

    __slots__ = ("shape", "dtype", "value")

    def __init__(self, shape: Shape, dtype, value: Optional[np.ndarray] = None):
        self.shape = None if shape is None else tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.value = value

    @property
    def known(self) -> bool:
        return self.shape is not None and -1 not in self.shape

    def __repr__(self) -> str:
        return f"Info({self.shape}, {self.dtype}{', value' if self.value is not None else ''})"


class Op(abc.ABC):
    """One node type. Subclasses set `name` and implement `infer` (a class without one cannot be registered) and,
    unless the engine runs them through CNNL (`host_evaluable` False), `run`."""

    name = ""
    #: mlusim.cost.TENSOR for matmul-like work, else VECTOR
    unit = cost.VECTOR
    #: input positions whose values (not only shapes) decide the output shapes
    value_inputs: tuple = ()
    #: the op computes its outputs from shapes alone (Shape): its inputs' data is never read
    shape_only = False
    #: elementwise ops: the output is a function of its inputs at the same (broadcast) position
    elementwise = False
    #: number of inputs: (fewest, most); most None = any
    arity = (1, 1)
    #: False for ops without a host kernel (run through CNNL by the engine): never folded nor evaluated on the host
    host_evaluable = True

    def check_arity(self, count: int, node: str) -> None:
        low, high = self.arity
        if count < low or (high is not None and count > high):
            expected = f"{low}" if low == high else f"{low} to {high if high is not None else 'any number of'}"
            raise invalid(f"{node}: {self.name} takes {expected} inputs, got {count}")

    @abc.abstractmethod
    def infer(self, attrs: dict, ins: Sequence[Info]) -> list:
        """[(shape, dtype), ...] of the outputs; raise MagicMindError for inputs the op cannot take."""

    def run(self, attrs: dict, ins: Sequence[np.ndarray], outs: Sequence[np.ndarray]) -> None:
        """Compute the outputs into `outs` (arrays of the inferred shapes and dtypes). An op without a host kernel
        keeps this one, which refuses."""
        raise _no_host_kernel(self.name)

    def prepare(self, attrs: dict, ins: Sequence[Info], outs: Sequence[Info]):
        """The kernel for these input and output infos: a function (input arrays, output arrays) -> None. Ops
        whose kernels plan work by shape (convolution, matmul) override it; the default runs `run`."""
        def kernel(arrays, results):
            self.run(attrs, arrays, results)
        return kernel

    def flops(self, attrs: dict, in_shapes: Sequence[tuple], out_shapes: Sequence[tuple]) -> float:
        """Arithmetic operations of one run (the cost model's work count)."""
        return float(sum(int(np.prod(s)) for s in out_shapes))


REGISTRY: dict = {}


def register(cls):
    """Class decorator: add an Op to the registry by its name."""
    instance = cls()
    REGISTRY[instance.name] = instance
    return cls


def get(name: str) -> Op:
    found = REGISTRY.get(name)
    if found is None:
        raise MagicMindError(13, f"no op named {name!r}")
    return found


def _no_host_kernel(op_name: str) -> MagicMindError:
    return MagicMindError(13, f"{op_name} has no host kernel (the engine runs it through CNNL)")


def evaluate(op_name: str, attrs: dict, values: Sequence[np.ndarray]) -> list:
    """Run an op on host arrays (constant folding, shape values): the outputs as new arrays."""
    op = get(op_name)
    if not op.host_evaluable:
        raise _no_host_kernel(op_name)
    infos = [Info(v.shape, v.dtype, v) for v in values]
    outs = [np.empty(shape, dtype) for shape, dtype in op.infer(attrs, infos)]
    with np.errstate(all="ignore"):
        op.run(attrs, list(values), outs)
    return outs


def _load_all() -> None:
    from . import creation, detection, elementwise, nn, shape  # noqa: F401  (register the ops)


_load_all()
