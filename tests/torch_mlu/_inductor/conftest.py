"""torch.compile tests: Dynamo's caches start empty in each test (so counts of compiled graphs are the test's own);
compiled code comes from Inductor's and numba's disk caches after the first run."""
import pytest
import torch


@pytest.fixture(autouse=True)
def fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()
