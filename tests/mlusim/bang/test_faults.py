"""Kernel faults: capacity, memory spaces, directions, bounds, alignment, asserts; sticky on the queue."""
import numpy as np
import pytest

import cnrt
from mlusim import bang

from ..conftest import from_device, to_device
from .kernels import (add_on_gdram, asserting, copy_with_direction, load_at, misaligned_add, nram_hog, scalar_at,
                      sram_hog, trapping, wram_hog)


def fault_of(queue, launch) -> cnrt.CnrtError:
    launch()
    with pytest.raises(cnrt.CnrtError) as error:
        cnrt.queueSync(queue)
    return error.value


def test_nram_capacity_names_kernel_buffer_and_limit(queue):
    error = fault_of(queue, lambda: nram_hog[(4, 1, 1), cnrt.cnrtFuncTypeBlock, queue](200_000))
    text = str(error)
    assert error.code == cnrt.cnrtErrorKernelTrap
    assert "nram_hog" in text and "'too_big'" in text and "655360" in text and "task " in text


def test_nram_buffer_that_fits_is_fine(queue):
    nram_hog[(4, 1, 1), cnrt.cnrtFuncTypeBlock, queue](100_000)
    cnrt.queueSync(queue)


def test_wram_and_sram_capacity(queue):
    text = str(fault_of(queue, lambda: wram_hog[(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](600_000)))
    assert "wram_hog" in text and "'weights'" in text and "WRAM" in text and str(1024 * 1024) in text
    text = str(fault_of(queue, lambda: sram_hog[(4, 1, 1), cnrt.cnrtFuncTypeUnion1, queue](1_100_000)))
    assert "sram_hog" in text and "'shared_tile'" in text and "SRAM" in text and str(4 * 1024 * 1024 - 131072) in text


def test_wrong_memcpy_direction(queue):
    x = to_device(np.zeros(64, np.float32))
    text = str(fault_of(queue, lambda: copy_with_direction[(1, 1, 1), 1, queue](x, bang.SRAM2NRAM)))
    assert "SRAM2NRAM" in text and "'x' is in GDRAM" in text
    copy_with_direction[(1, 1, 1), 1, queue](x, bang.GDRAM2NRAM)
    cnrt.queueSync(queue)


@pytest.mark.parametrize("offset,count,detail", [(60, 8, "outside"), (-4, 8, "negative offset")])
def test_gdram_out_of_bounds(queue, offset, count, detail):
    x = to_device(np.arange(64, dtype=np.float32))
    out = cnrt.malloc(64 * 4)
    error = fault_of(queue, lambda: load_at[(4, 1, 1), cnrt.cnrtFuncTypeBlock, queue](x, out, offset, count))
    text = str(error)
    assert error.code == cnrt.cnrtErrorKernelTrap
    assert "load_at" in text and "task 0" in text and "'x'" in text and detail in text


def test_gdram_in_bounds_through_pointer_arithmetic(queue):
    x = to_device(np.arange(64, dtype=np.float32))
    out = cnrt.malloc(8 * 4)
    load_at[(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](x + 4 * 56, out, -8, 8)  # a pointer into x, moved back
    cnrt.queueSync(queue)
    assert from_device(out, 8, np.float32).tolist() == list(range(48, 56))


@pytest.mark.parametrize("index", [64, -1])
def test_scalar_access_is_bounds_checked(queue, index):
    x = to_device(np.zeros(64, np.float32))
    text = str(fault_of(queue, lambda: scalar_at[(1, 1, 1), 1, queue](x, index)))
    assert "scalar_at" in text and "write" in text


def test_error_is_sticky_and_skips_later_work(queue):
    x = to_device(np.zeros(64, np.float32))
    scalar_at[(1, 1, 1), 1, queue](x, 64)
    scalar_at[(1, 1, 1), 1, queue](x, 0)
    with pytest.raises(cnrt.CnrtError) as error:
        cnrt.queueSync(queue)
    assert "1 later command" in str(error.value)
    assert from_device(x, 1, np.float32)[0] == 0.0
    cnrt.queueSync(queue)  # reported once


def test_vector_op_needs_nram(queue):
    x = to_device(np.zeros(64, np.float32))
    text = str(fault_of(queue, lambda: add_on_gdram[(1, 1, 1), 1, queue](x)))
    assert "add dst needs an NRAM buffer" in text and "'x' is in GDRAM" in text


def test_vector_alignment(queue):
    text = str(fault_of(queue, lambda: misaligned_add[(1, 1, 1), 1, queue](3)))
    assert "64-byte aligned" in text
    misaligned_add[(1, 1, 1), 1, queue](16)
    cnrt.queueSync(queue)


def test_assert_and_user_trap_codes(queue):
    error = fault_of(queue, lambda: asserting[(8, 1, 1), 1, queue](5))
    assert error.code == cnrt.cnrtErrorAssert and "taskId below the limit" in str(error)
    error = fault_of(queue, lambda: trapping[(8, 1, 1), 1, queue]())
    assert error.code == cnrt.cnrtErrorKernelUserTrap and "task 3" in str(error)


def test_pointer_of_another_allocation_kind(queue):
    with pytest.raises(cnrt.CnrtError):
        cnrt.invokeKernel(scalar_at, (1, 1, 1), 1, [12345, 0], 0, queue)
        cnrt.queueSync(queue)
