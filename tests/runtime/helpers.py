"""Small helpers for runtime tests."""
import numpy as np

import cnrt


def upload(array: np.ndarray) -> int:
    """A new device buffer holding `array`."""
    pointer = cnrt.malloc(array.nbytes)
    cnrt.memcpy(pointer, np.ascontiguousarray(array), array.nbytes, cnrt.cnrtMemcpyHostToDev)
    return pointer


def download(pointer: int, shape, dtype) -> np.ndarray:
    """The contents of a device buffer as a new host array."""
    out = np.empty(shape, dtype=dtype)
    cnrt.memcpy(out, pointer, out.nbytes, cnrt.cnrtMemcpyDevToHost)
    return out


def raises_code(code, function, *args):
    """Call function(*args) expecting a CnrtError with `code`; return the error."""
    try:
        function(*args)
    except cnrt.CnrtError as error:
        assert error.code == code, f"expected {cnrt.getErrorName(code)}, got {error}"
        return error
    raise AssertionError(f"{function.__name__} did not raise {cnrt.getErrorName(code)}")
