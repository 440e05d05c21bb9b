"""torch.save / torch.load of mlu tensors and modules: the device is kept, map_location moves them (a string, a
device, a dict, a function), views keep their offsets, weights_only loading works."""
import io

import pytest
import torch


def _saved(obj) -> io.BytesIO:
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return buffer


def test_mlu_tensors_load_back_on_mlu():
    base = torch.arange(10.0, device="mlu")
    view = base[3:7]
    loaded = torch.load(_saved({"base": base, "view": view, "half": base.half()}))
    assert loaded["base"].device == torch.device("mlu:0") and torch.equal(loaded["base"].cpu(), base.cpu())
    assert loaded["view"].storage_offset() == 3 and loaded["view"].cpu().tolist() == [3.0, 4.0, 5.0, 6.0]
    assert loaded["view"].untyped_storage().data_ptr() == loaded["base"].untyped_storage().data_ptr()
    assert loaded["half"].dtype == torch.float16 and loaded["half"].device.type == "mlu"


@pytest.mark.parametrize("location", ["mlu", "mlu:0", torch.device("mlu", 0), {"cpu": "mlu:0"},
                                      lambda storage, tag: storage.mlu()])
def test_cpu_checkpoints_load_onto_mlu(location):
    values = torch.randn(4, 5)
    loaded = torch.load(_saved(values), map_location=location)
    assert loaded.device == torch.device("mlu:0") and torch.equal(loaded.cpu(), values)


@pytest.mark.parametrize("location", ["cpu", {"mlu:0": "cpu"}])
def test_mlu_checkpoints_load_onto_the_cpu(location):
    values = torch.randn(3, 3, device="mlu")
    loaded = torch.load(_saved(values), map_location=location)
    assert loaded.device.type == "cpu" and torch.equal(loaded, values.cpu())


def test_module_state_dict_round_trip_and_weights_only():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3)).mlu()
    model(torch.randn(8, 4, device="mlu"))  # running statistics change
    state = torch.load(_saved(model.state_dict()), weights_only=True)
    assert all(t.device.type == "mlu" for t in state.values())
    copy = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    copy.load_state_dict(torch.load(_saved(model.state_dict()), map_location="cpu"))
    for (name, want), got in zip(model.state_dict().items(), copy.state_dict().values()):
        assert torch.equal(got, want.cpu()), name
    optimizer = torch.optim.Adam(model.parameters())
    model(torch.randn(8, 4, device="mlu")).sum().backward()
    optimizer.step()
    restored = torch.load(_saved(optimizer.state_dict()))
    assert restored["state"][0]["exp_avg"].device.type == "mlu"
