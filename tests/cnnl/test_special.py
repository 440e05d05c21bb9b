"""erf, erfinv, log (cnnlLog), trunc and isnan (cnnl/ops/special.py) against float64 references."""
import math

import numpy as np
import pytest

import cnnl

from .helpers import FLOATS, INTS, NUMPY, as_float64, empty, random_values, raises_status, sync, tensor
from .tolerances import TRANSCENDENTAL_ULPS, assert_close

torch = pytest.importorskip("torch")  # torch CPU is the reference where numpy would re-implement the op

HIGH = cnnl.CNNL_COMPUTATION_HIGH_PRECISION


def _erf64(values):
    return np.array([math.erf(v) for v in np.asarray(values, np.float64).ravel()]).reshape(np.shape(values))


@pytest.mark.parametrize("code", FLOATS)
def test_erf(handle, code):
    values = np.concatenate([np.linspace(-6, 6, 61), [0.0, -0.0, np.inf, -np.inf, np.nan]]).astype(NUMPY[code])
    x, y = tensor(values, code), empty([values.size], code)
    cnnl.erf_v2(handle, HIGH, x.desc, x.ptr, y.desc, y.ptr)
    sync(handle)
    got = y.read()
    assert_close(got, _erf64(as_float64(values)), NUMPY[code], ulps=TRANSCENDENTAL_ULPS)
    assert np.signbit(got[62].astype(np.float64))  # erf(-0) = -0


@pytest.mark.parametrize("code", FLOATS)
def test_erfinv(handle, code):
    interior = np.concatenate([np.linspace(-0.999, 0.999, 81), [1e-30, -1e-7, 0.9999999, -0.99999999]])
    values = np.concatenate([interior, [0.0, -0.0, 1.0, -1.0, 1.5, -2.0, np.nan]]).astype(NUMPY[code])
    x, y = tensor(values, code), empty([values.size], code)
    cnnl.erfinv(handle, HIGH, x.desc, x.ptr, y.desc, y.ptr)
    sync(handle)
    got = y.read()
    reference = torch.erfinv(torch.from_numpy(as_float64(values))).numpy()
    with np.errstate(all="ignore"):  # the condition of erfinv: an ulp of y moves x by sqrt(pi)/2 exp(x^2) |y| ulp
        scale = np.abs(reference) + math.sqrt(math.pi) / 2 * np.exp(reference ** 2) * np.abs(as_float64(values))
    assert_close(got, reference, NUMPY[code], scale=scale, ulps=TRANSCENDENTAL_ULPS)
    n = interior.size
    assert np.signbit(got[n + 1].astype(np.float64)) and got[n + 1] == 0
    if code == cnnl.CNNL_DTYPE_DOUBLE:  # float64 accuracy: erf(erfinv(y)) == y to a few ulps
        np.testing.assert_allclose(_erf64(got[:n]), as_float64(values[:n]), rtol=4e-16, atol=1e-300)


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("base", [cnnl.CNNL_LOG_E, cnnl.CNNL_LOG_2, cnnl.CNNL_LOG_10])
def test_log_without_preference(handle, code, base):
    values = (np.abs(random_values(np.random.default_rng(base), (4, 5), code)) + 0.1).astype(NUMPY[code])
    x, y = tensor(values, code), empty([4, 5], code)
    cnnl.log(handle, base, x.desc, x.ptr, y.desc, y.ptr)
    sync(handle)
    reference = {cnnl.CNNL_LOG_E: np.log, cnnl.CNNL_LOG_2: np.log2, cnnl.CNNL_LOG_10: np.log10}[base]
    assert_close(y.read(), reference(as_float64(values)), NUMPY[code], ulps=TRANSCENDENTAL_ULPS)


@pytest.mark.parametrize("code", FLOATS + INTS)
def test_trunc(handle, code):
    values = random_values(np.random.default_rng(code), (3, 6), code)
    if NUMPY[code].kind == "f":
        values = np.concatenate([values.ravel(), [-0.5, 0.5, -0.0, np.inf, np.nan, 2.5, -2.5]]).astype(NUMPY[code])
    x, y = tensor(values, code), empty(list(values.shape), code)
    cnnl.trunc(handle, x.desc, x.ptr, y.desc, y.ptr)
    sync(handle)
    got, expected = as_float64(y.read()), np.trunc(as_float64(values))
    np.testing.assert_array_equal(got, expected)
    assert np.array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(expected[~np.isnan(expected)]))


@pytest.mark.parametrize("code", FLOATS + [cnnl.CNNL_DTYPE_INT32])
@pytest.mark.parametrize("out_code", [cnnl.CNNL_DTYPE_BOOL, cnnl.CNNL_DTYPE_FLOAT])
def test_isnan(handle, code, out_code):
    values = np.array([[0, np.nan, -np.inf], [np.nan, 1, -0.0]])
    if NUMPY[code].kind == "i":
        values = np.nan_to_num(values, posinf=0, neginf=0).astype(np.int32)
    x, y = tensor(values.astype(NUMPY[code]), code, strides=[1, 2]), empty([2, 3], out_code)
    cnnl.isNan(handle, x.desc, x.ptr, y.desc, y.ptr)
    sync(handle)
    np.testing.assert_array_equal(y.read(), np.isnan(as_float64(values)).astype(NUMPY[out_code]))


def test_special_bad_arguments(handle):
    ints, floats, other = empty([3], cnnl.CNNL_DTYPE_INT32), empty([3]), empty([4])
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="x_desc"):
        cnnl.erf_v2(handle, HIGH, ints.desc, ints.ptr, ints.desc, ints.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="y_desc"):
        cnnl.erfinv(handle, HIGH, floats.desc, floats.ptr, other.desc, other.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="prefer"):
        cnnl.erfinv(handle, 5, floats.desc, floats.ptr, floats.desc, floats.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="base"):
        cnnl.log(handle, 3, floats.desc, floats.ptr, floats.desc, floats.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="y_desc"):
        cnnl.isNan(handle, floats.desc, floats.ptr, other.desc, other.ptr)
    nothing = empty([0, 2])
    cnnl.erf_v2(handle, HIGH, nothing.desc, None, nothing.desc, None)  # empty: nothing to do, no pointer needed
