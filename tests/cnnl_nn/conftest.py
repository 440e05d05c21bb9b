"""Every neural-network op test gets a fresh simulated machine with small device memory, and a handle on it."""
from tests.cnnl_fixtures import handle, small_device  # noqa: F401  (fixtures)
