"""torch.compile(model, backend="magicmind") on mlu tensors: the graph partitioned into MagicMind subgraphs (built
once, cached on disk), the rest eager, against torch CPU; fp16 and int8; frozen weights that change; graphs that
stay eager and why; the options' errors; the current stream."""
import copy
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("onnx")
import torch_mlu  # noqa: E402,F401

import magicmind.dynamo as md  # noqa: E402
from magicmind.build.builder import Builder  # noqa: E402
from magicmind.dynamo import subgraph  # noqa: E402
from magicmind.runtime.context import Context  # noqa: E402

from .. import onnx_models as M  # noqa: E402

nn = torch.nn


@pytest.fixture(autouse=True)
def fresh_compile(tmp_path, monkeypatch):
    """Each test compiles anew and builds into its own model cache."""
    monkeypatch.setattr(subgraph, "cache_root", lambda area: tmp_path / area)
    torch._dynamo.reset()
    md.graphs.clear()
    yield
    torch._dynamo.reset()


class SplitByCumsum(nn.Module):
    """Two MagicMind subgraphs around an op MagicMind does not take (cumsum), and a view of the first's output."""

    def __init__(self):
        super().__init__()
        self.conv, self.bn, self.fc, self.ln = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.Linear(8, 4), \
            nn.LayerNorm(4)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x))) + x.mean(1, keepdim=True)
        y = self.fc(nn.functional.adaptive_avg_pool2d(y, 1).flatten(1))
        return nn.functional.gelu(self.ln(torch.cumsum(y, 1))).softmax(-1), y.transpose(0, 1)


class Bert(M.TinyBert):
    """The tiny BERT of the parser tests, its positions made on the ids' device."""

    def forward(self, ids, mask):
        b, s = ids.shape
        x = self.norm(self.embed(ids) + self.position(torch.arange(s, device=ids.device).unsqueeze(0)))
        bias = (1.0 - mask[:, None, None, :].float()) * -10000.0
        for layer in self.layers:
            q, k, v = layer["qkv"](x).chunk(3, -1)
            q, k, v = (t.reshape(b, s, self.heads, -1).transpose(1, 2) for t in (q, k, v))
            att = torch.softmax(q @ k.transpose(-1, -2) / (q.shape[-1] ** 0.5) + bias, -1)
            x = layer["n1"](x + layer["o"]((att @ v).transpose(1, 2).reshape(b, s, -1)))
            x = layer["n2"](x + layer["f2"](nn.functional.gelu(layer["f1"](x))))
        return self.cls(x[:, 0])


def _model(cls, *args):
    torch.manual_seed(0)
    model = cls(*args).eval()
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
            nn.init.uniform_(module.weight, 0.5, 1.5)
    return model


def _run(model, args, **compile_args):
    """CPU reference, then the compiled model on mlu; (reference, result on the host, the graph's report)."""
    with torch.no_grad():
        reference = model(*args)
        compiled = torch.compile(model.to("mlu"), backend="magicmind", **compile_args)
        result = compiled(*[a.to("mlu") for a in args])
    as_host = tuple(r.cpu() for r in result) if isinstance(result, tuple) else result.cpu()
    return reference, as_host, md.graphs[-1], compiled


def _relative(reference, result) -> float:
    pairs = zip(reference, result) if isinstance(reference, tuple) else [(reference, result)]
    return max(float((r - o).abs().max() / r.abs().max()) for r, o in pairs)


def test_a_cnn_is_one_magicmind_subgraph_and_runs_it_on_every_call():
    x = torch.randn(2, 3, 32, 32)
    reference, result, report, compiled = _run(_model(M.ResNetish), (x,))
    assert _relative(reference, result) < 1e-5
    assert len(report.subgraphs) == 1 and report.eager_nodes == [] and not report.reason
    (sub,) = report.subgraphs
    assert sub.built and sub.model_calls == 1
    model = next(iter(sub.built.values())).model
    assert model.get_input_num() == 1  # the weights are the model's constants, the image its input
    assert model.get_build_info()["layers"] < model.get_build_info()["steps_lowered"]  # fused
    with torch.no_grad():
        again = compiled(x.to("mlu"))
    assert sub.model_calls == 2 and torch.equal(again.cpu(), result)


def test_ops_magicmind_does_not_take_run_eagerly_between_two_subgraphs():
    reference, result, report, _ = _run(_model(SplitByCumsum), (torch.randn(2, 3, 8, 8),))
    assert _relative(reference, result) < 1e-5
    assert len(report.subgraphs) == 2
    assert report.eager_nodes == ["cumsum"]
    assert all(s.model_calls == 1 and s.eager_calls == 0 for s in report.subgraphs)


def test_a_bert_with_an_attention_mask_keeps_its_embeddings_eager():
    ids = torch.randint(0, 50, (2, 8))
    mask = torch.tensor([[1] * 8, [1] * 5 + [0] * 3])
    reference, result, report, _ = _run(_model(Bert), (ids, mask))
    assert _relative(reference, result) < 1e-4
    assert len(report.subgraphs) == 1
    assert any("embedding" in n for n in report.eager_nodes)
    assert not any("matmul" in n or "softmax" in n or "layer_norm" in n for n in report.eager_nodes)


def test_float16_computes_in_half():
    model, x = _model(M.MobileNetish), torch.randn(2, 3, 32, 32)
    reference, full, _, _ = _run(model, (x,))
    torch._dynamo.reset()
    _, half, report, _ = _run(model.cpu(), (x,), options={"precision": "force_float16"})
    assert next(iter(report.subgraphs[0].built.values())).model.get_build_info()["precision"] == "force_float16"
    assert 1e-5 < _relative(reference, half) < 3e-2
    assert not torch.equal(half, full)


def test_int8_calibrates_on_the_compile_time_values():
    model, x = _model(M.ResNetish), torch.randn(4, 3, 32, 32)
    reference, result, report, _ = _run(model, (x,), options={"precision": "qint8_mixed_float32"})
    drift = _relative(reference, result)
    assert 1e-4 < drift < 3e-2  # the bound of tests/magicmind/test_calibration.py
    info = next(iter(report.subgraphs[0].built.values())).model.get_build_info()
    assert info["precision"] == "qint8_mixed_float32" and info["calibration"]["batches"] == 1


def test_frozen_weights_changed_in_place_are_rebuilt():
    model, x = _model(SplitByCumsum), torch.randn(2, 3, 8, 8)
    _, _, report, compiled = _run(model, (x,))
    with torch.no_grad():
        model.fc.weight.mul_(-2.0)
        model.bn.running_mean.add_(1.0)
        result = compiled(x.to("mlu"))
        reference = model.cpu()(x)
    assert _relative(reference, tuple(r.cpu() for r in result)) < 1e-5
    assert all(len(s.built) == 1 for s in report.subgraphs if s.model_calls == 2)



def test_another_model_whose_weights_reuse_dead_ids_is_rebuilt():
    """torch reuses a compiled graph for another model of the same shapes (its weights are graph inputs); new
    weights can get the ids of dead ones, with the same version 0, and must not find the old model."""
    def step(model, x):
        return torch.relu(model(x))

    compiled = torch.compile(step, backend="magicmind")
    x = torch.randn(2, 8)
    with torch.no_grad():
        first = _model(nn.Linear, 8, 4).to("mlu")
        compiled(first, x.to("mlu"))
        torch.manual_seed(1)
        second = nn.Linear(8, 4).eval()
        reference = step(second, x)
        second.to("mlu")
        (sub,) = md.graphs[-1].subgraphs
        (live, _), built = sub.built.popitem()
        # the dead-id case made certain: the entry as if `first`'s weights had had `second`'s ids
        sub.built[(live, tuple((id(p), p._version) for p in (second.weight, second.bias)))] = built
        result = compiled(second, x.to("mlu")).cpu()
    assert len(md.graphs) == 1 and torch.allclose(result, reference, atol=1e-6)

def test_a_symbolic_batch_is_one_mutable_model():
    reference = _model(M.ResNetish)
    with torch.no_grad():
        compiled = torch.compile(copy.deepcopy(reference).to("mlu"), backend="magicmind")
        for batch in (2, 3, 5, 4):
            x = torch.randn(batch, 3, 32, 32)
            assert _relative(reference(x), compiled(x.to("mlu")).cpu()) < 1e-5
    # batch 2 builds a fixed model; batch 3 makes torch recompile with a symbolic batch: one mutable model for the rest
    fixed, dynamic = md.graphs
    assert [s.model_calls for s in fixed.subgraphs] == [1]
    (sub,) = dynamic.subgraphs
    assert sub.model_calls == 3 and sub.eager_calls == 0 and len(sub.built) == 1
    model = next(iter(sub.built.values())).model
    assert model.get_input_dimension(0).GetDims() == [-1, 3, 32, 32]


def test_a_graph_needing_gradients_runs_eagerly_and_says_why():
    model, x = _model(SplitByCumsum), torch.randn(2, 3, 8, 8)
    reference = model(x)
    with pytest.warns(UserWarning, match="needs gradients"):
        result = torch.compile(model.to("mlu"), backend="magicmind")(x.to("mlu"))
    assert "gradients" in md.graphs[-1].reason and not md.graphs[-1].subgraphs
    result[0].sum().backward()
    assert model.conv.weight.grad is not None
    assert _relative(tuple(r.detach() for r in reference), tuple(r.detach().cpu() for r in result)) < 1e-5


def test_cpu_inputs_run_eagerly():
    model, x = _model(M.ResNetish), torch.randn(1, 3, 32, 32)
    with torch.no_grad(), pytest.warns(UserWarning, match="not all mlu tensors"):
        result = torch.compile(model, backend="magicmind")(x)
        assert torch.allclose(result, model(x), atol=1e-6)


@pytest.mark.parametrize("options, message", [
    ({"precisoin": "force_float16"}, "unknown option 'precisoin'"),
    ({"precision": "float8"}, "precision_mode"),
    ({"builder_config": "{not json"}, "builder_config is not JSON"),
    ({"builder_config": {"opt_config": {"no_such_key": 1}}}, "no_such_key"),
])
def test_bad_options_name_themselves(options, message):
    # the backend's own entrance: a compile that fails inside torch.compile leaves torch's memory-history stacks
    # without Python frames for the rest of the process (torch's), which tests/torch_mlu/allocator relies on
    gm = torch.fx.symbolic_trace(nn.ReLU())
    with pytest.raises(ValueError, match=message):
        md.magicmind_backend(gm, [torch.randn(2, device="mlu")], options=options)


def test_the_model_runs_on_the_current_stream(monkeypatch):
    queues = []
    enqueue = Context.enqueue
    monkeypatch.setattr(Context, "enqueue", lambda self, i, o, q, *a: queues.append(q) or enqueue(self, i, o, q, *a))
    model, x = _model(M.ResNetish), torch.randn(2, 3, 32, 32)
    compiled = torch.compile(model.to("mlu"), backend="magicmind")
    stream = torch.mlu.Stream()
    with torch.no_grad(), torch.mlu.stream(stream):
        source = x.to("mlu") * 3.0  # written on the side stream, read by the model there
        result = compiled(source).cpu()
        reference = model.cpu()(x * 3.0)
    assert queues[-1] is stream.mlu_stream
    assert _relative(reference, result) < 1e-5


def test_a_second_compile_reads_the_built_model_from_disk(monkeypatch, tmp_path):
    model, x = _model(M.ResNetish), torch.randn(1, 3, 32, 32)
    _, first, _, _ = _run(model, (x,))
    assert list((tmp_path / subgraph.CACHE_AREA).glob("*.mm"))
    builds = []
    build_model = Builder.build_model
    monkeypatch.setattr(Builder, "build_model", lambda self, *a: builds.append(a) or build_model(self, *a))
    torch._dynamo.reset()
    _, second, report, _ = _run(model.cpu(), (x,))
    assert builds == [] and report.subgraphs and torch.equal(first, second)


def test_an_empty_batch_runs_eagerly():
    model = _model(SplitByCumsum)
    x = torch.randn(0, 3, 8, 8)
    with torch.no_grad():
        result = torch.compile(model.to("mlu"), backend="magicmind")(x.to("mlu"))
    assert [tuple(r.shape) for r in result] == [(0, 4), (4, 0)]
    assert np.isfinite(sum(float(r.sum()) for r in result))


def test_the_backend_is_registered_by_name():
    from torch._dynamo import list_backends
    assert "magicmind" in list_backends()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert torch._dynamo.lookup_backend("magicmind") is not None
