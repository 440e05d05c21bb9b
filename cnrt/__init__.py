"""cnrt: a Python clone of Cambricon's CNRT runtime over the simulated MLU (mlusim).

Names follow the one rule of docs/architecture.md: `cnrtQueueSync` is `cnrt.queueSync` (and `cnrt.cnrtQueueSync`); output
parameters are returned; a failure raises `CnrtError` whose `.code` is the cnrtRet_t value.
"""
from mlusim.notifier import Notifier as cnrtNotifier_t
from mlusim.queue import Queue as cnrtQueue_t

from . import constants as _constants
from . import errors as _errors
from . import conversion, device, kernel, memcpy, memory, notifiers, queues  # noqa: F401  (register the API functions)
from .constants import *  # noqa: F401,F403
from .device import cnrtDeviceProp_t  # noqa: F401
from .errors import CnrtError, api as _api  # noqa: F401
from .kernel import cnrtKernelParamsBuffer_t  # noqa: F401
from .memory import cnrtPointerAttributes_t  # noqa: F401

for _name in dir(_errors):
    if _name.startswith(("cnrtSuccess", "cnrtError", "CNRT_RET_")):
        globals()[_name] = getattr(_errors, _name)

_api.export(globals())

cnrtRet_t = int
del _name
