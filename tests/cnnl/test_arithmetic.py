"""Elementwise arithmetic (cnnl/ops/arithmetic.py) against float64 numpy references, and torch for the exact
semantics of division, remainder, clamping and shifts."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cnnl
import cnrt

from .helpers import (FLOATS, INTS, NUMPY, as_float64, empty, random_values, raises_status, sync, tensor)
from .tolerances import assert_close

torch = pytest.importorskip("torch")  # torch CPU is the reference where numpy would re-implement the op

HIGH = cnnl.CNNL_COMPUTATION_HIGH_PRECISION
HOST, DEVICE = cnnl.CNNL_POINTER_MODE_HOST, cnnl.CNNL_POINTER_MODE_DEVICE
F32 = cnnl.CNNL_DTYPE_FLOAT


def _workspace(size):
    return (cnrt.malloc(size) if size else None), size


def _addcmul(h, x, t1, t2, out, value, divide=False):
    query, op = (cnnl.getAddcdivWorkspaceSize, cnnl.addcdiv) if divide else (cnnl.getAddcmulWorkspaceSize,
                                                                             cnnl.addcmul)
    ws, size = _workspace(query(h, x.desc, t1.desc, t2.desc))
    op(h, x.desc, x.ptr, value, t1.desc, t1.ptr, t2.desc, t2.ptr, ws, size, out.desc, out.ptr)


@pytest.mark.parametrize("code", FLOATS + [cnnl.CNNL_DTYPE_INT32])
@pytest.mark.parametrize("divide", [False, True])
def test_addcmul_addcdiv_broadcast(handle, code, divide):
    if divide and code == cnnl.CNNL_DTYPE_INT32:
        x, out = tensor(np.zeros((2, 3), np.int32)), empty([2, 3], code)
        with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="input_desc"):
            _addcmul(handle, x, x, x, out, 2, divide=True)
        return
    rng = np.random.default_rng(code)
    xv, t1v, t2v = (random_values(rng, dims, code) for dims in ((4, 1, 5), (3, 1), (5,)))
    if divide:
        t2v = (np.abs(as_float64(t2v)) + 0.5).astype(NUMPY[code])
    x, t1 = tensor(xv, code, strides=[1, 5, 4]), tensor(t1v, code)
    t2, out = tensor(t2v, code), empty([4, 3, 5], code)
    value = 3 if code == cnnl.CNNL_DTYPE_INT32 else -0.75
    _addcmul(handle, x, t1, t2, out, value, divide)
    sync(handle)
    a, b, c = (as_float64(v) for v in (xv, t1v, t2v))
    expected = a + value * b / c if divide else a + value * b * c
    scale = np.abs(a) + np.abs(value * b * (1 / c if divide else c))
    assert_close(out.read(), expected, NUMPY[code], scale=scale)


@pytest.mark.parametrize("divide", [False, True])
@pytest.mark.parametrize("code", FLOATS)
def test_addcmul_addcdiv_in_place(handle, code, divide):
    # output at the very address of input (torch's addcdiv_) or of tensor2: no operand is overwritten before it is read
    rng = np.random.default_rng(11)
    xv, t1v = random_values(rng, (3, 5), code), random_values(rng, (3, 5), code)
    t2v = (np.abs(as_float64(random_values(rng, (3, 5), code))) + 0.5).astype(NUMPY[code])
    a, b, c = (as_float64(v) for v in (xv, t1v, t2v))
    expected = a - 0.5 * b / c if divide else a - 0.5 * b * c
    scale = np.abs(a) + np.abs(0.5 * b * (1 / c if divide else c))
    x, t1, t2 = tensor(xv, code), tensor(t1v, code), tensor(t2v, code)
    _addcmul(handle, x, t1, t2, x, -0.5, divide)
    sync(handle)
    assert_close(x.read(), expected, NUMPY[code], scale=scale)
    x, t2 = tensor(xv, code), tensor(t2v, code)
    _addcmul(handle, x, t1, t2, t2, -0.5, divide)
    sync(handle)
    assert_close(t2.read(), expected, NUMPY[code], scale=scale)


@pytest.mark.parametrize("code", FLOATS)
def test_lerp_matches_torch_formula(handle, code):
    rng = np.random.default_rng(7)
    start, end = random_values(rng, (6, 4), code), random_values(rng, (6, 4), code)
    weight = np.array([-0.5, 0.25, 0.5, 1.5], NUMPY[code])
    x, e, w, out = tensor(start, code), tensor(end, code), tensor(weight, code), empty([6, 4], code)
    ws, size = _workspace(cnnl.getLerpWorkspaceSize(handle, x.desc, e.desc, w.desc, out.desc))
    cnnl.lerp(handle, x.desc, x.ptr, e.desc, e.ptr, w.desc, w.ptr, ws, size, out.desc, out.ptr)
    sync(handle)
    s, t, wt = as_float64(start), as_float64(end), as_float64(weight)
    expected = np.where(np.abs(wt) < 0.5, s + wt * (t - s), t - (t - s) * (1 - wt))
    assert_close(out.read(), expected, NUMPY[code], scale=np.abs(s) + np.abs(t) * 2)


@pytest.mark.parametrize("code", FLOATS)
def test_atan2_quadrants_and_zeros(handle, code):
    y = np.array([1, 1, -1, -1, 0, -0.0, 0, -0.0, np.inf, np.nan], np.float64)
    x = np.array([1, -1, 1, -1, 0, 0, -0.0, -0.0, np.inf, 1], np.float64)
    a, b, out = tensor(y.astype(NUMPY[code]), code), tensor(x.astype(NUMPY[code]), code), empty([10], code)
    ws, size = _workspace(cnnl.getAtan2WorkspaceSize(handle, a.desc, b.desc, out.desc))
    cnnl.atan2(handle, HIGH, a.desc, a.ptr, b.desc, b.ptr, ws, size, out.desc, out.ptr)
    sync(handle)
    got = out.read().astype(np.float64)
    assert_close(got, np.arctan2(y, x), NUMPY[code], ulps=16)
    assert np.array_equal(np.signbit(got[4:8]), np.signbit(np.arctan2(y, x)[4:8]))


DIVISIONS = {"floor": (cnnl.getFloorDivWorkspaceSize, lambda h, a, b, o, w, s: cnnl.floorDiv_v2(
                 h, HIGH, a.desc, a.ptr, b.desc, b.ptr, o.desc, o.ptr, w, s),
                 lambda a, b: torch.div(a, b, rounding_mode="floor")),
             "trunc": (cnnl.getFloorDivTruncWorkspaceSize, lambda h, a, b, o, w, s: cnnl.floorDivTrunc(
                 h, HIGH, a.desc, a.ptr, b.desc, b.ptr, o.desc, o.ptr, w, s),
                 lambda a, b: torch.div(a, b, rounding_mode="trunc")),
             "mod": (cnnl.getFloorModWorkspaceSize, lambda h, a, b, o, w, s: cnnl.floorMod(
                 h, a.desc, a.ptr, b.desc, b.ptr, o.desc, o.ptr, w, s), torch.remainder),
             "trunc_mod": (cnnl.getFloorModTruncWorkspaceSize, lambda h, a, b, o, w, s: cnnl.floorModTrunc(
                 h, a.desc, a.ptr, b.desc, b.ptr, o.desc, o.ptr, w, s), torch.fmod)}
_TORCH = {cnnl.CNNL_DTYPE_FLOAT: torch.float32, cnnl.CNNL_DTYPE_DOUBLE: torch.float64,
          cnnl.CNNL_DTYPE_HALF: torch.float16, cnnl.CNNL_DTYPE_BFLOAT16: torch.bfloat16,
          cnnl.CNNL_DTYPE_INT8: torch.int8, cnnl.CNNL_DTYPE_INT16: torch.int16, cnnl.CNNL_DTYPE_INT32: torch.int32,
          cnnl.CNNL_DTYPE_INT64: torch.int64, cnnl.CNNL_DTYPE_UINT8: torch.uint8}


def _run_division(handle, name, code, av, bv):
    query, call, _ = DIVISIONS[name]
    a, b = tensor(av, code), tensor(bv, code)
    out = empty(list(np.broadcast_shapes(av.shape, bv.shape)), code)
    ws, size = _workspace(query(handle, a.desc, b.desc, out.desc))
    call(handle, a, b, out, ws, size)
    sync(handle)
    return out.read()


def _torch_values(values, code):
    return torch.from_numpy(as_float64(values)).to(_TORCH[code])


@pytest.mark.parametrize("name", sorted(DIVISIONS))
@pytest.mark.parametrize("code", [cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_DOUBLE, cnnl.CNNL_DTYPE_HALF,
                                  cnnl.CNNL_DTYPE_BFLOAT16])
def test_float_division_matches_torch(handle, name, code):
    a = np.array([7.5, -7.5, 0, -0.0, 1, -1, 5, np.inf, -np.inf, np.nan, 3, 1e-3, -2.75, 6], np.float64)
    b = np.array([2.5, 2.5, -3, 3, 0, 0, -0.0, 2, -2, 1, np.inf, -7, 0.5, -4], np.float64)
    got = _run_division(handle, name, code, a.astype(NUMPY[code]), b.astype(NUMPY[code]))
    expected = DIVISIONS[name][2](_torch_values(a.astype(NUMPY[code]), code),
                                  _torch_values(b.astype(NUMPY[code]), code)).to(torch.float64).numpy()
    assert_close(got, expected, NUMPY[code])
    numbers = ~np.isnan(expected)
    assert np.array_equal(np.signbit(got.astype(np.float64))[numbers], np.signbit(expected)[numbers]), (got, expected)


@pytest.mark.parametrize("name", sorted(DIVISIONS))
@pytest.mark.parametrize("code", INTS)
def test_integer_division_matches_torch(handle, name, code):
    rng = np.random.default_rng(code)
    a = random_values(rng, (4, 6), code)
    b = random_values(rng, (6,), code)
    b[b == 0] = 3
    got = _run_division(handle, name, code, a, b)
    expected = DIVISIONS[name][2](torch.from_numpy(a), torch.from_numpy(b)).numpy()
    np.testing.assert_array_equal(got, expected)
    zero = _run_division(handle, name, code, a[:1], np.zeros(6, NUMPY[code]))
    np.testing.assert_array_equal(zero, 0)  # documented: integer division by zero gives 0


@pytest.mark.parametrize("code", FLOATS + INTS)
def test_mul_n_broadcasts_three_inputs(handle, code):
    rng = np.random.default_rng(3)
    values = [random_values(rng, dims, code, -2, 2) for dims in ((2, 1, 4), (3, 4), (4,))]
    inputs = [tensor(v, code) for v in values]
    out = empty([2, 3, 4], code)
    cnnl.mulN(handle, [t.desc for t in inputs], [t.ptr for t in inputs], out.desc, out.ptr)
    sync(handle)
    expected = as_float64(values[0]) * as_float64(values[1]) * as_float64(values[2])
    if NUMPY[code].kind in "iu":
        expected = (values[0].astype(np.int64) * values[1] * values[2]).astype(NUMPY[code])
    assert_close(out.read(), expected, NUMPY[code])


def test_mul_n_into_its_second_input(handle):
    rng = np.random.default_rng(5)
    values = [random_values(rng, (4, 3), cnnl.CNNL_DTYPE_FLOAT, -2, 2) for _ in range(3)]
    inputs = [tensor(v, cnnl.CNNL_DTYPE_FLOAT) for v in values]
    cnnl.mulN(handle, [t.desc for t in inputs], [t.ptr for t in inputs], inputs[1].desc, inputs[1].ptr)
    sync(handle)
    assert_close(inputs[1].read(), as_float64(values[0]) * values[1] * values[2], np.float32)


@pytest.mark.parametrize("mode", [HOST, DEVICE])
@pytest.mark.parametrize("code", [cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_INT32])
def test_transform(handle, mode, code):
    values = random_values(np.random.default_rng(1), (3, 7), code)
    alpha, beta = (3, -4) if code == cnnl.CNNL_DTYPE_INT32 else (1.5, 0.25)
    if mode == DEVICE:
        scalar_code = cnnl.CNNL_DTYPE_INT32 if code == cnnl.CNNL_DTYPE_INT32 else F32
        alpha, beta = (tensor(np.array([v], NUMPY[scalar_code]), scalar_code).ptr for v in (alpha, beta))
        numbers = (3, -4) if code == cnnl.CNNL_DTYPE_INT32 else (1.5, 0.25)
    else:
        numbers = (alpha, beta)
    x, out = tensor(values, code, strides=[1, 3]), empty([3, 7], code)
    cnnl.transform_v2(handle, mode, alpha, x.desc, x.ptr, beta, out.desc, out.ptr)
    sync(handle)
    assert_close(out.read(), numbers[0] * as_float64(values) + numbers[1], NUMPY[code])


@pytest.mark.parametrize("mode", [HOST, DEVICE])
@pytest.mark.parametrize("code", [cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_BFLOAT16, cnnl.CNNL_DTYPE_FLOAT,
                                  cnnl.CNNL_DTYPE_INT16])
@pytest.mark.parametrize("bounds", [(-1.5, 2.25), (None, 0.5), (-0.5, None), (2.0, 1.0)])
def test_clip_matches_torch_clamp(handle, mode, code, bounds):
    values = np.array([-3, -1.5, -0.0, 0, 0.4, 1, 2.5, 9, np.nan], np.float64)
    if NUMPY[code].kind in "iu":
        values, bounds = values[:-1].round(), tuple(None if b is None else round(b) for b in bounds)
    stored = values.astype(NUMPY[code])
    x, out = tensor(stored, code), empty([stored.size], code)
    args = [None if b is None else (b if mode == HOST else tensor(np.array([b]).astype(NUMPY[code]), code).ptr)
            for b in bounds]
    cnnl.clip_v2(handle, mode, x.desc, x.ptr, args[0], args[1], out.desc, out.ptr)
    sync(handle)
    low, high = (None if b is None else _torch_values(np.array(b).astype(NUMPY[code]), code) for b in bounds)
    expected = torch.clamp(_torch_values(stored, code), low, high).to(torch.float64).numpy()
    np.testing.assert_array_equal(out.read().astype(np.float64), expected)


@pytest.mark.parametrize("code", [cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_DOUBLE])
@pytest.mark.parametrize("bounds", [(-1.0, 1.0), (None, 0.0), (0.0, None), (1.0, -1.0)])
def test_clip_of_a_large_tensor_in_blocks_and_in_place(handle, code, bounds):
    rng = np.random.default_rng(11)
    values = rng.standard_normal((640, 3001)).astype(NUMPY[code]) * 3  # beyond one block: the compiled pass
    values[::97, ::89] = np.nan
    values[1::101, ::53] = -0.0
    values[2, :7] = [np.inf, -np.inf, 1.0, -1.0, 0.0, 1e-45, -1e-45]
    expected = torch.clamp(torch.from_numpy(values), *bounds).numpy()
    x, out = tensor(values, code), empty(list(values.shape), code)
    cnnl.clip_v2(handle, HOST, x.desc, x.ptr, bounds[0], bounds[1], out.desc, out.ptr)
    cnnl.clip_v2(handle, HOST, x.desc, x.ptr, bounds[0], bounds[1], x.desc, x.ptr)  # in place
    sync(handle)
    for result in (out.read(), x.read()):
        np.testing.assert_array_equal(result, expected)
        np.testing.assert_array_equal(np.signbit(result), np.signbit(expected))


def test_clip_nan_bound_and_bad_arguments(handle):
    x, out = tensor(np.array([-1.0, 2.0], np.float32)), empty([2])
    cnnl.clip_v2(handle, HOST, x.desc, x.ptr, float("nan"), None, out.desc, out.ptr)
    sync(handle)
    assert np.isnan(out.read()).all()
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="min"):
        cnnl.clip_v2(handle, HOST, x.desc, x.ptr, None, None, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="pointer_mode"):
        cnnl.clip_v2(handle, 7, x.desc, x.ptr, 0, 1, out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="max"):
        cnnl.clip_v2(handle, DEVICE, x.desc, x.ptr, None, 0x10, out.desc, out.ptr)
    ints = empty([2], cnnl.CNNL_DTYPE_INT32)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="alpha"):
        cnnl.transform_v2(handle, HOST, 0.5, ints.desc, ints.ptr, 0, ints.desc, ints.ptr)


BIT_OPS = {cnnl.CNNL_CYCLE_BAND_OP: torch.bitwise_and, cnnl.CNNL_CYCLE_BOR_OP: torch.bitwise_or,
           cnnl.CNNL_CYCLE_BXOR_OP: torch.bitwise_xor, cnnl.CNNL_BLEFT_SHIFT_OP_V: torch.bitwise_left_shift,
           cnnl.CNNL_BRIGHT_SHIFT_OP_V: torch.bitwise_right_shift}


@pytest.mark.parametrize("op", sorted(BIT_OPS) + [cnnl.CNNL_BNOT_OP])
@pytest.mark.parametrize("code", INTS + [cnnl.CNNL_DTYPE_BOOL])
def test_bit_compute_matches_torch(handle, op, code):
    shift = op in (cnnl.CNNL_BLEFT_SHIFT_OP_V, cnnl.CNNL_BRIGHT_SHIFT_OP_V)
    rng = np.random.default_rng(op * 10 + code)
    a = random_values(rng, (3, 8), code)
    b = random_values(rng, (8,), code)
    if shift and code != cnnl.CNNL_DTYPE_BOOL:
        bits = NUMPY[code].itemsize * 8
        b = np.array([0, 1, 3, bits - 1, bits, bits + 5, 2, 1]).astype(NUMPY[code])
        if NUMPY[code].kind == "i":
            b[-1] = -1
        a[0, :4] = np.iinfo(NUMPY[code]).min
    x, y, out = tensor(a, code), tensor(b, code), empty([3, 8], code)
    second = None if op == cnnl.CNNL_BNOT_OP else y
    size = cnnl.getBitComputeWorkspaceSize(handle, x.desc, second and second.desc, out.desc)
    ws, size = _workspace(size)
    if shift and code == cnnl.CNNL_DTYPE_BOOL:
        with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="input1_desc"):
            cnnl.bitCompute_v2(handle, op, x.desc, x.ptr, y.desc, y.ptr, out.desc, out.ptr, ws, size)
        return
    cnnl.bitCompute_v2(handle, op, x.desc, x.ptr, second and second.desc, second and second.ptr, out.desc, out.ptr,
                       ws, size)
    sync(handle)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    expected = torch.bitwise_not(ta) if op == cnnl.CNNL_BNOT_OP else BIT_OPS[op](ta, tb)
    np.testing.assert_array_equal(out.read(), expected.numpy())


def test_elementwise_bad_arguments(handle):
    a, b = tensor(np.ones((2, 3), np.float32)), tensor(np.ones((4,), np.float32))
    out, half = empty([2, 3]), empty([2, 3], cnnl.CNNL_DTYPE_HALF)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="tensor1_desc"):
        cnnl.getAddcmulWorkspaceSize(handle, a.desc, b.desc, a.desc)
    row, wide = tensor(np.ones((1, 3), np.float32)), empty([4, 2, 3])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):  # must be the inputs' broadcast dims
        cnnl.addcmul(handle, a.desc, a.ptr, 1, row.desc, row.ptr, a.desc, a.ptr, None, 0, wide.desc, wide.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.atan2(handle, HIGH, a.desc, a.ptr, a.desc, a.ptr, None, 0, half.desc, half.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="prefer"):
        cnnl.floorDiv_v2(handle, 9, a.desc, a.ptr, a.desc, a.ptr, out.desc, out.ptr, None, 0)
    needed = cnnl.getFloorModWorkspaceSize(handle, a.desc, row.desc, out.desc)
    assert needed == 2 * 3 * 4
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="workspace_size"):
        cnnl.floorMod(handle, a.desc, a.ptr, row.desc, row.ptr, out.desc, out.ptr, None, 0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="inputs"):
        cnnl.mulN(handle, [a.desc, a.desc], [a.ptr], out.desc, out.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="op"):
        cnnl.bitCompute_v2(handle, 42, a.desc, a.ptr, a.desc, a.ptr, out.desc, out.ptr, None, 0)
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg="input1_desc"):
        cnnl.bitCompute_v2(handle, cnnl.CNNL_CYCLE_BAND_OP, a.desc, a.ptr, a.desc, a.ptr, out.desc, out.ptr, None, 0)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="input"):
        cnnl.lerp(handle, a.desc, 0, a.desc, a.ptr, a.desc, a.ptr, None, 0, out.desc, out.ptr)


def test_empty_and_scalar_tensors(handle):
    empty_in, empty_out = empty([0, 3]), empty([0, 3])
    cnnl.addcmul(handle, empty_in.desc, None, 1.0, empty_in.desc, None, empty_in.desc, None, None, 0,
                 empty_out.desc, None)
    scalar = tensor(np.array([2.0], np.float32))
    out = empty([1])
    cnnl.floorMod(handle, scalar.desc, scalar.ptr, scalar.desc, scalar.ptr, out.desc, out.ptr, None, 0)
    sync(handle)
    assert out.read().tolist() == [0.0]


@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_addcmul_fuzzed_broadcasting(data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    out_dims = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=4))
    dims = [[n if data.draw(st.booleans()) else 1 for n in out_dims][data.draw(st.integers(0, len(out_dims))):]
            or [1] for _ in range(3)]
    code = data.draw(st.sampled_from(FLOATS))
    values = [random_values(rng, d, code) for d in dims]
    out_dims = list(np.broadcast_shapes(*(tuple(d) for d in dims)))
    h = cnnl.create()
    try:
        inputs = [tensor(v, code) for v in values]
        out = empty(out_dims, code)
        _addcmul(h, *inputs, out, 0.5)
        sync(h)
    finally:
        cnnl.destroy(h)
    a, b, c = (as_float64(v) for v in values)
    assert_close(out.read(), a + 0.5 * b * c, NUMPY[code], scale=np.abs(a) + np.abs(b * c))
