"""cnnl.h from C: opTensor with broadcasting, matMul (+ the v2 descriptor/heuristic protocol), convolution forward
with workspace (float and half), softmax, transpose, array and scalar arguments, and the status of bad calls,
each against values the program computes itself (programs/cnnl_ops.c)."""


def test_ops_program(programs):
    result = programs.run("cnnl_ops.c")
    assert "0 failure(s)" in result.stdout


def test_more_argument_forms(programs):
    """Typed host arrays and scalars, scalars chosen by pointer mode or by operation, several counted arrays
    (programs/cnnl_more.c)."""
    result = programs.run("cnnl_more.c")
    assert "0 failure(s)" in result.stdout


def test_unsigned_casts_as_strided_backward_and_flash_preference(programs):
    """programs/cnnl_unsigned.cpp: the uint32/uint64 casts DIOPI uses (saturating), cnnlAsStridedBackward with
    uint32_t arguments, the flash attention descriptors with a cnnlActivationPreference_t."""
    result = programs.run("cnnl_unsigned.cpp")
    assert "0 failure(s)" in result.stdout, result.stdout


def test_what_cnnl_accepts_runs_with_one_warning_per_call_site_or_fails_when_strict(programs):
    """programs/lenient.cpp: DIOPI's 1-D NHWC bias descriptor and its never-set op-tensor descriptor run (CNNL adds),
    each C function warning once on stderr; MLUSIM_STRICT=1 makes both CNNL_STATUS_BAD_PARAM."""
    from .conftest import clean_environment
    lenient = programs.run("lenient.cpp")
    assert "0 failure(s)" in lenient.stdout, lenient.stdout
    warnings = [line for line in lenient.stderr.splitlines() if "LenientWarning" in line]
    assert len(warnings) == 2, lenient.stderr
    assert any("cnnlSetTensorDescriptor" in line and "describes 4 dimensions, got 1" in line for line in warnings)
    assert any("cnnlOpTensor" in line and "never set" in line for line in warnings)
    strict = programs.run("lenient.cpp", "strict", env=clean_environment(MLUSIM_STRICT="1"))
    assert "0 failure(s)" in strict.stdout, strict.stdout
    assert "LenientWarning" not in strict.stderr


def test_foreach_ops_and_remembered_descriptors(programs):
    """The foreach ops with arrays of descriptors and pointers, scalars by mode, a weight behind an array entry;
    cnnlOpTensor again with the same descriptor handles, and after one was set again (programs/cnnl_foreach.c)."""
    result = programs.run("cnnl_foreach.c")
    assert "0 failure(s)" in result.stdout, result.stdout
