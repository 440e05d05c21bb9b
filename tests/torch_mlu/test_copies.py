"""Copies cpu <-> mlu <-> mlu through cnrt: every dtype, strides and offsets, broadcasting and dtype conversion in
copy_, non_blocking with pinned memory (and staging of pageable memory), UntypedStorage on mlu."""
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cnrt
import torch_mlu

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.int16, torch.int32,
          torch.int64, torch.uint8, torch.bool, torch.complex64]


def _sample(shape, dtype, seed=0):
    generator = torch.Generator().manual_seed(seed)
    values = torch.randn(shape, generator=generator) * 100
    if dtype == torch.complex64:
        return torch.complex(values, -values)
    return values.to(dtype)


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(DTYPES), st.lists(st.integers(0, 5), max_size=4))
def test_round_trip_is_exact_for_every_dtype_and_shape(dtype, shape):
    cpu = _sample(shape, dtype)
    on_device = cpu.to("mlu")
    assert on_device.device.type == "mlu" and on_device.dtype == dtype and on_device.shape == cpu.shape
    assert torch.equal(on_device.cpu(), cpu)


def test_strided_and_offset_tensors_in_both_directions():
    cpu = torch.arange(60, dtype=torch.float32).reshape(3, 4, 5)
    view = cpu.permute(2, 0, 1)[1:, :, ::2]  # non-contiguous, with an offset
    assert torch.equal(view.to("mlu").cpu(), view)
    device = cpu.to("mlu")
    device_view = device.permute(2, 0, 1)[1:, :, ::2]
    assert not device_view.is_contiguous()
    assert torch.equal(device_view.cpu(), view)
    # into a strided cpu destination and a strided device destination
    target = torch.zeros(5, 3, 4).permute(1, 2, 0)
    target.copy_(device)
    assert torch.equal(target, cpu)
    device_target = torch.zeros(5, 3, 4, device="mlu").permute(1, 2, 0)
    device_target.copy_(cpu)
    assert torch.equal(device_target.cpu(), cpu)


def test_copy_broadcasts_and_converts_dtypes():
    dst = torch.zeros(2, 3, device="mlu")
    dst.copy_(torch.tensor([1, 2, 3], dtype=torch.int64))
    assert dst.cpu().tolist() == [[1, 2, 3], [1, 2, 3]]
    dst.copy_(torch.tensor(7.5))
    assert dst.cpu().tolist() == [[7.5] * 3] * 2
    half = torch.empty(3, dtype=torch.float16, device="mlu")
    src = torch.tensor([1 / 3, 70000.0, -2.5e-8], device="mlu")  # rounds, overflows, underflows on the device
    half.copy_(src)
    assert torch.equal(half.cpu(), src.cpu().to(torch.float16))
    as_int = torch.empty(3, dtype=torch.int32, device="mlu")
    as_int.copy_(torch.tensor([1.9, -1.9, 0.5], device="mlu"))
    assert as_int.cpu().tolist() == [1, -1, 0]
    flags = torch.tensor([0.0, 2.0, -0.0, float("nan")], device="mlu").to(torch.bool)
    assert flags.cpu().tolist() == [False, True, False, True]
    back = torch.zeros(2, 3, dtype=torch.float64)
    back.copy_(torch.ones(3, dtype=torch.float16, device="mlu"))
    assert back.tolist() == [[1.0] * 3] * 2


@pytest.mark.parametrize("target", [torch.float16, torch.bfloat16, torch.int32, torch.float64, torch.bool])
def test_repeated_conversions_keep_checking_per_call(target):
    """The second conversion with the same layouts skips cnnl's descriptor checks (cnnl remembers them), not the
    per-call ones: values stay the CPU's (dense, transposed and offset sources, a strided destination; NaN, inf,
    -0.0, half overflow)."""
    source = _sample((64, 48), torch.float32, seed=3)
    if target.is_floating_point:  # (NaN and inf to an integer are undefined in C: torch's CPU gives INT_MIN)
        source[0, :4] = torch.tensor([float("nan"), float("inf"), -0.0, 70000.0])
    device = source.to("mlu")
    for _ in range(3):  # the first call validates, the later ones take the fast path
        torch.testing.assert_close(device.to(target).cpu(), source.to(target), equal_nan=True, rtol=0, atol=0)
        torch.testing.assert_close(device.t().to(target).cpu(), source.t().to(target), equal_nan=True, rtol=0,
                                   atol=0)
        torch.testing.assert_close(device[5:, 3:].to(target).cpu(), source[5:, 3:].to(target), equal_nan=True,
                                   rtol=0, atol=0)
        strided = torch.zeros(48, 64, dtype=target, device="mlu").t()
        strided.copy_(device)
        torch.testing.assert_close(strided.cpu(), source.to(target), equal_nan=True, rtol=0, atol=0)
    torch.mlu.synchronize()


def test_device_to_device_copies_queue_and_never_wait(gates):
    src = torch.arange(8, dtype=torch.float32, device="mlu")
    gate = gates()
    strided = torch.empty(4, 4, device="mlu")[:, 1]  # a strided destination (cnnlCopy)
    dense = torch.empty(8, device="mlu")
    converted = torch.empty(8, dtype=torch.float16, device="mlu")
    dense.copy_(src)            # cnrtMemcpyAsync
    strided.copy_(src[::2])     # cnnlCopy
    converted.copy_(src)        # cnnlCastDataType
    marker = cnrt.notifierCreate()
    cnrt.placeNotifier(marker, torch.mlu.current_stream().mlu_stream)
    assert cnrt.queryNotifier(marker) == cnrt.cnrtErrorNotReady  # nothing waited for the device
    gate.set()
    assert dense.cpu().tolist() == list(range(8))
    assert strided.cpu().tolist() == [0, 2, 4, 6]
    assert converted.cpu().tolist() == list(range(8))


def test_pinned_memory_non_blocking_copies_stay_queued(gates):
    host = torch.arange(1000, dtype=torch.float32).pin_memory()
    gate = gates()
    assert host.is_pinned() and not torch.ones(3).is_pinned()
    assert host[10:].is_pinned()
    device = host.to("mlu", non_blocking=True)  # returns while the queue is held
    back = torch.empty(1000, dtype=torch.float32, pin_memory=True)
    back.copy_(device, non_blocking=True)
    marker = cnrt.notifierCreate()
    cnrt.placeNotifier(marker, torch.mlu.current_stream().mlu_stream)
    assert cnrt.queryNotifier(marker) == cnrt.cnrtErrorNotReady
    gate.set()
    torch.mlu.synchronize()
    assert torch.equal(back, host)


def test_pageable_non_blocking_copy_takes_the_bytes_at_the_call(gates):
    host = torch.ones(1000)
    gate = gates()
    device = host.to("mlu", non_blocking=True)  # the queue is held: the bytes must be staged now
    host.fill_(5)
    gate.set()
    assert device.cpu().tolist() == [1.0] * 1000


def test_pinned_buffers_are_cnrt_host_memory():
    host = torch.empty(64, dtype=torch.uint8).pin_memory()
    assert torch_mlu._state.C.is_pinned_ptr(host.data_ptr())
    address = host.data_ptr()
    del host
    assert not torch_mlu._state.C.is_pinned_ptr(address)


def test_writing_into_an_expanded_tensor_is_refused():
    target = torch.zeros(1, device="mlu").expand(4)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        target.copy_(torch.arange(4.0))


def test_empty_and_scalar_tensors():
    assert torch.empty(0, 3).to("mlu").cpu().shape == (0, 3)
    scalar = torch.tensor(3.25).to("mlu")
    assert scalar.dim() == 0 and scalar.item() == 3.25
    assert torch.tensor(True, device="mlu").item() is True


@pytest.mark.filterwarnings("ignore:TypedStorage is deprecated")
def test_untyped_storage_on_mlu():
    storage = torch.UntypedStorage(16, device="mlu")
    assert storage.device.type == "mlu" and storage.nbytes() == 16
    assert cnrt.pointerGetAttributes(storage.data_ptr()).type == cnrt.cnrtMemTypeDevice
    t = torch.arange(4, dtype=torch.int32, device="mlu")
    shared = t.untyped_storage()
    assert shared.data_ptr() == t.data_ptr() and shared.nbytes() == 16
    on_host = shared.cpu()
    assert on_host.device.type == "cpu" and bytes(on_host) == bytes(torch.arange(4, dtype=torch.int32).numpy())
    moved = torch.UntypedStorage(torch.arange(3, dtype=torch.uint8).numpy().tobytes()).mlu()
    assert moved.device.type == "mlu" and list(moved.cpu()) == [0, 1, 2]
    typed = torch.tensor([1.0, 2.0]).mlu().storage()
    assert typed.device.type == "mlu" and typed.tolist() == [1.0, 2.0]


def test_copies_leave_host_tensors_resizable():
    host = torch.ones(3)
    host.to("mlu")
    host.resize_(10)  # a copy must not pin the host tensor's storage to its size
    back = torch.ones(2, device="mlu").cpu()
    back.resize_(5)
    loss = torch.nn.functional.mse_loss(torch.ones(3, device="mlu"), torch.zeros(3, device="mlu"))
    assert loss.item() == 1.0  # the CPU fallback resizes its out= tensor on the host


def test_item_and_complex_views_stay_native():
    with torch_mlu.fallback.mode("error"):
        assert torch.tensor(2.5, device="mlu").item() == 2.5  # .item() is a copy, not a fallback
        assert torch.tensor([7], dtype=torch.int64, device="mlu").item() == 7
        z = torch.tensor([1 + 2j, 3 - 4j], device="mlu")
        real = torch.view_as_real(z)
        assert real.data_ptr() == z.data_ptr() and real.shape == (2, 2)
        assert torch.view_as_complex(real).data_ptr() == z.data_ptr()
    assert real.cpu().tolist() == [[1.0, 2.0], [3.0, -4.0]]


INTEGERS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(source=st.sampled_from(INTEGERS), target=st.sampled_from(INTEGERS + [torch.bool]),
       values=st.lists(st.integers(-(1 << 63), (1 << 63) - 1), min_size=1, max_size=12), transpose=st.booleans())
def test_integer_conversions_keep_the_low_bits_as_torch(source, target, values, transpose):
    info = torch.iinfo(source)
    data = torch.tensor([min(max(v, info.min), info.max) for v in values] * 2, dtype=source).reshape(2, -1)
    data = data.t() if transpose else data
    assert torch.equal(data.mlu().to(target).cpu(), data.to(target))  # -1 -> uint8 is 255, 300 -> int8 is 44


@pytest.mark.parametrize("source", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
@pytest.mark.parametrize("target", [torch.uint8, torch.int8, torch.int16])
def test_floats_to_small_integers_go_through_int32_as_torchs_cpu(source, target):
    data = torch.tensor([-1.0, -0.0, 0.5, 1.9, 255.9, 300.7, -129.5, 1000.0, -1000.0, float("nan")], dtype=source)
    assert torch.equal(data.mlu().to(target).cpu(), data.to(target))
    assert torch.equal(torch.tensor(-1.0, dtype=source).mlu().to(target).cpu(), torch.tensor(-1.0).to(target))


def test_typed_storage_casts():
    storage = torch.mlu.IntStorage([-1, 0, 1, 2, 3, 4])
    assert storage.byte().tolist() == [255, 0, 1, 2, 3, 4] and storage.char().tolist() == [-1, 0, 1, 2, 3, 4]
