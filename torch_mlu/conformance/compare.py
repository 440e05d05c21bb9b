"""One OpInfo on mlu against the CPU, sample by sample (what PyTorch's TestCommon.test_compare_cpu does for CUDA),
for the forward results and for the gradients.

A forward sample runs the op on the mlu sample and on its CPU twin and compares the results (values, dtypes,
shapes; tensors must stay on mlu). A gradient sample does the same for torch.autograd.grad of the differentiable
outputs, with the same random output gradients on both devices, with respect to every input that requires grad.
When both devices raise, the sample passes (the op refuses it on both). Every sample records whether its mlu run
used the CPU fallback for some aten op, and which.
"""
from __future__ import annotations

import time
import traceback
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional

import torch

from .. import fallback
from . import expectations as E
from .samples import movable, results_to_cpu, sample_to_cpu, sample_tensors, tensors

FORWARD, GRADIENT = "forward", "gradient"
PASSED, FAILED, ERROR, XFAIL, SKIPPED = "passed", "failed", "error", "xfail", "skipped"
STATUSES = (PASSED, XFAIL, SKIPPED, FAILED, ERROR)

#: (atol, rtol) per dtype: float32 allows sums in another order and another libm (PyTorch's own compare-with-CPU
#: test allows 1e-3 for every dtype), half/bfloat16 about one rounding
TOLERANCES = {
    torch.float32: (1e-4, 1e-4), torch.float64: (1e-7, 1e-7), torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (1e-2, 1.6e-2), torch.complex64: (1e-4, 1e-4), torch.complex128: (1e-7, 1e-7),
}
#: gradients chain several ops (each summing in its own order): a looser relative tolerance for float32
GRADIENT_TOLERANCES = {**TOLERANCES, torch.float32: (1e-4, 1e-3), torch.complex64: (1e-4, 1e-3)}
MESSAGE_LIMIT = 400


@dataclass
class SampleResult:
    index: int
    status: str
    fell_back: tuple = ()
    message: str = ""
    xpass: bool = False


@dataclass
class PhaseRecord:
    """The samples of one op in one phase (forward or gradient)."""
    op: str
    phase: str
    dtype: str
    samples: list = field(default_factory=list)
    skipped_reason: str = ""
    seconds: float = 0.0

    def counts(self) -> Counter:
        found = Counter(sample.status for sample in self.samples)
        found["samples"] = len(self.samples)
        found["fell_back"] = sum(1 for sample in self.samples if sample.fell_back)
        found["xpass"] = sum(1 for sample in self.samples if sample.xpass)
        return found

    def fallback_ops(self) -> list[str]:
        return sorted({name for sample in self.samples for name in sample.fell_back})

    def unexpected(self) -> list[SampleResult]:
        return [sample for sample in self.samples if sample.status in (FAILED, ERROR)]

    def to_dict(self) -> dict:
        data = asdict(self)
        data["samples"] = [asdict(sample) for sample in self.samples]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "PhaseRecord":
        record = cls(op=data["op"], phase=data["phase"], dtype=data["dtype"],
                     skipped_reason=data.get("skipped_reason", ""), seconds=data.get("seconds", 0.0))
        record.samples = [SampleResult(**{**sample, "fell_back": tuple(sample.get("fell_back", ()))})
                          for sample in data.get("samples", [])]
        return record


def _short(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".strip()
    text = " ".join(text.split())
    return text[:MESSAGE_LIMIT]


class _FallbackWatch:
    """The aten ops that ran through the CPU fallback inside a `with` block."""

    def __enter__(self):
        self.before = fallback.counts()
        self.names: tuple = ()
        return self

    def __exit__(self, *exc):
        after = fallback.counts()
        self.names = tuple(sorted(name for name, count in after.items() if count > self.before.get(name, 0)))
        return False


def _synchronize() -> None:
    torch.mlu.synchronize()


def _expects_mlu(sample) -> bool:
    """True when the results belong on mlu: the sample holds an mlu tensor or names an mlu device, and does not
    ask for a CPU result itself (device="cpu")."""
    values = [v for v in (*sample.args, *sample.kwargs.values()) if isinstance(v, (str, torch.device))]
    devices = [torch.device(v).type for v in values if isinstance(v, torch.device) or v in ("cpu", "mlu")
               or v.startswith("mlu:")]
    if "cpu" in devices:
        return False
    return "mlu" in devices or any(t.device.type == "mlu" for t in sample_tensors(sample))


def _on_mlu_check(actual, expected) -> Optional[str]:
    """Tensors the CPU run returns must come back on mlu from the mlu run."""
    for got, want in zip(tensors(actual), tensors(expected)):
        if got.device.type != "mlu" and want.device.type == "cpu":
            return f"a result tensor is on {got.device}, not on mlu"
    return None


def _compare(assert_equal: Callable, actual, expected, dtype, shapes_only: bool,
             device_check: bool = True, tolerances: dict = TOLERANCES) -> Optional[str]:
    """None when the mlu results (moved to the CPU) match the CPU's; else the reason."""
    moved = _on_mlu_check(actual, expected) if device_check else None
    if moved:
        return moved
    actual_cpu = results_to_cpu(actual)
    try:
        if shapes_only:
            got, want = tensors(actual_cpu), tensors(expected)
            if len(got) != len(want):
                return f"{len(got)} result tensors, the CPU gives {len(want)}"
            for a, b in zip(got, want):
                if a.shape != b.shape or a.dtype != b.dtype:
                    return f"result {tuple(a.shape)} {a.dtype}, the CPU gives {tuple(b.shape)} {b.dtype}"
            return None
        atol, rtol = tolerances.get(dtype, (0.0, 0.0))
        assert_equal(actual_cpu, expected, atol=atol, rtol=rtol, exact_device=False)
    except AssertionError as error:
        return " ".join(str(error).split())[:MESSAGE_LIMIT]
    return None


def _classify(expectation: Optional[E.Expectation], problem: Optional[str], status_if_problem: str,
              index: int, fell_back: tuple) -> SampleResult:
    if problem is None:
        return SampleResult(index, PASSED, fell_back, xpass=expectation is not None and expectation.kind == E.XFAIL)
    if expectation is not None and expectation.kind == E.XFAIL:
        return SampleResult(index, XFAIL, fell_back, f"{expectation.reason} [{problem}]"[:MESSAGE_LIMIT])
    return SampleResult(index, status_if_problem, fell_back, problem)


def _expected_run(entries, kind: str, sample, index: int):
    """(expectation, unchecked, None) for a sample to run, or (.., .., the SKIPPED result) for one the expectations
    skip or that cannot move to the CPU."""
    expectation = E.find(entries, kind, sample)
    if expectation is not None and expectation.kind == E.SKIP:
        return expectation, False, SampleResult(index, SKIPPED, message=expectation.reason)
    if not movable(sample):
        return expectation, False, SampleResult(index, SKIPPED,
                                                message="the sample holds sparse/quantized/nested tensors")
    return expectation, expectation is not None and expectation.kind == E.UNCHECKED, None


# ---- forward --------------------------------------------------------------------------------------------------------
def forward_sample(op, sample, index: int, dtype, entries, assert_equal) -> SampleResult:
    """Run one sample of `op` on mlu and on the CPU and compare."""
    expectation, unchecked, skipped = _expected_run(entries, FORWARD, sample, index)
    if skipped is not None:
        return skipped
    twin = sample_to_cpu(sample)
    mlu_error = cpu_error = None
    with _FallbackWatch() as watch:
        try:
            actual = sample.output_process_fn_grad(op(sample.input, *sample.args, **sample.kwargs))
            _synchronize()
        except Exception as error:  # noqa: BLE001  (any failure of the op is a result of the sample)
            mlu_error = error
    try:
        expected = twin.output_process_fn_grad(op(twin.input, *twin.args, **twin.kwargs))
    except Exception as error:  # noqa: BLE001
        cpu_error = error
    if mlu_error is not None or cpu_error is not None:
        if mlu_error is not None and cpu_error is not None:
            return SampleResult(index, PASSED, watch.names)
        problem = (f"mlu raised, the CPU did not: {_short(mlu_error)}" if mlu_error is not None
                   else f"the CPU raised, mlu did not: {_short(cpu_error)}")
        return _classify(expectation, problem, ERROR, index, watch.names)
    problem = _compare(assert_equal, actual, expected, dtype, unchecked, device_check=_expects_mlu(sample))
    if unchecked and problem is None:
        return SampleResult(index, SKIPPED, watch.names, f"values not compared: {expectation.reason}")
    return _classify(expectation, problem, FAILED, index, watch.names)


# ---- gradient -------------------------------------------------------------------------------------------------------
def _differentiable(value) -> list[torch.Tensor]:
    return [t for t in tensors(value) if t.requires_grad and (t.is_floating_point() or t.is_complex())]


def _output_gradients(outputs: list[torch.Tensor], seed: int) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    made = []
    for output in outputs:
        real = torch.randn(output.shape, generator=generator, dtype=torch.float64)
        made.append(real.to(output.dtype) if not output.is_complex() else torch.complex(real, real).to(output.dtype))
    return made


def _gradients(op, sample, seed: int):
    """(grads, None) or (None, reason the sample has no gradient to compare)."""
    outputs = _differentiable(sample.output_process_fn_grad(op(sample.input, *sample.args, **sample.kwargs)))
    inputs = _differentiable(sample_tensors(sample))
    if not outputs or not inputs:
        return None, "no differentiable output or input"
    device = outputs[0].device
    grad_outputs = [g.to(device) for g in _output_gradients(outputs, seed)]
    return torch.autograd.grad(outputs, inputs, grad_outputs, allow_unused=True), None


def gradient_sample(op, sample, index: int, dtype, entries, assert_equal) -> SampleResult:
    """Compare torch.autograd.grad of one sample on mlu with the CPU's."""
    expectation, unchecked, skipped = _expected_run(entries, GRADIENT, sample, index)
    if skipped is not None:
        return skipped
    twin = sample_to_cpu(sample)
    try:
        expected, why_not = _gradients(op, twin, seed=index)
    except Exception as error:  # noqa: BLE001  the CPU refuses the sample: compare the forward test instead
        return SampleResult(index, SKIPPED, message=f"the CPU raised: {_short(error)}")
    if why_not:
        return SampleResult(index, SKIPPED, message=why_not)
    mlu_error = None
    with _FallbackWatch() as watch:
        try:
            actual, _ = _gradients(op, sample, seed=index)
            _synchronize()
        except Exception as error:  # noqa: BLE001
            mlu_error = error
    if mlu_error is not None:
        return _classify(expectation, f"mlu raised, the CPU did not: {_short(mlu_error)}", ERROR, index,
                         watch.names)
    if actual is None:
        return _classify(expectation, "mlu gives no gradient, the CPU does", FAILED, index, watch.names)
    pairs = [(a, e) for a, e in zip(actual, expected)]
    for position, (got, want) in enumerate(pairs):
        if (got is None) != (want is None):
            problem = f"gradient {position}: {'None' if got is None else 'a tensor'} on mlu, " \
                      f"{'None' if want is None else 'a tensor'} on the CPU"
            return _classify(expectation, problem, FAILED, index, watch.names)
    got_list = [g for g in actual if g is not None]
    want_list = [g for g in expected if g is not None]
    problem = _compare(assert_equal, got_list, want_list, dtype, unchecked, tolerances=GRADIENT_TOLERANCES)
    if unchecked and problem is None:
        return SampleResult(index, SKIPPED, watch.names, f"values not compared: {expectation.reason}")
    return _classify(expectation, problem, FAILED, index, watch.names)


# ---- one op ---------------------------------------------------------------------------------------------------------
def _samples(op, device, dtype, phase: str):
    """Forward: the OpInfo's reference inputs, as PyTorch's compare-with-CPU test takes them (its sample inputs
    plus extremal values, large and non-contiguous tensors, where the OpInfo defines them); gradient: its sample
    inputs with requires_grad."""
    if phase == FORWARD:
        return op.reference_inputs(device, dtype)
    return op.sample_inputs(device, dtype, requires_grad=True)


def run_phase(op, device: str, dtype, phase: str, assert_equal: Callable) -> PhaseRecord:
    """Every sample of `op` in `phase` (FORWARD or GRADIENT) on `device` against the CPU."""
    record = PhaseRecord(op=op.full_name, phase=phase, dtype=str(dtype).replace("torch.", ""))
    started = time.perf_counter()
    skip = E.whole_op_skip(op.full_name, phase)
    if skip is not None:
        record.skipped_reason = skip.reason
        return record
    entries = E.expectations_for(op.full_name)
    check = forward_sample if phase == FORWARD else gradient_sample
    torch.manual_seed(0)
    try:
        for index, sample in enumerate(_samples(op, device, dtype, phase)):
            record.samples.append(check(op, sample, index, dtype, entries, assert_equal))
    except Exception as error:  # noqa: BLE001  making the samples failed: one error for the op
        record.samples.append(SampleResult(len(record.samples), ERROR, (),
                                           f"making the samples failed: {_short(error)} "
                                           f"{traceback.format_exc(limit=-1).splitlines()[-2].strip()}"[:MESSAGE_LIMIT]))
    record.seconds = time.perf_counter() - started
    return record
