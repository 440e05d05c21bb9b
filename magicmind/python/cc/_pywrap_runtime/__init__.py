"""magicmind.python.cc._pywrap_runtime: the extension's classes (ITensor, INode, IRTTensor, Dims, Status, ...)."""
from ....dims import Dims  # noqa: F401
from ....graph.tensor import INode, ITensor  # noqa: F401
from ....runtime.tensor import IRTTensor  # noqa: F401
from ....status import Code, Status  # noqa: F401
from . import enums  # noqa: F401
from .enums import *  # noqa: F401,F403
