"""Errors at the launch call, naming the kernel, the parameter and the expected type (not at the next sync with a
numba type dump); compile time kept out of notifier timings."""
import importlib
import time

import pytest

import cnrt

from .robust_kernels import calls_a_missing_intrinsic, passes_an_int_as_a_buffer, typed_args


kernel_module = importlib.import_module("mlusim.bang.kernel")  # mlusim.bang.kernel is also a function


def _launch_error(kernel, *args) -> cnrt.CnrtError:
    with pytest.raises(cnrt.CnrtError) as error:
        kernel[(1, 1, 1), cnrt.cnrtFuncTypeBlock, None](*args)
    return error.value


@pytest.mark.parametrize("args, words", [
    ((1.5, 4, 1.0), ("'x'", "bang.gdram(bang.float32)", "device address", "float 1.5")),
    (("x", 4, 1.0), ("'x'", "device address", "str")),
    ((None, 2**63, 1.0), ("'n'", "int64", str(2**63))),
    ((None, 4.0, 1.0), ("'n'", "an int", "float")),
    ((None, 4, "2"), ("'scale'", "a float", "str")),
    ((None, 4), ("takes 3 argument(s)", "x, n, scale", "got 2")),
])
def test_wrong_arguments_fail_at_the_launch(board, args, words):
    error = _launch_error(typed_args, *args)
    assert error.code == cnrt.cnrtErrorArgsInvalid
    text = str(error)
    assert "cnrtInvokeKernel" in text and "kernel 'typed_args'" in text, text
    for word in words:
        assert word in text, (word, text)


def test_pointer_arguments_are_checked_at_the_launch(board):
    pointer = cnrt.malloc(256)
    assert "not aligned for float32" in str(_launch_error(typed_args, pointer + 2, 4, 1.0))
    cnrt.free(pointer)
    assert "use after free" in str(_launch_error(typed_args, pointer, 4, 1.0))
    assert "of no device" in str(_launch_error(typed_args, 12345, 4, 1.0))


def test_a_missing_intrinsic_fails_at_the_launch(board):
    error = _launch_error(calls_a_missing_intrinsic, 0)
    assert error.code == cnrt.cnrtErrorInvalidKernel
    assert "kernel 'calls_a_missing_intrinsic'" in str(error) and "bang.active_softsign" in str(error), str(error)


def test_a_typing_error_names_the_operand_not_a_numba_dump(board):
    error = _launch_error(passes_an_int_as_a_buffer, 0)
    text = str(error)
    assert error.code == cnrt.cnrtErrorInvalidKernel
    assert "add src1" in text and "expected a bang pointer" in text and "int64" in text, text
    assert len(text) < 600 and "\x1b[" not in text, text


@pytest.mark.mlusim_sanitize(exclude="initcheck")  # the kernel reads a buffer nothing wrote: only its timing matters
def test_compile_time_is_kept_out_of_notifier_host_times(board, monkeypatch):
    """A kernel's first launch compiles it at the call; the queue waits meanwhile, but the elapsed time between the
    notifiers around the launch is the kernel's, not the compiler's."""
    compile_seconds = 0.5
    original = kernel_module.Kernel._compiled_body

    def slow_compile(self, sample_args):  # a compiler that takes half a second for every new signature
        key = tuple(kernel_module._type_key(a) for a in sample_args)
        if key not in self._entries:
            began = time.perf_counter()
            entry = original(self, sample_args)
            time.sleep(max(0.0, compile_seconds - (time.perf_counter() - began)))
            self.compiles.append(kernel_module.CompileRecord("slow", compile_seconds, False))
            return entry
        return original(self, sample_args)

    monkeypatch.setattr(kernel_module.Kernel, "_compiled_body", slow_compile)
    fresh = typed_args
    monkeypatch.setattr(fresh, "_entries", {})   # as if never launched: the next launch "compiles"
    monkeypatch.setattr(fresh, "_prepared", set())
    queue = cnrt.queueCreate()
    start, end = cnrt.notifierCreate(), cnrt.notifierCreate()
    pointer = cnrt.malloc(256)
    cnrt.placeNotifier(start, queue)
    began = time.perf_counter()
    fresh[(1, 1, 1), cnrt.cnrtFuncTypeBlock, queue](pointer, 4, 2.0)
    cnrt.placeNotifier(end, queue)
    cnrt.queueSync(queue)
    wall_ms = (time.perf_counter() - began) * 1e3
    elapsed = cnrt.notifierElapsedTime(start, end)
    assert wall_ms > compile_seconds * 1e3
    assert elapsed < wall_ms - 0.8 * compile_seconds * 1e3, (elapsed, wall_ms)
    assert elapsed >= 0
