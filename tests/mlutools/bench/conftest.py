"""The C ABI start-up bench builds against the libraries of the Neuware tree's tests."""
from tests.neuware.conftest import library_dir  # noqa: F401  (the session fixture)
