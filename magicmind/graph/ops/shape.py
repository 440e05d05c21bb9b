"""Data-movement and shape ops: reshape, flatten, permute, concat, split, slice, gather, squeeze, unsqueeze,
expand, tile, shape, identity.

Shapes that an op reads from a tensor (reshape's shape, slice's bounds, ...) are `value_inputs`: known on the host
when they are constants or computed from shapes; otherwise the output's extents are unknown until the engine has
the data (a data-dependent shape).
"""
from __future__ import annotations

import abc

import numpy as np

from ...status import invalid
from . import Op, register
from .shapes import axis_of, broadcast, product, unknown_extents


def ints(value) -> list:
    return [int(v) for v in np.asarray(value).reshape(-1)]


def reshape_target(in_shape, target, allowzero=False, node="reshape"):
    """ONNX Reshape's output shape: 0 copies the input's extent (unless allowzero), one -1 takes the rest."""
    out = []
    for i, t in enumerate(target):
        if t == 0 and not allowzero:
            if in_shape is None or i >= len(in_shape):
                raise invalid(f"{node}: shape {list(target)} copies axis {i} that x does not have")
            out.append(in_shape[i])
        elif t < -1:
            raise invalid(f"{node}: shape {list(target)} holds {t}")
        else:
            out.append(t)
    if out.count(-1) > 1:
        if all(o == -1 for o in out if o < 0) and target.count(-1) > 1:
            raise invalid(f"{node}: shape {list(target)} has more than one -1")
    if target.count(-1) == 1:
        index = list(target).index(-1)
        total, rest = product(in_shape) if in_shape is not None else -1, product([o for j, o in enumerate(out)
                                                                                   if j != index])
        if total >= 0 and rest > 0:
            if total % rest:
                raise invalid(f"{node}: x {list(in_shape)} does not reshape to {list(target)}")
            out[index] = total // rest
        elif total == 0 and rest == 0:
            raise invalid(f"{node}: -1 is ambiguous for an empty tensor")
    total, new = product(in_shape) if in_shape is not None else -1, product(out)
    if total >= 0 and new >= 0 and total != new:
        raise invalid(f"{node}: x {list(in_shape)} ({total} elements) does not reshape to {out} ({new})")
    return tuple(out)


class Movement(Op):
    """An op that only moves, views or reads the shape of elements: the cost model counts no arithmetic for it."""

    def flops(self, attrs, in_shapes, out_shapes):
        return 0.0


class Reshaping(Movement):
    """A movement whose output holds the input's elements in row-major order, in another shape."""

    def run(self, attrs, ins, outs):
        outs[0][...] = ins[0].reshape(outs[0].shape)


@register
class Reshape(Reshaping):
    """reshape(x, shape[, allowzero])."""

    name = "reshape"
    value_inputs = (1,)
    arity = (2, 2)

    def infer(self, attrs, ins):
        x, shape = ins
        if shape.value is None:
            return [(unknown_extents(shape), x.dtype)]
        return [(reshape_target(x.shape, ints(shape.value), bool(attrs.get("allowzero"))), x.dtype)]


@register
class Flatten(Reshaping):
    """flatten(x, axis): (prod(dims[:axis]), prod(dims[axis:]))."""

    name = "flatten"

    def infer(self, attrs, ins):
        x = ins[0]
        if x.shape is None:
            return [((-1, -1), x.dtype)]
        rank = len(x.shape)
        axis = int(attrs.get("axis", 1))
        if not -rank <= axis <= rank:
            raise invalid(f"flatten: axis {axis} is out of range for rank {rank}")
        axis %= rank + 1 if axis < 0 else rank + 1
        axis = axis if axis >= 0 else axis + rank
        return [((product(x.shape[:axis]), product(x.shape[axis:])), x.dtype)]


def _perm(attrs, ins, rank):
    perm = attrs.get("perm")
    if len(ins) == 2:
        if ins[1].value is None:
            raise invalid("permute: the permutation must be a constant")
        perm = ints(ins[1].value)
    if perm is None:
        perm = list(range(rank))[::-1]
    perm = [int(p) for p in perm]
    if sorted(p % rank if rank else p for p in perm) != list(range(rank)) or len(perm) != rank:
        raise invalid(f"permute: {perm} is not a permutation of {rank} axes")
    return [p % rank for p in perm]


@register
class Permute(Movement):
    """permute(x[, perm_tensor], perm=): the axes reordered (ONNX Transpose; no perm reverses them)."""

    name = "permute"
    value_inputs = (1,)
    arity = (1, 2)

    def infer(self, attrs, ins):
        x = ins[0]
        if x.shape is None:
            return [(None, x.dtype)]
        perm = _perm(attrs, ins, len(x.shape))
        return [(tuple(x.shape[p] for p in perm), x.dtype)]

    def run(self, attrs, ins, outs):
        from . import Info
        perm = _perm(attrs, [Info(a.shape, a.dtype, a) for a in ins], ins[0].ndim)
        outs[0][...] = ins[0].transpose(perm)


@register
class Concat(Movement):
    """concat(*xs, axis)."""

    name = "concat"
    arity = (1, None)

    def infer(self, attrs, ins):
        shapes = [i.shape for i in ins]
        dtypes = {i.dtype for i in ins}
        if len(dtypes) > 1:
            raise invalid(f"concat: input types differ ({', '.join(map(str, dtypes))})")
        if any(s is None for s in shapes):
            return [(None, ins[0].dtype)]
        rank = len(shapes[0])
        if any(len(s) != rank for s in shapes):
            raise invalid(f"concat: inputs of different ranks {[list(s) for s in shapes]}")
        axis = axis_of(attrs.get("axis", 0), rank, "concat")
        out = list(shapes[0])
        for s in shapes[1:]:
            for i in range(rank):
                if i == axis:
                    continue
                if out[i] >= 0 and s[i] >= 0 and out[i] != s[i]:
                    raise invalid(f"concat: shapes {[list(t) for t in shapes]} differ off axis {axis}")
                if out[i] < 0:
                    out[i] = s[i]
        extents = [s[axis] for s in shapes]
        out[axis] = -1 if any(e < 0 for e in extents) else sum(extents)
        return [(tuple(out), ins[0].dtype)]

    def run(self, attrs, ins, outs):
        np.concatenate(ins, axis=axis_of(attrs.get("axis", 0), ins[0].ndim, "concat"), out=outs[0])


@register
class Split(Movement):
    """split(x, axis, split=[sizes] or num_outputs): several outputs."""

    name = "split"

    def _sizes(self, attrs, extent):
        sizes = attrs.get("split")
        count = int(attrs.get("num_outputs", 0))
        if sizes is not None:
            sizes = [int(s) for s in sizes]
            if extent >= 0 and sum(sizes) != extent:
                raise invalid(f"split: sizes {sizes} do not add up to the axis extent {extent}")
            return sizes
        if count < 1:
            raise invalid("split: give split sizes or num_outputs")
        if extent < 0:
            return [-1] * count
        chunk = -(-extent // count)
        return [min(chunk, max(0, extent - chunk * i)) for i in range(count)]

    def infer(self, attrs, ins):
        x = ins[0]
        if x.shape is None:
            raise invalid("split: x needs a known rank")
        axis = axis_of(attrs.get("axis", 0), len(x.shape), "split")
        outs = []
        for size in self._sizes(attrs, x.shape[axis]):
            shape = list(x.shape)
            shape[axis] = size
            outs.append((tuple(shape), x.dtype))
        return outs

    def run(self, attrs, ins, outs):
        x = ins[0]
        axis = axis_of(attrs.get("axis", 0), x.ndim, "split")
        start = 0
        for out in outs:
            size = out.shape[axis]
            index = [slice(None)] * x.ndim
            index[axis] = slice(start, start + size)
            out[...] = x[tuple(index)]
            start += size


def slice_bounds(extent, start, end, step):
    """(start, stop, step, count) of ONNX Slice on one axis (clamped as ONNX: numpy's rules)."""
    if step == 0:
        raise invalid("slice: a step is 0")
    begin, stop, stride = slice(start, end, step).indices(extent)
    count = len(range(begin, stop, stride))
    return begin, stop, stride, count


def _slice_args(ins, rank):
    starts, ends = ints(ins[1].value), ints(ins[2].value)
    axes = ints(ins[3].value) if len(ins) > 3 and ins[3] is not None else list(range(len(starts)))
    steps = ints(ins[4].value) if len(ins) > 4 and ins[4] is not None else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise invalid(f"slice: starts {starts}, ends {ends}, axes {axes}, steps {steps} differ in length")
    axes = [axis_of(a, rank, "slice", "axes") for a in axes]
    if len(set(axes)) != len(axes):
        raise invalid(f"slice: axes {axes} repeat")
    return starts, ends, axes, steps


def _clamp(v):
    return max(min(v, (1 << 62)), -(1 << 62))


@register
class Slice(Movement):
    """slice(x, starts, ends[, axes[, steps]]): ONNX Slice (bounds clamped, negative from the end)."""

    name = "slice"
    value_inputs = (1, 2, 3, 4)
    arity = (3, 5)

    def infer(self, attrs, ins):
        x = ins[0]
        if x.shape is None:
            return [(None, x.dtype)]
        if any(i.value is None for i in ins[1:]):
            known_axes = ins[3].value if len(ins) > 3 else None
            if known_axes is None:
                return [((-1,) * len(x.shape), x.dtype)]
            shape = list(x.shape)
            for a in ints(known_axes):
                shape[axis_of(a, len(shape), "slice", "axes")] = -1
            return [(tuple(shape), x.dtype)]
        starts, ends, axes, steps = _slice_args(ins, len(x.shape))
        shape = list(x.shape)
        for s, e, a, st in zip(starts, ends, axes, steps):
            if shape[a] >= 0:
                shape[a] = slice_bounds(shape[a], _clamp(s), _clamp(e), st)[3]
            elif st == 0:
                raise invalid("slice: a step is 0")
        return [(tuple(shape), x.dtype)]

    def run(self, attrs, ins, outs):
        from . import Info
        x = ins[0]
        starts, ends, axes, steps = _slice_args([Info(a.shape, a.dtype, a) for a in ins], x.ndim)
        index = [slice(None)] * x.ndim
        for s, e, a, st in zip(starts, ends, axes, steps):
            begin, stop, stride, count = slice_bounds(x.shape[a], _clamp(s), _clamp(e), st)
            index[a] = slice(begin, stop if stop >= 0 else None, stride)
        outs[0][...] = x[tuple(index)]


@register
class Gather(Movement):
    """gather(x, indices, axis): ONNX Gather (negative indices from the end; an index out of range is an error
    of the run, never a read outside x)."""

    name = "gather"
    arity = (2, 2)

    def infer(self, attrs, ins):
        x, indices = ins
        if indices.dtype.kind not in "iu":
            raise invalid(f"gather: indices must be integers, got {indices.dtype}")
        if x.shape is None or indices.shape is None:
            return [(None, x.dtype)]
        axis = axis_of(attrs.get("axis", 0), len(x.shape), "gather")
        if indices.value is not None and x.shape[axis] >= 0:
            values = np.asarray(indices.value)
            if values.size and (values.max() >= x.shape[axis] or values.min() < -x.shape[axis]):
                raise invalid(f"gather: indices {values.reshape(-1)[:8].tolist()} out of range for axis {axis} "
                              f"of {list(x.shape)}")
        return [(x.shape[:axis] + indices.shape + x.shape[axis + 1:], x.dtype)]

    def run(self, attrs, ins, outs):
        x, indices = ins
        axis = axis_of(attrs.get("axis", 0), x.ndim, "gather")
        extent = x.shape[axis]
        index = np.asarray(indices, np.int64)
        if index.size and (index.max() >= extent or index.min() < -extent):
            raise IndexError(f"gather: an index lies outside [-{extent}, {extent}) on axis {axis}")
        outs[0][...] = np.take(x, np.where(index < 0, index + extent, index), axis=axis)


def _axes_value(attrs, ins, node):
    if len(ins) > 1:
        if ins[1].value is None:
            raise invalid(f"{node}: axes must be a constant")
        return ints(ins[1].value)
    axes = attrs.get("axes")
    return None if axes is None else [int(a) for a in axes]


class _AxesReshaping(Reshaping):
    """A reshaping whose axes come from the attribute `axes` or a constant second input (ONNX opset 13 on)."""

    value_inputs = (1,)
    arity = (1, 2)

    def infer(self, attrs, ins):
        x = ins[0]
        if x.shape is None:
            return [(None, x.dtype)]
        return [(self.reshaped(x.shape, _axes_value(attrs, ins, self.name)), x.dtype)]

    @abc.abstractmethod
    def reshaped(self, shape: tuple, axes) -> tuple:
        """The output shape for input `shape` and `axes` (None when none were given)."""


@register
class Squeeze(_AxesReshaping):
    """squeeze(x[, axes]): drop the given extent-1 axes (all of them when none are given)."""

    name = "squeeze"

    def reshaped(self, shape, axes):
        if axes is None:
            if -1 in shape:
                raise invalid("squeeze: without axes x needs a known shape")
            return tuple(d for d in shape if d != 1)
        axes = {axis_of(a, len(shape), "squeeze", "axes") for a in axes}
        for a in axes:
            if shape[a] not in (1, -1):
                raise invalid(f"squeeze: axis {a} of {list(shape)} is not 1")
        return tuple(d for i, d in enumerate(shape) if i not in axes)


@register
class Unsqueeze(_AxesReshaping):
    """unsqueeze(x[, axes]): insert extent-1 axes at the given positions of the output."""

    name = "unsqueeze"

    def reshaped(self, shape, axes):
        if not axes:
            raise invalid("unsqueeze: axes are required")
        rank = len(shape) + len(axes)
        positions = sorted({axis_of(a, rank, "unsqueeze", "axes") for a in axes})
        if len(positions) != len(axes):
            raise invalid(f"unsqueeze: axes {axes} repeat")
        dims = list(shape)
        for p in positions:
            dims.insert(p, 1)
        return tuple(dims)


@register
class Expand(Movement):
    """expand(x, shape): broadcast x to shape (ONNX Expand: the result is the broadcast of both)."""

    name = "expand"
    value_inputs = (1,)
    arity = (2, 2)

    def infer(self, attrs, ins):
        x, shape = ins
        if shape.value is None:
            target = unknown_extents(shape)
            if target is None or x.shape is None:
                return [(None, x.dtype)]
            return [((-1,) * max(len(target), len(x.shape)), x.dtype)]
        return [(broadcast(x.shape, tuple(ints(shape.value)), node="expand"), x.dtype)]

    def run(self, attrs, ins, outs):
        outs[0][...] = np.broadcast_to(ins[0], outs[0].shape)


@register
class Tile(Movement):
    """tile(x, repeats)."""

    name = "tile"
    value_inputs = (1,)
    arity = (2, 2)

    def infer(self, attrs, ins):
        x, repeats = ins
        if x.shape is None:
            return [(None, x.dtype)]
        if repeats.value is None:
            return [((-1,) * len(x.shape), x.dtype)]
        reps = ints(repeats.value)
        if len(reps) != len(x.shape) or any(r < 0 for r in reps):
            raise invalid(f"tile: repeats {reps} must give one count >= 0 per axis of {list(x.shape)}")
        return [(tuple(-1 if d < 0 else d * r for d, r in zip(x.shape, reps)), x.dtype)]

    def run(self, attrs, ins, outs):
        outs[0][...] = np.tile(ins[0], ints(ins[1]))


@register
class ShapeOf(Movement):
    """shape(x[, start, end]) -> int64 extents (ONNX Shape): known on the host once x's shape is."""

    name = "shape"
    shape_only = True

    def infer(self, attrs, ins):
        x = ins[0]
        if x.shape is None:
            return [((-1,), np.dtype(np.int64))]
        rank = len(x.shape)
        start, end = attrs.get("start", 0), attrs.get("end")
        selected = x.shape[slice(start, end)] if rank else ()
        del rank
        return [((len(selected),), np.dtype(np.int64))]

    def run(self, attrs, ins, outs):
        outs[0][...] = np.asarray(ins[0].shape[slice(attrs.get("start", 0), attrs.get("end"))], np.int64)


@register
class Identity(Movement):
    """identity(x): a copy."""

    name = "identity"

    def infer(self, attrs, ins):
        return [(ins[0].shape, ins[0].dtype)]

    def run(self, attrs, ins, outs):
        outs[0][...] = ins[0]
