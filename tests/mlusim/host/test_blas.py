"""The BLAS threading setting of kernels that run GEMMs on the pool: held by several threads at once, it is
restored when the last of them leaves, whatever order they leave in (numpy's OpenBLAS applies it process-wide)."""
import importlib
import threading

import numpy as np
import pytest

from mlusim.host import blas as blas_threads

pytestmark = pytest.mark.skipif(not blas_threads.thread_count(), reason="numpy's BLAS is not OpenBLAS")


def _hold_in_threads(order_of_leaving):
    entered = [threading.Event() for _ in order_of_leaving]
    leave = [threading.Event() for _ in order_of_leaving]
    seen_inside = []

    def hold(k):
        with blas_threads.single_threaded_blas():
            entered[k].set()
            leave[k].wait(10)
            seen_inside.append(blas_threads.thread_count())

    threads = [threading.Thread(target=hold, args=(k,)) for k in range(len(order_of_leaving))]
    for k, thread in enumerate(threads):
        thread.start()
        assert entered[k].wait(10)
    for k in order_of_leaving:
        leave[k].set()
        threads[k].join(10)
    return seen_inside


@pytest.mark.parametrize("order_of_leaving", [[0, 1], [1, 0], [2, 0, 1]])
def test_overlapping_holders_restore_the_count_found_before(order_of_leaving):
    before = blas_threads.thread_count()
    seen_inside = _hold_in_threads(order_of_leaving)
    assert seen_inside == [1] * len(order_of_leaving)  # one thread while any holder is inside
    assert blas_threads.thread_count() == before


def test_pool_kernels_leave_large_gemms_their_threads():
    """A batched product shared out over the pool (each range single-threaded) leaves BLAS's count as it was."""
    matmul = importlib.import_module("cnnl.kernels.matmul")
    before = blas_threads.thread_count()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 96, 80), np.float32), rng.standard_normal((64, 80, 72), np.float32)
    out = np.empty((64, 96, 72), np.float32)
    for _ in range(20):
        matmul.matmul(a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-4)
    assert blas_threads.thread_count() == before
