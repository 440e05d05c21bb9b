"""Property test: a compiled (dynamic=True) pointwise + reduction function equals eager CPU for random shapes,
strides (transposed and sliced views) and values, compiled once per layout rather than once per shape."""
import torch
from hypothesis import given, settings, strategies as st

from .helpers import assert_close


def fn(x, y):
    z = torch.where(x > y, x * y, x - y.exp())
    return z.softmax(-1) + z.amax(0, keepdim=True) - z.sum(-1, keepdim=True) * 0.1


COMPILED = {}


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(2, 33), columns=st.integers(2, 40), transposed=st.booleans(), step=st.sampled_from([1, 2]),
       seed=st.integers(0, 2**31 - 1))
def test_random_shapes_and_strides(rows, columns, transposed, step, seed):
    generator = torch.Generator().manual_seed(seed)
    base = torch.randn(columns * step, rows, generator=generator) if transposed else \
        torch.randn(rows, columns * step, generator=generator)
    x = (base.t() if transposed else base)[:, ::step]
    y = torch.randn(rows, columns, generator=generator)
    compiled = COMPILED.setdefault("fn", torch.compile(fn, dynamic=True))
    x_mlu = (base.to("mlu").t() if transposed else base.to("mlu"))[:, ::step]
    assert x_mlu.stride() == x.stride()
    assert_close(compiled(x_mlu, y.to("mlu")), fn(x, y), 1e-5)
