"""cnrtInvokeKernel with plain Python callables: dims, function types, board limits, errors, the v4 form."""
import numpy as np
import pytest

import cnrt
from mlusim import device as devices

from .helpers import download, raises_code


def fill_kernel(pointer, count, value):
    cnrt.memset(pointer, value, count)


def test_a_callable_kernel_runs_on_the_queue_with_its_arguments():
    queue = cnrt.queueCreate()
    seen = []
    cnrt.invokeKernel(lambda *args: seen.append(args), cnrt.cnrtDim3_t(4, 1, 1), cnrt.cnrtFuncTypeUnion1,
                      [1, 2.5, "x"], 0, queue)
    cnrt.queueSync(queue)
    assert seen == [(1, 2.5, "x")]


@pytest.mark.parametrize("dim", [cnrt.cnrtDim3_t(8, 2, 1), (8, 2, 1), (8,), [16, 1, 1], 32])
def test_dims_accept_dim3_sequences_and_ints(dim):
    queue = cnrt.queueCreate()
    ran = []
    cnrt.invokeKernel(lambda: ran.append(1), dim, cnrt.cnrtFuncTypeUnion2, [], 0, queue)
    cnrt.queueSync(queue)
    assert ran == [1]


@pytest.mark.parametrize("ktype", [cnrt.cnrtFuncTypeBlock, cnrt.cnrtFuncTypeBlock1, cnrt.cnrtFuncTypeUnion1,
                                   cnrt.cnrtFuncTypeUnion2, cnrt.cnrtFuncTypeUnion4, cnrt.cnrtFuncTypeUnion8,
                                   cnrt.cnrtFuncTypeMutable])
def test_every_function_type_within_the_board_limit_launches(ktype):
    cnrt.invokeKernel(lambda: None, (32, 1, 1), ktype, [], 0, None)
    cnrt.syncDevice()


def test_union_beyond_the_board_limit_is_not_supported():
    error = raises_code(cnrt.cnrtErrorNotSupport, cnrt.invokeKernel, lambda: None, (64, 1, 1),
                        cnrt.cnrtFuncTypeUnion16, [], 0, None)
    assert "Union8" in str(error)
    devices.configure(arch="MLU290-M5", memory=1 << 20)
    cnrt.invokeKernel(lambda: None, (64, 1, 1), cnrt.cnrtFuncTypeUnion16, [], 0, None)
    cnrt.syncDevice()


def test_union_needs_dim_x_to_fill_whole_clusters():
    error = raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.invokeKernel, lambda: None, (4, 1, 1),
                        cnrt.cnrtFuncTypeUnion2, [], 0, None)
    assert "multiple of 8" in str(error)


@pytest.mark.parametrize("dim, ktype, args, reserved, arg", [
    ((0, 1, 1), 1, [], 0, "dim.x"), ((1, 1 << 20, 1), 1, [], 0, "dim.y"), ("big", 1, [], 0, "dim"),
    ((4, 1, 1), 3, [], 0, "ktype"), ((4, 1, 1), 4, "args", 0, "args"), ((4, 1, 1), 4, [], 1, "reserved")])
def test_bad_launch_arguments(dim, ktype, args, reserved, arg):
    error = raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.invokeKernel, lambda: None, dim, ktype, args, reserved,
                        None)
    assert f"'{arg}'" in str(error)


def test_not_a_kernel():
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.invokeKernel, 42, (4, 1, 1), 1, [], 0, None)


def test_a_failing_kernel_is_a_sticky_kernel_trap():
    queue = cnrt.queueCreate()

    def broken():
        raise IndexError("index 10 is out of bounds")

    cnrt.invokeKernel(broken, (4, 1, 1), cnrt.cnrtFuncTypeUnion1, [], 0, queue)
    error = raises_code(cnrt.cnrtErrorKernelTrap, cnrt.queueSync, queue)
    assert "broken" in str(error) and "out of bounds" in str(error)


def test_v4_params_buffer_launch():
    pointer = cnrt.malloc(64)
    params = cnrt.getKernelParamsBuffer()
    for value in (pointer, 64, 9):
        cnrt.kernelParamsBufferAddParam(params, value, 8)
    queue = cnrt.createQueue()
    cnrt.invokeKernel_V2(fill_kernel, cnrt.cnrtDim3_t(1, 1, 1), params, cnrt.CNRT_FUNC_TYPE_BLOCK, queue)
    cnrt.syncQueue(queue)
    assert (download(pointer, 64, np.uint8) == 9).all()
    cnrt.destroyKernelParamsBuffer(params)
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.kernelParamsBufferAddParam, params, 1, 8)


def test_free_waits_for_a_kernel_using_the_block():
    import threading
    pointer = cnrt.malloc(64)
    release = threading.Event()
    seen = []
    cnrt.invokeKernel(lambda p: (release.wait(10), seen.append(p)), (1, 1, 1), 1, [pointer + 8], 0, None)
    freer = threading.Thread(target=cnrt.free, args=(pointer,))
    freer.start()
    freer.join(0.1)
    assert freer.is_alive()
    release.set()
    freer.join(10)
    assert seen == [pointer + 8] and not freer.is_alive()
