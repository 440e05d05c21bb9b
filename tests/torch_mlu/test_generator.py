"""mlu generators: a Philox (seed, offset) that drives cnnl's random numbers; the same seed gives the same numbers
(torch.manual_seed, torch.mlu.manual_seed, torch.Generator(device="mlu")), states save and restore, fork_rng, the
distributions are right, and random ops on the CPU fallback follow the mlu seed too."""
import numpy as np
import pytest
import torch

import cnnl
import cnrt


def test_same_seed_same_numbers():
    torch.manual_seed(7)
    first = (torch.randn(100, device="mlu").cpu(), torch.rand(50, device="mlu").cpu())
    torch.manual_seed(7)
    second = (torch.randn(100, device="mlu").cpu(), torch.rand(50, device="mlu").cpu())
    assert torch.equal(first[0], second[0]) and torch.equal(first[1], second[1])
    torch.mlu.manual_seed(8)
    other = torch.randn(100, device="mlu").cpu()
    assert not torch.equal(other, first[0])
    again = torch.randn(100, device="mlu").cpu()
    assert not torch.equal(again, other)  # the offset advanced


def test_explicit_generators_are_independent_of_the_default():
    g = torch.Generator(device="mlu")
    assert g.device == torch.device("mlu", 0)
    g.manual_seed(3)
    a = torch.randn(10, device="mlu", generator=g).cpu()
    torch.mlu.manual_seed(99)
    g.manual_seed(3)
    b = torch.randn(10, device="mlu", generator=g).cpu()
    assert torch.equal(a, b)
    assert g.initial_seed() == 3 and g.get_offset() > 0


def test_numbers_are_cnnls_philox_stream():
    g = torch.Generator(device="mlu").manual_seed(1234)
    values = torch.empty(37, device="mlu").normal_(2.0, 0.5, generator=g).cpu().numpy()
    philox = cnnl.randCreateGenerator(cnnl.CNNL_RAND_RNG_PHILOX)
    cnnl.randSetPseudoRandomGeneratorSeed(philox, 1234)
    out = cnrt.malloc(37 * 4)
    cnnl.randGenerateNormal(cnnl.create(), philox, cnnl.CNNL_DTYPE_FLOAT, None, 37, 2.0, 0.5, out)
    expected = np.empty(37, np.float32)
    cnrt.memcpy(expected, out, 37 * 4, cnrt.cnrtMemcpyDevToHost)
    assert np.array_equal(values, expected)
    assert g.get_offset() == cnnl.randGetPseudoRandomGeneratorOffset(philox)


def test_rng_state_save_and_restore():
    torch.mlu.manual_seed(5)
    torch.rand(3, device="mlu")
    state = torch.mlu.get_rng_state()
    assert state.dtype == torch.uint8 and state.shape == (16,)
    assert int(np.frombuffer(state.numpy().tobytes(), np.uint64)[0]) == 5
    a = torch.rand(20, device="mlu").cpu()
    torch.mlu.set_rng_state(state)
    b = torch.rand(20, device="mlu").cpu()
    assert torch.equal(a, b)
    with pytest.raises(RuntimeError, match="RNG state is wrong size"):
        torch.mlu.set_rng_state(torch.zeros(8, dtype=torch.uint8))
    assert len(torch.mlu.get_rng_state_all()) == torch.mlu.device_count()
    with torch.random.fork_rng(device_type="mlu"):
        torch.rand(100, device="mlu")
    c = torch.rand(20, device="mlu").cpu()
    torch.mlu.set_rng_state(state)
    torch.rand(20, device="mlu")
    assert torch.equal(c, torch.rand(20, device="mlu").cpu())  # fork_rng put the state back


def test_seed_functions():
    torch.mlu.manual_seed_all(11)
    assert torch.mlu.initial_seed() == 11
    torch.mlu.seed()
    assert torch.mlu.initial_seed() != 11
    assert torch.mlu.default_generators[0].device == torch.device("mlu:0")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64])
def test_distributions(dtype):
    torch.manual_seed(0)
    normal = torch.empty(200_000, dtype=dtype, device="mlu").normal_(1.0, 2.0).cpu().double()
    assert abs(normal.mean().item() - 1.0) < 0.03 and abs(normal.std().item() - 2.0) < 0.03
    uniform = torch.empty(200_000, dtype=dtype, device="mlu").uniform_(-3, 5).cpu().double()
    assert uniform.min().item() >= -3 and uniform.max().item() <= 5  # 16-bit rounding may reach the bound
    assert abs(uniform.mean().item() - 1.0) < 0.05
    coins = torch.empty(200_000, dtype=dtype, device="mlu").bernoulli_(0.3).cpu().double()
    assert set(coins.unique().tolist()) == {0.0, 1.0} and abs(coins.mean().item() - 0.3) < 0.01


def test_strided_targets_and_errors():
    base = torch.zeros(6, 4, device="mlu")
    base[:, 1].normal_()
    host = base.cpu()
    assert (host[:, 1] != 0).all() and (host[:, 0] == 0).all() and (host[:, 2:] == 0).all()
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        torch.empty(3, device="mlu").normal_(0, -1)
    with pytest.raises(RuntimeError, match="uniform_ expects to return a \\[from, to\\) range"):
        torch.empty(3, device="mlu").uniform_(2, 1)
    with pytest.raises(RuntimeError, match="bernoulli_ expects p to be in \\[0, 1\\]"):
        torch.empty(3, device="mlu").bernoulli_(1.5)
    with pytest.raises(RuntimeError, match="Expected a 'mlu' device type for generator but found 'cpu'"):
        torch.empty(3, device="mlu").normal_(generator=torch.Generator())


def test_dropout_scales_and_follows_the_seed():
    x = torch.ones(10_000, device="mlu", requires_grad=True)
    torch.manual_seed(2)
    y = torch.nn.functional.dropout(x, 0.25)
    kept = y.detach().cpu()
    assert set(kept.unique().tolist()) == {0.0, torch.tensor(4 / 3).item()} and abs((kept > 0).double().mean().item() - 0.75) < 0.02
    y.sum().backward()
    assert torch.equal(x.grad.cpu(), kept)  # the gradient goes through the same mask and scale
    torch.manual_seed(2)
    assert torch.equal(torch.nn.functional.dropout(x, 0.25).detach().cpu(), kept)


def test_random_ops_on_the_fallback_follow_the_mlu_seed():
    torch.manual_seed(4)
    a = (torch.randint(0, 1000, (20,), device="mlu").cpu(), torch.randperm(30, device="mlu").cpu())
    torch.manual_seed(4)
    b = (torch.randint(0, 1000, (20,), device="mlu").cpu(), torch.randperm(30, device="mlu").cpu())
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert sorted(a[1].tolist()) == list(range(30))
    g = torch.Generator(device="mlu").manual_seed(9)
    c = torch.multinomial(torch.ones(10, device="mlu"), 5, generator=g).cpu()
    g.manual_seed(9)
    assert torch.equal(c, torch.multinomial(torch.ones(10, device="mlu"), 5, generator=g).cpu())
    assert torch.randint(0, 1000, (20,), device="mlu").cpu().tolist() != a[0].tolist()
