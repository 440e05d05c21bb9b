"""Helpers of the sanitizer tests."""
import numpy as np

import cnrt


def upload(values: np.ndarray, queue=None) -> int:
    """A device copy of `values` (synchronous, or queued on `queue`)."""
    pointer = cnrt.malloc(values.nbytes)
    if queue is None:
        cnrt.memcpy(pointer, values, values.nbytes, cnrt.cnrtMemcpyHostToDev)
    else:
        cnrt.memcpyAsync(pointer, values, values.nbytes, queue, cnrt.cnrtMemcpyHostToDev)
    return pointer


def kinds(found) -> list:
    """(tool, kind) of every error of a scope."""
    return sorted((report.tool, report.kind) for report in found.errors)
