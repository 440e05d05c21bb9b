"""What MagicMind's command-line tools share: their argument forms, errors and exit codes.

Dims are given per input either in the C++ tools' form (`--input_dims 1,3,224,224 1,3,24,24`: one token per input)
or the Python sample's (`--input_dims 1 3 224 224 --input_dims 1 3 24 24`: one flag per input); -1 is a mutable
axis and `_` a scalar. Booleans are `true` / `false` (also 1 / 0). A bad flag value, a missing or unreadable file
is a message on stderr naming it and exit status 1 (argparse's own errors: 2).
"""
from __future__ import annotations

import argparse
import sys

from ..enums import DataType
from ..status import MagicMindError

#: the tools' data type names -> DataType
DTYPES = {"FLOAT": DataType.FLOAT32, "FLOAT32": DataType.FLOAT32, "HALF": DataType.FLOAT16,
          "FLOAT16": DataType.FLOAT16, "INT8": DataType.INT8, "INT16": DataType.INT16, "INT32": DataType.INT32,
          "INT64": DataType.INT64, "UINT8": DataType.UINT8, "BOOL": DataType.BOOL, "QINT8": DataType.QINT8,
          "QINT16": DataType.QINT16, "FLOAT64": DataType.FLOAT64, "DOUBLE": DataType.FLOAT64}


class ToolError(Exception):
    """A bad argument or file: printed, exit status 1."""


def boolean(text: str) -> bool:
    value = str(text).strip().lower()
    if value in ("true", "1", "yes", "on"):
        return True
    if value in ("false", "0", "no", "off"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not true or false")


def dims_lists(groups, flag: str) -> list:
    """The per-input dims of a repeatable multi-token flag (see the module's docstring)."""
    if not groups:
        return []
    tokens = [t for group in groups for t in group]
    if any("," in t for t in tokens):
        per_input = tokens
    else:
        per_input = [" ".join(group) for group in groups]
    result = []
    for text in per_input:
        text = text.strip()
        if text in ("_", ""):
            result.append([])
            continue
        try:
            result.append([int(v) for v in text.replace(",", " ").split()])
        except ValueError:
            raise ToolError(f"{flag}: {text!r} is not a list of integers") from None
        if any(d < -1 for d in result[-1]):
            raise ToolError(f"{flag}: {text!r} holds an extent below -1")
    return result


def float_lists(groups, flag: str) -> list:
    """Per-input lists of floats (`--means 1,2,3 4,5,6` or `--means 1 2 3 --means 4 5 6`)."""
    if not groups:
        return []
    tokens = [t for group in groups for t in group]
    per_input = tokens if any("," in t for t in tokens) else [" ".join(group) for group in groups]
    try:
        return [[float(v) for v in text.replace(",", " ").split()] for text in per_input]
    except ValueError:
        raise ToolError(f"{flag}: {per_input} is not lists of numbers") from None


def dtype_list(names, flag: str) -> list:
    result = []
    for name in names or []:
        found = DTYPES.get(str(name).upper())
        if found is None:
            raise ToolError(f"{flag}: {name!r} is not a data type ({', '.join(sorted(DTYPES))})")
        result.append(found)
    return result


def main_wrapper(run, argv, prog: str) -> int:
    """Run a tool's body: ToolError and MagicMindError become a message and exit status 1."""
    try:
        return run(argv)
    except (ToolError, MagicMindError) as error:
        print(f"{prog}: error: {error}", file=sys.stderr)
        return 1
