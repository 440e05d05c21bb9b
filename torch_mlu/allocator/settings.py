"""The caching allocator's settings: PYTORCH_MLU_ALLOC_CONF (torch_mlu's name of PYTORCH_CUDA_ALLOC_CONF) and
torch.mlu.memory._set_allocator_settings, with the options, syntax, checks and messages of torch's CUDA allocator
(c10/cuda/CUDAAllocatorConfig):

  max_split_size_mb:N              blocks of N MiB or more are never split; a request below N takes no such block,
                                   a larger one only a block less than 20 MiB bigger than itself (N > 20)
  roundup_power2_divisions:D       a request rounds up to the next of D equal steps between two powers of two;
  roundup_power2_divisions:[64:8,256:2,>:1]   per size interval (MiB, powers of two; '>' the rest)
  garbage_collection_threshold:T   before growing past T (0 < T < 1) of the memory it may use, the allocator gives
                                   its unused cached segments back
  expandable_segments:True|False   accepted; segments never grow here (a warning says so for True)
  backend:native                   the only backend

Each setting string starts from the defaults: what it does not name is reset.
"""
from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass, field

MIB = 1 << 20
MIN_BLOCK = 512
#: blocks this much larger than a request of max_split_size or more may still serve it (torch's kLargeBuffer)
LARGE_BUFFER = 20 * MIB
#: size intervals of roundup_power2_divisions: from 1 MiB, one per power of two (torch's 16)
INTERVALS = 16

_TOKEN = re.compile(r"\s*([\[\]:,>]|[^\[\]:,>\s]+)")


@dataclass
class AllocatorSettings:
    max_split_size: int | None = None             # bytes; None: every block may be split
    roundup_divisions: list = field(default_factory=lambda: [0] * INTERVALS)
    garbage_collection_threshold: float = 0.0     # 0: off

    @classmethod
    def parse(cls, text: str) -> "AllocatorSettings":
        """The settings a configuration string gives (RuntimeError naming a bad option or value)."""
        settings = cls()
        tokens = _Tokens(text)
        while tokens.more():
            key = tokens.take()
            tokens.take(":")
            if key == "max_split_size_mb":
                megabytes = _number(tokens.take(), key, int)
                if megabytes <= LARGE_BUFFER // MIB:
                    raise RuntimeError(f"CachingAllocator option max_split_size_mb too small, must be > "
                                       f"{LARGE_BUFFER // MIB}")
                settings.max_split_size = megabytes * MIB
            elif key == "roundup_power2_divisions":
                settings.roundup_divisions = _divisions(tokens)
            elif key == "garbage_collection_threshold":
                threshold = _number(tokens.take(), key, float)
                if threshold <= 0:
                    raise RuntimeError("garbage_collect_threshold too small, set it 0.0~1.0")
                if threshold >= 1.0:
                    raise RuntimeError("garbage_collect_threshold too big, set it 0.0~1.0")
                settings.garbage_collection_threshold = threshold
            elif key == "expandable_segments":
                value = tokens.take()
                if value not in ("True", "False"):
                    raise RuntimeError("Expected a single True/False argument for expandable_segments")
                if value == "True":
                    warnings.warn("expandable_segments not supported on this platform (the simulated MLU's "
                                  "segments never grow)")
            elif key == "backend":
                value = tokens.take()
                if value != "native":
                    raise RuntimeError(f"Unknown allocator backend {value!r}: the mlu allocator is 'native'")
            else:
                raise RuntimeError(f"Unrecognized CachingAllocator option: {key}")
            if tokens.more():
                tokens.take(",")
        return settings

    def round_size(self, nbytes: int) -> int:
        """The block size a request of `nbytes` gets (torch's round_size)."""
        if nbytes < MIN_BLOCK:
            return MIN_BLOCK
        if not any(self.roundup_divisions):  # (the common case, on every allocation: one scan of 16 zeros)
            return (nbytes + MIN_BLOCK - 1) // MIN_BLOCK * MIN_BLOCK
        divisions = self.divisions_for(nbytes)
        if divisions > 1 and nbytes > MIN_BLOCK * divisions:
            return next_division(nbytes, divisions)
        return (nbytes + MIN_BLOCK - 1) // MIN_BLOCK * MIN_BLOCK

    def divisions_for(self, nbytes: int) -> int:
        index = max(0, nbytes.bit_length() - 1 - (MIB.bit_length() - 1))
        return self.roundup_divisions[min(index, INTERVALS - 1)]

    def may_serve(self, block_size: int, request: int) -> bool:
        """Whether a free block of `block_size` bytes may serve a request of `request` bytes (max_split_size)."""
        limit = self.max_split_size
        if limit is None:
            return True
        if request < limit:
            return block_size < limit
        return block_size < request + LARGE_BUFFER

    def may_split(self, block_size: int) -> bool:
        return self.max_split_size is None or block_size < self.max_split_size


def next_division(nbytes: int, divisions: int) -> int:
    """`nbytes` rounded up to the next of `divisions` equal steps between the powers of two around it."""
    if nbytes & (nbytes - 1) == 0:
        return nbytes
    floor = 1 << (nbytes.bit_length() - 1)
    step = floor >> (divisions.bit_length() - 1)
    if step == 0:
        return floor << 1
    rounded = nbytes & ~(step - 1)
    return nbytes if rounded == nbytes else rounded + step


def _number(token: str, key: str, kind):
    try:
        return kind(token)
    except ValueError:
        raise RuntimeError(f"CachingAllocator option {key}: {token!r} is not a number") from None


def _power_of_two(value: int, what: str) -> int:
    if value <= 0 or value & (value - 1):
        raise RuntimeError(f"For roundups, the {what} to be power of 2 ")
    return value


class _Tokens:
    """The tokens of a settings string: names and numbers, and the punctuation [ ] : , >."""

    def __init__(self, text: str):
        self.text = text
        self.tokens = _TOKEN.findall(text or "")
        self.position = 0

    def more(self) -> bool:
        return self.position < len(self.tokens)

    def take(self, expected: str | None = None) -> str:
        if not self.more():
            raise RuntimeError(f"Error parsing CachingAllocator settings {self.text!r}: it ends too early")
        token = self.tokens[self.position]
        self.position += 1
        if expected is not None and token != expected:
            raise RuntimeError(f"Error parsing CachingAllocator settings {self.text!r}: expected {expected!r}, "
                               f"got {token!r}")
        return token


def _divisions(tokens: _Tokens) -> list:
    """roundup_power2_divisions' value: one number for every interval, or [size:divisions,...,>:divisions]."""
    first = tokens.take()
    if first != "[":
        return [_power_of_two(_number(first, "roundup_power2_divisions", int), "divisons has")] * INTERVALS
    divisions, last_index = [0] * INTERVALS, 0
    while True:
        size = tokens.take()
        if size == "]":
            return divisions
        tokens.take(":")
        value = _power_of_two(_number(tokens.take(), "roundup_power2_divisions", int), "divisons has")
        if size == ">":
            divisions[last_index:] = [value] * (INTERVALS - last_index)
        else:
            megabytes = _power_of_two(_number(size, "roundup_power2_divisions", int), "intervals have")
            index = min(megabytes.bit_length() - 1, INTERVALS - 1)
            if last_index == 0:
                divisions[:index] = [value] * index
            divisions[index] = value
            last_index = index
        closing = tokens.take()
        if closing == "]":
            return divisions
        if closing != ",":
            raise RuntimeError(f"Error parsing roundup_power2_divisions: expected ',' or ']', got {closing!r}")


def from_environment() -> AllocatorSettings:
    """PYTORCH_MLU_ALLOC_CONF (PYTORCH_CUDA_ALLOC_CONF is read too, as torch_mlu does)."""
    text = os.environ.get("PYTORCH_MLU_ALLOC_CONF", os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""))
    return AllocatorSettings.parse(text)
