"""The foreach ops (cnnlForeachBinaryOp, cnnlForeachUnaryOp_v2, cnnlForeachPointwiseOp, cnnlForeachLerp): one
command over whole lists, each tensor exactly what its single-tensor op gives (compared bit for bit with that op
on the same device), in place or not, and every bad list, mode or scalar refused naming its argument."""
import numpy as np
import pytest

import cnnl
from mlusim.observers import CommandRecorder

from .helpers import FLOATS, NUMPY, empty, raises_status, sync, tensor

SHAPES = [(3, 4), (7,), (2, 2, 2)]


def _lists(code, seed, count=3, low=-4.0, high=4.0):
    rng = np.random.default_rng(seed)
    return [tensor(rng.uniform(low, high, SHAPES[i % 3]).astype(NUMPY[code]), code) for i in range(count)]


def _outs(code, count=3):
    return [empty(SHAPES[i % 3], code) for i in range(count)]


def _descs(tensors):
    return [t.desc for t in tensors], [t.ptr for t in tensors]


def _bits(values):
    values = np.ascontiguousarray(values)
    return values.view(np.dtype(f"u{values.dtype.itemsize}"))


def _commands(handle, run):
    """The names of the commands `run` queued on the handle's queue (waited for: a command the queue hands to its
    worker, as it does with the sanitizer on, finishes after the call)."""
    with CommandRecorder() as recorder:
        run()
        sync(handle)
    return [command.name for _, command in recorder.commands]


def _op_desc(op, code):
    desc = cnnl.createOpTensorDescriptor()
    compute = cnnl.CNNL_DTYPE_FLOAT if code in (cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_DTYPE_BFLOAT16) else code
    cnnl.setOpTensorDescriptor(desc, op, compute, cnnl.CNNL_NOT_PROPAGATE_NAN)
    return desc


def _scalar_desc(code):
    desc = cnnl.createTensorDescriptor()
    cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, code, [1])
    return desc


@pytest.mark.parametrize("code", FLOATS)
@pytest.mark.parametrize("op_mode, single", [(cnnl.CNNL_FOREACH_ADD, cnnl.CNNL_OP_TENSOR_ADD),
                                             (cnnl.CNNL_FOREACH_SUB, cnnl.CNNL_OP_TENSOR_SUB),
                                             (cnnl.CNNL_FOREACH_MUL, cnnl.CNNL_OP_TENSOR_MUL)])
def test_binary_tensor_lists_are_op_tensor_per_tensor(handle, code, op_mode, single):
    a, b = _lists(code, 1), _lists(code, 2)
    alpha = 1 if op_mode == cnnl.CNNL_FOREACH_MUL else -0.75
    got, want = _outs(code), _outs(code)
    names = _commands(handle, lambda: cnnl.foreachBinaryOp(
        handle, op_mode, cnnl.FOREACH_BINARY_TENSOR_LIST, *_descs(a), *_descs(b), None, None, alpha, None, 0,
        *_descs(got)))
    assert names == ["cnnlForeachBinaryOp"]
    op = _op_desc(single, code)
    for x, y, w in zip(a, b, want):
        cnnl.opTensor(handle, op, 1, x.desc, x.ptr, alpha, y.desc, y.ptr, None, 0, 0, w.desc, w.ptr)
    sync(handle)
    for g, w in zip(got, want):
        assert np.array_equal(_bits(g.read()), _bits(w.read()))


@pytest.mark.parametrize("code", FLOATS)
def test_binary_scalars_in_the_tensors_type_or_their_computation_type(handle, code):
    a = _lists(code, 3)
    values = [0.1, -3.0, 2.5e4]
    for op_mode, scalar_code in [(cnnl.CNNL_FOREACH_ADD, code), (cnnl.CNNL_FOREACH_SUB, code),
                                 (cnnl.CNNL_FOREACH_MUL, cnnl.CNNL_DTYPE_FLOAT if code != cnnl.CNNL_DTYPE_DOUBLE
                                  else code), (cnnl.CNNL_FOREACH_DIV, code)]:
        got = _outs(code)
        cnnl.foreachBinaryOp(handle, op_mode, cnnl.FOREACH_BINARY_SCALAR_LIST, *_descs(a), None, None,
                             _scalar_desc(scalar_code), values, None, None, 0, *_descs(got))
        sync(handle)
        for x, v, g in zip(a, values, got):
            s = np.array(v, NUMPY[scalar_code]).astype(np.float64)
            exact = {cnnl.CNNL_FOREACH_ADD: x.read().astype(np.float64) + s,
                     cnnl.CNNL_FOREACH_SUB: x.read().astype(np.float64) - s,
                     cnnl.CNNL_FOREACH_MUL: x.read().astype(np.float64) * s,
                     cnnl.CNNL_FOREACH_DIV: x.read().astype(np.float64) / s}[op_mode]
            compute = np.float64 if code == cnnl.CNNL_DTYPE_DOUBLE else np.float32
            # one operation in the computation type (exact in float64 before the rounding), rounded once to storage
            want = exact.astype(compute).astype(NUMPY[code]) if op_mode != cnnl.CNNL_FOREACH_DIV else \
                (x.read().astype(compute) / compute(s)).astype(NUMPY[code])
            assert np.array_equal(_bits(g.read()), _bits(want)), op_mode
    one = _outs(code)
    cnnl.foreachBinaryOp(handle, cnnl.CNNL_FOREACH_MUL, cnnl.FOREACH_BINARY_SCALAR, *_descs(a), None, None,
                         _scalar_desc(code), -0.0, None, None, 0, *_descs(one))
    sync(handle)
    for x, g in zip(a, one):
        assert np.all(np.signbit(g.read()) != np.signbit(x.read())) and not np.any(g.read())  # signed zeros


@pytest.mark.parametrize("code", FLOATS)
def test_in_place_lists_and_one_tensor_lists(handle, code):
    a, b = _lists(code, 4), _lists(code, 5)
    before = [x.read() for x in a]
    cnnl.foreachBinaryOp(handle, cnnl.CNNL_FOREACH_ADD, cnnl.FOREACH_BINARY_TENSOR_LIST, *_descs(a), *_descs(b),
                         None, None, 2.0, None, 0, *_descs(a))
    sync(handle)
    for x, y, old in zip(a, b, before):
        compute = np.float64 if code == cnnl.CNNL_DTYPE_DOUBLE else np.float32
        want = (old.astype(compute) + y.read().astype(compute) * compute(2.0)).astype(NUMPY[code])
        assert np.array_equal(_bits(x.read()), _bits(want))
    cnnl.foreachUnaryOp_v2(handle, cnnl.CNNL_FOREACH_ZERO, cnnl.CNNL_COMPUTATION_FAST, *_descs(a[:1]), None, 0,
                           *_descs(a[:1]))
    sync(handle)
    assert not np.any(a[0].read()) and np.any(a[1].read())


@pytest.mark.parametrize("code", FLOATS)
def test_sqrt_pointwise_and_lerp_are_their_single_ops(handle, code):
    x = _lists(code, 6, low=0.0, high=9.0)
    t1, t2 = _lists(code, 7), _lists(code, 8, low=0.5, high=3.0)
    got = _outs(code)
    cnnl.foreachUnaryOp_v2(handle, cnnl.CNNL_FOREACH_SQRT, cnnl.CNNL_COMPUTATION_HIGH_PRECISION, *_descs(x), None,
                           0, *_descs(got))
    for values, mode, single in [([0.5, -2.0, 1e-3], cnnl.CNNL_FOREACH_ADDCMUL, cnnl.addcmul),
                                 ([3.0, 0.25, -1.0], cnnl.CNNL_FOREACH_ADDCDIV, cnnl.addcdiv)]:
        out, want = _outs(code), _outs(code)
        cnnl.foreachPointwiseOp(handle, mode, cnnl.FOREACH_POINTWISE_SCALAR_LIST, *_descs(x), *_descs(t1),
                                *_descs(t2), values, *_descs(out))
        for xi, a, b, v, w in zip(x, t1, t2, values, want):
            workspace = (cnnl.getAddcmulWorkspaceSize if single is cnnl.addcmul else cnnl.getAddcdivWorkspaceSize)(
                handle, xi.desc, a.desc, b.desc)
            assert workspace == 0
            single(handle, xi.desc, xi.ptr, v, a.desc, a.ptr, b.desc, b.ptr, None, 0, w.desc, w.ptr)
        sync(handle)
        for o, w in zip(out, want):
            assert np.array_equal(_bits(o.read()), _bits(w.read()))
    sync(handle)
    for xi, g in zip(x, got):
        compute = np.float64 if code == cnnl.CNNL_DTYPE_DOUBLE else np.float32
        assert np.array_equal(_bits(g.read()), _bits(np.sqrt(xi.read().astype(compute)).astype(NUMPY[code])))
    ends, lerped = _lists(code, 9), _outs(code)
    cnnl.foreachLerp(handle, cnnl.FOREACH_LERP_SCALAR, *_descs(x), *_descs(ends), None, 0.3, None, 0,
                     *_descs(lerped))
    weights, by_tensor = [tensor(np.full(SHAPES[i], 0.3).astype(NUMPY[code]), code) for i in range(3)], _outs(code)
    cnnl.foreachLerp(handle, cnnl.FOREACH_LERP_TENSOR_LIST, *_descs(x), *_descs(ends), *_descs(weights), None, 0,
                     *_descs(by_tensor))
    sync(handle)
    for a, b, g, h in zip(x, ends, lerped, by_tensor):
        compute = np.float64 if code == cnnl.CNNL_DTYPE_DOUBLE else np.float32
        start, end, w = a.read().astype(compute), b.read().astype(compute), compute(np.array(0.3, NUMPY[code]))
        want = (start + w * (end - start)).astype(NUMPY[code])  # |w| < 0.5: torch's first formula
        assert np.array_equal(_bits(g.read()), _bits(want)) and np.array_equal(_bits(h.read()), _bits(want))


def test_bad_lists_modes_and_scalars_name_their_argument(handle):
    f32, f16 = cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_DTYPE_HALF
    a, b, out = _lists(f32, 1), _lists(f32, 2), _outs(f32)
    call = cnnl.foreachBinaryOp
    bad = cnnl.CNNL_STATUS_BAD_PARAM
    with raises_status(bad, arg="input2_desc_array"):
        call(handle, cnnl.CNNL_FOREACH_ADD, cnnl.FOREACH_BINARY_TENSOR_LIST, *_descs(a), *_descs(b[:2]), None,
             None, 1, None, 0, *_descs(out))
    with raises_status(bad, arg=r"input2_desc_array\[1\]"):
        call(handle, cnnl.CNNL_FOREACH_ADD, cnnl.FOREACH_BINARY_TENSOR_LIST, *_descs(a), *_descs([b[0], b[0], b[2]]),
             None, None, 1, None, 0, *_descs(out))  # the shape at index 1 differs
    with raises_status(bad, arg=r"output_desc_array\[0\]"):
        halves = _outs(f16)
        call(handle, cnnl.CNNL_FOREACH_ADD, cnnl.FOREACH_BINARY_TENSOR_LIST, *_descs(a), *_descs(b), None, None, 1,
             None, 0, *_descs(halves))
    with raises_status(bad, arg="scalar_desc"):
        call(handle, cnnl.CNNL_FOREACH_DIV, cnnl.FOREACH_BINARY_SCALAR, *_descs(a), None, None,
             _scalar_desc(cnnl.CNNL_DTYPE_DOUBLE), 2.0, None, None, 0, *_descs(out))
    with raises_status(bad, arg="scalar"):
        call(handle, cnnl.CNNL_FOREACH_ADD, cnnl.FOREACH_BINARY_SCALAR_LIST, *_descs(a), None, None,
             _scalar_desc(f32), [1.0, 2.0], None, None, 0, *_descs(out))
    with raises_status(bad, arg="mode"):
        call(handle, cnnl.CNNL_FOREACH_ADD, cnnl.FOREACH_BINARY_SCALAR_TENSOR, *_descs(a), None, None, None, None,
             None, None, 0, *_descs(out))
    with raises_status(bad, arg="op_mode"):
        call(handle, cnnl.CNNL_FOREACH_SQRT, cnnl.FOREACH_BINARY_TENSOR_LIST, *_descs(a), *_descs(b), None, None,
             1, None, 0, *_descs(out))
    with raises_status(bad, arg="alpha"):
        call(handle, cnnl.CNNL_FOREACH_MUL, cnnl.FOREACH_BINARY_TENSOR_LIST, *_descs(a), *_descs(b), None, None,
             2.0, None, 0, *_descs(out))
    with raises_status(bad, arg=r"input1_ptr_array\[2\]"):
        descs, pointers = _descs(a)
        call(handle, cnnl.CNNL_FOREACH_ADD, cnnl.FOREACH_BINARY_TENSOR_LIST, descs, pointers[:2] + [pointers[2] + 7],
             *_descs(b), None, None, 1, None, 0, *_descs(out))
    with raises_status(bad, arg="input_desc_array"):
        cnnl.foreachUnaryOp_v2(handle, cnnl.CNNL_FOREACH_SQRT, cnnl.CNNL_COMPUTATION_FAST, 5, [1], None, 0,
                               *_descs(out))
    ints = [tensor(np.ones(2, np.int32), cnnl.CNNL_DTYPE_INT32)]
    with raises_status(cnnl.CNNL_STATUS_NOT_SUPPORTED, arg=r"input_desc_array\[0\]"):  # as the single ops
        cnnl.foreachUnaryOp_v2(handle, cnnl.CNNL_FOREACH_SQRT, cnnl.CNNL_COMPUTATION_FAST, *_descs(ints), None, 0,
                               *_descs(ints))
    with raises_status(bad, arg="mode"):
        cnnl.foreachLerp(handle, cnnl.FOREACH_LERP_SCALAR_LIST, *_descs(a), *_descs(b), None, [0.5] * 3, None, 0,
                         *_descs(out))
    assert cnnl.getForeachBinaryOpWorkspaceSize(handle, _descs(a)[0]) == 0
    assert cnnl.getForeachUnaryOpWorkspaceSize(handle, _descs(a)[0]) == 0
    assert cnnl.getForeachLerpExtraInputSize(handle, cnnl.FOREACH_LERP_SCALAR, _descs(a)[0]) == 0
    assert _commands(handle, lambda: call(handle, cnnl.CNNL_FOREACH_ADD, cnnl.FOREACH_BINARY_TENSOR_LIST, [], [], [], [],
                                  None, None, 1, None, 0, [], [])) == []  # an empty list queues nothing
