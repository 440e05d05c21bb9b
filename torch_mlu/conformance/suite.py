"""PyTorch's device-generic OpInfo tests instantiated for "mlu".

    from torch_mlu.conformance import suite
    suite.instantiate(globals(), names=["add", "mul"])   # defines TestMluConformanceMLU in this module

gives a unittest class with `test_forward_<op>_mlu_<dtype>` and `test_gradient_<op>_mlu_<dtype>` for each OpInfo
of torch's `op_db` (one dtype per op, chosen as PyTorch's own compare-with-CPU test chooses it: float32 when the op
supports it). Each test compares every sample with the CPU (compare.py) and fails on a sample that fails or
raises unexpectedly (expectations.py lists the known ones); every test appends its PhaseRecord to RECORDS.

torch's test machinery adds its PrivateUse1 test base only if the device is registered and available when
`common_device_type` is first imported; importing torch_mlu first (the torch.backends entry point does it on
`import torch`) is enough. If another module imported it before, the base is added here.
"""
from __future__ import annotations

import os

import torch

import torch_mlu  # noqa: F401  (the device must be registered before common_device_type is imported)

from . import compare

#: every PhaseRecord the instantiated tests made in this process, in order
RECORDS: list = []
GENERIC_NAME = "TestMluConformance"


def _test_machinery():
    os.environ.setdefault("PYTORCH_TEST_WITH_SLOW", "0")
    from torch.testing._internal import common_device_type as device_type
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.testing._internal.common_utils import TestCase
    base = device_type.PrivateUse1TestBase
    if base not in device_type.device_type_test_bases:
        device_type.device_type_test_bases.append(base)
    if base.device_type == "privateuse1":  # its setUpClass renames it; tests are then named ..._mlu_...
        base.setUpClass()
    return device_type, op_db, TestCase


def op_database() -> list:
    """torch's op_db (the OpInfos)."""
    return _test_machinery()[1]


def select(names=None) -> list:
    """The OpInfos whose full name (or name) is in `names` (all of op_db for None), in op_db's order."""
    ops = op_database()
    if names is None:
        return list(ops)
    wanted = set(names)
    chosen = [op for op in ops if op.full_name in wanted or op.name in wanted]
    missing = wanted - {op.full_name for op in chosen} - {op.name for op in chosen}
    if missing:
        raise ValueError(f"no OpInfo named {', '.join(sorted(missing))} in torch's op_db")
    return chosen


def _supports_gradient(op) -> bool:
    return bool(op.supports_autograd) and bool(op.supported_backward_dtypes("cpu"))


def make_generic_class(ops: list, native: bool = False):
    """The generic (device-less) test class for these OpInfos; with `native`, a sample that used the CPU fallback
    fails its test."""
    device_type, _, TestCase = _test_machinery()
    ops_decorator, OpDTypes = device_type.ops, device_type.OpDTypes

    class TestMluConformance(TestCase):
        """Every OpInfo sample on mlu against the CPU: forward results and gradients."""

        #: when True, a sample whose mlu run used the CPU fallback fails the test too
        require_native = native

        def _check(self, phase: str, device: str, dtype, op) -> None:
            record = compare.run_phase(op, device, dtype, phase, self.assertEqual)
            RECORDS.append(record)
            if record.skipped_reason:
                self.skipTest(record.skipped_reason)
            bad = record.unexpected()
            if bad:
                lines = [f"sample {s.index}: {s.status}: {s.message}" for s in bad[:5]]
                self.fail(f"{op.full_name} {phase}: {len(bad)} of {len(record.samples)} samples failed\n"
                          + "\n".join(lines))
            if self.require_native and record.fallback_ops():
                self.fail(f"{op.full_name} {phase}: the mlu run used the CPU fallback for "
                          f"{', '.join(record.fallback_ops())}")

        @ops_decorator(ops, dtypes=OpDTypes.any_one)
        def test_forward(self, device, dtype, op):
            self._check(compare.FORWARD, device, dtype, op)

        @ops_decorator([op for op in ops if _supports_gradient(op)], dtypes=OpDTypes.any_one)
        def test_gradient(self, device, dtype, op):
            self._check(compare.GRADIENT, device, dtype, op)

    return TestMluConformance


def instantiate(scope: dict, names=None, native: bool = False) -> type:
    """Define the mlu test class for the OpInfos named (all of op_db for None) in `scope`; return it. With
    `native`, its tests also fail when a sample used the CPU fallback."""
    device_type, _, _ = _test_machinery()
    generic = make_generic_class(select(names), native)
    scope[GENERIC_NAME] = generic
    device_type.instantiate_device_type_tests(generic, scope, only_for="mlu")
    made = [value for key, value in scope.items() if key.startswith(GENERIC_NAME) and key != GENERIC_NAME]
    if not made:
        raise RuntimeError("torch's test machinery made no mlu test class (is the mlu device available?)")
    return made[0]
