"""The API surface: names, constants, clique ids, communicator management and argument checks (one process)."""
import json
import subprocess
import sys

import numpy as np
import pytest

import cncl
import cnrt
from mlusim import device as devices


def _code(function, *args) -> int:
    with pytest.raises(cncl.CnclError) as error:
        function(*args)
    return error.value.code


def test_names_follow_the_python_rule_and_keep_c_aliases():
    assert cncl.allReduce is cncl.cnclAllReduce and cncl.getCliqueId is cncl.cnclGetCliqueId
    assert (cncl.cnclHalf, cncl.cnclBfloat16, cncl.cnclFloat, cncl.cnclInt64, cncl.cnclUint64) == (
        0x10, 0x11, 0x12, 0x23, 0x33)
    assert (cncl.cnclSum, cncl.cnclProd, cncl.cnclMax, cncl.cnclMin) == (0, 1, 2, 3)
    assert (cncl.CNCL_RET_ERR_ARGUMENTS, cncl.CNCL_RET_ASYNC_ERROR, cncl.CNCL_RET_ERR_INIT) == (0x07, 0x16, 0x51)
    assert cncl.getLibVersion() == (1, 25, 0) and cncl.CNCL_VERSION == 12500
    assert cncl.getErrorStr(cncl.CNCL_RET_ERR_ARGUMENTS).startswith("CNCL_RET_ERR_ARGUMENTS")
    assert "unrecognized" in cncl.getErrorStr(0x1234)


def test_clique_id_round_trips_through_bytes_hex_and_environment(monkeypatch):
    first, second = cncl.getCliqueId(), cncl.getCliqueId()
    assert first != second and len(first.data) == cncl.CNCL_CLIQUE_ID_BYTES_SIZE
    assert cncl.cnclCliqueId.from_bytes(bytes(first)) == first and len(bytes(first)) == 136
    monkeypatch.setenv("CNCL_CLIQUE_ID", first.hex())
    assert cncl.cnclCliqueId.from_env() == first
    tampered = bytearray(bytes(first))
    tampered[20] ^= 1
    assert _code(cncl.initComms, 1, [0], [0], 1, bytes(tampered)) == cncl.CNCL_RET_ERR_ARGUMENTS
    assert _code(cncl.cnclCliqueId.from_bytes, b"short") == cncl.CNCL_RET_ERR_ARGUMENTS


def test_getters(comms):
    assert [cncl.getCommRank(c) for c in comms] == [1, 0]
    assert [cncl.getCommDevice(c) for c in comms] == [0, 1]
    assert cncl.getCommCount(comms[0]) == 2
    assert cncl.getCommAsyncError(comms[0]) == cncl.CNCL_RET_SUCCESS
    cncl.setCommConfig(comms[0], cncl.cnclCommConfig(cncl.CNCL_PRIORITY_HIGH))
    assert _code(cncl.setCommConfig, comms[0], cncl.cnclCommConfig(5)) == cncl.CNCL_RET_ERR_ARGUMENTS


@pytest.mark.parametrize("args, arg_name", [
    ((0, [0], [0], 1), "num_comm"),
    ((2, [0], [0, 1], 2), "dev_list"),
    ((2, [0, 0], [0, 0], 2), "rank_list"),
    ((1, [0], [3], 2), "rank_list[0]"),
    ((1, [7], [0], 1), "dev_list[0]"),
    ((1, [0], [0], 2), "clique_id"),
])
def test_init_comms_checks_its_arguments(args, arg_name):
    with pytest.raises(cncl.CnclError) as error:
        cncl.initComms(*args, None)
    assert error.value.code == cncl.CNCL_RET_ERR_ARGUMENTS and f"'{arg_name}'" in error.value.message


def test_collective_arguments_are_checked_at_the_call(comms):
    comm = comms[1]  # rank 0, device 1
    cnrt.setDevice(1)
    buffer = cnrt.malloc(400)
    cnrt.setDevice(0)
    elsewhere = cnrt.malloc(400)
    other_queue = cnrt.queueCreate()
    cnrt.setDevice(1)
    sum_, flt = cncl.cnclSum, cncl.cnclFloat
    assert _code(cncl.allReduce, buffer, buffer, 100, 0x99, sum_, comm, None) == cncl.CNCL_RET_ERR_ARGUMENTS
    assert _code(cncl.allReduce, buffer, buffer, 100, flt, 9, comm, None) == cncl.CNCL_RET_ERR_ARGUMENTS
    assert _code(cncl.allReduce, buffer, buffer, -1, flt, sum_, comm, None) == cncl.CNCL_RET_ERR_ARGUMENTS
    assert _code(cncl.allReduce, 0, buffer, 100, flt, sum_, comm, None) == cncl.CNCL_RET_ERR_NULL_POINTER
    assert _code(cncl.allReduce, buffer, buffer, 101, flt, sum_, comm, None) == cncl.CNCL_RET_ERR_ARGUMENTS
    assert _code(cncl.allReduce, elsewhere, buffer, 100, flt, sum_, comm, None) == cncl.CNCL_RET_ERR_ARGUMENTS
    assert _code(cncl.allReduce, buffer, buffer, 100, flt, sum_, comm, other_queue) == cncl.CNCL_RET_ERR_ARGUMENTS
    assert _code(cncl.allReduce, buffer, buffer, 100, flt, sum_, "comm", None) == cncl.CNCL_RET_ERR_ARGUMENTS
    assert _code(cncl.allReduce, buffer, buffer + 4, 99, flt, sum_, comm, None) == cncl.CNCL_RET_ERR_ARGUMENTS
    assert _code(cncl.broadcast, buffer, buffer, 100, flt, 2, comm, None) == cncl.CNCL_RET_ERR_ARGUMENTS
    assert _code(cncl.send, buffer, 10, flt, -1, comm, None) == cncl.CNCL_RET_ERR_ARGUMENTS
    assert _code(cncl.alltoAllv, [buffer], [1], [flt], [buffer], [1], [flt], comm, None) == \
        cncl.CNCL_RET_ERR_ARGUMENTS
    assert _code(cncl.groupEnd) == cncl.CNCL_RET_ERR_ARGUMENTS
    # nothing stays pinned by the calls that failed
    for pointer in (buffer, elsewhere):
        cnrt.free(pointer)
    assert cncl.getCommAsyncError(comm) == cncl.CNCL_RET_SUCCESS


def test_destroyed_communicators_are_rejected(comms):
    cncl.freeComm(comms[0])
    assert _code(cncl.getCommRank, comms[0]) == cncl.CNCL_RET_ERR_ARGUMENTS
    assert _code(cncl.destroyComms, comms, 2) == cncl.CNCL_RET_ERR_ARGUMENTS


@pytest.fixture
def one_device():
    devices.configure(memory=64 << 20, device_count=1)
    yield
    devices.configure()


def test_single_rank_clique_copies(one_device):
    comm, = cncl.initComms(1, [0], [0], 1, None)
    data = np.arange(10, dtype=np.float32)
    send, recv = cnrt.malloc(40), cnrt.malloc(40)
    cnrt.memcpy(send, data, 40, cnrt.cnrtMemcpyHostToDev)
    cncl.allReduce(send, recv, 10, cncl.cnclFloat, cncl.cnclSum, comm, None)
    out = np.empty(10, np.float32)
    cnrt.memcpy(out, recv, 40, cnrt.cnrtMemcpyDevToHost)
    np.testing.assert_array_equal(out, data)
    cncl.freeComm(comm)


def test_import_loads_no_numba_until_a_communicator_needs_it():
    """A C program's first cncl call starts Python and imports cncl: numba (the message and zero-copy code) loads
    when the first communicator is made, not before."""
    script = """import json, sys
import numpy as np
import cncl, cnrt
facts = {'version': list(cncl.getLibVersion()), 'numba_at_import': 'numba' in sys.modules}
comm, = cncl.initComms(1, [0], [0], 1, None)
queue = cnrt.queueCreate()
data = np.arange(4, dtype=np.float32)
ptr = cnrt.malloc(data.nbytes)
cnrt.memcpy(ptr, data, data.nbytes, cnrt.cnrtMemcpyHostToDev)
cncl.allReduce(ptr, ptr, 4, cncl.cnclFloat32, cncl.cnclSum, comm, queue)
cnrt.queueSync(queue)
out = np.empty_like(data)
cnrt.memcpy(out, ptr, data.nbytes, cnrt.cnrtMemcpyDevToHost)
facts.update(result=out.tolist(), numba_after_comm='numba' in sys.modules)
cncl.destroyComms([comm], 1)
print(json.dumps(facts))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr
    facts = json.loads(result.stdout.splitlines()[-1])
    assert facts == {"version": list(cncl.LIB_VERSION), "numba_at_import": False, "result": [0.0, 1.0, 2.0, 3.0],
                     "numba_after_comm": True}
