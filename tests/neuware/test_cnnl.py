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
