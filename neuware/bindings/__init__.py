"""Which Python function implements each C function, and how their parameters map (per library).

A C function is implemented by the Python API function registered under its exact name (`cnrt._api.functions`,
the names `@api("cnrtQueueSync")` gives), or by one of the few functions mlusim's C libraries add (`EXTENSIONS`).
The per-library modules hold the annotations the C types do not imply.
"""
from __future__ import annotations

import importlib
from typing import Callable

from .. import failures
from ..cdecl import Function
from ..marshal import Binding, BindingError, bind


def family(library: str) -> failures.Family:
    """The Python API family behind one C library, with its status type and internal-error status."""
    if library == "cnrt":
        import cnrt
        return failures.Family("cnrt", cnrt._api, "cnrtRet_t", cnrt.cnrtErrorUnknown)
    if library == "cnnl":
        import cnnl
        return failures.Family("cnnl", cnnl._api, "cnnlStatus_t", cnnl.CNNL_STATUS_INTERNAL_ERROR)
    if library == "cncl":
        import cncl
        return failures.Family("cncl", cncl._api, "cnclResult_t", cncl.CNCL_RET_ERR_INTERNAL)
    if library == "cndev":
        import cndev
        return failures.Family("cndev", cndev._api, "cndevRet_t", cndev.CNDEV_ERROR_UNKNOWN)
    if library == "cndrv":
        import cndrv
        return failures.Family("cndrv", cndrv._api, "CNresult", cndrv.CN_ERROR_UNKNOWN)
    raise KeyError(library)


def mlusimGetLastErrorMessage() -> str:
    """mlusimGetLastErrorMessage(void): the message of this host thread's last failed C call."""
    return failures.last_message()


#: C functions the C libraries implement themselves: name -> (Python function, library)
EXTENSIONS: dict[str, tuple[Callable, str]] = {
    "mlusimGetLastErrorMessage": (mlusimGetLastErrorMessage, "cnrt"),
}
#: extension functions whose `const char *` result changes from call to call (kept in a ring, not interned)
TRANSIENT_STRINGS = {"mlusimGetLastErrorMessage"}


def annotations_of(library: str):
    return importlib.import_module(f"{__name__}.{library}")


def python_function(library: str, name: str) -> Callable:
    """The Python function that implements C function `name` of `library`."""
    extension = EXTENSIONS.get(name)
    if extension is not None and extension[1] == library:
        return extension[0]
    function = family(library).api.lookup(name)
    if function is None:
        raise BindingError(f"{name} is declared in the {library} headers but no Python function implements it")
    return function


def binding(library: str, function: Function) -> Binding:
    """The checked binding of one C function of `library`."""
    module = annotations_of(library)
    return bind(function, python_function(library, function.name), module.ANNOTATIONS.get(function.name),
                destroys=module.DESTROYS.get(function.name, ()),
                error_string=module.ERROR_STRINGS.get(function.name),
                transient=function.name in TRANSIENT_STRINGS)
