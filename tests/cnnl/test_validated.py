"""cnnl remembers what it validated on a set of descriptor objects (cnnl.validated): a repeated call skips those
checks, a descriptor set again, reset or destroyed since is validated again (and reports its error then), and
what differs per call (pointers, scalars, workspace) is still checked every time."""
import numpy as np

import cnnl
import cnrt
from cnnl.ops import arithmetic as arithmetic_ops
from cnnl.ops import binary as binary_ops

from .helpers import empty, raises_status, sync, tensor


def _op_desc(op=cnnl.CNNL_OP_TENSOR_ADD):
    desc = cnnl.createOpTensorDescriptor()
    cnnl.setOpTensorDescriptor(desc, op, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_NOT_PROPAGATE_NAN)
    return desc


def _count_validations(monkeypatch, module, name):
    calls = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda *args: calls.append(args) or real(*args))
    return calls


def test_a_repeated_op_tensor_validates_its_descriptors_once(handle, monkeypatch):
    calls = _count_validations(monkeypatch, binary_ops, "_broadcast_operands")
    a, b, c = tensor(np.arange(6, dtype=np.float32).reshape(2, 3)), tensor(np.ones((2, 3), np.float32)), empty((2, 3))
    add = _op_desc()
    for alpha in (1, 2.0, -0.5):
        cnnl.opTensor(handle, add, 1, a.desc, a.ptr, alpha, b.desc, b.ptr, None, 0, 0, c.desc, c.ptr)
        sync(handle)
        assert np.array_equal(c.read(), np.arange(6.0).reshape(2, 3) + alpha)
    assert len(calls) == 1


def test_a_descriptor_set_again_is_validated_again(handle):
    a, b, c = tensor(np.ones((2, 3), np.float32)), tensor(np.ones((2, 3), np.float32)), empty((2, 3))
    add = _op_desc()
    cnnl.opTensor(handle, add, 1, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, 0, c.desc, c.ptr)
    cnnl.setTensorDescriptor(b.desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_INT32, [2, 3])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="b_desc"):
        cnnl.opTensor(handle, add, 1, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, 0, c.desc, c.ptr)
    cnnl.setTensorDescriptor(c.desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [4, 3])  # no longer broadcasts
    cnnl.setTensorDescriptor(b.desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [2, 3])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="a_desc"):  # a [2, 3] does not broadcast to it
        cnnl.opTensor(handle, add, 1, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, 0, c.desc, c.ptr)


def test_an_op_descriptor_set_again_changes_the_op(handle):
    a, b, c = tensor(np.full(4, 3.0, np.float32)), tensor(np.full(4, 2.0, np.float32)), empty((4,))
    op = _op_desc()
    cnnl.opTensor(handle, op, 1, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, 0, c.desc, c.ptr)
    sync(handle)
    assert c.read().tolist() == [5.0] * 4
    cnnl.setOpTensorDescriptor(op, cnnl.CNNL_OP_TENSOR_MUL, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_NOT_PROPAGATE_NAN)
    cnnl.opTensor(handle, op, 1, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, 0, c.desc, c.ptr)
    sync(handle)
    assert c.read().tolist() == [6.0] * 4
    cnnl.setOpTensorDescriptor(op, cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_HALF, cnnl.CNNL_NOT_PROPAGATE_NAN)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="op_tensor_desc"):  # half computation for float tensors
        cnnl.opTensor(handle, op, 1, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, 0, c.desc, c.ptr)


def test_destroyed_descriptors_are_refused_after_a_remembered_call(handle):
    a, b, c = tensor(np.ones(3, np.float32)), tensor(np.ones(3, np.float32)), empty((3,))
    op = _op_desc()
    cnnl.opTensor(handle, op, 1, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, 0, c.desc, c.ptr)
    cnnl.destroyTensorDescriptor(a.desc)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="a_desc"):
        cnnl.opTensor(handle, op, 1, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, 0, c.desc, c.ptr)
    cnnl.destroyOpTensorDescriptor(op)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="op_tensor_desc"):
        cnnl.opTensor(handle, op, 1, b.desc, b.ptr, 1, b.desc, b.ptr, None, 0, 0, c.desc, c.ptr)


def test_pointers_scalars_and_workspace_are_checked_on_every_call(handle):
    a, b, c = tensor(np.ones((2, 2), np.float32)), tensor(np.ones((2, 2), np.float32)), empty((2, 2))
    op = _op_desc()
    cnnl.opTensor(handle, op, 1, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, 0, c.desc, c.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="b"):
        cnnl.opTensor(handle, op, 1, a.desc, a.ptr, 1, b.desc, b.ptr + (1 << 30), None, 0, 0, c.desc, c.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="alpha2"):
        cnnl.opTensor(handle, op, 1, a.desc, a.ptr, "two", b.desc, b.ptr, None, 0, 0, c.desc, c.ptr)
    freed = cnrt.malloc(64)
    cnrt.free(freed)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="c"):
        cnnl.opTensor(handle, op, 1, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, 0, c.desc, freed)
    broadcast = tensor(np.ones((1, 2), np.float32))  # needs a workspace: checked per call too
    needed = cnnl.getOpTensorWorkspaceSize(handle, a.desc, broadcast.desc, c.desc)
    assert needed > 0
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="workspace_size"):
        cnnl.opTensor(handle, op, 1, a.desc, a.ptr, 1, broadcast.desc, broadcast.ptr, None, 0, 0, c.desc, c.ptr)


def test_casts_and_transforms_remember_and_revalidate(handle, monkeypatch):
    calls = _count_validations(monkeypatch, arithmetic_ops, "tensor_arg")
    x, y = tensor(np.array([-0.0, 1.5, -2.0, np.inf], np.float32)), empty((4,))
    for _ in range(3):
        cnnl.transform_v2(handle, cnnl.CNNL_POINTER_MODE_HOST, 2.0, x.desc, x.ptr, 0, y.desc, y.ptr)
    sync(handle)
    assert np.array_equal(y.read(), [0.0, 3.0, -4.0, np.inf]) and not np.signbit(y.read()[0])  # -0.0 + 0.0 is +0.0
    assert len(calls) == 2  # input_desc and output_desc, checked on the first call only
    cnnl.setTensorDescriptor(y.desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_HALF, [4])
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.transform_v2(handle, cnnl.CNNL_POINTER_MODE_HOST, 2.0, x.desc, x.ptr, 0, y.desc, y.ptr)
    half = empty((4,), cnnl.CNNL_DTYPE_HALF)
    for _ in range(2):
        cnnl.castDataType(handle, x.desc, x.ptr, cnnl.CNNL_CAST_FLOAT_TO_HALF, half.desc, half.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="cast_type"):
        cnnl.castDataType(handle, x.desc, x.ptr, 12345, half.desc, half.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="output_desc"):
        cnnl.castDataType(handle, x.desc, x.ptr, cnnl.CNNL_CAST_FLOAT_TO_INT32, half.desc, half.ptr)
    sync(handle)
    assert half.read().tolist() == [0.0, 1.5, -2.0, np.inf]


def test_unhashable_and_foreign_arguments_get_the_full_checks(handle):
    a, c = tensor(np.ones(2, np.float32)), empty((2,))
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="a_desc"):
        cnnl.opTensor(handle, _op_desc(), 1, [a.desc], a.ptr, 1, a.desc, a.ptr, None, 0, 0, c.desc, c.ptr)
    with raises_status(cnnl.CNNL_STATUS_BAD_PARAM, arg="op_tensor_desc"):
        cnnl.opTensor(handle, a.desc, 1, a.desc, a.ptr, 1, a.desc, a.ptr, None, 0, 0, c.desc, c.ptr)


def test_the_memory_is_bounded(handle):
    from cnnl import validated
    x, out = tensor(np.ones(1, np.float32)), empty((1,))
    memory = arithmetic_ops._validated_transforms
    memory.clear()
    descriptors = [cnnl.createTensorDescriptor() for _ in range(validated.VALIDATED_CALLS + 10)]
    for i, desc in enumerate(descriptors):
        cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, [1])
        cnnl.transform_v2(handle, cnnl.CNNL_POINTER_MODE_HOST, 1, x.desc, x.ptr, i, desc, out.ptr)
        assert len(memory) <= validated.VALIDATED_CALLS
    sync(handle)
    assert out.read().tolist() == [len(descriptors)]  # 1 * x + the last i
