""""mlu" is registered with Dynamo and Inductor: its device interface, Scheduling, wrapper and device op
overrides, so that torch.compile(model) with no arguments compiles mlu tensors with the numba backend."""
import torch
from torch._dynamo.device_interface import get_interface_for_device
from torch._inductor.codegen.common import (BackendFeature, get_backend_features, get_device_op_overrides,
                                            get_scheduling_for_device, get_wrapper_codegen_for_device)

from torch_mlu._inductor.device_interface import MLUInterface
from torch_mlu._inductor.scheduling import MLUScheduling


def test_the_device_interface_answers_with_torch_mlu():
    interface = get_interface_for_device("mlu")
    assert interface is MLUInterface and get_interface_for_device(torch.device("mlu", 0)) is MLUInterface
    assert interface.is_available() and interface.device_count() == torch.mlu.device_count()
    assert interface.current_device() == torch.mlu.current_device()
    assert interface.get_device_properties("mlu:0").multi_processor_count > 0
    assert interface.get_raw_stream(0) == torch.mlu.current_stream().stream_id
    assert not interface.is_triton_capable()
    assert interface.is_dtype_supported(torch.bfloat16) and not interface.is_dtype_supported(torch.complex64)
    previous = interface.exchange_device(0)
    assert interface.maybe_exchange_device(previous) == 0


def test_the_backend_is_registered():
    assert isinstance(get_scheduling_for_device("mlu")(None), MLUScheduling)
    assert get_wrapper_codegen_for_device("mlu").supports_caching
    assert BackendFeature.TUPLE_REDUCTION in get_backend_features("mlu")
    assert BackendFeature.SCAN not in get_backend_features("mlu")  # cumsum & co. run as eager mlu ops
    overrides = get_device_op_overrides("mlu")
    assert overrides.device_guard(1) == "torch.mlu.device(1)"
    assert overrides.synchronize() == "torch.mlu.synchronize()"


def test_default_torch_compile_uses_it():
    compiled = torch.compile(lambda x: x.cos() + 1)
    x = torch.randn(10, device="mlu")
    out = compiled(x)
    assert out.device.type == "mlu"
    torch.testing.assert_close(out.cpu(), x.cpu().cos() + 1)
