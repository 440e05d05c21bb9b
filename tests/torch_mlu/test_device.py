"""The "mlu" device: a real PrivateUse1 backend (device type, .mlu(), data_ptr = simulated address, printing),
torch.mlu's device management, the metadata-only kernels and the autoload entry point."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch

import cnrt
import torch_mlu


def test_the_issue_snippet_trains_like_cpu():
    torch.manual_seed(0)
    x_cpu, w_cpu = torch.randn(64, 128), torch.randn(128, 32)
    x = x_cpu.mlu()
    w = w_cpu.to("mlu").requires_grad_()
    loss = (x @ w).relu().sum()
    loss.backward()
    torch.mlu.synchronize()
    w_ref = w_cpu.clone().requires_grad_()
    loss_ref = (x_cpu @ w_ref).relu().sum()
    loss_ref.backward()
    assert loss.device == torch.device("mlu", 0)
    torch.testing.assert_close(loss.cpu(), loss_ref, rtol=1e-5, atol=1e-3)
    torch.testing.assert_close(w.grad.cpu(), w_ref.grad)


def test_device_type_and_tensor_methods():
    t = torch.zeros(3).mlu()
    assert t.device.type == "mlu" and t.device.index == 0
    assert t.is_mlu and not torch.zeros(1).is_mlu
    assert torch.device("mlu") == torch.device("mlu")
    assert torch.device("mlu:0").index == 0
    assert t.get_device() == 0
    assert torch.empty(2, device="mlu").device == torch.device("mlu:0")
    module = torch.nn.Linear(2, 3).mlu()
    assert all(p.device.type == "mlu" for p in module.parameters())
    assert next(module.cpu().parameters()).device.type == "cpu"


def test_data_ptr_is_a_simulated_device_address():
    t = torch.arange(6, dtype=torch.float32, device="mlu")
    attributes = cnrt.pointerGetAttributes(t.data_ptr())
    assert attributes.type == cnrt.cnrtMemTypeDevice and attributes.device == 0
    view = t[2:]
    assert view.data_ptr() == t.data_ptr() + 2 * 4
    # the bytes behind the address are the tensor's
    host = torch.empty(6, dtype=torch.float32)
    cnrt.memcpy(host.numpy(), t.data_ptr(), 24, cnrt.cnrtMemcpyDevToHost)
    assert host.tolist() == [0, 1, 2, 3, 4, 5]


def test_printing_shows_the_device():
    text = str(torch.tensor([1.5, -2.0], device="mlu"))
    assert text == "tensor([ 1.5000, -2.0000], device='mlu:0')"


def test_device_management_functions():
    assert torch.mlu.is_available()
    assert torch.mlu.device_count() == 1 == torch.accelerator.device_count()
    assert torch.mlu.current_device() == 0
    assert torch.accelerator.current_accelerator() == torch.device("mlu")
    name = torch.mlu.get_device_name()
    assert name == cnrt.getDeviceProperties(0).name == "MLU370-X4"
    properties = torch.mlu.get_device_properties(0)
    assert properties.total_memory == cnrt.getDeviceProperties(0).totalGlobalMemSize == 1 << 30
    assert properties.multi_processor_count == properties.cluster_count * properties.core_num_per_cluster > 0
    assert torch.mlu.get_device_capability() == (properties.major, properties.minor)
    assert "MLU370-X4" in repr(properties)
    # Cambricon's test_get_properties: the same device's properties, however it is named, are equal
    assert properties == torch.mlu.get_device_properties("mlu:0") == torch.mlu.get_device_properties(
        torch.device("mlu:0"))
    assert properties != object() and len({properties, torch.mlu.get_device_properties(0)}) == 1


def test_invalid_device_index_is_an_error():
    with pytest.raises(IndexError, match="invalid device ordinal 3"):
        torch.empty(1, device="mlu:3")
    with pytest.raises(ValueError, match="invalid device"):
        torch.mlu.set_device(5)
    with pytest.raises(ValueError, match="Expected a mlu device, but got: cpu"):  # torch_mlu's wording
        torch.mlu.get_device_properties("cpu")
    with pytest.raises(ValueError, match="Expected a mlu device, but got: cpu"):
        torch.mlu.synchronize(torch.device("cpu"))


def test_get_device_index_as_torch_mlu_has_it():
    """Cambricon's test/mlu/test_device.py test_get_device_index and test_device (a numpy index), re-expressed."""
    from torch_mlu.mlu._utils import _get_device_index
    assert _get_device_index("mlu:0") == 0 and _get_device_index(torch.device("mlu", 0)) == 0
    assert _get_device_index(torch.mlu.device(0)) == 0 and _get_device_index(0) == 0
    assert _get_device_index(None, optional=True) == torch.mlu.current_device()
    assert _get_device_index("cpu", allow_cpu=True) == -1
    with pytest.raises(RuntimeError, match="Invalid device string"):
        _get_device_index("mlu0", optional=True)
    with pytest.raises(ValueError, match="Expected a mlu device"):
        _get_device_index(torch.device("cpu"), optional=True)
    with pytest.raises(ValueError, match="specified index"):
        _get_device_index("mlu")
    torch.mlu.set_device(np.int64(0))
    assert torch.mlu.current_device() == 0


def test_device_context_and_synchronize():
    with torch.mlu.device(0):
        assert torch.mlu.current_device() == 0
    with torch.mlu.device(None):
        assert torch.mlu.current_device() == 0
    t = torch.ones(1000, device="mlu") * 3
    torch.mlu.synchronize()
    torch.mlu.synchronize("mlu:0")
    assert t.sum().item() == 3000


def test_mixing_cpu_and_mlu_tensors_is_the_usual_error():
    a, b = torch.ones(3, device="mlu"), torch.ones(3)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device.*mlu:0 and cpu"):
        a + b
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        torch.mm(torch.ones(2, 2, device="mlu"), torch.ones(2, 2))
    # a 0-d cpu tensor is a scalar and mixes in, as on CUDA
    assert (a * torch.tensor(2.0)).cpu().tolist() == [2.0, 2.0, 2.0]


def test_views_share_device_memory():
    t = torch.arange(12, dtype=torch.float32, device="mlu")
    v = t.view(3, 4)
    assert v.data_ptr() == t.data_ptr() and v.shape == (3, 4)
    s = t.as_strided((2, 2), (4, 1), 1)
    assert s.cpu().tolist() == [[1, 2], [5, 6]]
    u = t.unfold(0, 4, 4)
    assert u.shape == (3, 4) and u.data_ptr() == t.data_ptr()
    r = t.reshape(2, 6)
    assert r.data_ptr() == t.data_ptr()
    v.fill_(7)
    assert t.cpu().tolist() == [7.0] * 12


def test_resize_grows_through_a_device_copy_and_keeps_the_values():
    t = torch.arange(4, dtype=torch.float32, device="mlu")
    before = t.data_ptr()
    t.resize_(64)
    assert t.shape == (64,)
    assert t.data_ptr() != before  # new device memory; the old bytes were copied on the device
    assert t[:4].cpu().tolist() == [0, 1, 2, 3]
    assert cnrt.pointerGetAttributes(t.data_ptr()).type == cnrt.cnrtMemTypeDevice
    t.resize_(2, 2)  # shrinking keeps the storage
    assert t.cpu().tolist() == [[0, 1], [2, 3]]
    empty = torch.empty(0, device="mlu")
    empty.resize_(3).fill_(1)
    assert empty.cpu().tolist() == [1, 1, 1]
    storage = torch.UntypedStorage(8, device="mlu")
    storage.resize_(64)
    assert storage.nbytes() == 64 and storage.device.type == "mlu"


def test_set_shares_and_grows_storage():
    a = torch.arange(6, dtype=torch.float32, device="mlu")
    b = torch.empty(0, device="mlu")
    b.set_(a)
    assert b.data_ptr() == a.data_ptr() and b.shape == a.shape
    c = torch.empty(0, device="mlu").set_(a.untyped_storage(), 2, (2, 2), (2, 1))
    assert c.cpu().tolist() == [[2, 3], [4, 5]]
    d = torch.empty(0, device="mlu").set_()
    assert d.shape == (0,) and d.device.type == "mlu"


def test_autoload_entry_point_makes_plain_import_torch_work(fresh_process):
    assert fresh_process["autoload"] == ["mlu:0", [2.0, 2.0]]  # that process only ran `import torch`
    assert fresh_process["available"] and fresh_process["mlu_module"] == "module"


def test_import_torch_mlu_first_works():
    code = "import torch_mlu, torch; print(torch.ones(1, device='mlu').device)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "mlu:0"


FORK_SCRIPT = """
import os, sys, torch, torch_mlu
def in_child(work):
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            work()
            message = "ok"
        except RuntimeError as error:
            message = str(error)
        os.write(writer, message.encode())
        os._exit(0)
    os.close(writer)
    os.waitpid(pid, 0)
    return os.read(reader, 1000).decode()
print(torch.mlu.is_initialized())
print(in_child(lambda: torch.ones(2, device="mlu").cpu()))   # the parent never used the device: the child may
x = torch.ones(2, device="mlu")
print(torch.mlu.is_initialized())
print(in_child(lambda: torch.ones(2, device="mlu")))
print(in_child(lambda: torch.mlu.set_device(0)))
print(torch.mlu._is_in_bad_fork(), (x + 1).cpu().tolist())
"""


@pytest.mark.child_processes
def test_lazy_initialisation_and_the_forked_child_rule():
    out = subprocess.run([sys.executable, "-c", FORK_SCRIPT], capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    refused = "Cannot re-initialize MLU in forked subprocess. To use MLU with multiprocessing, you must use the " \
              "'spawn' start method"
    assert lines == ["False", "ok", "True", refused, refused, "False [2.0, 2.0]"]


VISIBLE_SCRIPT = """
import os, torch, torch_mlu
from mlusim import device
print(device.configured())                       # importing torch_mlu builds no device table
os.environ["MLU_VISIBLE_DEVICES"] = os.environ["VISIBLE"]
print(torch.mlu.device_count(), torch.mlu.is_initialized())
try:
    torch_mlu._MLUC._mlu_init()
    x = torch.arange(3.0, device="mlu")
    print((x * 2).cpu().tolist(), device.devices()[0].physical, len(torch.mlu.default_generators))
except RuntimeError as error:
    print(error)
"""


@pytest.mark.child_processes
@pytest.mark.parametrize("visible, lines", [
    ("1", ["False", "1 False", "[0.0, 2.0, 4.0] 1 1"]),
    ("32", ["False", "0 False", "No MLU devices are available (MLU_VISIBLE_DEVICES leaves none)"]),
    ("", ["False", "0 False", "No MLU devices are available (MLU_VISIBLE_DEVICES leaves none)"])])
def test_mlu_visible_devices_set_after_import_is_read_at_first_use(visible, lines):
    environment = dict(os.environ, MLUSIM_DEVICE_COUNT="2", VISIBLE=visible)
    environment.pop("MLU_VISIBLE_DEVICES", None)
    out = subprocess.run([sys.executable, "-c", VISIBLE_SCRIPT], capture_output=True, text=True, timeout=240,
                         env=environment)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines() == lines


def test_mluc_names_work_on_the_runtime():
    assert torch_mlu._MLUC._mlu_getDeviceCount() == torch.mlu.device_count()
    torch.ones(1, device="mlu:0")
    assert torch_mlu._MLUC._mlu_hasPrimaryContext(0)
    stream = torch.mlu.Stream()
    previous = torch.mlu.current_stream()
    try:
        torch_mlu._MLUC._mlu_setStream(stream.stream_id, stream.device_index, stream.device_type)
        assert torch.mlu.current_stream() == stream
        assert torch_mlu._MLUC._mlu_getCurrentRawStream(0) is stream.mlu_stream
    finally:
        torch.mlu.set_stream(previous)
    with pytest.raises(AttributeError, match="no attribute"):
        torch_mlu._MLUC._mlu_not_a_name


def test_version_and_registered_ops():
    assert torch_mlu.__version__
    names = torch_mlu.ops.registered()
    for op in ("aten::add.Tensor", "aten::_copy_from", "aten::mm", "aten::fill_.Scalar", "aten::addmm"):
        assert op in names


def test_errors_of_queued_work_surface_at_the_next_sync_as_runtime_errors():
    def failing(_):
        raise ValueError("the host function failed")

    cnrt.invokeHostFunc(torch.mlu.current_stream().mlu_stream, failing, None)
    with pytest.raises(RuntimeError, match="host function failed") as error:
        torch.mlu.synchronize()
    assert isinstance(error.value.__cause__, cnrt.CnrtError)
    # as in cnrt, the device reported it at its sync; the stream reports it at its own next sync (a blocking copy)
    with pytest.raises(RuntimeError, match="host function failed"):
        torch.ones(2, device="mlu").cpu()
    assert torch.ones(2, device="mlu").cpu().tolist() == [1.0, 1.0]  # reported; the stream runs again


def test_the_cpp_build_is_cached_per_torch_version_and_source(tmp_path, monkeypatch):
    from torch_mlu import _extension
    key = _extension.build_key()
    assert key.startswith(f"torch-{torch.__version__.replace('+', '_')}-{sys.implementation.cache_tag}-")
    monkeypatch.setenv("MLUSIM_TORCH_CACHE", str(tmp_path / "cache"))
    assert _extension.build_directory() == tmp_path / "cache" / key
    loaded = sys.modules[_extension.NAME]
    assert loaded is torch_mlu._state.C and (loaded.__file__.endswith(".so"))
    first, second = tmp_path / "mlu.cpp", tmp_path / "profiler.cpp"
    first.write_text("// one\n")
    second.write_text("// two\n")
    both = _extension.build_key((first, second))
    second.write_text("// two, changed\n")
    assert _extension.build_key((first, second)) != both  # every source is in the key
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    assert _extension._writable(blocked / "sub").is_dir()  # unwritable: a per-user directory under the temp dir


def test_concurrent_first_imports_build_the_cpp_part_once(tmp_path, monkeypatch):
    """Ranks of a launched job import torch_mlu at once: the second waits for the first's build and loads it."""
    from torch_mlu import _extension
    monkeypatch.setenv("MLUSIM_TORCH_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "part.cpp"
    source.write_text("// an extension source\n")
    sources = (source,)
    built, imported = [], []

    def build(directory, sources, name):
        built.append(directory)
        _extension._library(directory, name).write_text("")
        (directory / _extension.READY).write_text("0 s\n")
        return "built"

    monkeypatch.setattr(_extension, "_build", build)
    monkeypatch.setattr(_extension, "_import", lambda path, name: imported.append(path) or "imported")
    directory = _extension.build_directory(sources)
    results = []
    with _extension._exclusive(directory):
        waiter = threading.Thread(target=lambda: results.append(_extension.load(sources, "part_ext")))
        waiter.start()
        waiter.join(0.5)
        assert waiter.is_alive(), "load() did not wait for the build in progress"
        build(directory, sources, "part_ext")
    waiter.join(10)
    assert results == ["imported"] and len(built) == 1
    assert imported == [_extension._library(directory, "part_ext")]


def test_set_refuses_a_storage_of_another_device(two_devices):
    on_cpu, on_mlu = torch.randn(2, 3), torch.randn(2, 3).mlu()
    message = "Attempted to set the storage of a tensor on device .* to a storage on different device"
    for call in (lambda: on_cpu.set_(on_mlu), lambda: on_mlu.set_(on_cpu), lambda: on_mlu.set_(on_cpu.untyped_storage()),
                 lambda: on_mlu.set_(torch.randn(2, 3).to("mlu:1"))):
        with pytest.raises(RuntimeError, match=message):
            call()
    assert on_cpu.device.type == "cpu" and on_mlu.device == torch.device("mlu:0")  # both left as they were
    assert on_cpu.sum().item() == pytest.approx(float(on_cpu.numpy().sum()), rel=1e-5)
