"""Program: the builder's and the engine's form of a network (plain values and steps, no API objects).

Values are numbered; a value has a name, a numpy dtype, a shape (-1 on mutable axes) and, for constants, its
array. Steps are (op, attrs, input ids, output ids, name) in execution order. The builder's passes rewrite a
Program; the Model serializes one.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from .ops import Info


@dataclass
class Value:
    name: str
    dtype: np.dtype
    shape: Optional[tuple]
    const: Optional[np.ndarray] = None


@dataclass
class Step:
    op: str
    attrs: dict
    ins: list
    outs: list
    name: str

    @property
    def record(self) -> tuple:
        return (self.op, self.attrs, self.ins, self.outs, self.name)


@dataclass
class Program:
    values: dict = field(default_factory=dict)
    steps: list = field(default_factory=list)
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    #: per input: (min dims, max dims) for mutable inputs, None for fixed ones
    ranges: list = field(default_factory=list)
    _next: int = 0

    def new_value(self, name: str, dtype, shape, const=None) -> int:
        key = self._next
        self._next += 1
        self.values[key] = Value(name, np.dtype(dtype), None if shape is None else tuple(shape), const)
        return key

    def copy(self) -> "Program":
        return copy.deepcopy(self)

    def consumers(self) -> dict:
        """value id -> [step indices that read it]."""
        found: dict = {}
        for index, step in enumerate(self.steps):
            for v in step.ins:
                found.setdefault(v, []).append(index)
        return found

    def producer(self) -> dict:
        """value id -> the index of the step that writes it."""
        return {v: i for i, step in enumerate(self.steps) for v in step.outs}

    def base_infos(self, shapes: Optional[list] = None) -> dict:
        """Infos of the inputs (their declared shapes, or `shapes`) and of the constants."""
        infos = {}
        for i, key in enumerate(self.inputs):
            value = self.values[key]
            infos[key] = Info(value.shape if shapes is None else shapes[i], value.dtype)
        for key, value in self.values.items():
            if value.const is not None:
                infos[key] = Info(value.const.shape, value.const.dtype, value.const)
        return infos
