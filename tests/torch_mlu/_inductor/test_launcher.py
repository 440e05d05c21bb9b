"""A compiled kernel call is ONE command on the current stream of its device, built by mlusim's submission builder:
exact read/write sets (inputs read, outputs written), pinned ranges, the modelled time of the fused work; the
launcher checks its arguments."""
import pytest
import torch

from mlusim import cost
from mlusim.command import Kind
from mlusim.observers import CommandRecorder

from torch_mlu._inductor import debug


@pytest.fixture
def commands():
    with CommandRecorder() as recorder:
        yield recorder.commands


def fn(x, y):
    return (x * y + 1).sum(1)


def test_one_command_with_exact_read_and_write_sets(commands):
    x, y = torch.randn(33, 17, device="mlu"), torch.randn(33, 17, device="mlu")
    compiled = torch.compile(fn)
    compiled(x, y)
    torch.mlu.synchronize()
    commands.clear()
    out = compiled(x, y)
    torch.mlu.synchronize()
    kernels = [c for _, c in commands if c.kind == Kind.KERNEL]
    assert len(kernels) == 1 and len(commands) == 1
    command = kernels[0]
    assert sorted(command.reads) == sorted([(x.data_ptr(), x.nbytes), (y.data_ptr(), y.nbytes)])
    assert command.writes == ((out.data_ptr(), out.nbytes),)
    assert command.info["bytes"] == x.nbytes + y.nbytes + out.nbytes
    spec = commands[0][0].device.spec
    assert command.model_us == pytest.approx(cost.op_us(spec, command.info["flops"], command.info["bytes"],
                                                        "float", cost.VECTOR))
    torch.testing.assert_close(out.cpu(), fn(x.cpu(), y.cpu()))


def test_kernels_run_on_the_current_stream(commands):
    compiled = torch.compile(lambda x: x.exp() * 2)
    x = torch.randn(100, device="mlu")
    compiled(x)
    torch.mlu.synchronize()  # hooks see commands as they finish: the first call's kernel must not land in the list
    stream = torch.mlu.Stream()
    commands.clear()
    with torch.mlu.stream(stream):
        y = compiled(x)
    stream.synchronize()
    assert [queue for queue, command in commands if command.kind == Kind.KERNEL] == [stream.mlu_stream]
    torch.testing.assert_close(y.cpu(), x.cpu().exp() * 2)


def test_the_launcher_checks_its_arguments(two_devices):
    with debug.recording() as record:
        torch.compile(fn)(torch.ones(4, 3, device="mlu"), torch.ones(4, 3, device="mlu"))
    (kernel,) = record.launched.values()
    with pytest.raises(TypeError, match="takes"):
        kernel(torch.ones(4, 3, device="mlu"))
    arguments = [torch.ones(4, 3, device="mlu"), torch.ones(4, 3, device="mlu:1"), torch.empty(4, device="mlu"), 4, 3]
    with pytest.raises(RuntimeError, match="is on mlu:1"):
        kernel(*arguments)
    torch.mlu.synchronize()


def test_large_kernels_are_split_over_the_host_cores_with_the_same_result():
    compiled = torch.compile(lambda x: torch.softmax(x * 3, -1))
    x = torch.randn(3000, 130)
    torch.testing.assert_close(compiled(x.to("mlu")).cpu(), torch.softmax(x * 3, -1))
