"""nn.LSTM / nn.GRU and their cells on mlu: torch runs them through the fused cells (_thnn_fused_lstm_cell,
_thnn_fused_gru_cell), which torch_mlu serves natively; outputs and every gradient against the CPU."""
import copy

import pytest
import torch

import torch_mlu

FUSED_CELLS = ("aten::_thnn_fused_lstm_cell", "aten::_thnn_fused_lstm_cell_backward_impl",
               "aten::_thnn_fused_gru_cell", "aten::_thnn_fused_gru_cell_backward")


def _compare(module, inputs, outputs_to_loss, call=lambda module, *inputs: module(*inputs)):
    torch.manual_seed(0)
    device_module = copy.deepcopy(module).to("mlu")
    leaves = [t.clone().requires_grad_() for t in inputs]
    device_leaves = [t.detach().to("mlu").requires_grad_() for t in inputs]
    torch_mlu.fallback.reset()
    expected, got = call(module, *leaves), call(device_module, *device_leaves)
    outputs_to_loss(expected).backward()
    outputs_to_loss(got).backward()
    assert not set(torch_mlu.fallback.counts()) & set(FUSED_CELLS)
    flat = lambda out: [out] if isinstance(out, torch.Tensor) else [t for item in out for t in flat(item)]
    for want, have in zip(flat(expected), flat(got)):
        torch.testing.assert_close(have.cpu(), want, atol=1e-5, rtol=1e-4)
    for want, have in zip(leaves + list(module.parameters()), device_leaves + list(device_module.parameters())):
        torch.testing.assert_close(have.grad.cpu(), want.grad, atol=1e-5, rtol=1e-4)


def _all_outputs(out):
    output, state = out
    states = state if isinstance(state, tuple) else (state,)
    return (output * torch.linspace(-1, 1, output.shape[-1], device=output.device)).sum() + sum(s.sum() for s in states)


@pytest.mark.parametrize("cls", [torch.nn.LSTM, torch.nn.GRU])
@pytest.mark.parametrize("options", [dict(num_layers=2), dict(bias=False, batch_first=True),
                                     dict(bidirectional=True)])
def test_recurrent_layers_match_cpu(cls, options):
    torch.manual_seed(1)
    _compare(cls(6, 10, **options), [torch.randn(4, 3, 6)], _all_outputs)


def test_lstm_cell_with_only_the_cell_state_used_and_gru_cell():
    torch.manual_seed(2)
    state = (torch.randn(3, 10), torch.randn(3, 10))
    _compare(torch.nn.LSTMCell(6, 10), [torch.randn(3, 6), *state], lambda out: (out[1] * out[1]).sum(),
             lambda module, x, h, c: module(x, (h, c)))
    _compare(torch.nn.LSTMCell(6, 10, bias=False), [torch.randn(3, 6)], lambda out: out[0].sum())
    _compare(torch.nn.GRUCell(6, 10), [torch.randn(3, 6), torch.randn(3, 10)], lambda out: (out * out).sum())


def test_fused_cell_checks_its_shapes():
    gates = torch.randn(3, 40, device="mlu")
    with pytest.raises(RuntimeError, match="do not fit the state"):
        torch.ops.aten._thnn_fused_lstm_cell(gates, gates, torch.randn(3, 9, device="mlu"))
    with pytest.raises(RuntimeError, match="must be the same 2-d shape"):
        torch.ops.aten._thnn_fused_gru_cell(gates[:, :30], gates[:, :27], torch.randn(3, 10, device="mlu"))
