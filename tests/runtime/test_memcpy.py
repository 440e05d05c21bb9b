"""Copies in every direction, peer and 2-D copies, fills, and their argument checks."""
import numpy as np
import pytest

import cnrt

from .helpers import download, raises_code, upload


def test_round_trip_host_device_host():
    data = np.random.default_rng(0).standard_normal((33, 17)).astype(np.float32)
    np.testing.assert_array_equal(download(upload(data), data.shape, data.dtype), data)


def test_device_to_device_and_host_to_host():
    data = np.arange(1000, dtype=np.int64)
    source = upload(data)
    target = cnrt.malloc(data.nbytes)
    cnrt.memcpy(target, source, data.nbytes, cnrt.cnrtMemcpyDevToDev)
    np.testing.assert_array_equal(download(target, 1000, np.int64), data)
    out = np.zeros_like(data)
    cnrt.memcpy(out, data, data.nbytes, cnrt.cnrtMemcpyHostToHost)
    np.testing.assert_array_equal(out, data)


def test_no_direction_infers_from_the_pointers():
    data = np.arange(64, dtype=np.uint8)
    pointer = cnrt.malloc(64)
    cnrt.memcpy(pointer, data, 64, cnrt.cnrtMemcpyNoDirection)
    out = np.zeros(64, dtype=np.uint8)
    cnrt.memcpy(out, pointer, 64, cnrt.cnrtMemcpyNoDirection)
    np.testing.assert_array_equal(out, data)


def test_pointer_arithmetic_addresses_inside_a_block():
    data = np.arange(100, dtype=np.float32)
    pointer = upload(data)
    np.testing.assert_array_equal(download(pointer + 40, 10, np.float32), data[10:20])


def test_bytes_objects_and_memoryviews_are_host_buffers():
    pointer = cnrt.malloc(4)
    cnrt.memcpy(pointer, b"\x01\x02\x03\x04", 4, cnrt.cnrtMemcpyHostToDev)
    out = bytearray(4)
    cnrt.memcpy(memoryview(out), pointer, 4, cnrt.cnrtMemcpyDevToHost)
    assert bytes(out) == b"\x01\x02\x03\x04"


@pytest.mark.parametrize("direction, dst_is_device, src_is_device", [
    (cnrt.cnrtMemcpyHostToDev, False, False), (cnrt.cnrtMemcpyHostToDev, True, True),
    (cnrt.cnrtMemcpyDevToHost, True, True), (cnrt.cnrtMemcpyDevToHost, True, False),
    (cnrt.cnrtMemcpyDevToDev, False, True), (cnrt.cnrtMemcpyHostToHost, True, False),
    (cnrt.cnrtMemcpyPeerToPeer, False, True)])
def test_direction_that_does_not_match_the_pointers_is_rejected(direction, dst_is_device, src_is_device):
    device_buffer = cnrt.malloc(64)
    dst = device_buffer if dst_is_device else np.zeros(64, np.uint8)
    src = device_buffer if src_is_device else np.zeros(64, np.uint8)
    error = raises_code(cnrt.cnrtErrorMemcpyDirectionInvalid, cnrt.memcpy, dst, src, 64, direction)
    assert "'dir'" in str(error)


def test_unknown_direction_value():
    raises_code(cnrt.cnrtErrorMemcpyDirectionInvalid, cnrt.memcpy, np.zeros(4), np.zeros(4), 4, 9)


def test_host_buffer_checks():
    pointer = cnrt.malloc(64)
    readonly = np.zeros(64, np.uint8)
    readonly.flags.writeable = False
    assert "read-only" in str(raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.memcpy, readonly, pointer, 64, 2))
    assert "holds 32" in str(raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.memcpy, pointer, np.zeros(32, np.uint8),
                                         64, 0))
    strided = np.zeros((8, 16), np.uint8)[:, ::2]
    assert "contiguous" in str(raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.memcpy, pointer, strided, 64, 0))
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.memcpy, pointer, "text", 4, 0)
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.memcpy, pointer, np.zeros(64, np.uint8), -1, 0)


def test_async_copies_on_one_queue_run_in_order():
    queue = cnrt.queueCreate()
    data = np.arange(4096, dtype=np.float32)
    pointer = cnrt.malloc(data.nbytes)
    out = np.zeros_like(data)
    cnrt.memcpyAsync(pointer, data, data.nbytes, queue, cnrt.cnrtMemcpyHostToDev)
    cnrt.memcpyAsync(out, pointer, data.nbytes, queue, cnrt.cnrtMemcpyDevToHost)
    cnrt.queueSync(queue)
    np.testing.assert_array_equal(out, data)


def test_peer_copies_between_devices(two_devices):
    data = np.arange(512, dtype=np.int32)
    source = upload(data)
    cnrt.setDevice(1)
    target = cnrt.malloc(data.nbytes)
    other = cnrt.malloc(data.nbytes)
    cnrt.memcpyPeer(target, 1, source, 0, data.nbytes)
    queue = cnrt.queueCreate()
    cnrt.memcpyPeerAsync(other, 1, target, 1, data.nbytes, queue)
    cnrt.queueSync(queue)
    np.testing.assert_array_equal(download(other, 512, np.int32), data)
    cnrt.memcpy(target, source, data.nbytes, cnrt.cnrtMemcpyPeerToPeer)
    assert "different devices" in str(raises_code(cnrt.cnrtErrorMemcpyDirectionInvalid, cnrt.memcpy, target,
                                                  source, 16, cnrt.cnrtMemcpyDevToDev))
    assert "not on device 0" in str(raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.memcpyPeer, target, 0, source,
                                                0, 16))
    raises_code(cnrt.cnrtErrorDeviceInvalid, cnrt.memcpyPeer, target, 5, source, 0, 16)


def test_memcpy2d_copies_pitched_rows():
    host = np.arange(10 * 32, dtype=np.uint8).reshape(10, 32)
    pointer = cnrt.malloc(10 * 64)
    cnrt.memset(pointer, 0, 10 * 64)
    cnrt.memcpy2D(pointer, 64, host, 32, 20, 10, cnrt.cnrtMemcpyHostToDev)
    device_view = download(pointer, (10, 64), np.uint8)
    np.testing.assert_array_equal(device_view[:, :20], host[:, :20])
    assert (device_view[:, 20:] == 0).all()
    back = np.zeros((10, 16), np.uint8)
    cnrt.memcpy2D(back, 16, pointer + 4, 64, 16, 10, cnrt.cnrtMemcpyDevToHost)
    np.testing.assert_array_equal(back, host[:, 4:20])


def test_memcpy2d_checks_pitch_and_extent():
    pointer = cnrt.malloc(256)
    host = np.zeros(1024, np.uint8)
    assert "'dpitch'" in str(raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.memcpy2D, pointer, 8, host, 32, 16, 4, 0))
    error = raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.memcpy2D, pointer, 64, host, 64, 64, 5, 0)
    assert error.kind == "out_of_bounds"


def test_fills_of_every_width():
    pointer = cnrt.malloc(64)
    cnrt.memset(pointer, 0xAB, 64)
    assert (download(pointer, 64, np.uint8) == 0xAB).all()
    cnrt.memsetD16(pointer, 0x1234, 32)
    assert (download(pointer, 32, np.uint16) == 0x1234).all()
    cnrt.memsetD32(pointer, 0xDEADBEEF, 16)
    assert (download(pointer, 16, np.uint32) == 0xDEADBEEF).all()
    queue = cnrt.queueCreate()
    cnrt.memsetD8Async(pointer, 5, 8, queue)
    cnrt.memsetAsync(pointer + 8, -1, 8, queue)
    cnrt.memsetD32Async(pointer + 16, 7, 2, queue)
    cnrt.memsetD16Async(pointer + 24, 9, 1, queue)
    cnrt.queueSync(queue)
    raw = download(pointer, 64, np.uint8)
    assert (raw[:8] == 5).all() and (raw[8:16] == 255).all()
    assert (raw[16:24].view(np.uint32) == 7).all() and raw[24:26].view(np.uint16)[0] == 9


def test_fill_checks():
    pointer = cnrt.malloc(64)
    assert "'value'" in str(raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.memset, pointer, 256, 4))
    assert raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.memsetD32, pointer, 1, 17).kind == "out_of_bounds"
    raises_code(cnrt.cnrtErrorArgsInvalid, cnrt.memset, np.zeros(4), 0, 4)


def test_large_copies_split_over_host_cores_keep_every_byte():
    from mlusim.transfer import PARALLEL_COPY_BYTES
    data = np.random.default_rng(1).integers(0, 256, PARALLEL_COPY_BYTES + 12345, dtype=np.uint8)
    pointer = upload(data)
    other = cnrt.malloc(data.nbytes)
    cnrt.memcpy(other, pointer, data.nbytes, cnrt.cnrtMemcpyDevToDev)
    np.testing.assert_array_equal(download(other, data.size, np.uint8), data)
