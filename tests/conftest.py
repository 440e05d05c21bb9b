"""Settings shared by the whole suite."""
import pytest
from hypothesis import HealthCheck, settings

# numba compiles on first use: a deadline would flag the first example of every new signature.
settings.register_profile("mlusim", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True)
settings.load_profile("mlusim")


#: fixtures whose tests run their work in child processes (tests/neuware's C programs)
_CHILD_PROCESS_FIXTURES = frozenset({"programs"})


def pytest_collection_modifyitems(items):
    for item in items:
        if _CHILD_PROCESS_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.child_processes)
