"""cncl: a Python clone of Cambricon's CNCL collectives over simulated MLUs (mlusim).

Communicators of one clique may live in one process (several devices) or in several processes of one host (shared
memory). Names follow docs/architecture.md: `cnclAllReduce` is `cncl.allReduce` (and `cncl.cnclAllReduce`); output parameters
are returned; a failure raises `CnclError` whose `.code` is the cnclResult_t value. Work is queued on cnrt queues.
"""
from . import collectives, group, management, p2p_calls  # noqa: F401  (register the API functions)
from . import datatypes as _datatypes
from . import errors as _errors
from .clique import CNCL_CLIQUE_ID_BYTES_SIZE, cnclCliqueId, getCliqueId  # noqa: F401
from .comm import cnclComm  # noqa: F401
from .errors import CnclError, api as _api  # noqa: F401
from .management import LIB_VERSION, cnclCommConfig  # noqa: F401

for _module in (_errors, _datatypes):
    for _name in dir(_module):
        if _name.startswith(("CNCL_", "cncl")) and isinstance(getattr(_module, _name), int):
            globals()[_name] = getattr(_module, _name)

_api.export(globals())

cnclComm_t = cnclComm
cnclCliqueId_t = cnclCliqueId
cnclResult_t = cnclDataType_t = cnclReduceOp_t = int
CNCL_MAJOR_VERSION, CNCL_MINOR_VERSION, CNCL_PATCH_VERSION = LIB_VERSION
CNCL_VERSION = CNCL_MAJOR_VERSION * 10000 + CNCL_MINOR_VERSION * 100 + CNCL_PATCH_VERSION
del _module, _name
