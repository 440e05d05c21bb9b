"""torch.distributed on simulated MLUs: the process-group backend "cncl" (torch_mlu's name), over mlusim's cncl.

    import torch, torch_mlu
    torch.distributed.init_process_group("cncl")      # launched by torchrun or `mlusim run -n N`
    torch.distributed.all_reduce(torch.ones(4, device="mlu"))

"cncl" is registered for the "mlu" device, so it is also the backend init_process_group() picks when given none
(mlu is then torch's accelerator), and the one of mlu tensors in "cpu:gloo,mlu:cncl". The C++ part
(csrc/process_group_cncl.cpp, a c10d::Backend forwarding to backend.py) is built at the first process group and
cached like torch_mlu's own.
See docs/torch.md ("Distributed").
"""
from __future__ import annotations

from pathlib import Path

import torch.distributed as dist

from .. import _extension

NAME = "cncl"
_SOURCE = Path(__file__).with_name("csrc") / "process_group_cncl.cpp"
_MODULE = "torch_mlu_distributed_C"


def native():
    """The C++ module (ProcessGroupCNCL, WorkCNCL): built on first use, then loaded from the cache."""
    return _extension.load((_SOURCE,), _MODULE)


def is_cncl_available() -> bool:
    """torch.distributed.is_cncl_available (torch_mlu's name): True."""
    return True


def _create(store, rank: int, size: int, timeout):
    """The factory torch calls for each process group (and sub-group) with backend cncl."""
    from .backend import CnclBackend

    return native().ProcessGroupCNCL(CnclBackend(store, rank, size, timeout), rank, size)


def _default_backend_follows_cncl(make_group):
    """torch 2.13 names gloo the default backend type of a group made with no backend string unless nccl serves
    it, even when only the accelerator's backend (here cncl) was made; DDP then fails asking for that default
    ("Could not find backend type 1"). A group whose only backend is cncl gets cncl as its default."""

    def make(*args, **kwargs):
        made = make_group(*args, **kwargs)
        group = made[0] if isinstance(made, tuple) else made
        if isinstance(group, dist.ProcessGroup):
            devices = group._device_types
            if len(devices) == 1 and devices[0].type == "mlu" and \
                    type(group._get_backend(devices[0])).__name__ == "ProcessGroupCNCL":
                group._set_default_backend(dist.ProcessGroup.BackendType.CUSTOM)
        return made

    make.__wrapped__ = make_group
    return make


def _register() -> None:
    if NAME.upper() not in dist.Backend._plugins:
        dist.Backend.register_backend(NAME, _create, devices=["mlu"])
    dist.is_cncl_available = is_cncl_available
    c10d = dist.distributed_c10d
    if not hasattr(c10d._new_process_group_helper, "__wrapped__"):
        c10d._new_process_group_helper = _default_backend_follows_cncl(c10d._new_process_group_helper)


if dist.is_available():
    _register()
