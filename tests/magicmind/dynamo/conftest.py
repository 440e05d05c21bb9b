"""The backend's tests run on torch_mlu: each gets torch_mlu's fresh simulated machine (its caching allocator,
streams and cnnl handles start empty, so the sanitizer's leakcheck sees only what the test itself leaves)."""
from tests.torch_mlu.conftest import fresh_machine  # noqa: F401  (the fixture, shared)
