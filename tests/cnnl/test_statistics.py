"""Std / var / mean (cnnl/ops/statistics.py) against float64 numpy references and torch."""
import numpy as np
import pytest

import cnnl
import cnrt

from .helpers import FLOATS, NUMPY, as_float64, empty, random_values, raises_status, sync, tensor
from .tolerances import assert_close

torch = pytest.importorskip("torch")  # torch CPU is the reference where numpy would re-implement the op


def _descriptor(op, axes, unbiased):
    desc = cnnl.createStdVarMeanDescriptor()
    cnnl.setStdVarMeanDescriptor(desc, op, axes, unbiased)
    return desc


def _run(handle, desc, x, first, mean=None):
    size = cnnl.getStdVarMeanWorkspaceSize(handle, desc, x.desc)
    workspace = cnrt.malloc(size) if size else None
    std_args = (first.desc, first.ptr, None, None) if desc.op == cnnl.CNNL_STD else (None, None, first.desc,
                                                                                      first.ptr)
    cnnl.stdVarMean(handle, desc, x.desc, x.ptr, workspace, size, *std_args, mean and mean.desc, mean and mean.ptr)
    sync(handle)


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("op", [cnnl.CNNL_STD, cnnl.CNNL_VAR])
@pytest.mark.parametrize("axes,unbiased", [([1], True), ([0, 2], False), ([-1, 0, 1], True)])
def test_std_var_mean(handle, code, op, axes, unbiased):
    values = random_values(np.random.default_rng(code), (3, 4, 5), code)
    x = tensor(values, code, strides=[1, 3, 12])
    keep = [1 if d in [a % 3 for a in axes] else n for d, n in enumerate(values.shape)]
    first, mean = empty(keep, code), empty([n for n in keep if n != 1] or [1], code)
    _run(handle, _descriptor(op, axes, unbiased), x, first, mean)
    data = as_float64(values)
    reduced = tuple(a % 3 for a in axes)
    var = data.var(axis=reduced, ddof=1 if unbiased else 0, keepdims=True)
    expected = np.sqrt(var) if op == cnnl.CNNL_STD else var
    assert_close(first.read(), expected, NUMPY[code], ulps=8)
    assert_close(mean.read(), data.mean(axis=reduced).reshape(mean.dims), NUMPY[code],
                 scale=np.abs(data).max())
    torch_fn = torch.std if op == cnnl.CNNL_STD else torch.var
    reference = torch_fn(torch.from_numpy(data), dim=reduced, correction=1 if unbiased else 0, keepdim=True)
    assert_close(first.read(), reference.numpy(), NUMPY[code], ulps=8)


def test_single_element_unbiased_is_nan_and_empty_reduction(handle):
    x, out = tensor(np.array([[2.0], [3.0]], np.float32)), empty([2, 1])
    _run(handle, _descriptor(cnnl.CNNL_VAR, [1], True), x, out)
    assert np.isnan(out.read()).all()
    nothing, result = empty([2, 0]), empty([2])
    _run(handle, _descriptor(cnnl.CNNL_STD, [1], False), nothing, result)
    assert np.isnan(result.read()).all()


def test_std_var_mean_bad_arguments(handle):
    x, out = tensor(np.ones((2, 3), np.float32)), empty([2, 1])
    desc = _descriptor(cnnl.CNNL_STD, [1], True)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="std_desc"):
        cnnl.stdVarMean(handle, desc, x.desc, x.ptr, None, 0, None, None, out.desc, out.ptr, None, None)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="var_desc"):
        cnnl.stdVarMean(handle, desc, x.desc, x.ptr, None, 0, out.desc, out.ptr, out.desc, out.ptr, None, None)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="std_desc"):
        cnnl.stdVarMean(handle, desc, x.desc, x.ptr, None, 0, x.desc, x.ptr, None, None, None, None)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="op"):
        cnnl.setStdVarMeanDescriptor(desc, 7, [0], True)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="desc"):
        cnnl.getStdVarMeanWorkspaceSize(handle, _descriptor(cnnl.CNNL_VAR, [2], True), x.desc)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="desc"):
        cnnl.getStdVarMeanWorkspaceSize(handle, _descriptor(cnnl.CNNL_VAR, [1, -1], True), x.desc)
    ints = empty([2, 3], cnnl.CNNL_DTYPE_INT32)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="input_desc"):
        cnnl.getStdVarMeanWorkspaceSize(handle, desc, ints.desc)
    half = empty([2, 3], cnnl.CNNL_DTYPE_HALF)
    assert cnnl.getStdVarMeanWorkspaceSize(handle, desc, half.desc) == 2 * 3 * 4
