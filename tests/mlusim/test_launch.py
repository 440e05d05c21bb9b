"""mlusim.launch, the one launch path: each launch's command carries the work counts of that launch."""
import threading

import numpy as np

import cnrt
from mlusim.observers import CommandRecorder

from .conftest import to_device
from .bang.kernels import load_at


def test_two_launches_of_one_kernel_on_two_queues_at_once_keep_their_own_counts(board):
    """The counts of a launch go into its own command: two launches of the same kernel running at once on two
    queues, with different work, never swap them (they came from the kernel's newest launch record before)."""
    x = to_device(np.arange(1024, dtype=np.float32))
    outs = [cnrt.malloc(1024 * 4) for _ in range(2)]
    queues = [cnrt.queueCreate(), cnrt.queueCreate()]
    counts = {queues[0]: 256, queues[1]: 1000}
    gate = threading.Event()
    with CommandRecorder() as recorder:
        for _ in range(3):
            for queue in queues:  # each queue waits at the gate, so both launches run at once after it
                cnrt.invokeHostFunc(queue, lambda _: gate.wait(10), None)
            for queue, out in zip(queues, outs):
                load_at[(4, 1, 1), cnrt.cnrtFuncTypeUnion1, queue](x, out, 0, counts[queue])
            gate.set()
            for queue in queues:
                cnrt.queueSync(queue)
            gate.clear()
    launches = [(queue, command) for queue, command in recorder.commands if command.kind == "kernel"]
    assert len(launches) == 6
    for queue, command in launches:
        assert command.info["work"]["copy_bytes"]["GDRAM2NRAM"] == 4 * counts[queue]
        assert command.info["bytes"] == 2 * 4 * counts[queue]
