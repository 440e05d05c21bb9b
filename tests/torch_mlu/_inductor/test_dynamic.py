"""Dynamic shapes: dynamic=True compiles once for every batch size; by default (automatic dynamic) the second size
recompiles once as dynamic and later sizes reuse it."""
import pytest
import torch
import torch.nn.functional as F
from torch._dynamo.utils import counters

from .helpers import assert_close


def net(x, w):
    return F.layer_norm(F.gelu(x @ w) + x.sum(-1, keepdim=True), (w.shape[1],)).softmax(-1)


@pytest.mark.parametrize("dynamic, graphs", [(True, 1), (None, 2)])
def test_batch_sizes_do_not_recompile_each_size(dynamic, graphs):
    counters.clear()
    w = torch.randn(6, 10)
    compiled = torch.compile(net, dynamic=dynamic)
    for batch in (3, 5, 9, 4, 17):
        x = torch.randn(batch, 6)
        assert_close(compiled(x.to("mlu"), w.to("mlu")), net(x, w))
    assert counters["stats"]["unique_graphs"] == graphs
