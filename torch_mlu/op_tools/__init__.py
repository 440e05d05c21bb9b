"""Op tools for finding the op that goes wrong on mlu (in the spirit of DeepLink ditorch's op_tools).

Every tool sees each aten op that touches an mlu tensor (forward, and backward ops in the autograd threads) through
one TorchDispatchMode, and works as a context manager or, around an unchanged script, through MLUSIM_OP_TOOLS
(environment.py):

- capture(path): each op's name, phase, inputs' and outputs' shapes, dtypes, strides, devices, host time; written
  as JSON lines, read back by load_capture(path).
- autocompare(save_dir): each op run again on the CPU; the first op whose result (or, for backward ops, gradient)
  differs beyond tolerance is named and its arguments saved; replay(path) runs a saved call again.
- timing(path): per-op host time and modelled MLU time (table_lines(), CSV).
- fallback_report(path): which aten ops ran on the CPU fallback, how often, from which op and call site.
"""
from __future__ import annotations

from .autocompare import AutoCompare, Mismatch, OpMismatchError, Replay, difference, replay
from .capture import OpCapture, load_capture
from .fallback_report import FallbackReport
from .timing import OpTimer


def capture(path=None) -> OpCapture:
    """An OpCapture (a context manager): records every op, written to `path` as JSON lines when it ends."""
    return OpCapture(path)


def autocompare(save_dir=None, stop_at_first: bool = False, tolerances: dict | None = None) -> AutoCompare:
    """An AutoCompare (a context manager): reruns each op on the CPU; mismatching calls saved to `save_dir`;
    `stop_at_first` raises OpMismatchError at the first difference; `tolerances` maps dtypes to (atol, rtol)."""
    return AutoCompare(save_dir, stop_at_first, tolerances)


def timing(path=None) -> OpTimer:
    """An OpTimer (a context manager): host and modelled MLU time per op; CSV written to `path` when it ends."""
    return OpTimer(path)


def fallback_report(path=None) -> FallbackReport:
    """A FallbackReport (a context manager): the ops that ran on the CPU fallback; its table written to `path`."""
    return FallbackReport(path)


__all__ = ["AutoCompare", "FallbackReport", "Mismatch", "OpCapture", "OpMismatchError", "OpTimer", "Replay",
           "autocompare", "capture", "difference", "fallback_report", "load_capture", "replay", "timing"]
