"""autocompare: every aten op that runs on mlu runs again on the CPU with copies of the same inputs; the first op
whose result differs beyond tolerance is named (a backward op names its autograd node, so a wrong gradient shows
as e.g. aten::tanh_backward in backward:TanhBackward0), and its arguments are saved for replay.

    with torch_mlu.op_tools.autocompare(save_dir="mismatches") as check:
        loss = model(x).sum(); loss.backward()
    check.first            # Mismatch(index=12, op='aten::tanh_backward', phase='backward:TanhBackward0', ...)
    torch_mlu.op_tools.replay(check.first.path)   # runs the saved call on mlu and on the CPU again

Ops whose values are random or undefined (dropout, rand*, normal_, empty...) are run but not compared.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import torch
from torch.utils._pytree import tree_leaves, tree_map

from .._host import same_layout_on_cpu, value_on_cpu
from ..conformance.compare import TOLERANCES
from ._intercept import OpCall, Tool

#: aten ops whose results are random or undefined: run, not compared
UNCOMPARED = re.compile(r"rand|bernoulli|dropout|normal|uniform|exponential|geometric|cauchy|log_normal|"
                        r"multinomial|poisson|empty|set_|resize_|record_stream|_local_scalar_dense")
#: a view reaching into a storage this many times its own size is copied by value, not with its whole storage
LAYOUT_COPY_LIMIT = 4


class OpMismatchError(AssertionError):
    """Raised by autocompare(stop_at_first=True) at the first op that differs from the CPU."""


@dataclass
class Mismatch:
    index: int
    op: str
    phase: str
    detail: str
    path: str | None

    def __str__(self) -> str:
        saved = f"; arguments saved to {self.path}" if self.path else ""
        return f"op #{self.index} {self.op} ({self.phase}) differs from the CPU: {self.detail}{saved}"


def _host_copy(tensor: torch.Tensor) -> torch.Tensor:
    if tensor.device.type != "mlu":
        return tensor.detach().clone()
    nbytes = tensor.numel() * tensor.element_size()
    if tensor.layout == torch.strided and tensor.untyped_storage().nbytes() <= LAYOUT_COPY_LIMIT * max(nbytes, 64):
        return same_layout_on_cpu(tensor)
    return tensor.detach().cpu()


def _snapshot(value):
    """The call's arguments with every tensor copied to the host (devices left as they are)."""
    return tree_map(lambda item: _host_copy(item) if isinstance(item, torch.Tensor) else item, value)


def _cpu_call(func, args, kwargs):
    run_args = tree_map(value_on_cpu, list(args))
    run_kwargs = {key: tree_map(value_on_cpu, value) for key, value in kwargs.items()}
    return func(*run_args, **run_kwargs), run_args, run_kwargs


def difference(actual, expected, tolerances: dict = TOLERANCES) -> str | None:
    """None when two results agree within the dtype's (atol, rtol) (NaN equal to NaN); else what differs."""
    got, want = tree_leaves(actual), tree_leaves(expected)
    if len(got) != len(want):
        return f"{len(got)} results, the CPU gives {len(want)}"
    for position, (a, b) in enumerate(zip(got, want)):
        if isinstance(a, torch.Tensor) != isinstance(b, torch.Tensor):
            return f"result {position}: {type(a).__name__} on mlu, {type(b).__name__} on the CPU"
        if not isinstance(a, torch.Tensor):
            if a != b and not (isinstance(a, float) and isinstance(b, float) and a != a and b != b):
                return f"result {position}: {a!r} on mlu, {b!r} on the CPU"
            continue
        a = a.detach().cpu()
        if a.dtype != b.dtype or a.shape != b.shape:
            return f"result {position}: {a.dtype} {tuple(a.shape)} on mlu, {b.dtype} {tuple(b.shape)} on the CPU"
        atol, rtol = tolerances.get(b.dtype, (0.0, 0.0))
        try:
            torch.testing.assert_close(a, b, atol=atol, rtol=rtol, equal_nan=True)
        except AssertionError as error:
            return f"result {position}: " + " ".join(str(error).split())[:300]
    return None


def _written(call: OpCall, args) -> list:
    """The arguments an op writes (in-place and out= forms), from its schema."""
    names = []
    for position, argument in enumerate(call.func._schema.arguments):
        if argument.alias_info is not None and argument.alias_info.is_write:
            names.append((position, argument.name))
    found = []
    for position, name in names:
        if position < len(args):
            found.append(args[position])
        elif name in call.kwargs:
            found.append(call.kwargs[name])
    return found


class AutoCompare(Tool):
    """Reruns every mlu op on the CPU and records the ops whose results differ (`mismatches`, `first`)."""

    order = 0

    def __init__(self, save_dir=None, stop_at_first: bool = False, tolerances: dict | None = None):
        self.save_dir = Path(save_dir) if save_dir is not None else None
        self.stop_at_first = stop_at_first
        self.tolerances = dict(TOLERANCES, **(tolerances or {}))
        self.mismatches: list[Mismatch] = []
        self.compared = 0
        self.skipped = 0

    @property
    def first(self) -> Mismatch | None:
        return self.mismatches[0] if self.mismatches else None

    def before(self, call: OpCall) -> None:
        if UNCOMPARED.search(call.name):
            return
        call.notes["autocompare"] = (_snapshot(list(call.args)), _snapshot(call.kwargs))

    def after(self, call: OpCall) -> None:
        saved = call.notes.get("autocompare")
        if saved is None:
            self.skipped += 1
            return
        args, kwargs = saved
        try:
            expected, cpu_args, cpu_kwargs = _cpu_call(call.func, args, kwargs)
        except Exception as error:  # noqa: BLE001  the CPU refuses what mlu accepted: that is a difference too
            self._record(call, args, kwargs, f"the CPU raised {type(error).__name__}: {error}"[:300])
            return
        self.compared += 1
        problem = difference(call.result, expected, self.tolerances)
        if problem is None and call.func._schema.is_mutable:
            problem = difference(_written(call, call.args), _written(call, cpu_args), self.tolerances)
        if problem is not None:
            self._record(call, args, kwargs, problem)

    def _record(self, call: OpCall, args, kwargs, problem: str) -> None:
        path = None
        if self.save_dir is not None:
            self.save_dir.mkdir(parents=True, exist_ok=True)
            safe = re.sub(r"[^A-Za-z0-9_.]+", "_", call.name)
            path = str(self.save_dir / f"mismatch_{call.index:06d}_{safe}.pt")
            torch.save({"op": call.name, "args": args, "kwargs": kwargs, "phase": call.phase,
                        "index": call.index}, path)
        mismatch = Mismatch(call.index, call.name, call.phase, problem, path)
        self.mismatches.append(mismatch)
        if self.stop_at_first:
            raise OpMismatchError(str(mismatch))

    def report_lines(self) -> list[str]:
        lines = [f"autocompare: {self.compared} ops compared with the CPU, {len(self.mismatches)} differ, "
                 f"{self.skipped} not compared (random or undefined values)"]
        lines += [f"  {m}" for m in self.mismatches[:20]]
        if len(self.mismatches) > 20:
            lines.append(f"  ... and {len(self.mismatches) - 20} more")
        return lines


def resolve(name: str):
    """The OpOverload of an aten name such as "aten::add.Tensor" or "aten::tanh"."""
    namespace, _, rest = name.partition("::")
    base, _, overload = rest.partition(".")
    packet = getattr(getattr(torch.ops, namespace), base)
    return getattr(packet, overload or "default")


@dataclass
class Replay:
    op: str
    mlu_result: object
    cpu_result: object
    detail: str | None

    @property
    def matches(self) -> bool:
        return self.detail is None


def replay(path, device: str = "mlu") -> Replay:
    """Run a call saved by autocompare again on `device` and on the CPU; `detail` says what differs (None: the
    results agree now)."""
    saved = torch.load(path, weights_only=False)
    func = resolve(saved["op"])

    def to_device(value):
        return value.to(device) if isinstance(value, torch.Tensor) else value

    args = tree_map(to_device, list(saved["args"]))
    kwargs = {key: tree_map(to_device, value) for key, value in saved["kwargs"].items()}
    actual = func(*args, **kwargs)
    expected, _, _ = _cpu_call(func, saved["args"], saved["kwargs"])
    return Replay(saved["op"], tree_map(lambda v: v.cpu() if isinstance(v, torch.Tensor) else v, actual), expected,
                  difference(actual, expected))
