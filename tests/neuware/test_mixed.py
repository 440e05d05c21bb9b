"""C and Python on the same simulator: a C++ program that runs Python itself (programs/mixed.cpp: memory, queues,
kernels and cnnl handles cross between the two APIs), and the libraries loaded into this Python process with
ctypes, where they use this interpreter and its devices."""
import ctypes

import numpy as np
import pytest

import cnrt
import neuware as capi

from .conftest import REPOSITORY, python_embedding_flags


def test_cpp_program_mixes_c_and_python_calls(programs):
    result = programs.run("mixed.cpp", str(REPOSITORY), extra_flags=python_embedding_flags(), timeout=240)
    assert "0 failure(s)" in result.stdout


@pytest.fixture(scope="module")
def libcnrt(library_dir):
    lib = ctypes.CDLL(str(library_dir / "libcnrt.so"))
    lib.cnrtMalloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t]
    lib.cnrtMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    lib.cnrtQueueSync.argtypes = [ctypes.c_void_p]
    lib.cnrtFree.argtypes = [ctypes.c_void_p]
    lib.cnrtQueueCreate.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    lib.cnrtGetErrorStr.restype = ctypes.c_char_p
    lib.mlusimGetLastErrorMessage.restype = ctypes.c_char_p
    return lib


def test_ctypes_shares_this_interpreter_and_its_devices(libcnrt):
    pointer = ctypes.c_void_p()
    assert libcnrt.cnrtMalloc(ctypes.byref(pointer), 64) == 0
    assert cnrt.pointerGetAttributes(pointer.value).type == cnrt.cnrtMemTypeDevice  # Python sees C's block
    cnrt.memcpy(pointer.value, np.arange(16, dtype=np.float32), 64, cnrt.cnrtMemcpyHostToDev)
    out = (ctypes.c_float * 16)()
    assert libcnrt.cnrtMemcpy(out, pointer, 64, cnrt.cnrtMemcpyDevToHost) == 0
    assert list(out) == list(range(16))

    queue = cnrt.queueCreate()  # a Python queue, synced from C
    assert libcnrt.cnrtQueueSync(capi.to_c(queue)) == 0
    c_queue = ctypes.c_void_p()
    assert libcnrt.cnrtQueueCreate(ctypes.byref(c_queue)) == 0  # a C queue, used from Python
    cnrt.memsetAsync(pointer.value, 0, 64, capi.from_c(c_queue.value))
    cnrt.queueSync(capi.from_c(c_queue.value))
    assert libcnrt.cnrtMemcpy(out, pointer, 64, cnrt.cnrtMemcpyDevToHost) == 0
    assert list(out) == [0.0] * 16

    assert libcnrt.cnrtFree(pointer) == 0
    assert libcnrt.cnrtFree(pointer) == cnrt.cnrtErrorArgsInvalid
    assert b"double free" in libcnrt.mlusimGetLastErrorMessage()
    assert b"double free" in libcnrt.cnrtGetErrorStr(cnrt.cnrtErrorArgsInvalid)
    with pytest.raises(cnrt.CnrtError):  # the memory is gone for Python too
        cnrt.memcpy(np.empty(4, np.uint8), pointer.value, 4, cnrt.cnrtMemcpyDevToHost)
    cnrt.queueDestroy(queue)
