"""The library's error, with the right status, for every bad scalar (never a ValueError or OverflowError); an
unsupported mode or data type is NOT_SUPPORTED; an uninitialised random state is reported as such; and
cnnlGetOpTensorWorkspaceSize_v2."""
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cnnl
import cnrt
from mlusim import config

from .helpers import DeviceTensor, raises_status, sync

F, I32 = cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_INT32

SCALARS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-2**70, 2**70),
                    st.sampled_from([True, np.float16(1.5), np.int64(7), 1e308, -1e308, 2**63, -2**63 - 1]))


def _op(code):
    a, b, c = (DeviceTensor((4,), code, fill=np.arange(4)) for _ in range(3))
    desc = cnnl.createOpTensorDescriptor()
    cnnl.setOpTensorDescriptor(desc, cnnl.CNNL_OP_TENSOR_ADD, code, cnnl.CNNL_NOT_PROPAGATE_NAN)
    return desc, a, b, c


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(alpha=SCALARS, beta=SCALARS)
def test_any_scalar_of_an_integer_op_is_accepted_or_bad_param(handle, alpha, beta):
    desc, a, b, c = _op(I32)
    integral = all(isinstance(v, (int, np.integer)) or (math.isfinite(float(v)) and float(v) == int(v))
                   for v in (alpha, beta))
    fits = integral and all(-2**63 <= int(v) < 2**63 for v in (alpha, beta))
    try:
        cnnl.opTensor(handle, desc, alpha, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, beta, c.desc, c.ptr)
        sync(handle)
        assert fits, (alpha, beta)
    except cnnl.CnnlError as error:
        assert error.code == cnnl.CNNL_STATUS_BAD_PARAM and not fits, error
    try:
        cnnl.fill_v3(handle, cnnl.CNNL_POINTER_MODE_HOST, alpha, c.desc, c.ptr)
        sync(handle)
    except cnnl.CnnlError as error:
        assert error.code == cnnl.CNNL_STATUS_BAD_PARAM


def test_non_finite_scalars_of_an_integer_op_name_the_argument(handle):
    desc, a, b, c = _op(I32)
    for value in (float("nan"), float("inf"), 2.5):
        with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="alpha1"):
            cnnl.opTensor(handle, desc, value, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, 0, c.desc, c.ptr)
        with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="beta"):
            cnnl.opTensor(handle, desc, 1, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, value, c.desc, c.ptr)


# the state is unwritten on purpose: what the op says of it is the test
@pytest.mark.mlusim_sanitize(exclude="initcheck")
def test_an_uninitialised_random_state_is_reported_as_such(handle):
    gen = cnnl.randCreateGenerator(cnnl.CNNL_RAND_RNG_MTGP32)
    state = cnrt.malloc(cnnl.randGetMTGP32StateSize(gen))  # fresh device memory: poison, never initialised
    out = DeviceTensor((16,), F)
    cnnl.randGenerateUniform(handle, gen, F, state, 16, 0.0, 1.0, out.ptr)
    with pytest.raises(cnrt.CnrtError) as error:
        sync(handle)
    assert error.value.code == cnrt.cnrtErrorArgsInvalid and "never initialised" in str(error.value)
    cnnl.randMakeMTGP32KernelState(handle, state, None, None, 5)
    cnnl.randGenerateUniform(handle, gen, F, state, 16, 0.0, 1.0, out.ptr)
    sync(handle)
    assert ((out.read() >= 0) & (out.read() < 1)).all()
    last = np.array([5, 2**64 - 1], np.uint64)  # an offset at the end of its range wraps instead of failing
    cnrt.memcpy(state, last, 16, cnrt.cnrtMemcpyHostToDev)
    cnnl.randGenerateUniform(handle, gen, F, state, 16, 0.0, 1.0, out.ptr)
    sync(handle)


def test_unsupported_modes_and_data_types_are_not_supported(handle):
    desc = cnnl.createReduceDescriptor()
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="reduce_op"):
        cnnl.setReduceDescriptor(desc, [1], cnnl.CNNL_REDUCE_MAX_LAST_INDEX, F, 0, cnnl.CNNL_REDUCE_FLATTENED_INDICES,
                                 cnnl.CNNL_32BIT_INDICES)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="reduce_op"):
        cnnl.setReduceDescriptor(desc, [1], 77, F, 0, 0, 0)
    op = cnnl.createOpTensorDescriptor()
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="comp_dtype"):
        cnnl.setOpTensorDescriptor(op, cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_COMPLEX_FLOAT, 0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="comp_dtype"):
        cnnl.setOpTensorDescriptor(op, cnnl.CNNL_OP_TENSOR_ADD, 1234, 0)
    matmul = cnnl.matMulDescCreate()
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="buf"):
        cnnl.setMatMulDescAttr(matmul, cnnl.CNNL_MATMUL_DESC_COMPUTE_TYPE, cnnl.CNNL_DTYPE_UINT32)


# the op runs on unwritten tensors: only its checks and workspace matter
@pytest.mark.mlusim_sanitize(exclude="initcheck")
def test_op_tensor_workspace_size_v2(handle):
    op = cnnl.createOpTensorDescriptor()
    cnnl.setOpTensorDescriptor(op, cnnl.CNNL_OP_TENSOR_MUL, F, cnnl.CNNL_NOT_PROPAGATE_NAN)
    a, b, c = (DeviceTensor(d, F) for d in ((3, 1), (1, 4), (3, 4)))
    v2 = cnnl.getOpTensorWorkspaceSize_v2(handle, op, 1.0, a.desc, None, 2.0, b.desc, None, 0.0, c.desc, None)
    assert v2 == cnnl.getOpTensorWorkspaceSize(handle, a.desc, b.desc, c.desc) > 0
    assert cnnl.cnnlGetOpTensorWorkspaceSize_v2 is cnnl.getOpTensorWorkspaceSize_v2
    workspace = cnrt.malloc(v2)
    cnnl.opTensor(handle, op, 1.0, a.desc, a.ptr, 2.0, b.desc, b.ptr, workspace, v2, 0.0, c.desc, c.ptr)
    sync(handle)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="a_desc"):  # a does not broadcast to that c
        cnnl.getOpTensorWorkspaceSize_v2(handle, op, 1, a.desc, None, 1, b.desc, None, 0, DeviceTensor((5, 4), F).desc,
                                         None)
    # an unset descriptor is CNNL's ADD unless strict (mlusim.lenient)
    with config.overridden(MLUSIM_STRICT="1"), raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="op_desc"):
        cnnl.getOpTensorWorkspaceSize_v2(handle, cnnl.createOpTensorDescriptor(), 1, a.desc, None, 1, b.desc, None,
                                         0, c.desc, None)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="a"):
        cnnl.getOpTensorWorkspaceSize_v2(handle, op, 1, a.desc, 1.5, 1, b.desc, None, 0, c.desc, None)


def test_integer_scalars_beyond_float_precision_are_integral(handle):
    """2**53 + 1 is an integer a float cannot hold: it scales an integer op as the int it is (found by hypothesis)."""
    desc, a, b, c = _op(I32)
    cnnl.opTensor(handle, desc, 0, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, 2**53 + 1, c.desc, c.ptr)
    sync(handle)
