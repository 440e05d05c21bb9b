"""cnnlOpTensor, cnnlDiv_v2, cnnlMaximum, cnnlMinimum, cnnlPow, cnnlLogicOp against numpy float64 references."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cnnl
import cnrt
from mlusim import config

from .tolerances import assert_close
from .helpers import (ALL, NUMERIC, NUMPY, as_float64, empty, random_values, raises_status,
                      strided_layouts, sync, tensor)

OPS = {cnnl.CNNL_OP_TENSOR_ADD: np.add, cnnl.CNNL_OP_TENSOR_SUB: np.subtract, cnnl.CNNL_OP_TENSOR_MUL: np.multiply}
A_DIMS, B_DIMS, C_DIMS = (3, 1, 4), (5, 1), (3, 5, 4)


def op_desc(op, comp):
    desc = cnnl.createOpTensorDescriptor()
    cnnl.setOpTensorDescriptor(desc, op, comp, cnnl.CNNL_NOT_PROPAGATE_NAN)
    return desc


def comp_type(code):
    return cnnl.CNNL_DTYPE_FLOAT if code in (cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_BFLOAT16) else code


def reference(values_fn, dtype_code, *arrays):
    """float64 reference for floats; exact int64 arithmetic wrapped into the type for integers."""
    dtype = NUMPY[dtype_code]
    if dtype.kind in "iu":
        return values_fn(*(a.astype(np.int64) for a in arrays)).astype(dtype)
    return values_fn(*(as_float64(a) for a in arrays))


def run_op_tensor(handle, op, code, a_values, b_values, c_values, alpha1, alpha2, beta, strides=(None, None, None)):
    a, b = tensor(a_values, code, strides[0]), tensor(b_values, code, strides[1])
    c = tensor(c_values, code, strides[2])
    ws = cnnl.getOpTensorWorkspaceSize(handle, a.desc, b.desc, c.desc)
    workspace = cnrt.malloc(ws) if ws else None
    cnnl.opTensor(handle, op_desc(op, comp_type(code)), alpha1, a.desc, a.ptr, alpha2, b.desc, b.ptr, workspace, ws,
                  beta, c.desc, c.ptr)
    sync(handle)
    return c.read()


@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("code", NUMERIC)
def test_op_tensor_with_broadcasting(handle, op, code):
    rng = np.random.default_rng(code * 10 + op)
    a, b = random_values(rng, A_DIMS, code), random_values(rng, B_DIMS, code)
    c0 = random_values(rng, C_DIMS, code)
    is_int = NUMPY[code].kind in "iu"
    alpha1, alpha2, beta = (2, 3, 1) if is_int else (1.5, -0.5, 0.25)
    if NUMPY[code].kind == "u" and op == cnnl.CNNL_OP_TENSOR_SUB:
        alpha2 = 1
    got = run_op_tensor(handle, op, code, a, b, c0, alpha1, alpha2, beta)
    want = reference(lambda x, y, z: OPS[op](alpha1 * x, alpha2 * y) + beta * z, code, a, b, c0)
    scale = np.abs(alpha1 * as_float64(a)) + np.abs(alpha2 * as_float64(b)) + np.abs(beta * as_float64(c0))
    if op == cnnl.CNNL_OP_TENSOR_MUL:
        scale = np.abs(as_float64(want)) + np.abs(beta * as_float64(c0))
    assert_close(got, want, NUMPY[code], scale=scale, what=f"opTensor {op}")


def test_op_tensor_beta_zero_ignores_poisoned_output(handle):
    a, b = tensor(np.ones((4,), np.float32)), tensor(np.full((4,), 2.0, np.float32))
    c = empty([4])  # fresh device memory is NaN-poisoned
    cnnl.opTensor(handle, op_desc(cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_FLOAT), 1, a.desc, a.ptr, 1, b.desc, b.ptr,
                  None, 0, 0, c.desc, c.ptr)
    sync(handle)
    assert c.read().tolist() == [3.0] * 4


def test_op_tensor_in_place(handle):
    a = tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = tensor(np.ones((1, 3), np.float32))
    ws = cnnl.getOpTensorWorkspaceSize(handle, a.desc, b.desc, a.desc)
    cnnl.opTensor(handle, op_desc(cnnl.CNNL_OP_TENSOR_SUB, cnnl.CNNL_DTYPE_FLOAT), 1, a.desc, a.ptr, 1, b.desc, b.ptr,
                  cnrt.malloc(ws), ws, 0, a.desc, a.ptr)
    sync(handle)
    np.testing.assert_array_equal(a.read(), np.arange(6).reshape(2, 3) - 1)


@st.composite
def broadcast_problem(draw):
    ndim = draw(st.integers(1, 4))
    out = [draw(st.integers(1, 5)) for _ in range(ndim)]
    inputs = []
    for _ in range(2):
        keep = draw(st.integers(0, ndim))
        dims = [n if draw(st.booleans()) else 1 for n in out[ndim - keep:]] or [1]
        inputs.append(dims)
    layouts = [draw(st.sampled_from(["dense", "padded", "transposed"])) for _ in range(3)]
    return out, inputs, layouts, draw(st.integers(0, 2**16))


@settings(max_examples=30, deadline=None)
@given(broadcast_problem())
def test_op_tensor_any_strides_and_broadcast(problem):
    out_dims, (a_dims, b_dims), layouts, seed = problem
    handle = cnnl.create()
    rng = np.random.default_rng(seed)
    code = cnnl.CNNL_DTYPE_FLOAT
    a, b = random_values(rng, a_dims, code), random_values(rng, b_dims, code)
    c0 = random_values(rng, out_dims, code)
    strides = [strided_layouts(dims, rng)[layout] for dims, layout in zip((a_dims, b_dims, out_dims), layouts)]
    got = run_op_tensor(handle, cnnl.CNNL_OP_TENSOR_MUL, code, a, b, c0, 2.0, 1.0, 1.0, strides)
    want = 2.0 * as_float64(a) * as_float64(b) + as_float64(c0)
    assert_close(got, want, np.float32, scale=np.abs(want) + np.abs(as_float64(c0)))


BINARY = {"div": (cnnl.div_v2, True, np.divide), "pow": (cnnl.pow, True, np.power),
          "maximum": (cnnl.maximum, False, np.maximum), "minimum": (cnnl.minimum, False, np.minimum)}
WORKSPACE_QUERY = {"div": cnnl.getDivWorkspaceSize, "pow": cnnl.getPowWorkspaceSize}


def run_binary(handle, name, x, y, z):
    function, takes_prefer, _ = BINARY[name]
    if takes_prefer:
        ws = WORKSPACE_QUERY[name](handle, x.desc, y.desc, z.desc)
        workspace = cnrt.malloc(ws) if ws else None
        function(handle, cnnl.CNNL_COMPUTATION_HIGH_PRECISION, x.desc, x.ptr, y.desc, y.ptr, workspace, ws, z.desc,
                 z.ptr)
    else:
        query = cnnl.getMaximumWorkspaceSize if name == "maximum" else cnnl.getMinimumWorkspaceSize
        ws = query(handle, z.desc)
        function(handle, x.desc, x.ptr, y.desc, y.ptr, z.desc, z.ptr, None, ws)
    sync(handle)
    return z.read()


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("code", NUMERIC)
def test_binary_ops(handle, name, code):
    rng = np.random.default_rng(code)
    x_values = random_values(rng, (4, 1, 3), code)
    y_values = random_values(rng, (5, 3), code)
    dtype = NUMPY[code]
    if name == "pow":
        x_values = (np.abs(as_float64(x_values)) + 0.5).astype(dtype) if dtype.kind == "f" else \
            rng.integers(0 if dtype.kind == "u" else -3, 4, (4, 1, 3)).astype(dtype)
        y_values = rng.uniform(-2, 2, (5, 3)).astype(dtype) if dtype.kind == "f" else \
            rng.integers(0, 4, (5, 3)).astype(dtype)
    if name == "div":
        y_values = np.where(as_float64(y_values) == 0, 1, y_values).astype(dtype)
    got = run_binary(handle, name, tensor(x_values, code), tensor(y_values, code), empty([4, 5, 3], code))
    if dtype.kind in "iu":
        x64, y64 = x_values.astype(np.int64), y_values.astype(np.int64)
        want = {"div": lambda: np.trunc(x64 / y64).astype(np.int64), "pow": lambda: x64 ** y64,
                "maximum": lambda: np.maximum(x64, y64), "minimum": lambda: np.minimum(x64, y64)}[name]()
        np.testing.assert_array_equal(got, want.astype(dtype))
    else:
        want = BINARY[name][2](as_float64(x_values), as_float64(y_values))
        assert_close(got, want, dtype, ulps=16, what=name)


LOGIC = {cnnl.CNNL_LOGIC_OP_EQ: np.equal, cnnl.CNNL_LOGIC_OP_NE: np.not_equal, cnnl.CNNL_LOGIC_OP_LT: np.less,
         cnnl.CNNL_LOGIC_OP_LE: np.less_equal, cnnl.CNNL_LOGIC_OP_GT: np.greater,
         cnnl.CNNL_LOGIC_OP_GE: np.greater_equal, cnnl.CNNL_LOGIC_OP_AND: np.logical_and,
         cnnl.CNNL_LOGIC_OP_OR: np.logical_or, cnnl.CNNL_LOGIC_OP_XOR: np.logical_xor,
         cnnl.CNNL_LOGIC_OP_NOT: lambda a, b: np.logical_not(a)}


@pytest.mark.parametrize("op", sorted(LOGIC))
@pytest.mark.parametrize("code", [cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_INT32,
                                  cnnl.CNNL_DTYPE_BOOL])
def test_logic_ops(handle, op, code):
    rng = np.random.default_rng(op)
    a_values = random_values(rng, (2, 3, 4), code)
    b_values = random_values(rng, (3, 1), code)
    if NUMPY[code].kind != "b":  # make ties and zeros likely
        a_values = np.round(as_float64(a_values) / 4).astype(NUMPY[code])
        b_values = np.round(as_float64(b_values) / 4).astype(NUMPY[code])
    a, b = tensor(a_values, code), tensor(b_values, code)
    for out_code in {cnnl.CNNL_DTYPE_BOOL, code}:
        c = empty([2, 3, 4], out_code)
        ws = cnnl.getLogicOpWorkspaceSize(handle, a.desc, b.desc, c.desc)
        cnnl.logicOp(handle, op, a.desc, a.ptr, b.desc, b.ptr, cnrt.malloc(ws) if ws else None, ws, c.desc, c.ptr)
        sync(handle)
        want = LOGIC[op](as_float64(a_values), as_float64(b_values))
        np.testing.assert_array_equal(c.read(), want.astype(NUMPY[out_code]))


def test_logic_not_takes_null_b(handle):
    a = tensor(np.array([0.0, 1.0, -2.0], np.float32))
    c = empty([3], cnnl.CNNL_DTYPE_BOOL)
    cnnl.logicOp(handle, cnnl.CNNL_LOGIC_OP_NOT, a.desc, a.ptr, None, None, None, 0, c.desc, c.ptr)
    sync(handle)
    assert c.read().tolist() == [True, False, False]


# ---- bad arguments ------------------------------------------------------------------------------------------------

def make(dims, code=cnnl.CNNL_DTYPE_FLOAT):
    return empty(dims, code)


def test_op_tensor_bad_arguments(handle):
    add = op_desc(cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_FLOAT)
    a, b, c = make([2, 3]), make([2, 3]), make([2, 3])
    call = lambda **kw: cnnl.opTensor(handle, kw.get("desc", add), kw.get("alpha1", 1), kw.get("a", a).desc,  # noqa
                                      kw.get("a", a).ptr, 1, kw.get("b", b).desc, kw.get("b", b).ptr, None,
                                      kw.get("ws", 0), kw.get("beta", 0), kw.get("c", c).desc, kw.get("c", c).ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="b_desc"):
        call(b=make([2, 3], cnnl.CNNL_DTYPE_HALF))
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="a_desc"):
        call(a=make([4, 3]))
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="b_desc"):
        call(b=make([2, 3, 1]))
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="a_desc"):
        bools = make([2, 3], cnnl.CNNL_DTYPE_BOOL)
        call(a=bools, b=bools, c=make([2, 3], cnnl.CNNL_DTYPE_BOOL))
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="op_tensor_desc"):
        ints = make([2, 3], cnnl.CNNL_DTYPE_INT32)
        call(a=ints, b=ints, c=make([2, 3], cnnl.CNNL_DTYPE_INT32))
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="alpha1"):
        ints = make([2, 3], cnnl.CNNL_DTYPE_INT32)
        call(desc=op_desc(cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_INT32), a=ints, b=ints,
             c=make([2, 3], cnnl.CNNL_DTYPE_INT32), alpha1=0.5)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="alpha1"):
        call(alpha1="2")
    with config.overridden(MLUSIM_STRICT="1"):  # an unset descriptor is refused only when strict (see below)
        with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="op_tensor_desc"):
            call(desc=cnnl.createOpTensorDescriptor())
    destroyed = op_desc(cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_FLOAT)
    cnnl.destroyOpTensorDescriptor(destroyed)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="op_tensor_desc"):
        call(desc=destroyed)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="op"):
        cnnl.setOpTensorDescriptor(cnnl.createOpTensorDescriptor(), 7, cnnl.CNNL_DTYPE_FLOAT, 0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="nan"):
        cnnl.setOpTensorDescriptor(cnnl.createOpTensorDescriptor(), cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_FLOAT, 5)


def test_broadcast_needs_its_workspace(handle):
    add = op_desc(cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_FLOAT)
    a, b, c = make([2, 3]), make([1, 3]), make([2, 3])
    ws = cnnl.getOpTensorWorkspaceSize(handle, a.desc, b.desc, c.desc)
    assert ws == 2 * 3 * 4
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="workspace_size"):
        cnnl.opTensor(handle, add, 1, a.desc, a.ptr, 1, b.desc, b.ptr, None, ws - 1, 0, c.desc, c.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="workspace"):
        cnnl.opTensor(handle, add, 1, a.desc, a.ptr, 1, b.desc, b.ptr, None, ws, 0, c.desc, c.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="workspace_size"):
        cnnl.div_v2(handle, 0, a.desc, a.ptr, b.desc, b.ptr, None, 0, c.desc, c.ptr)


def test_logic_op_bad_arguments(handle):
    a, b = make([2, 3]), make([2, 3])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="logic_op"):
        cnnl.logicOp(handle, 42, a.desc, a.ptr, b.desc, b.ptr, None, 0, a.desc, a.ptr)
    wrong = make([2, 3], cnnl.CNNL_DTYPE_INT32)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="c_desc"):
        cnnl.logicOp(handle, cnnl.CNNL_LOGIC_OP_EQ, a.desc, a.ptr, b.desc, b.ptr, None, 0, wrong.desc, wrong.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="b_desc"):
        cnnl.logicOp(handle, cnnl.CNNL_LOGIC_OP_EQ, a.desc, a.ptr, wrong.desc, wrong.ptr, None, 0, a.desc, a.ptr)


def test_binary_ops_check_preference_and_shapes(handle):
    x, y, z = make([2, 3]), make([3]), make([2, 3])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="prefer"):
        cnnl.pow(handle, 9, x.desc, x.ptr, y.desc, y.ptr, None, 0, z.desc, z.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="a_desc"):
        cnnl.maximum(handle, x.desc, x.ptr, y.desc, y.ptr, y.desc, y.ptr, None, 0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="y_desc"):
        cnnl.div_v2(handle, 0, x.desc, x.ptr, make([2]).desc, y.ptr, None, 0, z.desc, z.ptr)


@pytest.mark.parametrize("code", ALL)
def test_every_dtype_is_either_computed_or_not_supported(handle, code):
    a = tensor(np.ones((3,), NUMPY[code]), code)
    c = empty([3], code)
    add = op_desc(cnnl.CNNL_OP_TENSOR_ADD, comp_type(code) if code != cnnl.CNNL_DTYPE_BOOL else cnnl.CNNL_DTYPE_FLOAT)
    if code == cnnl.CNNL_DTYPE_BOOL:
        with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED):
            cnnl.opTensor(handle, add, 1, a.desc, a.ptr, 1, a.desc, a.ptr, None, 0, 0, c.desc, c.ptr)
        return
    cnnl.opTensor(handle, add, 1, a.desc, a.ptr, 1, a.desc, a.ptr, None, 0, 0, c.desc, c.ptr)
    sync(handle)
    assert c.read().tolist() == [2, 2, 2]


@pytest.mark.parametrize("code", [cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_INT32])
def test_an_op_tensor_descriptor_never_set_adds_as_cnnl_does(handle, code, monkeypatch):
    """DIOPI passes an op-tensor descriptor it created but never set: CNNL adds (in the output's type, float for
    half). Accepted with one LenientWarning per call site; MLUSIM_STRICT=1 refuses it (BAD_PARAM, op_tensor_desc)."""
    from mlusim import lenient
    lenient.reset()
    rng = np.random.default_rng(code)
    a_values, b_values = random_values(rng, A_DIMS, code), random_values(rng, B_DIMS, code)
    a, b, c = tensor(a_values, code), tensor(b_values, code), empty(list(C_DIMS), code)
    unset = cnnl.createOpTensorDescriptor()
    ws = cnnl.getOpTensorWorkspaceSize(handle, a.desc, b.desc, c.desc)
    workspace = cnrt.malloc(ws) if ws else None
    with pytest.warns(lenient.LenientWarning, match="never set") as caught:
        for _ in range(2):
            cnnl.opTensor(handle, unset, 1, a.desc, a.ptr, 1, b.desc, b.ptr, workspace, ws, 0, c.desc, c.ptr)
    assert len([w for w in caught if issubclass(w.category, lenient.LenientWarning)]) == 1
    sync(handle)
    want = reference(lambda x, y: x + y, code, a_values, b_values).astype(NUMPY[code])  # one rounding
    np.testing.assert_allclose(as_float64(c.read()), as_float64(want), rtol=1e-3 if code == cnnl.CNNL_DTYPE_HALF else 0)
    with config.overridden(MLUSIM_STRICT="1"), raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="op_tensor_desc"):
        cnnl.opTensor(handle, unset, 1, a.desc, a.ptr, 1, b.desc, b.ptr, workspace, ws, 0, c.desc, c.ptr)
    cnnl.destroyOpTensorDescriptor(unset)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM):  # a destroyed one stays an error
        cnnl.opTensor(handle, unset, 1, a.desc, a.ptr, 1, b.desc, b.ptr, workspace, ws, 0, c.desc, c.ptr)
