"""cnnl.launch: how an op's queued work runs (floating-point errors off while it runs, and only then)."""
import warnings

import numpy as np
import pytest

import cnnl
from mlusim import device as devices

from .helpers import empty, sync, tensor


@pytest.mark.parametrize("blocking", [False, True])
def test_an_overflowing_op_gives_inf_whatever_the_callers_error_state_and_leaves_it_as_it_was(blocking):
    """IEEE results (inf, NaN) are results, as on the device: an op never raises or warns for them, even when the
    thread that runs it (the caller itself in blocking mode, or at its sync) raises on floating-point errors; the
    thread's own setting is back once the op ran."""
    devices.configure(memory=64 << 20, blocking=blocking)
    handle = cnnl.create()
    big = np.full(4, 3e38, np.float32)
    a, b, c = tensor(big), tensor(big), empty([4])
    op = cnnl.createOpTensorDescriptor()
    cnnl.setOpTensorDescriptor(op, cnnl.CNNL_OP_TENSOR_ADD, cnnl.CNNL_DTYPE_FLOAT, cnnl.CNNL_NOT_PROPAGATE_NAN)
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        cnnl.opTensor(handle, op, 1, a.desc, a.ptr, 1, b.desc, b.ptr, None, 0, 0, c.desc, c.ptr)
        sync(handle)
        assert np.geterr() == {"divide": "raise", "over": "raise", "under": "raise", "invalid": "raise"}
        with pytest.raises(FloatingPointError):
            np.float32(3e38) * np.float32(10)
    assert np.isposinf(c.read()).all()
