"""torch.mlu's random-number functions over the per-device default generators. An mlu generator is a Philox
(seed, offset) pair; the random kernels hand it to cnnl's counter-based generator and advance the offset, so the
same seed gives the same numbers. get_rng_state() is 16 bytes: seed and offset, little-endian uint64."""
from __future__ import annotations

import torch

from .. import _state
from ._utils import checked_index


def _generator(device=None) -> torch.Generator:
    return _state.C.default_generator(checked_index(device))


def get_rng_state(device="mlu") -> torch.Tensor:
    """torch.mlu.get_rng_state: the default generator's state as a uint8 cpu tensor."""
    return _generator(device).get_state()


def get_rng_state_all() -> list[torch.Tensor]:
    """torch.mlu.get_rng_state_all: the states of every device's default generator."""
    return [get_rng_state(i) for i in range(_state.C.device_count())]


def set_rng_state(new_state: torch.Tensor, device="mlu") -> None:
    """torch.mlu.set_rng_state: restore a state from get_rng_state."""
    _generator(device).set_state(new_state.clone(memory_format=torch.contiguous_format))


def set_rng_state_all(new_states) -> None:
    """torch.mlu.set_rng_state_all: one state per device."""
    for index, state in enumerate(new_states):
        set_rng_state(state, index)


def manual_seed(seed: int) -> None:
    """torch.mlu.manual_seed: seed the current device's default generator (offset back to 0)."""
    _generator().manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """torch.mlu.manual_seed_all: seed every device's default generator."""
    for index in range(_state.C.device_count()):
        _generator(index).manual_seed(int(seed))


def seed() -> None:
    """torch.mlu.seed: a non-deterministic seed for the current device."""
    _generator().seed()


def seed_all() -> None:
    """torch.mlu.seed_all: one non-deterministic seed for every device."""
    value = _generator(0).seed()
    for index in range(1, _state.C.device_count()):
        _generator(index).manual_seed(value)


def initial_seed() -> int:
    """torch.mlu.initial_seed: the current device's seed."""
    return _generator().initial_seed()


__all__ = ["get_rng_state", "get_rng_state_all", "set_rng_state", "set_rng_state_all", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "initial_seed"]
