"""torch.mlu.Event = a cnrt notifier: record / query / synchronize / wait, elapsed_time (host ms) and hardware_time
(modelled µs), ordering between streams, torch.Event on mlu."""
import time

import pytest
import torch

import cnrt


def test_record_query_synchronize(gates):
    event = torch.mlu.Event()
    assert isinstance(event, torch.Event) and event.query()  # never recorded: done
    gate = gates()
    event.record()
    assert not event.query()
    gate.set()
    event.synchronize()
    assert event.query()


def test_elapsed_time_is_host_milliseconds_between_the_events():
    start, end = torch.mlu.Event(enable_timing=True), torch.mlu.Event(enable_timing=True)
    stream = torch.mlu.current_stream()
    start.record()
    cnrt.invokeHostFunc(stream.mlu_stream, lambda _: time.sleep(0.05), None)
    end.record()
    end.synchronize()
    elapsed = start.elapsed_time(end)
    assert 45 <= elapsed < 5000
    plain = torch.mlu.Event()
    plain.record()
    plain.synchronize()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        start.elapsed_time(plain)


def test_hardware_time_is_the_modelled_device_time():
    start, end = torch.mlu.Event(enable_timing=True), torch.mlu.Event(enable_timing=True)
    a = torch.randn(256, 256, device="mlu")
    start.record()
    a @ a
    end.record()
    end.synchronize()
    modelled = start.hardware_time(end)
    assert modelled > 0  # µs of the matmul on the board's cost model


def test_wait_event_orders_streams(gates):
    producer, consumer = torch.mlu.Stream(), torch.mlu.Stream()
    x = torch.zeros(100, device="mlu")
    torch.mlu.synchronize()
    gate = gates(producer)
    with torch.mlu.stream(producer):
        x.fill_(7)
        done = producer.record_event()
    consumer.wait_event(done)
    with torch.mlu.stream(consumer):
        y = x + 1
    assert not done.query() and not consumer.query()
    gate.set()
    consumer.synchronize()
    assert done.query() and y.cpu().tolist() == [8.0] * 100
    later = torch.mlu.Event()
    later.record(consumer)
    later.wait()  # the current (default) stream waits for it
    torch.mlu.current_stream().synchronize()
    assert later.query()


def test_torch_event_on_mlu():
    event = torch.Event(device="mlu", enable_timing=True)
    event.record()
    event.synchronize()
    assert event.query() and event.device == torch.device("mlu", 0)
    other = torch.Event(device="mlu", enable_timing=True)
    other.record(torch.mlu.current_stream())
    other.synchronize()
    assert event.elapsed_time(other) >= 0


def test_an_event_has_the_device_of_its_first_record(two_devices):
    event = torch.mlu.Event()
    assert event.device is None  # torch_mlu's and torch.cuda's: no device before the first record
    with torch.mlu.device(1):
        later = torch.mlu.Stream().record_event()
    torch.mlu.current_stream(0).record_event(event)
    assert event.device == torch.device("mlu:0") and later.device == torch.device("mlu:1")
    event.synchronize()
    assert event.query()
