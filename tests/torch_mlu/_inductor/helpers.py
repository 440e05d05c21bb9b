"""Shared checks of the torch.compile tests."""
import torch

from mlusim import trace


def assert_close(actual, expected, tol=1e-5):
    """A compiled mlu result against the eager CPU one: same dtype and shape, values within `tol` (NaN == NaN)."""
    actual = actual.detach().cpu()
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    torch.testing.assert_close(actual, expected.detach(), atol=tol, rtol=tol, equal_nan=True)


def commands_of(fn, *args):
    """The trace records of the commands one call of `fn(*args)` queued (after a warm-up call)."""
    fn(*args)
    torch.mlu.synchronize()
    with trace.recording() as recorder:
        fn(*args)
        torch.mlu.synchronize()
    return recorder.records


def kernel_records(records):
    """The records of generated kernels (one command per fused kernel)."""
    return [r for r in records if r.kind == "kernel" and r.name.startswith("mlu_")]
