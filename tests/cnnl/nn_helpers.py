"""Helpers of the neural-network op tests: device tensors with a layout, per-dtype tolerances, and a directional
finite-difference gradient check."""
from __future__ import annotations

import numpy as np

import cnnl

from .helpers import NUMPY, DeviceTensor, as_float64, empty, raises_status, sync, tensor  # noqa: F401

F16, BF16, F32, F64 = (cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_BFLOAT16, cnnl.CNNL_DTYPE_FLOAT,
                       cnnl.CNNL_DTYPE_DOUBLE)
FLOATS = [F32, F16, BF16, F64]
#: relative error allowed against a float64 reference, per data type (a few roundings of the stored type)
RELATIVE = {F64: 1e-10, F32: 3e-5, F16: 4e-3, BF16: 3e-2}


def placed(values, code, layout=cnnl.CNNL_LAYOUT_ARRAY) -> DeviceTensor:
    """A device tensor holding `values` in data type `code`, described with `layout`."""
    t = tensor(np.asarray(values), code)
    cnnl.setTensorDescriptor(t.desc, layout, code, list(t.dims))
    return t


def blank(dims, code, layout=cnnl.CNNL_LAYOUT_ARRAY) -> DeviceTensor:
    t = empty(dims, code)
    cnnl.setTensorDescriptor(t.desc, layout, code, list(dims))
    return t


def rounded(rng, dims, code, low=-2.0, high=2.0) -> np.ndarray:
    """Random values already rounded to data type `code`, as float64 (what the device will hold)."""
    return as_float64(rng.uniform(low, high, size=dims).astype(NUMPY[code]))


def rounded_to(values, code) -> np.ndarray:
    """`values` rounded to data type `code`, as float64."""
    return values.astype(NUMPY[code]).astype(np.float64)


def assert_near(actual, expected, code, scale=None, what=""):
    """|actual - expected| <= RELATIVE[code] * scale elementwise (scale: max(1, |expected|) by default)."""
    got, want = as_float64(actual), np.asarray(expected, np.float64)
    bound = RELATIVE[code] * (np.maximum(1.0, np.abs(want)) if scale is None else scale)
    error = np.abs(got - want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    assert np.all(error <= bound), f"{what}: worst error {error.max():.3g} (bound {np.max(bound):.3g})"


def directional_check(loss, point, gradient, rng, directions=3, step=1e-6, rtol=1e-6):
    """Check gradient against central differences of the scalar function `loss` along random directions."""
    for _ in range(directions):
        direction = rng.standard_normal(point.shape)
        numeric = (loss(point + step * direction) - loss(point - step * direction)) / (2 * step)
        analytic = float(np.sum(gradient * direction))
        assert abs(numeric - analytic) <= rtol * max(1.0, abs(numeric)) + 1e-7, (numeric, analytic)
