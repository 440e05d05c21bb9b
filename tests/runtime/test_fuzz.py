"""Argument fuzzing: whatever a caller passes, a call succeeds or raises CnrtError; memory is never corrupted."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import cnrt
from mlusim import device as devices

from .helpers import download

integers = st.one_of(st.integers(-2**70, 2**70), st.integers(0, 1 << 44), st.integers(-8, 4096))
junk = st.one_of(integers, st.none(), st.text(max_size=3), st.floats(allow_nan=True), st.booleans(),
                 st.just(np.zeros(4, np.float32)), st.lists(st.integers(0, 9), max_size=3), st.just(object()))


def guarded():
    """A fresh device holding one sentinel block whose contents must survive the fuzzing."""
    devices.configure(memory=4 << 20)
    sentinel = cnrt.malloc(4096)
    cnrt.memset(sentinel, 0x5A, 4096)
    return sentinel


def call(function, *args):
    try:
        function(*args)
    except cnrt.CnrtError as error:
        assert error.code != 0 and cnrt.getErrorName(error.code)
        assert function.c_name in str(error)


def intact(sentinel):
    cnrt.syncDevice()
    assert (download(sentinel, 4096, np.uint8) == 0x5A).all()


@settings(max_examples=60)
@given(dst=junk, src=junk, nbytes=integers, direction=integers)
def test_memcpy_fuzz(dst, src, nbytes, direction):
    sentinel = guarded()
    call(cnrt.memcpy, dst, src, nbytes, direction)
    call(cnrt.memcpyAsync, dst, src, nbytes, None, direction)
    intact(sentinel)


@pytest.mark.mlusim_sanitize(exclude="initcheck")  # it reads bytes that its failed memsets left unwritten
@settings(max_examples=60)
@given(offset=st.integers(-4096, 8192), nbytes=st.integers(-2, 8192), value=st.integers(-300, 300))
def test_pointer_arithmetic_fuzz_near_a_live_block(offset, nbytes, value):
    sentinel = guarded()
    cnrt.malloc(16384)  # a spacer: offsets below reach into it (valid writes), never into the sentinel
    target = cnrt.malloc(1024)
    call(cnrt.memset, target + offset, value, nbytes)
    host = np.zeros(max(nbytes, 0), np.uint8)
    call(cnrt.memcpy, host, target + offset, nbytes, cnrt.cnrtMemcpyDevToHost)
    call(cnrt.free, target + offset)
    intact(sentinel)


@settings(max_examples=60)
@given(handle=junk, other=junk, number=integers)
def test_handles_and_enums_fuzz(handle, other, number):
    sentinel = guarded()
    for function, args in ((cnrt.queueSync, (handle,)), (cnrt.queueQuery, (handle,)),
                           (cnrt.queueDestroy, (handle,)), (cnrt.placeNotifier, (handle, other)),
                           (cnrt.queueWaitNotifier, (handle, other, number)), (cnrt.notifierDestroy, (handle,)),
                           (cnrt.notifierElapsedTime, (handle, other)), (cnrt.setDevice, (handle,)),
                           (cnrt.deviceGetAttribute, (number, handle)), (cnrt.free, (handle,)),
                           (cnrt.malloc, (handle,)), (cnrt.hostMalloc, (number % 4096 if isinstance(number, int)
                                                                         else number,)),
                           (cnrt.freeHost, (handle,)), (cnrt.invokeKernel, (handle, other, number, [], 0, None)),
                           (cnrt.notifierCreateWithFlags, (number,)), (cnrt.pointerGetAttributes, (handle,)),
                           (cnrt.getPeerAccessibility, (number, handle)), (cnrt.memcpyPeer, (handle, 0, other, 0,
                                                                                              16))):
        call(function, *args)
    intact(sentinel)
