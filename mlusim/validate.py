"""Argument checks shared by every API layer. Each raises `ArgumentFault` naming the argument."""
from __future__ import annotations

import numbers
from typing import Any, Iterable

import numpy as np

from .errors import ArgumentFault


def is_address(value: Any) -> bool:
    """True for a device pointer: a Python or numpy integer (not a bool)."""
    if type(value) is int:
        return True
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def as_int(value: Any, arg: str, *, minimum: int | None = None, maximum: int | None = None) -> int:
    """`value` as a Python int within [minimum, maximum]."""
    if not is_address(value):
        raise ArgumentFault(f"expected an integer, got {type(value).__name__} {value!r:.60}", arg)
    value = int(value)
    if minimum is not None and value < minimum:
        raise ArgumentFault(f"{value} is below the minimum {minimum}", arg)
    if maximum is not None and value > maximum:
        raise ArgumentFault(f"{value} is above the maximum {maximum}", arg)
    return value


def as_size(value: Any, arg: str) -> int:
    """A byte count or element count: an int >= 0 that fits size_t."""
    return as_int(value, arg, minimum=0, maximum=2**64 - 1)


def as_number(value: Any, arg: str) -> float | int:
    """A host scalar passed by value (alpha, beta, a fill value)."""
    if isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, numbers.Number) and not isinstance(value, complex):
        return value
    if isinstance(value, np.generic) and np.issubdtype(type(value), np.number):
        return value.item()
    raise ArgumentFault(f"expected a number, got {type(value).__name__}", arg)


def as_enum(value: Any, arg: str, allowed: Iterable[int], enum_name: str) -> int:
    """An enum value that must be one of `allowed`."""
    if type(value) is int and value in allowed:  # the common case, without the checks' allocations
        return value
    allowed = tuple(allowed)
    number = as_int(value, arg)
    if number not in allowed:
        raise ArgumentFault(f"{number} is not a valid {enum_name} (valid: {', '.join(map(str, allowed))})", arg)
    return number


def as_int_sequence(value: Any, arg: str, *, length: int | None = None, minimum: int | None = None) -> tuple[int, ...]:
    """A C array and its count as one Python sequence of ints."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise ArgumentFault(f"expected a sequence of integers, got {type(value).__name__}", arg)
    if length is not None and len(value) != length:
        raise ArgumentFault(f"expected {length} values, got {len(value)}", arg)
    return tuple(as_int(v, f"{arg}[{i}]", minimum=minimum) for i, v in enumerate(value))
