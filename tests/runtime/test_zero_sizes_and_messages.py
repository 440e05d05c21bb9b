"""Size 0 as real programs use it (NULL workspaces, empty copies), and errors a person can act on: C-style calls with
an explicit count, a float passed where a pointer goes."""
import numpy as np
import pytest

import cncl
import cnnl
import cnrt

from .helpers import download, raises_code, upload


def test_zero_byte_copies_and_fills_are_no_ops_even_with_null_pointers():
    queue = cnrt.queueCreate()
    host = np.zeros(4, np.uint8)
    pointer = upload(np.full(16, 5, np.uint8))
    workspace = cnrt.malloc(0)  # cnrtMalloc(&ws, ws_size) with a 0 workspace, unchecked, as real programs do
    assert workspace == 0
    cnrt.memcpy(workspace, host, 0, cnrt.cnrtMemcpyHostToDev)
    cnrt.memcpy(host, 0, 0, cnrt.cnrtMemcpyDevToHost)
    cnrt.memcpyAsync(0, 0, 0, queue, cnrt.cnrtMemcpyDevToDev)
    cnrt.memcpyPeer(0, 0, pointer, 0, 0)
    cnrt.memset(0, 7, 0)
    cnrt.memsetAsync(pointer, 7, 0, queue)
    cnrt.memsetD32(0, 7, 0)
    cnrt.queueSync(queue)
    assert (download(pointer, 16, np.uint8) == 5).all()
    cnrt.free(workspace)
    # size 0 does not excuse a bad direction or queue
    raises_code(cnrt.cnrtErrorMemcpyDirectionInvalid, cnrt.memcpy, 0, 0, 0, 9)
    raises_code(cnrt.cnrtErrorInvalidResourceHandle, cnrt.memsetAsync, 0, 7, 0, "not a queue")


@pytest.mark.parametrize("call", [
    lambda: cnrt.memcpy(1.5, np.zeros(4, np.uint8), 4, cnrt.cnrtMemcpyHostToDev),
    lambda: cnrt.memcpyAsync(np.zeros(4, np.uint8), 2.0, 4, None, cnrt.cnrtMemcpyDevToHost),
    lambda: cnrt.memset(3.0, 0, 4),
    lambda: cnrt.free(4.5),
])
def test_a_float_passed_as_a_pointer_is_called_what_it_is(call):
    with pytest.raises(cnrt.CnrtError) as error:
        call()
    assert error.value.code == cnrt.cnrtErrorArgsInvalid
    text = str(error.value)
    assert "float" in text and "neither a device address nor a host buffer" in text, text


def test_a_c_style_count_before_an_array_is_explained():
    desc = cnnl.createTensorDescriptor()
    with pytest.raises(cnnl.CnnlError) as error:
        cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY, cnnl.CNNL_DTYPE_FLOAT, 2, [3, 4])
    assert error.value.code == cnnl.CNNL_STATUS_BAD_PARAM
    text = str(error.value)
    assert "cnnlSetTensorDescriptor" in text and "one sequence" in text and "drop the count 2" in text, text
    with pytest.raises(cnnl.CnnlError) as error:
        cnnl.setTensorDescriptor(desc, cnnl.CNNL_LAYOUT_ARRAY)
    assert "missing a required argument: 'dtype'" in str(error.value)
    with pytest.raises(cnrt.CnrtError) as error:
        cnrt.malloc(16, 32)
    assert error.value.code == cnrt.cnrtErrorArgsInvalid and "cnrtMalloc takes (bytes)" in str(error.value)
    with pytest.raises(cncl.CnclError) as error:
        cncl.getCommCount()
    assert error.value.code == cncl.CNCL_RET_ERR_ARGUMENTS


def test_a_type_error_from_inside_a_call_is_not_mistaken_for_a_wrong_call():
    with pytest.raises(cnrt.CnrtError) as error:
        cnrt.invokeHostFunc(None, 42, None)
    assert "expected a callable" in str(error.value)
