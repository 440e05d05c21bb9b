"""A stale device pointer from C (programs/stale_pointers.c): after malloc/free/malloc of the same size, every cnrt
call that takes a device pointer, cnnl ops and every cncl call that takes a buffer fail with their argument status
and a use-after-free message naming the free."""
from .conftest import clean_environment


def test_stale_pointers_from_c(programs):
    result = programs.run("stale_pointers.c", env=clean_environment(MLUSIM_DEVICE_COUNT="2"))
    assert "0 failure(s)" in result.stdout, result.stdout
