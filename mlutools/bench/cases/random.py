"""Cases of random numbers (docs/cnnl_random.md): Philox uniform and normal numbers, fused dropout, discrete uniform and
multinomial sampling. A device random state is made and synced in the build, outside the measurement."""
from __future__ import annotations

import numpy as np

import cnnl

from .base import Case, VECTOR, f32


DROPOUT = 0.5
SEED = 0


def _generator():
    generator = cnnl.randCreateGenerator(cnnl.CNNL_RAND_RNG_PHILOX)
    cnnl.randSetPseudoRandomGeneratorSeed(generator, SEED)
    return generator


def _host_numbers(draw, count: int, numpy_dtype):
    """A reference drawing `count` float32 numbers with `draw(out=...)` and storing them as `numpy_dtype`."""
    numbers, out = np.empty(count, np.float32), np.empty(count, numpy_dtype)
    rng = np.random.default_rng(SEED)

    def reference():
        getattr(rng, draw)(dtype=np.float32, out=numbers)
        np.copyto(out, numbers, casting="unsafe")
    return reference


def rand_uniform(arena, shape, dtype):
    """Uniform [0, 1) numbers from a device state made by cnnlRandMakeMTGP32KernelState (synced in the build)."""
    count, numpy_dtype = int(np.prod(shape)), arena.numpy_dtype(dtype)
    generator = _generator()
    state = arena.malloc(cnnl.randGetMTGP32StateSize(generator))
    cnnl.randMakeMTGP32KernelState(arena.handle, state, None, None, SEED)
    arena.sync()
    output = arena.malloc(count * numpy_dtype.itemsize)
    return (lambda: cnnl.randGenerateUniform(arena.handle, generator, arena.code(dtype), state, count, 0.0, 1.0,
                                             output),
            _host_numbers("random", count, numpy_dtype))


def rand_normal(arena, shape, dtype):
    """Standard normal numbers from the generator's own stream."""
    count, numpy_dtype = int(np.prod(shape)), arena.numpy_dtype(dtype)
    generator, output = _generator(), arena.malloc(count * numpy_dtype.itemsize)
    return (lambda: cnnl.randGenerateNormal(arena.handle, generator, arena.code(dtype), None, count, 0.0, 1.0,
                                            output),
            _host_numbers("standard_normal", count, numpy_dtype))


def dropout(arena, shape, dtype):
    """y = x / (1 - p) where uniform >= p, else 0; the bool mask of kept places."""
    (x, values), mask, y = arena.random(shape, dtype), arena.empty(shape, "bool"), arena.empty(shape, dtype)
    generator, rng = _generator(), np.random.default_rng(SEED)
    numbers = np.empty(shape, np.float32)

    def reference():
        keep = rng.random(dtype=np.float32, out=numbers) >= DROPOUT
        return keep, np.where(keep, values / (1 - DROPOUT), 0)
    return (lambda: cnnl.fusedDropout_v2(arena.handle, generator, x.desc, x.ptr, DROPOUT, None, mask.desc, mask.ptr,
                                         y.desc, y.ptr),
            reference)


#: (rows, classes, samples) of multinomial sampling with replacement
MULTINOMIAL = {"small": (64, 100, 10), "medium": (256, 1000, 100), "large": (1024, 1000, 1000)}


def _sampling_generator():
    generator = cnnl.randCreateGenerator(cnnl.CNNL_RAND_RNG_PHILOX)
    cnnl.randSetPseudoRandomGeneratorSeed(generator, 1)
    return generator


def discrete_uniform(arena, shape, dtype):
    """cnnlRandGenerateDescreteUniform in [0, 1000) against numpy's Philox integers."""
    count = shape[0]
    out = arena.empty(shape, dtype)
    host = np.random.Generator(np.random.Philox(1))
    generator = _sampling_generator()
    return (lambda: cnnl.randGenerateDescreteUniform(arena.handle, generator, arena.code(dtype), None, count, 0,
                                                     1000, out.ptr),
            lambda: host.integers(0, 1000, count).astype(arena.numpy_dtype(dtype)))


def multinomial(arena, shape, dtype):
    """cnnlRandGenerateMultinomial_v2 with replacement against numpy's inverse-CDF sampling."""
    rows, classes, samples = shape
    (x, xv) = arena.random((rows, classes), dtype, positive=True)
    y = arena.empty((rows, samples), "int32")
    workspace, size = arena.workspace(cnnl.getRandGenerateMultinomialWorkspaceSize(arena.handle, x.desc))
    host = np.random.Generator(np.random.Philox(1))
    cumulative = np.cumsum(f32(xv), axis=1)

    def reference():
        targets = host.random((rows, samples)) * cumulative[:, -1:]
        return [np.searchsorted(cumulative[r], targets[r], side="right") for r in range(rows)]
    generator = _sampling_generator()
    return (lambda: cnnl.randGenerateMultinomial_v2(arena.handle, generator, x.desc, x.ptr, True, False, None,
                                                    workspace, size, y.desc, y.ptr),
            reference)


#: the cases of this family, in the order the table lists them
CASES = (
    Case("rand uniform", "cnnlRandGenerateUniform", rand_uniform, shapes=VECTOR,
             exercises=("cnnlRandMakeMTGP32KernelState",), reference="Generator.random"),
    Case("rand normal", "cnnlRandGenerateNormal", rand_normal, shapes=VECTOR,
             reference="Generator.standard_normal"),
    Case("dropout", "cnnlFusedDropout_v2", dropout),
    Case("rand discrete uniform", "cnnlRandGenerateDescreteUniform", discrete_uniform, shapes=VECTOR,
             reference="numpy Philox integers"),
    Case("rand multinomial", "cnnlRandGenerateMultinomial_v2", multinomial, shapes=MULTINOMIAL,
             dtypes=("float",), reference="numpy inverse CDF"),
)
