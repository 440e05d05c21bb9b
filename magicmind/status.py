"""MagicMind's status codes: `Code`, `Status` (what most calls return) and `MagicMindError` (what calls that return
an object raise instead).

MagicMind's `error::Code` has the names of the absl/TensorFlow canonical codes (OK, INVALID_ARGUMENT, OUT_OF_RANGE,
INTERNAL, UNAVAILABLE are the ones samples use); their numeric values are not published, so the canonical values are
used (OK = 0 ... UNAUTHENTICATED = 16).
"""
from __future__ import annotations

import enum


class Code(enum.IntEnum):
    """magicmind::error::Code (Python `mm.Code`)."""

    OK = 0
    CANCELLED = 1
    UNKNOWN = 2
    INVALID_ARGUMENT = 3
    DEADLINE_EXCEEDED = 4
    NOT_FOUND = 5
    ALREADY_EXISTS = 6
    PERMISSION_DENIED = 7
    RESOURCE_EXHAUSTED = 8
    FAILED_PRECONDITION = 9
    ABORTED = 10
    OUT_OF_RANGE = 11
    UNIMPLEMENTED = 12
    INTERNAL = 13
    UNAVAILABLE = 14
    DATA_LOSS = 15
    UNAUTHENTICATED = 16


class Status:
    """magicmind::Status: a code and a message. `Status()` and `Status.OK()` are OK; `.ok()` tells."""

    __slots__ = ("_code", "_message")

    def __init__(self, code: Code = Code.OK, message: str = ""):
        try:
            self._code = Code(int(code))
        except (TypeError, ValueError):
            raise MagicMindError(Code.INVALID_ARGUMENT, f"Status: code {code!r} is not an error::Code") from None
        if not isinstance(message, str):
            raise MagicMindError(Code.INVALID_ARGUMENT, f"Status: message must be a str, not {type(message).__name__}")
        self._message = message

    @staticmethod
    def OK() -> "Status":  # noqa: N802  (MagicMind's name)
        """Status::OK()."""
        return Status()

    def ok(self) -> bool:
        """Status::ok()."""
        return self._code == Code.OK

    def code(self) -> Code:
        """Status::code()."""
        return self._code

    def error_message(self) -> str:
        """Status::error_message()."""
        return self._message

    def __eq__(self, other) -> bool:
        return isinstance(other, Status) and other._code == self._code and other._message == self._message

    def __hash__(self) -> int:
        return hash((self._code, self._message))

    def __bool__(self) -> bool:
        return self.ok()

    def __str__(self) -> str:
        return "OK" if self.ok() else f"{self._code.name}: {self._message}"

    def __repr__(self) -> str:
        return f"Status({self._code.name}, {self._message!r})"


class MagicMindError(Exception):
    """A failed MagicMind call that returns an object rather than a Status: `.code` and `.status` tell why."""

    def __init__(self, code: Code, message: str):
        super().__init__(f"{Code(code).name}: {message}")
        self.code = Code(code)
        self.message = message

    @property
    def status(self) -> Status:
        return Status(self.code, self.message)


def invalid(message: str) -> MagicMindError:
    """An INVALID_ARGUMENT error."""
    return MagicMindError(Code.INVALID_ARGUMENT, message)
