"""Activation descriptors, cnnlActivationForward and cnnlActivationBackward against float64 references."""
import math

import numpy as np
import pytest

import cnnl

from .tolerances import TRANSCENDENTAL_ULPS, assert_close
from .helpers import FLOATS, NUMPY, as_float64, empty, random_values, raises_status, sync, tensor

erf = np.vectorize(math.erf)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


# name -> (mode, coef, approximate, f, f')
MODES = {
    "relu": (cnnl.CNNL_ACTIVATION_RELU, 0.0, False, lambda x: np.maximum(x, 0), lambda x: (x > 0) * 1.0),
    "relu6": (cnnl.CNNL_ACTIVATION_RELU6, 0.0, False, lambda x: np.clip(x, 0, 6),
              lambda x: ((x > 0) & (x < 6)) * 1.0),
    "sigmoid": (cnnl.CNNL_ACTIVATION_SIGMOID, 0.0, False, sigmoid, lambda x: sigmoid(x) * (1 - sigmoid(x))),
    "tanh": (cnnl.CNNL_ACTIVATION_TANH, 0.0, False, np.tanh, lambda x: 1 - np.tanh(x) ** 2),
    "gelu": (cnnl.CNNL_ACTIVATION_GELU, 0.0, False, lambda x: 0.5 * x * (1 + erf(x / math.sqrt(2))),
             lambda x: 0.5 * (1 + erf(x / math.sqrt(2))) + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi)),
    "gelu_tanh": (cnnl.CNNL_ACTIVATION_GELU, 0.0, True,
                  lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))), None),
    "silu": (cnnl.CNNL_ACTIVATION_SILU, 0.0, False, lambda x: x * sigmoid(x),
             lambda x: sigmoid(x) * (1 + x * (1 - sigmoid(x)))),
    "leaky_relu": (cnnl.CNNL_ACTIVATION_LEAKYRELU, 0.1, False, lambda x: np.where(x > 0, x, 0.1 * x),
                   lambda x: np.where(x > 0, 1.0, 0.1)),
    "elu": (cnnl.CNNL_ACTIVATION_ELU, 0.7, False, lambda x: np.where(x > 0, x, 0.7 * np.expm1(x)),
            lambda x: np.where(x > 0, 1.0, 0.7 * np.exp(x))),
    "hardswish": (cnnl.CNNL_ACTIVATION_HARDSWISH, 0.0, False, lambda x: x * np.clip(x + 3, 0, 6) / 6,
                  lambda x: np.where(x < -3, 0.0, np.where(x > 3, 1.0, (2 * x + 3) / 6))),
}


def activation(name):
    mode, coef, approximate, _, _ = MODES[name]
    desc = cnnl.createActivationDescriptor()
    cnnl.setActivationDescriptor_v6(desc, mode, cnnl.CNNL_ACTIVATION_HIGH_PRECISION, cnnl.CNNL_NOT_PROPAGATE_NAN,
                                    coef, 0, 0.0, 0.0, False, approximate)
    return desc


def sample(code, dims=(4, 6), seed=0):
    values = random_values(np.random.default_rng(seed), dims, code, low=-8, high=8)
    # keep away from the kinks, where the derivative's value is a convention
    kinks = np.array([0.0, 6.0, -3.0, 3.0])
    near = np.min(np.abs(as_float64(values)[..., None] - kinks), axis=-1) < 0.05
    return np.where(near, 0.5, values).astype(NUMPY[code])


@pytest.mark.parametrize("name", sorted(MODES))
@pytest.mark.parametrize("code", FLOATS)
def test_forward(handle, name, code):
    values = sample(code)
    x, y = tensor(values, code), tensor(np.ones(values.shape, NUMPY[code]), code)
    cnnl.activationForward(handle, activation(name), 2.0, x.desc, x.ptr, 0.5, y.desc, y.ptr)
    sync(handle)
    want = 2 * MODES[name][3](as_float64(values)) + 0.5
    assert_close(y.read(), want, NUMPY[code], scale=np.abs(want) + 1, ulps=TRANSCENDENTAL_ULPS, what=name)


@pytest.mark.parametrize("name", sorted(n for n in MODES if MODES[n][4] is not None))
@pytest.mark.parametrize("code", [cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_HALF])
def test_backward(handle, name, code):
    values = sample(code, seed=1)
    grad = random_values(np.random.default_rng(2), values.shape, code)
    x, dy, dx = tensor(values, code), tensor(grad, code), empty(values.shape, code)
    desc = activation(name)
    if name in ("sigmoid", "tanh"):
        y = empty(values.shape, code)
        cnnl.activationForward(handle, desc, None, x.desc, x.ptr, None, y.desc, y.ptr)
        cnnl.activationBackward(handle, desc, None, y.desc, y.ptr, dy.desc, dy.ptr, None, None, None, dx.desc, dx.ptr)
    else:
        cnnl.activationBackward(handle, desc, None, None, None, dy.desc, dy.ptr, x.desc, x.ptr, None, dx.desc, dx.ptr)
    sync(handle)
    want = MODES[name][4](as_float64(values)) * as_float64(grad)
    # sigmoid/tanh use the rounded stored y: allow one storage rounding of y in the bound
    scale = np.abs(as_float64(grad)) * (1 + np.abs(as_float64(values)))
    tolerance_dtype = NUMPY[code]
    if name in ("sigmoid", "tanh") and code == cnnl.CNNL_DTYPE_HALF:
        scale = scale * 2 ** 13
    assert_close(dx.read(), want, tolerance_dtype, scale=scale, ulps=TRANSCENDENTAL_ULPS, what=name)


def test_descriptor_forms(handle):
    desc = cnnl.createActivationDescriptor()
    cnnl.setActivationDescriptor(desc, cnnl.CNNL_ACTIVATION_LEAKYRELU, cnnl.CNNL_PROPAGATE_NAN, 0.2)
    assert cnnl.getActivationDescriptor(desc) == (cnnl.CNNL_ACTIVATION_LEAKYRELU, cnnl.CNNL_PROPAGATE_NAN, 0.2)
    cnnl.setActivationDescriptor_v2(desc, cnnl.CNNL_ACTIVATION_RELU, 0, 0, 0.0)
    cnnl.setActivationDescriptor_v3(desc, cnnl.CNNL_ACTIVATION_RELU, 0, 0, 0.0, 0)
    cnnl.setActivationDescriptor_v4(desc, cnnl.CNNL_ACTIVATION_RELU, 0, 0, 0.0, 0, 1.0, 1.0)
    cnnl.setActivationDescriptor_v5(desc, cnnl.CNNL_ACTIVATION_ELU_V2, 1, 0, 1.0, 0, 0.5, 1.0, False)
    x, y = tensor(np.array([-1.0, 2.0], np.float32)), empty([2])
    cnnl.activationForward(handle, desc, None, x.desc, x.ptr, None, y.desc, y.ptr)
    sync(handle)
    np.testing.assert_allclose(y.read(), [0.5 * math.expm1(-1.0), 2.0], rtol=1e-6)


def test_unsupported_modes_and_bad_arguments(handle):
    x, y = empty([3]), empty([3])
    for mode, coef in ((cnnl.CNNL_ACTIVATION_SELU, 0.0), (cnnl.CNNL_ACTIVATION_CLIPPED_RELU, 3.0),
                       (cnnl.CNNL_ACTIVATION_GLU, 0.0)):
        desc = cnnl.createActivationDescriptor()
        cnnl.setActivationDescriptor(desc, mode, 0, coef)
        with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="activation_desc"):
            cnnl.activationForward(handle, desc, None, x.desc, x.ptr, None, y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="mode"):
        cnnl.setActivationDescriptor(cnnl.createActivationDescriptor(), 99, 0, 0.0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="activation_desc"):
        cnnl.activationForward(handle, cnnl.createActivationDescriptor(), None, x.desc, x.ptr, None, y.desc, y.ptr)
    ints = empty([3], cnnl.CNNL_DTYPE_INT32)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="x_desc"):
        cnnl.activationForward(handle, activation("relu"), None, ints.desc, ints.ptr, None, ints.desc, ints.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="x_desc"):
        cnnl.activationBackward(handle, activation("silu"), None, y.desc, y.ptr, x.desc, x.ptr, None, None, None,
                                y.desc, y.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="diff_x_desc"):
        cnnl.activationBackward(handle, activation("silu"), None, None, None, x.desc, x.ptr, x.desc, x.ptr, None,
                                empty([4]).desc, y.ptr)
