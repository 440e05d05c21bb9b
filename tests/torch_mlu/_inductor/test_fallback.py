"""What the numba code generator cannot compile runs as the eager mlu op, per node, with a message under
TORCH_LOGS="inductor" (the torch._inductor.mlu logger); the rest of the graph is still fused."""
import logging

import torch
from torch._inductor.codegen.common import pointwise_overrides_data
from torch._inductor.ops_handler import OpsHandler

from torch_mlu._inductor import debug, fallback
from torch_mlu._inductor.overrides import UNSUPPORTED, NumbaOverrides

from .helpers import assert_close


def test_an_unsupported_op_runs_eagerly_and_the_rest_is_fused(caplog):
    def fn(x):
        return torch.special.bessel_j0(x * 2) + torch.tanh(x)
    x = torch.linspace(-4, 4, 50)
    logger = logging.getLogger("torch._inductor.mlu")  # torch's loggers do not propagate to the root's handler
    logger.addHandler(caplog.handler)
    fallback.fell_back.clear()
    try:
        # Inductor's caches off: the post-grad pass (where the fallback is decided) runs on a cache miss only
        with caplog.at_level(logging.INFO, logger="torch._inductor.mlu"), debug.recording() as record, \
                torch._inductor.config.patch(force_disable_caches=True):
            out = torch.compile(fn)(x.to("mlu"))
    finally:
        logger.removeHandler(caplog.handler)
    assert_close(out, fn(x), 1e-5)
    assert "aten.special_bessel_j0.default" in fallback.fell_back
    assert any("special_bessel_j0" in message and "eager mlu op" in message for message in caplog.messages)
    sources = record.source()
    assert "tanh" in sources and "bessel" not in sources.split("'''")[0]
    assert len(record.launched) >= 1


def test_every_inductor_op_is_generated_or_falls_back():
    # a pointwise op of Inductor's set is either written by NumbaOverrides or listed for the eager fallback
    unsupported = set(fallback.unsupported_ops().values())
    for name in pointwise_overrides_data:
        if name in UNSUPPORTED:
            assert name in unsupported, name
    handled_elsewhere = {"load", "store", "store_reduction", "reduction", "scan", "sort", "bucketize",
                         "indirect_indexing", "check_bounds", "output", "placeholder", "partial_accumulate",
                         "halide_clamp", "dot", "inline_asm_elementwise", "rand_eager", "load_seed"}
    for name in dir(OpsHandler):
        if name.startswith("_") or name in handled_elsewhere or name in UNSUPPORTED:
            continue
        assert name in NumbaOverrides.__dict__ or hasattr(NumbaOverrides, name), name
