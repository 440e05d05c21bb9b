"""Tensors made from a few numbers: ranges (`cnnlArange_v2`), evenly spaced values (`cnnlLinspace`) and one-hot
encodings (`cnnlOneHot`).

Values are computed in float64 (floating outputs) or int64 (integer outputs) and rounded once into the output,
in parallel chunks of the flattened output; linspace uses PyTorch's symmetric formula (the first half counts up
from start, the second half down from end, so both ends are exact). A one-hot output is filled with the off value
and the on value is scattered to the indexed positions; an index outside [0, depth) fails the op, as
torch.nn.functional.one_hot raises.
"""
import numpy as np

from .cast import cast_block
from .movement import copy
from .parallel import STAGED_BLOCK, map_parallel

#: elements per chunk of a generated sequence
_CHUNK = 4 * STAGED_BLOCK


def _generate(out, values_of):
    """out.flat[lo:hi] = values_of(lo, hi) (float64 or int64) for chunks of the flattened output, in parallel."""
    n = out.size
    if n == 0:
        return
    flat = out.reshape(-1) if out.flags.c_contiguous else np.empty(n, out.dtype)

    def chunk(lo):
        hi = min(lo + _CHUNK, n)
        values = values_of(lo, hi)
        if values.dtype.kind == "i":  # integer results wrap into narrower integer outputs
            np.copyto(flat[lo:hi], values, casting="unsafe")
        else:
            cast_block(values, flat[lo:hi])

    map_parallel(chunk, range(0, n, _CHUNK))
    if not out.flags.c_contiguous:
        copy(flat.reshape(out.shape), out)


def arange(start, step, out):
    """out.flat[i] = start + i * step (float64 for floating outputs; int64 for integer outputs, wrapping into
    narrower types)."""
    integer = out.dtype.kind in "iu"
    kind = np.int64 if integer else np.float64
    first, delta = kind(start), kind(step)

    def values(lo, hi):
        with np.errstate(over="ignore"):
            return first + np.arange(lo, hi, dtype=kind) * delta

    _generate(out, values)


def linspace(start, end, out):
    """out.flat = `out.size` evenly spaced values from start to end (torch.linspace's formula; integer outputs
    truncate start, end and every value toward zero)."""
    n = out.size
    integer = out.dtype.kind in "iu"
    first, last = (float(int(start)), float(int(end))) if integer else (float(start), float(end))
    step = (last - first) / (n - 1) if n > 1 else 0.0
    halfway = n // 2 if n > 1 else 1  # a single value is start

    def values(lo, hi):
        index = np.arange(lo, hi, dtype=np.float64)
        result = np.where(index < halfway, first + step * index, last - step * (n - 1 - index))
        return np.trunc(result).astype(np.int64) if integer else result

    _generate(out, values)


def one_hot(indices, depth, on, off, axis, out):
    """out (dense, indices.shape with `depth` inserted at `axis`) = on where the position along `axis` equals the
    index, else off. `on`/`off` are 0-d arrays of out's dtype."""
    positions = np.array(indices, np.int64)  # a copy: out may overlap the indices
    if positions.size and (positions.min() < 0 or positions.max() >= depth):
        bad = positions[(positions < 0) | (positions >= depth)][0]
        raise IndexError(f"class index {int(bad)} is outside [0, {depth})")
    if out.size == 0:
        return
    copy(np.asarray(off).reshape((1,) * out.ndim), out)
    np.put_along_axis(np.moveaxis(out, axis, -1), positions[..., None], np.asarray(on).reshape(()), axis=-1)
