"""Several host threads on several queues, thousands of commands: nothing lost, nothing reordered."""
import threading

import numpy as np

import cnrt

THREADS = 4
ROUNDS = 400


def worker(index, results, errors):
    try:
        queue = cnrt.queueCreate()
        pointer = cnrt.malloc(ROUNDS * 4)
        cnrt.memsetAsync(pointer, 0, ROUNDS * 4, queue)  # the copies below read words not yet written
        host = np.zeros(ROUNDS, np.uint32)
        order = []
        for step in range(ROUNDS):
            cnrt.memsetD32Async(pointer + 4 * step, index * 100000 + step, 1, queue)
            cnrt.invokeHostFunc(queue, order.append, step)
            if step % 50 == 49:
                cnrt.memcpyAsync(host, pointer, ROUNDS * 4, queue, cnrt.cnrtMemcpyDevToHost)
        cnrt.memcpyAsync(host, pointer, ROUNDS * 4, queue, cnrt.cnrtMemcpyDevToHost)
        cnrt.queueSync(queue)
        results[index] = (host.copy(), order)
        cnrt.queueDestroy(queue)
        cnrt.free(pointer)
    except Exception as error:  # reported by the main thread
        errors.append(error)


def test_threads_and_queues_under_load():
    results, errors = {}, []
    threads = [threading.Thread(target=worker, args=(i, results, errors)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors, errors
    assert sorted(results) == list(range(THREADS))
    for index, (host, order) in results.items():
        np.testing.assert_array_equal(host, index * 100000 + np.arange(ROUNDS, dtype=np.uint32))
        assert order == list(range(ROUNDS))


def test_cross_queue_chain_under_load():
    queues = [cnrt.queueCreate() for _ in range(4)]
    notifiers = [cnrt.notifierCreate() for _ in range(4)]
    pointer = cnrt.malloc(4)
    cnrt.memsetD32(pointer, 0, 1)
    trail = []
    for step in range(300):
        queue = queues[step % 4]
        if step:
            cnrt.queueWaitNotifier(notifiers[(step - 1) % 4], queue, 0)
        cnrt.invokeHostFunc(queue, trail.append, step)
        cnrt.placeNotifier(notifiers[step % 4], queue)
    cnrt.syncDevice()
    assert trail == list(range(300))
