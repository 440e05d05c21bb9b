"""Reductions, norms and normalizations of rows holding NaN, +-inf, huge values whose float32 sums overflow, and
values whose squares underflow, in float32, half and bfloat16: mlu gives what torch's CPU kernels give (the device
accumulates in float32 too): inf where float32 accumulation overflows, 0 where squares underflow, NaN where torch's
running means meet inf - inf."""
import pytest
import torch
import torch.nn.functional as F
from hypothesis import assume, given, settings, strategies as st

from torch_mlu import fallback

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
#: (a huge value: two of them overflow a float32 sum, a value whose square underflows float32)
EXTREMES = {torch.float32: (3e38, 1e-23), torch.bfloat16: (3e38, 1e-23), torch.float16: (60000.0, 6e-8)}


def _ops(length):
    return {
        "sum": lambda t: t.sum(2), "mean": lambda t: t.mean(2), "mean all": lambda t: t.mean(),
        "amax": lambda t: t.amax(2), "norm1": lambda t: torch.linalg.vector_norm(t, 1, 2),
        "norm2": lambda t: torch.linalg.vector_norm(t, 2, 2), "var_mean": lambda t: torch.var_mean(t, 2),
        "std_mean": lambda t: torch.std_mean(t, (0, 2), correction=0),
        "batch_norm": lambda t: F.batch_norm(t, None, None, training=True),
        "layer_norm": lambda t: F.layer_norm(t, [length]), "group_norm": lambda t: F.group_norm(t, 3),
        "rms_norm": lambda t: F.rms_norm(t, [length]), "softmax": lambda t: torch.softmax(t, 2),
        "log_softmax": lambda t: torch.log_softmax(t, 2), "logsumexp": lambda t: torch.logsumexp(t, 2),
        "cumsum": lambda t: t.cumsum(2), "prod": lambda t: t.prod(2), "amin": lambda t: t.amin(2),
    }


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(DTYPES), st.sampled_from([6, 40, 300]), st.sampled_from(sorted(_ops(1))),
       st.sampled_from(["specials", "huge", "tiny", "infinite row"]), st.integers(0, 2**31 - 1))
def test_rows_of_specials_and_extremes_match_torch_cpu(dtype, length, op, kind, seed):
    # squares that overflow float32 in layer and group norm: torch's running variance gives NaN or 0 by the length
    assume(not (kind == "huge" and op in ("layer_norm", "group_norm") and dtype != torch.float16))
    assume(not (kind == "huge" and op == "prod"))  # whether a product through 3e38 overflows depends on its order
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(4, 3, length, generator=generator)
    if op == "prod":  # factors of ±1: every partial product is exact, so no order of the product rounds, underflows
        x = torch.sign(x)  # (0 * inf = NaN) or overflows differently: only the specials decide the result
    huge, tiny = EXTREMES[dtype]
    if kind == "specials":
        x[0, 1, 2], x[1, 0, 1], x[2, 2, 0] = float("nan"), float("inf"), -float("inf")
    elif kind == "huge":
        x[:, 0, 1] = huge
    elif kind == "tiny":
        x = x * tiny
    else:
        x[1, 1, :] = float("inf")
    x = x.to(dtype)
    function = _ops(length)[op]
    want = function(x)
    with fallback.mode("error"):
        got = function(x.to("mlu"))
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    tolerance = dict(rtol=1e-4, atol=1e-5) if dtype == torch.float32 else dict(rtol=3e-2, atol=1e-3)
    for mine, theirs in zip(got, want):
        torch.testing.assert_close(mine.cpu().float(), theirs.float(), equal_nan=True, **tolerance)
