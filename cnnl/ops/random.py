"""Random numbers: cnnlRandCreateGenerator / Destroy, seed and offset setters, the MTGP32 state functions,
cnnlRandGenerateUniform, cnnlRandGenerateNormal and cnnlFusedDropout_v2.

Every generator type draws from the same counter-based stream (`cnnl.kernels.random`): a (seed, offset) pair fixes
the numbers exactly. With a NULL `state`, the generator's own seed and offset are used and the offset advances at
each call (in call order). With a device `state` (cnnlRandGetMTGP32StateSize bytes, filled by
cnnlRandMakeMTGP32KernelState), the seed and offset live in device memory and the queued op reads and advances
them, so ops on one queue continue one stream. Outputs: HALF, BFLOAT16, FLOAT, DOUBLE; dropout masks UINT8 or BOOL.
"""
from __future__ import annotations

import numpy as np

from mlusim.errors import ArgumentFault, NotSupportedFault
from mlusim.validate import as_enum, as_int, as_number

from .. import checks
from .. import enums as E
from ..descriptors import Descriptor, live
from ..kernels import random as K
from ..opcall import OpCall
from ..status import api
from ..tensor import tensor_arg
from ..views import is_null
from . import nn_common as N

#: bytes of a device state: the seed and the offset as two 64-bit integers
STATE_BYTES = 16
_MASK_TYPES = (E.CNNL_DTYPE_UINT8, E.CNNL_DTYPE_BOOL)
_SEED_RANGE = 2 ** 64
_POISON_WORD = 2 ** 64 - 1  # 8 bytes of 0xFF, what fresh device memory holds


class RandGenerator(Descriptor):
    """cnnlRandGenerator_t: a generator type with its seed and offset."""

    c_type = "cnnlRandGenerator_t"
    setter = "cnnlRandCreateGenerator"

    def __init__(self, rng_type: int):
        super().__init__()
        self.rng_type = rng_type
        self.seed = 0
        self.offset = 0
        self.is_set = True


@api("cnnlRandCreateGenerator")
def randCreateGenerator(rng_type) -> RandGenerator:
    """cnnlRandCreateGenerator(cnnlRandGenerator_t *generator, cnnlRandRngType_t rng_type) -> generator
    (seed 0, offset 0)."""
    return RandGenerator(as_enum(rng_type, "rng_type", E.RAND_RNG_TYPES, "cnnlRandRngType_t"))


@api("cnnlRandDestroyGenerator")
def randDestroyGenerator(generator) -> None:
    """cnnlRandDestroyGenerator(generator)."""
    live(generator, RandGenerator, "generator").destroyed = True


@api("cnnlRandSetPseudoRandomGeneratorSeed")
def randSetPseudoRandomGeneratorSeed(generator, seed) -> None:
    """cnnlRandSetPseudoRandomGeneratorSeed(generator, seed): restart the stream at (seed, offset 0)."""
    target = live(generator, RandGenerator, "generator")
    target.seed = as_int(seed, "seed", minimum=0, maximum=_SEED_RANGE - 1)
    target.offset = 0


@api("cnnlRandSetPseudoRandomGeneratorOffset")
def randSetPseudoRandomGeneratorOffset(generator, offset) -> None:
    """cnnlRandSetPseudoRandomGeneratorOffset(generator, offset): continue the stream at `offset` counter steps
    (4 raw numbers each). The name is chosen here (CNNL's Philox offset setter is not public)."""
    live(generator, RandGenerator, "generator").offset = as_int(offset, "offset", minimum=0)


@api("cnnlRandGetPseudoRandomGeneratorOffset")
def randGetPseudoRandomGeneratorOffset(generator) -> int:
    """cnnlRandGetPseudoRandomGeneratorOffset(generator, &offset) -> offset (chosen name, see the setter)."""
    return live(generator, RandGenerator, "generator").offset


@api("cnnlRandGetMTGP32StateSize")
def randGetMTGP32StateSize(generator) -> int:
    """cnnlRandGetMTGP32StateSize(generator, &size) -> size of a device state in bytes."""
    live(generator, RandGenerator, "generator")
    return STATE_BYTES


def _state_desc():
    return N.raw_buffer(E.CNNL_DTYPE_INT64, 2, "state")


@api("cnnlRandMakeMTGP32KernelState")
def randMakeMTGP32KernelState(handle, state, params, kernel_params, seed) -> None:
    """cnnlRandMakeMTGP32KernelState(handle, state, params, kernel_params, seed): initialise a device state to
    (seed, offset 0) on the handle's queue. The MTGP32 parameter tables are not used and must be NULL."""
    if params is not None or not is_null(kernel_params):
        raise NotSupportedFault("MTGP32 parameter tables are not used; pass NULL", "params")
    value = as_int(seed, "seed", minimum=0, maximum=_SEED_RANGE - 1)
    with OpCall("cnnlRandMakeMTGP32KernelState", handle) as call:
        view = call.output(_state_desc(), state, "state")
        stored = np.array([value, 0], np.uint64).view(np.int64)
        call.submit(lambda: np.copyto(view, stored), flops=0, dtype=E.CNNL_DTYPE_INT64)


def _stream(call, generator: RandGenerator, state, steps: int):
    """(read, advance): where the op gets its (seed, offset) and how it stores the offset after it."""
    if is_null(state):
        seed, offset = generator.seed, generator.offset
        generator.offset += steps
        return (lambda: (seed, offset)), (lambda next_offset: None)
    view = call.output(_state_desc(), state, "state", read=True)
    address = int(state)

    def read():
        seed, offset = (int(v) for v in view.view(np.uint64))
        if seed == offset == _POISON_WORD:
            raise ArgumentFault(f"the random state at 0x{address:x} was never initialised (it holds the poison of "
                                f"fresh device memory): make it with cnnlRandMakeMTGP32KernelState first", "state")
        return seed, offset

    def advance(next_offset):
        view.view(np.uint64)[1] = np.uint64(next_offset % _SEED_RANGE)  # the offset counter wraps, as a uint64

    return read, advance


def _generate(c_name, handle, generator, dtype, state, num, output, kernel, flops_per_element, normal=False):
    with OpCall(c_name, handle) as call:
        gen = live(generator, RandGenerator, "generator")
        code = checks.dtype_value(dtype, "dtype", N.NN_FLOATS, "the type of random numbers")
        desc = N.raw_buffer(code, num, "num")
        out = call.output(desc, output, "output")
        read, advance = _stream(call, gen, state, K.steps(desc.size, normal))

        def run():
            seed, offset = read()
            advance(kernel(seed, offset, out))

        call.submit(run, flops=flops_per_element * desc.size, dtype=code)


@api("cnnlRandGenerateUniform")
def randGenerateUniform(handle, generator, dtype, state, num, min, max, output) -> None:  # noqa: A002
    """cnnlRandGenerateUniform(handle, generator, dtype, state, num, min, max, output): `num` uniform numbers in
    [min, max) of `dtype` into the raw buffer `output`."""
    low, high = float(as_number(min, "min")), float(as_number(max, "max"))
    if not low <= high:
        raise ArgumentFault(f"min {low} is greater than max {high}", "min")
    _generate("cnnlRandGenerateUniform", handle, generator, dtype, state, num, output,
              lambda seed, offset, out: K.uniform(seed, offset, out, low, high), 2)


@api("cnnlRandGenerateNormal")
def randGenerateNormal(handle, generator, dtype, state, num, mean, std, output) -> None:
    """cnnlRandGenerateNormal(handle, generator, dtype, state, num, mean, std, output): `num` normal(mean, std)
    numbers of `dtype` into the raw buffer `output`."""
    centre, spread = float(as_number(mean, "mean")), float(as_number(std, "std"))
    if not spread >= 0:
        raise ArgumentFault(f"std {spread} is negative", "std")
    _generate("cnnlRandGenerateNormal", handle, generator, dtype, state, num, output,
              lambda seed, offset, out: K.normal(seed, offset, out, centre, spread), 12, normal=True)


@api("cnnlFusedDropout_v2")
def fusedDropout_v2(handle, generator, input_desc, input, p, state, mask_desc, mask, output_desc, output) -> None:
    """cnnlFusedDropout_v2(handle, generator, input_desc, input, p, state, mask_desc, mask, output_desc, output):
    mask = (uniform >= p), output = input * mask / (1 - p). The backward is an elementwise product with the mask
    and the same scale (e.g. cnnlCastDataType of the mask, then cnnlOpTensor MUL with alpha 1 / (1 - p))."""
    op = "cnnlFusedDropout_v2"
    with OpCall(op, handle) as call:
        gen = live(generator, RandGenerator, "generator")
        xd, md, od = tensor_arg(input_desc, "input_desc"), tensor_arg(mask_desc, "mask_desc"), tensor_arg(
            output_desc, "output_desc")
        N.float_tensor(xd, "input_desc", op)
        checks.supported_dtype(md, "mask_desc", _MASK_TYPES, op)
        checks.same_dtype(xd, "input_desc", (od, "output_desc"))
        checks.same_shape(xd, "input_desc", (md, "mask_desc"), (od, "output_desc"))
        rate = float(as_number(p, "p"))
        if not 0 <= rate <= 1:
            raise ArgumentFault(f"p {rate} is outside [0, 1]", "p")
        xv = call.input(xd, input, "input")
        mv, ov = call.output(md, mask, "mask"), call.output(od, output, "output")
        read, advance = _stream(call, gen, state, K.steps(xd.size))

        def run():
            seed, offset = read()
            advance(K.dropout(seed, offset, xv, rate, mv, ov))

        call.submit(run, flops=3 * xd.size, dtype=xd.dtype)
