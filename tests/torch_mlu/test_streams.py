"""torch.mlu.Stream = a cnrt queue: the current stream per thread and device, ops queued on it, the stream context
managers, wait_stream ordering, query/synchronize, priorities, the stream pool, torch.Stream and torch.accelerator."""
import pytest
import torch

import cnrt


def test_streams_are_torch_streams_over_cnrt_queues():
    s = torch.mlu.Stream()
    assert isinstance(s, torch.Stream) and s.device == torch.device("mlu", 0) and s.device_type == 20
    assert cnrt.queueQuery(s.mlu_stream) == cnrt.cnrtSuccess
    other = torch.mlu.Stream()
    assert other != s and other.mlu_stream is not s.mlu_stream
    default = torch.mlu.default_stream()
    assert default.stream_id == 0 and torch.mlu.current_stream() == default
    assert default.mlu_stream is not s.mlu_stream
    assert torch.mlu.Stream(priority=-1).priority == -1
    assert torch.mlu.Stream(priority=-100).priority == cnrt.deviceGetQueuePriorityRange()[1]  # clamped


def test_stream_context_sets_and_restores_the_current_stream():
    s1, s2 = torch.mlu.Stream(), torch.mlu.Stream()
    with torch.mlu.stream(s1):
        assert torch.mlu.current_stream() == s1
        with torch.mlu.stream(s2):
            assert torch.mlu.current_stream() == s2
        assert torch.mlu.current_stream() == s1
    assert torch.mlu.current_stream() == torch.mlu.default_stream()
    with s1:  # torch.Stream's own context manager
        assert torch.mlu.current_stream() == s1
    torch.mlu.set_stream(s2)
    assert torch.mlu.current_stream() == s2
    torch.mlu.set_stream(torch.mlu.default_stream())
    with torch.mlu.stream(None):
        assert torch.mlu.current_stream() == torch.mlu.default_stream()


def test_ops_go_on_the_current_stream(gates):
    s = torch.mlu.Stream()
    x = torch.ones(64, device="mlu")
    s.wait_stream(torch.mlu.default_stream())  # x is filled on the default stream (racecheck found the race)
    gate = gates(s)
    with torch.mlu.stream(s):
        y = x * 3
    assert not s.query()  # y's op waits behind the gate on s
    z = x + 1  # the default stream is free
    torch.mlu.default_stream().synchronize()
    assert torch.mlu.default_stream().query() and not s.query()
    gate.set()
    s.synchronize()
    assert s.query()
    assert y.cpu().tolist() == [3.0] * 64 and z.cpu().tolist() == [2.0] * 64


def test_wait_stream_orders_work_across_streams(gates):
    producer, consumer = torch.mlu.Stream(), torch.mlu.Stream()
    x = torch.zeros(1000, device="mlu")
    torch.mlu.synchronize()
    gate = gates(producer)
    with torch.mlu.stream(producer):
        x.add_(5)  # held behind the gate
    consumer.wait_stream(producer)
    with torch.mlu.stream(consumer):
        y = x * 2  # must see the add
    assert not consumer.query()
    gate.set()
    consumer.synchronize()
    assert y.cpu().tolist() == [10.0] * 1000


def test_stream_pool_recycles_queues():
    queues = {id(torch.mlu.Stream().mlu_stream) for _ in range(80)}
    assert len(queues) == 32  # 32 queues per device and priority, as CUDA's pool
    high = {id(torch.mlu.Stream(priority=-2).mlu_stream) for _ in range(3)}
    assert not high & queues


def test_torch_accelerator_and_torch_stream_on_mlu():
    s = torch.Stream(device="mlu")
    assert s.device.type == "mlu"
    torch.accelerator.set_stream(s)
    assert torch.accelerator.current_stream() == s
    assert torch.mlu.current_stream().stream_id == s.stream_id
    torch.accelerator.set_stream(torch.mlu.default_stream())
    assert torch.accelerator.current_stream().stream_id == 0
    torch.accelerator.synchronize()


def test_each_thread_has_its_own_current_stream():
    import threading
    s = torch.mlu.Stream()
    seen = []
    with torch.mlu.stream(s):
        thread = threading.Thread(target=lambda: seen.append(torch.mlu.current_stream().stream_id))
        thread.start()
        thread.join()
        assert torch.mlu.current_stream() == s
    assert seen == [0]


def test_priority_range_and_every_priority_in_it():
    """Cambricon's test/mlu/test_stream.py test_streams_priority, re-expressed: (least, greatest) as cnrt's queue
    priority range, and a stream of each priority keeps it."""
    low, high = torch.mlu.Stream.priority_range()
    assert (low, high) == cnrt.deviceGetQueuePriorityRange() == (0, -4)
    for priority in range(high, low + 1):
        stream = torch.mlu.Stream(device=0, priority=priority)
        assert stream.priority == priority and stream.device == torch.device("mlu:0")


def test_an_external_stream_queues_torch_work_on_the_given_cnrt_queue():
    """Cambricon's test_external_streams, and that the work really goes to that queue (held by a host function)."""
    import threading
    queue = cnrt.queueCreate()
    release = threading.Event()
    cnrt.invokeHostFunc(queue, lambda _: release.wait(10), None)
    external = torch.mlu.ExternalStream(queue)
    assert external.mlu_stream is queue and external.device == torch.device("mlu:0")
    x = torch.ones(4096, device="mlu")
    external.wait_stream(torch.mlu.current_stream())
    with torch.mlu.stream(external):
        y = x * 3
    assert not external.query()  # behind the held host function
    release.set()
    external.synchronize()
    assert y.sum().item() == 3 * 4096
    own = torch.mlu.Stream()
    assert torch.mlu.ExternalStream(own.mlu_stream) == own  # a queue of the pool keeps its stream id
    with pytest.raises(cnrt.CnrtError, match="is not a queue"):
        torch.mlu.ExternalStream(5)
    cnrt.queueDestroy(queue)


def test_an_external_stream_names_its_device(two_devices):
    with torch.mlu.device(1):
        queue = torch.mlu.Stream().mlu_stream
    external = torch.mlu.ExternalStream(queue, device=torch.mlu.device(1))
    assert external.mlu_stream is queue and external.device.index == 1
    with pytest.raises(ValueError, match="belongs to device 1, not to device 0"):
        torch.mlu.ExternalStream(queue, device=0)
