"""BANG C kernels built by cncc, launched from Python on cnrt queues: the samples against the Python BANG samples
and numpy, and every check tripped (bounds, capacity, alignment, direction, deadlock, assert, watchdog)."""
from __future__ import annotations

import numpy as np
import pytest

import cnrt
from cnrt.samples import sram_reduction, tiled_matmul


def _to_device(array: np.ndarray) -> int:
    pointer = cnrt.malloc(max(array.nbytes, 1))
    cnrt.memcpy(pointer, np.ascontiguousarray(array), array.nbytes, cnrt.cnrtMemcpyHostToDev)
    return pointer


def _from_device(pointer: int, count: int, dtype=np.float32) -> np.ndarray:
    out = np.empty(count, dtype)
    cnrt.memcpy(out, pointer, out.nbytes, cnrt.cnrtMemcpyDevToHost)
    return out


def _sync_error(queue) -> cnrt.CnrtError:
    with pytest.raises(cnrt.CnrtError) as caught:
        cnrt.queueSync(queue)
    return caught.value


def test_module_lists_its_kernels(kernels):
    assert {"vector_add", "cluster_sum", "tiled_matmul", "copy_past_end"} <= set(kernels.kernels)
    assert kernels["vector_add"].argtypes == ("void *", "void *", "void *", "int32_t")
    with pytest.raises(KeyError, match="no BANG C kernel 'nope'"):
        kernels["nope"]


@pytest.mark.parametrize("n", [1, 1000, 100_003])
def test_vector_add_matches_numpy(kernels, n):
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    px, py, pz = _to_device(x), _to_device(y), cnrt.malloc(4 * n)
    queue = cnrt.queueCreate()
    kernels["vector_add"][(4, 8, 1), cnrt.cnrtFuncTypeUnion1, queue](px, py, pz, n)
    cnrt.queueSync(queue)
    np.testing.assert_array_equal(_from_device(pz, n), x + y)
    counts = kernels["vector_add"].last_launch.counts
    assert counts.copy_bytes == {"GDRAM2NRAM": 8 * n, "NRAM2GDRAM": 4 * n}
    assert counts.vector_elements == n and counts.tasks == 32
    assert kernels["vector_add"].last_launch.model_us > 0
    for p in (px, py, pz):
        cnrt.free(p)


def test_sram_reduction_matches_the_python_sample(kernels):
    x = np.random.default_rng(1).standard_normal(1 << 18, dtype=np.float32)
    clusters = cnrt.deviceGetAttribute(cnrt.cnrtAttrClusterCount, 0)
    px, pout = _to_device(x), cnrt.malloc(4 * clusters)
    queue = cnrt.queueCreate()
    kernels["cluster_sum"][(4, clusters, 1), cnrt.cnrtFuncTypeUnion1, queue](px, pout, x.size)
    cnrt.queueSync(queue)
    total = float(_from_device(pout, clusters).sum(dtype=np.float64))
    assert total == pytest.approx(sram_reduction.run(x), rel=1e-6)
    assert total == pytest.approx(float(x.sum(dtype=np.float64)), rel=1e-4, abs=1e-2)
    assert kernels["cluster_sum"].last_launch.counts.barriers == 4 * clusters


def test_tiled_matmul_matches_the_python_sample(kernels):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((64, 128), dtype=np.float32)
    b = rng.standard_normal((128, 96), dtype=np.float32)
    pa, pb, pc = _to_device(a), _to_device(b), cnrt.malloc(64 * 96 * 4)
    queue = cnrt.queueCreate()
    kernels["tiled_matmul"][(6, 1, 1), cnrt.cnrtFuncTypeBlock, queue](pa, pb, pc, 64, 128, 96)
    cnrt.queueSync(queue)
    c = _from_device(pc, 64 * 96).reshape(64, 96)
    np.testing.assert_allclose(c, tiled_matmul.run(a, b), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    assert kernels["tiled_matmul"].last_launch.counts.macs == {"float32": 64 * 128 * 96}


def test_copy_past_the_allocation_names_task_and_argument(kernels):
    x, y = _to_device(np.ones(16, np.float32)), cnrt.malloc(64)
    queue = cnrt.queueCreate()
    kernels["copy_past_end"][(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](x, y, 32)
    error = _sync_error(queue)
    assert error.code == cnrt.cnrtErrorKernelTrap
    text = str(error)
    assert "kernel 'copy_past_end' task 0" in text and "outside its allocation" in text and "args[0]" in text


def test_static_array_larger_than_nram_names_it(kernels):
    queue = cnrt.queueCreate()
    kernels["too_big"][(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](cnrt.malloc(64))
    error = _sync_error(queue)
    assert "NRAM array 'huge'" in str(error) and "921600 bytes does not fit" in str(error)
    assert "786432 bytes of NRAM" in str(error)


def test_a_task_that_skips_a_barrier_is_a_deadlock(kernels):
    queue = cnrt.queueCreate()
    kernels["skips_barrier"][(4, 1, 1), cnrt.cnrtFuncTypeUnion1, queue](cnrt.malloc(64))
    error = _sync_error(queue)
    assert "deadlock" in str(error) and "returned without reaching it" in str(error)


def test_assert_is_cnrt_error_assert(kernels):
    queue = cnrt.queueCreate()
    kernels["asserts"][(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](1)
    cnrt.queueSync(queue)
    kernels["asserts"][(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](0)
    error = _sync_error(queue)
    assert error.code == cnrt.cnrtErrorAssert and "assertion failed: value > 0" in str(error)


def test_the_watchdog_stops_a_loop_that_never_ends(kernels):
    spins = kernels["spins"]
    spins.time_limit = 0.5
    queue = cnrt.queueCreate()
    spins[(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](0)
    error = _sync_error(queue)
    assert "was stopped" in str(error) and "time limit" in str(error)


def test_vector_operands_must_be_aligned(kernels):
    queue = cnrt.queueCreate()
    kernels["unaligned"][(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](cnrt.malloc(64))
    assert "not 64-byte aligned" in str(_sync_error(queue))


def test_a_copy_direction_must_match_the_spaces(kernels):
    queue = cnrt.queueCreate()
    kernels["wrong_direction"][(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](cnrt.malloc(64))
    text = str(_sync_error(queue))
    assert "__memcpy" in text and "is in NRAM" in text and "GDRAM is needed" in text


def test_initialised_nram_array_starts_fresh_in_every_task(kernels):
    out = cnrt.malloc(4 * 4 * 8)
    queue = cnrt.queueCreate()
    kernels["initialised"][(8, 1, 1), cnrt.cnrtFuncTypeBlock, queue](out)
    cnrt.queueSync(queue)
    values = _from_device(out, 32, np.int32).reshape(8, 4)
    expected = np.tile([1, 2, 3, 4], (8, 1))
    expected[np.arange(8), np.arange(8) % 4] += 10
    np.testing.assert_array_equal(values, expected)


@pytest.mark.parametrize("name", ["async_copy", "asm_sync_copy"])
def test_async_copy_lands_at_the_sync(kernels, name):
    """__sync_io(), or the sync instruction in inline assembly (as Cambricon's kernels write it)."""
    x = np.arange(16, dtype=np.float32)
    px, py = _to_device(x), cnrt.malloc(4 * 32)
    queue = cnrt.queueCreate()
    kernels[name][(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](px, py, 16)
    cnrt.queueSync(queue)
    out = _from_device(py, 32)
    np.testing.assert_array_equal(out[:16], np.full(16, 7, np.float32))
    np.testing.assert_array_equal(out[16:], x)


def test_wrong_arguments_fail_at_the_launch(kernels):
    queue = cnrt.queueCreate()
    with pytest.raises(cnrt.CnrtError, match="takes 4 argument"):
        kernels["vector_add"][(4, 1, 1), cnrt.cnrtFuncTypeUnion1, queue](1, 2)
    with pytest.raises(cnrt.CnrtError, match="not of device|no device"):
        kernels["vector_add"][(4, 1, 1), cnrt.cnrtFuncTypeUnion1, queue](12345, 0, 0, 1)


def _scalar_sum_reference(x: np.ndarray) -> int:
    i = np.arange(x.size)
    return int((x * np.array([1, 10, 100, 1000])[i & 3] + 2 * (i & 255) + (i & 7)).sum())


def test_scalar_accesses_of_every_space_run(kernels):
    x = np.arange(1, 301, dtype=np.int32)
    px, py = _to_device(x), cnrt.malloc(8)
    queue = cnrt.queueCreate()
    kernels["scalar_sum"][(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](px, py, x.size, 1)
    cnrt.queueSync(queue)
    assert _from_device(py, 2, np.int32)[1] == _scalar_sum_reference(x)


@pytest.mark.parametrize("n, at, message", [
    (301, 0, "scalar load of 4 bytes at 0x{x:x} is outside its allocation (argument 'args[0] (void *)': 0x{x0:x}, "
             "1200 bytes; 0 bytes past its end)"),
    (300, 2, "scalar store of 4 bytes at 0x{y:x} is outside its allocation (argument 'args[1] (void *)': 0x{y0:x}, "
             "8 bytes; 0 bytes past its end)"),
    (300, -1, "scalar store of 4 bytes at 0x{ym:x} is outside its allocation (argument 'args[1] (void *)': "
              "0x{y0:x}, 8 bytes; 4 bytes before its start)"),
])
def test_scalar_access_outside_an_allocation_traps_naming_task_and_argument(kernels, n, at, message):
    x = np.arange(1, 301, dtype=np.int32)
    px, py = _to_device(x), cnrt.malloc(8)
    queue = cnrt.queueCreate()
    kernels["scalar_sum"][(2, 1, 1), cnrt.cnrtFuncTypeBlock, queue](px, py, n, at)
    error = _sync_error(queue)
    assert error.code == cnrt.cnrtErrorKernelTrap
    text = str(error)
    assert "kernel 'scalar_sum' task " in text   # a trap, not caught by the kernel's catch (...) nor terminate
    assert message.format(x=px + 1200, x0=px, y=py + 8, y0=py, ym=py - 4) in text


def test_a_device_address_read_from_gdram_traps_instead_of_crashing(kernels):
    target = cnrt.malloc(4)
    table = _to_device(np.array([target], np.uint64))
    queue = cnrt.queueCreate()
    kernels["follows_pointer"][(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](table)
    error = _sync_error(queue)
    assert error.code == cnrt.cnrtErrorKernelTrap
    assert f"scalar store of 4 bytes at 0x{target:x}: a device address dereferenced directly" in str(error)
    null = _to_device(np.zeros(1, np.uint64))
    kernels["follows_pointer"][(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](null)
    assert "scalar store of 4 bytes at address 0x0: a null pointer" in str(_sync_error(queue))


def test_scalar_access_past_the_end_of_nram_traps(kernels):
    queue = cnrt.queueCreate()
    nram = cnrt.deviceGetAttribute(cnrt.cnrtAttrNramSizePerMcore, 0)
    kernels["nram_past_end"][(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](nram)
    error = _sync_error(queue)
    assert f"scalar store of 1 bytes at NRAM byte {nram} runs past the end of NRAM ({nram} bytes)" in str(error)
    kernels["nram_past_end"][(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](100)   # NRAM, past the array: allowed
    cnrt.queueSync(queue)
