"""cnnlTrigonForward through the API: every function against float64 numpy (NaN outside the domain), dtypes,
in place, strided views, and bad arguments."""
import numpy as np
import pytest

import cnnl

from .nn_helpers import BF16, F16, F32, F64, assert_near, blank, placed, raises_status, rounded, sync
from .helpers import DeviceTensor

FUNCTIONS = {cnnl.CNNL_TRIGON_SIN: np.sin, cnnl.CNNL_TRIGON_COS: np.cos, cnnl.CNNL_TRIGON_TAN: np.tan,
             cnnl.CNNL_TRIGON_ASIN: np.arcsin, cnnl.CNNL_TRIGON_ACOS: np.arccos, cnnl.CNNL_TRIGON_ATAN: np.arctan,
             cnnl.CNNL_TRIGON_SINH: np.sinh, cnnl.CNNL_TRIGON_COSH: np.cosh, cnnl.CNNL_TRIGON_TANH: np.tanh,
             cnnl.CNNL_TRIGON_ASINH: np.arcsinh, cnnl.CNNL_TRIGON_ACOSH: np.arccosh,
             cnnl.CNNL_TRIGON_ATANH: np.arctanh}


def trigon(handle, mode, x, code, in_place=False):
    desc = cnnl.createTrigonDescriptor()
    cnnl.setTrigonDescriptor_v2(desc, mode, cnnl.CNNL_COMPUTATION_ULTRAHIGH_PRECISION)
    xt = placed(x, code)
    yt = xt if in_place else blank(x.shape, code)
    cnnl.trigonForward(handle, desc, xt.desc, xt.ptr, yt.desc, yt.ptr)
    sync(handle)
    return yt.read()


@pytest.mark.parametrize("mode", sorted(FUNCTIONS))
def test_functions(handle, mode):
    x = np.linspace(-3, 3, 61)
    with np.errstate(all="ignore"):
        want = FUNCTIONS[mode](x)
    np.testing.assert_allclose(trigon(handle, mode, x, F64), want, rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("code", [F32, F16, BF16])
def test_dtypes_in_place(handle, code):
    x = rounded(np.random.default_rng(1), (4, 5), code, -0.9, 0.9)
    assert_near(trigon(handle, cnnl.CNNL_TRIGON_ASIN, x, code, in_place=True), np.arcsin(x), code)


def test_strided_and_rejects(handle):
    x = DeviceTensor((3, 4), F32, strides=(1, 3), fill=np.arange(12.0).reshape(3, 4) / 12)
    y = blank((3, 4), F32)
    desc = cnnl.createTrigonDescriptor()
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="desc"):
        cnnl.trigonForward(handle, desc, x.desc, x.ptr, y.desc, y.ptr)
    cnnl.setTrigonDescriptor(desc, cnnl.CNNL_TRIGON_ATAN)
    cnnl.trigonForward(handle, desc, x.desc, x.ptr, y.desc, y.ptr)
    sync(handle)
    np.testing.assert_allclose(y.read(), np.arctan(np.arange(12.0).reshape(3, 4) / 12), rtol=1e-6)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="mode"):
        cnnl.setTrigonDescriptor_v2(desc, 12, 0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="prefer"):
        cnnl.setTrigonDescriptor_v2(desc, 0, 9)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="y_desc"):
        cnnl.trigonForward(handle, desc, x.desc, x.ptr, blank((4, 3), F32).desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="x_desc"):
        ints = blank((3, 4), cnnl.CNNL_DTYPE_INT32)
        cnnl.trigonForward(handle, desc, ints.desc, ints.ptr, ints.desc, ints.ptr)
