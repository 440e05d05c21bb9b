"""python -m torch_mlu.conformance: the same as `mlusim conformance torch`."""
import sys

from .cli import entry

sys.exit(entry())
