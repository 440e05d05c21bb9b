"""magicmind.python.runtime.parser: Parser(ModelKind)."""
from ....parsers.parser import Parser  # noqa: F401

__all__ = ["Parser"]
