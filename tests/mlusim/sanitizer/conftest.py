"""Fixtures of the sanitizer tests."""
import pytest

from mlusim import sanitizer


@pytest.fixture
def process_sanitizer():
    """Lets a test switch the process-wide sanitizer; puts back what was on before (MLUSIM_SANITIZE may be set)."""
    current = sanitizer._engine()
    before = (current.process.tools, current.process.raise_first, current.host.mode)
    yield current
    sanitizer.enable(before[0], raise_first=before[1], host=before[2])
