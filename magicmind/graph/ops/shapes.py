"""Shape arithmetic that knows -1 (an extent unknown until run time)."""
from __future__ import annotations

from ...status import invalid


def broadcast(*shapes, node: str = "") -> tuple:
    """numpy broadcasting of shapes that may hold -1; None (unknown rank) if any is None."""
    if any(s is None for s in shapes):
        return None
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(rank):
        extents = [s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0]
        sizes = {e for e in extents if e not in (1, -1)}
        if len(sizes) > 1:
            raise invalid(f"{node}: shapes {[list(s) for s in shapes]} do not broadcast")
        if sizes:
            out.append(sizes.pop())
        elif -1 in extents:
            out.append(-1)
        else:
            out.append(1)
    return tuple(out)


def axis_of(axis: int, rank: int, node: str, arg: str = "axis") -> int:
    """A possibly negative axis as 0 <= axis < rank."""
    axis = int(axis)
    if not -rank <= axis < rank:
        raise invalid(f"{node}: {arg} {axis} is out of range for rank {rank}")
    return axis % rank


def product(dims) -> int:
    """The product of dims; -1 if any is unknown."""
    total = 1
    for d in dims:
        if d < 0:
            return -1
        total *= d
    return total


def known(shape) -> bool:
    return shape is not None and all(d >= 0 for d in shape)


def unknown_extents(shape_input) -> tuple | None:
    """The shape a node reads from a shape tensor whose values are not known yet: one unknown extent (-1) per
    element of that 1-D tensor, or None when its length is unknown too."""
    dims = shape_input.shape
    n = dims[0] if dims is not None and len(dims) == 1 else -1
    return None if n < 0 else (-1,) * n
