"""Every test of the part-3 CNNL ops gets a fresh simulated machine with small device memory, and a handle on it."""
from tests.cnnl_fixtures import handle, small_device  # noqa: F401  (fixtures)
