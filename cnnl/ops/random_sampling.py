"""Sampling ops of the random-number family: cnnlRandGenerateDescreteUniform (the real, misspelled name),
cnnlGetRandGenerateMultinomialWorkspaceSize and cnnlRandGenerateMultinomial_v2.

They draw from the same stream as cnnlRandGenerateUniform (`cnnl.ops.random`): a generator with a NULL `state`
uses and advances its own (seed, offset) at the call, a device state (made by cnnlRandMakeMTGP32KernelState) is read
and advanced by the queued op. Argument orders from DeepLink DIOPI's Cambricon backend (functions/random.cpp,
multinomial.cpp). Numerics in `cnnl.kernels.sampling`.
"""
from __future__ import annotations

import math

from mlusim.errors import ArgumentFault
from mlusim.validate import as_enum, as_number

from .. import checks
from .. import enums as E
from ..descriptors import live
from ..handle import handle_arg
from ..kernels import random as R
from ..kernels import sampling as K
from ..opcall import OpCall
from ..status import api
from ..tensor import TensorDescriptor, tensor_arg
from ..views import pointer_value
from . import nn_common as N
from .random import RandGenerator, _stream

_DISCRETE_TYPES = N.NN_FLOATS + (E.CNNL_DTYPE_INT32, E.CNNL_DTYPE_INT64)
_WEIGHT_TYPES = (E.CNNL_DTYPE_HALF, E.CNNL_DTYPE_BFLOAT16, E.CNNL_DTYPE_FLOAT, E.CNNL_DTYPE_DOUBLE)


@api("cnnlRandGenerateDescreteUniform")
def randGenerateDescreteUniform(handle, generator, dtype, state, num, min, max, output) -> None:  # noqa: A002
    """cnnlRandGenerateDescreteUniform(handle, generator, dtype, state, num, min, max, output): `num` integers
    uniform in [min, max) of data type `dtype` (HALF, BFLOAT16, FLOAT, DOUBLE, INT32, INT64) into the raw buffer
    `output` (DIOPI's random_(from, to) passes max = to)."""
    low, high = as_number(min, "min"), as_number(max, "max")
    for value, arg in ((low, "min"), (high, "max")):
        if not (math.isfinite(value) and float(value) == int(value)):
            raise ArgumentFault(f"bound {value} is not an integer", arg)
    low, high = int(low), int(high)
    if low >= high:
        raise ArgumentFault(f"min {low} is not below max {high}", "min")
    with OpCall("cnnlRandGenerateDescreteUniform", handle) as call:
        gen = live(generator, RandGenerator, "generator")
        code = as_enum(dtype, "dtype", _DISCRETE_TYPES, "cnnlDataType_t")
        desc = N.raw_buffer(code, num, "num")
        out = call.output(desc, output, "output")
        read, advance = _stream(call, gen, _state(state), R.steps(desc.size))

        def run():
            seed, offset = read()
            advance(K.discrete_uniform(seed, offset, out, low, high))

        call.submit(run, flops=4 * desc.size, dtype=code)


def _state(state):
    """The device state pointer (NULL: the generator's own stream), checked before the stream reads it."""
    return pointer_value(state, "state") or None


def _weights(op, x_desc) -> TensorDescriptor:
    x = tensor_arg(x_desc, "x_desc")
    checks.supported_dtype(x, "x_desc", _WEIGHT_TYPES, op)
    if len(x.dims) not in (1, 2):
        raise ArgumentFault(f"{len(x.dims)} dims; multinomial takes weights [C] or [N, C]", "x_desc")
    return x


@api("cnnlGetRandGenerateMultinomialWorkspaceSize")
def getRandGenerateMultinomialWorkspaceSize(handle, x_desc) -> int:
    """cnnlGetRandGenerateMultinomialWorkspaceSize(handle, x_desc, &size) -> size: a float32 cumulative
    distribution of the weights."""
    handle_arg(handle)
    return 4 * _weights("cnnlRandGenerateMultinomial_v2", x_desc).size


@api("cnnlRandGenerateMultinomial_v2")
def randGenerateMultinomial_v2(handle, generator, x_desc, x, replacement, is_logits, state, workspace,
                               workspace_size, y_desc, y) -> None:
    """cnnlRandGenerateMultinomial_v2(handle, generator, x_desc, x, bool replacement, bool is_logits, state,
    workspace, workspace_size, y_desc, y): y [N, S] (or [S] for 1-D x) = S class indices (INT32 or INT64) drawn
    from each row of weights x (or of softmax(x) with is_logits), with or without replacement."""
    op = "cnnlRandGenerateMultinomial_v2"
    with OpCall(op, handle) as call:
        gen = live(generator, RandGenerator, "generator")
        xd = _weights(op, x_desc)
        yd = tensor_arg(y_desc, "y_desc")
        N.index_tensor(yd, "y_desc", op)
        if len(yd.dims) != len(xd.dims) or yd.dims[:-1] != xd.dims[:-1]:
            raise ArgumentFault(f"dims {list(yd.dims)}; expected {list(xd.dims[:-1])} + [samples]", "y_desc")
        with_replacement = checks.flag(replacement, "replacement")
        logits = checks.flag(is_logits, "is_logits")
        classes, samples = xd.dims[-1], yd.dims[-1]
        if not with_replacement and samples > classes:
            raise ArgumentFault(f"{samples} samples without replacement from {classes} classes", "y_desc")
        rows = xd.size // classes if classes else 0
        if classes == 0 and yd.size:
            raise ArgumentFault("no classes to draw from", "x_desc")
        xv, yv = call.input(xd, x, "x"), call.output(yd, y, "y")
        call.workspace(workspace, workspace_size, 4 * xd.size, "cnnlGetRandGenerateMultinomialWorkspaceSize")
        numbers = K.multinomial_numbers(rows, classes, samples, with_replacement)
        read, advance = _stream(call, gen, _state(state), R.steps(numbers))

        def run():
            if yv.size == 0:
                return
            seed, offset = read()
            advance(K.multinomial(seed, offset, xv, yv, with_replacement, logits))

        call.submit(run, flops=8 * (xd.size + yd.size), dtype=xd.dtype)
