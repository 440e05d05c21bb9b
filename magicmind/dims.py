"""magicmind::Dims: a shape; -1 marks an axis unknown until run time. Keeps its C++ method names in Python."""
from __future__ import annotations

import numbers

from .status import invalid

#: the largest element count a tensor may have (the byte size must fit int64 for every element type)
MAX_ELEMENTS = 1 << 60


class Dims:
    """Dims(seq): from a list, tuple or numpy shape of ints >= -1; Dims([]) is a scalar."""

    __slots__ = ("_dims",)

    def __init__(self, dims=()):
        if isinstance(dims, Dims):
            dims = dims._dims
        if isinstance(dims, (str, bytes)) or not hasattr(dims, "__iter__"):
            raise invalid(f"Dims: dims must be a sequence of ints, not {type(dims).__name__}")
        values = []
        for i, value in enumerate(dims):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise invalid(f"Dims: dims[{i}] = {value!r} is not an int")
            if int(value) < -1:
                raise invalid(f"Dims: dims[{i}] = {int(value)} (a dimension is >= 0, or -1 when unknown)")
            values.append(int(value))
        known = [v for v in values if v >= 0]
        count = 1
        for v in known:
            count *= v
            if count > MAX_ELEMENTS:
                raise invalid(f"Dims: {values} holds more than 2^60 elements")
        self._dims = tuple(values)

    def GetDims(self) -> list:  # noqa: N802  (MagicMind's names)
        """Dims::GetDims() -> the dimensions as a list."""
        return list(self._dims)

    def GetDimsNum(self) -> int:  # noqa: N802
        """Dims::GetDimsNum(): the rank."""
        return len(self._dims)

    def GetDimValue(self, index: int) -> int:  # noqa: N802
        """Dims::GetDimValue(i)."""
        if isinstance(index, bool) or not isinstance(index, numbers.Integral):
            raise invalid(f"Dims.GetDimValue: index {index!r} is not an int")
        if not -len(self._dims) <= int(index) < len(self._dims):
            raise invalid(f"Dims.GetDimValue: index {index} is out of range for {len(self._dims)} dims")
        return self._dims[int(index)]

    def GetElementCount(self) -> int:  # noqa: N802
        """Dims::GetElementCount(): the product of the dimensions (-1 when one is unknown; 1 for a scalar)."""
        if -1 in self._dims:
            return -1
        count = 1
        for v in self._dims:
            count *= v
        return count

    def HasUnknownDim(self) -> bool:  # noqa: N802
        """Dims::HasUnknownDim(): whether an axis is -1."""
        return -1 in self._dims

    def as_tuple(self) -> tuple:
        return self._dims

    def __len__(self) -> int:
        return len(self._dims)

    def __iter__(self):
        return iter(self._dims)

    def __getitem__(self, index):
        return self._dims[index]

    def __eq__(self, other) -> bool:
        if isinstance(other, Dims):
            return other._dims == self._dims
        if isinstance(other, (list, tuple)):
            return tuple(other) == self._dims
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._dims)

    def __repr__(self) -> str:
        return f"Dims({list(self._dims)})"

    __str__ = __repr__


def dims_arg(value, arg: str) -> Dims:
    """A Dims argument (a Dims or a sequence of ints), as INVALID_ARGUMENT naming `arg` when it is neither."""
    if isinstance(value, Dims):
        return value
    try:
        return Dims(value)
    except Exception as error:
        raise invalid(f"{arg}: {getattr(error, 'message', error)}") from None
