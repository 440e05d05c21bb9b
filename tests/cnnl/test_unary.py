"""Unary math ops against numpy float64 references."""
import numpy as np
import pytest

import cnnl

from .tolerances import TRANSCENDENTAL_ULPS, assert_close
from .helpers import FLOATS, INTS, NUMPY, as_float64, empty, random_values, raises_status, sync, tensor

PREFER = cnnl.CNNL_COMPUTATION_HIGH_PRECISION
# name -> (call(handle, x, y), float64 reference, accepts integers, input domain)
UNARY = {
    "abs": (lambda h, x, y: cnnl.abs(h, x.desc, x.ptr, y.desc, y.ptr), np.abs, True, None),
    "neg": (lambda h, x, y: cnnl.negTensor(h, x.desc, x.ptr, y.desc, y.ptr), np.negative, True, None),
    "exp": (lambda h, x, y: cnnl.exp_v2(h, PREFER, x.desc, x.ptr, y.desc, y.ptr), np.exp, False, None),
    "expm1": (lambda h, x, y: cnnl.expm1(h, PREFER, x.desc, x.ptr, y.desc, y.ptr), np.expm1, False, None),
    "log": (lambda h, x, y: cnnl.log_v2(h, PREFER, cnnl.CNNL_LOG_E, x.desc, x.ptr, y.desc, y.ptr), np.log, False,
            "positive"),
    "log1p": (lambda h, x, y: cnnl.log1p(h, PREFER, x.desc, x.ptr, y.desc, y.ptr), np.log1p, False, "positive"),
    "log2": (lambda h, x, y: cnnl.log_v2(h, PREFER, cnnl.CNNL_LOG_2, x.desc, x.ptr, y.desc, y.ptr), np.log2,
             False, "positive"),
    "log10": (lambda h, x, y: cnnl.log_v2(h, PREFER, cnnl.CNNL_LOG_10, x.desc, x.ptr, y.desc, y.ptr), np.log10,
              False, "positive"),
    "sqrt": (lambda h, x, y: cnnl.sqrt_v2(h, PREFER, x.desc, x.ptr, y.desc, y.ptr), np.sqrt, False, "positive"),
    "rsqrt": (lambda h, x, y: cnnl.rsqrt_v2(h, PREFER, x.desc, x.ptr, y.desc, y.ptr), lambda v: 1 / np.sqrt(v),
              False, "positive"),
    "square": (lambda h, x, y: cnnl.square(h, x.desc, x.ptr, y.desc, y.ptr), np.square, True, None),
    "reciprocal": (lambda h, x, y: cnnl.reciprocal(h, x.desc, x.ptr, y.desc, y.ptr), np.reciprocal, False,
                   "positive"),
    "sin": (lambda h, x, y: cnnl.sin_v2(h, PREFER, x.desc, x.ptr, y.desc, y.ptr), np.sin, False, None),
    "cos": (lambda h, x, y: cnnl.cos_v2(h, PREFER, x.desc, x.ptr, y.desc, y.ptr), np.cos, False, None),
    "floor": (lambda h, x, y: cnnl.floor(h, x.desc, x.ptr, y.desc, y.ptr), np.floor, True, None),
    "ceil": (lambda h, x, y: cnnl.ceil(h, x.desc, x.ptr, y.desc, y.ptr), np.ceil, True, None),
    "round": (lambda h, x, y: cnnl.round(h, x.desc, x.ptr, y.desc, y.ptr), np.rint, True, None),
    "sign": (lambda h, x, y: cnnl.sign(h, x.desc, x.ptr, y.desc, y.ptr), np.sign, True, None),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("code", FLOATS)
def test_unary_floats(handle, name, code):
    call, reference, _, domain = UNARY[name]
    rng = np.random.default_rng(code)
    values = random_values(rng, (3, 5), code)
    if domain == "positive":
        values = (np.abs(as_float64(values)) + 0.1).astype(NUMPY[code])
    x = tensor(values, code, strides=[1, 3])  # a transposed layout
    y = empty([3, 5], code)
    call(handle, x, y)
    sync(handle)
    assert_close(y.read(), reference(as_float64(values)), NUMPY[code], ulps=TRANSCENDENTAL_ULPS, what=name)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("code", INTS)
def test_unary_integers(handle, name, code):
    call, reference, accepts_integers, _ = UNARY[name]
    values = random_values(np.random.default_rng(code), (7,), code)
    x, y = tensor(values, code), empty([7], code)
    if not accepts_integers:
        with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="x_desc"):
            call(handle, x, y)
        return
    call(handle, x, y)
    sync(handle)
    np.testing.assert_array_equal(y.read(), reference(values.astype(np.int64)).astype(NUMPY[code]))


def test_unary_in_place(handle):
    x = tensor(np.array([-1.5, 2.0], np.float32))
    cnnl.abs(handle, x.desc, x.ptr, x.desc, x.ptr)
    sync(handle)
    assert x.read().tolist() == [1.5, 2.0]


def test_unary_bad_arguments(handle):
    x, y = empty([2, 3]), empty([3, 2])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="y_desc"):
        cnnl.exp_v2(handle, PREFER, x.desc, x.ptr, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="y_desc"):
        cnnl.sqrt_v2(handle, PREFER, x.desc, x.ptr, empty([2, 3], cnnl.CNNL_DTYPE_HALF).desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="base"):
        cnnl.log_v2(handle, PREFER, 3, x.desc, x.ptr, x.desc, x.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="prefer"):
        cnnl.sin_v2(handle, -1, x.desc, x.ptr, x.desc, x.ptr)
    flags = empty([2], cnnl.CNNL_DTYPE_BOOL)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="x_desc"):
        cnnl.abs(handle, flags.desc, flags.ptr, flags.desc, flags.ptr)
