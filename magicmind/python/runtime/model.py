"""magicmind.python.runtime.model: the Model class."""
from ...model.model import Model  # noqa: F401

__all__ = ["Model"]
