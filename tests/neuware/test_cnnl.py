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
