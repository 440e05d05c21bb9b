"""What only a fresh process shows, run once per test session (tests/torch_mlu/conftest.py, `fresh_process`):
`import torch` alone loads torch_mlu (the torch.backends entry point), MLUSIM_TORCH_FALLBACK=error refuses fallbacks
from the start, MLUSIM_DEVICE_COUNT sets the devices, and autograd runs on mlu:1 (torch's autograd engine sizes its
device threads at the first backward of a process). Prints one JSON object."""
import json

import torch

facts = {"mlu_module": type(torch.mlu).__name__, "available": torch.mlu.is_available(),
         "device_count": torch.mlu.device_count()}
x = torch.ones(2, device="mlu") + 1
facts["autoload"] = [str(x.device), x.cpu().tolist()]

import torch_mlu  # noqa: E402  (already loaded by `import torch`)

facts["fallback_mode"] = torch_mlu.fallback.get_mode()
try:
    torch.special.i0(x)
    facts["refused"] = None
except NotImplementedError as error:
    facts["refused"] = str(error)

with torch_mlu.fallback.mode("silent"):
    torch.manual_seed(0)
    x_cpu, w_cpu = torch.randn(8, 5), torch.randn(5, 3)
    w = w_cpu.to("mlu:1").requires_grad_()
    (x_cpu.to("mlu:1") @ w).relu().sum().backward()
    reference = w_cpu.clone().requires_grad_()
    (x_cpu @ reference).relu().sum().backward()
    facts["grad_device"] = str(w.grad.device)
    facts["grad_matches"] = bool(torch.allclose(w.grad.cpu(), reference.grad))
print(json.dumps(facts))
