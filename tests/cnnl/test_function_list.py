"""Every CNNL function a real backend (DeepLink DIOPI's Cambricon implementation) calls exists in `cnnl` under its
real name and takes its C arity under the Python rule of DESIGN.md (output parameters returned, an array and its
count one sequence).

data/cnnl-functions-used-by-diopi.txt is the list as measured; data/cnnl-c-signatures.txt holds the C parameters of
each function (its header comment gives the notation). Lines of the list that are not CNNL functions are named
below with the reason.
"""
import inspect
import re
from pathlib import Path

import pytest

import cnnl

DATA = Path(__file__).parent / "data"

#: lines of the list that are not CNNL functions: what each is in DIOPI's sources
NOT_FUNCTIONS = {
    "cnnlActivationInternal": "a DIOPI helper function (functions/activation.cpp) over cnnlActivationForward",
    "cnnlActivationBackwardInternal": "a DIOPI helper function (functions/activation.cpp) over "
                                      "cnnlActivationBackward",
    "cnnlTransformAdaptor": "a DIOPI helper template (common/basic_op.cpp) over cnnlTransform_v2",
    "cnnlConvDesc": "a DIOPI local variable (a CnnlResourceGuard of a convolution descriptor)",
    "cnnlPoolDesc": "a DIOPI local variable (a CnnlResourceGuard of a pooling descriptor)",
    "cnnlTransposeDesc": "a DIOPI local variable (a CnnlResourceGuard of a transpose descriptor)",
    "cnnlMatMulDesc": "a DIOPI local variable (a CnnlResourceGuard of cnnlMatMulDescCreate/Destroy)",
    "cnnlMatMulAlgo": "a DIOPI local variable (a CnnlResourceGuard of cnnlMatMulAlgoCreate/Destroy)",
    "cnnlMatMulHeuristic": "a DIOPI local variable (a CnnlResourceGuard of cnnlCreate/DestroyMatMulHeuristicResult)",
    "cnnlHandle": "a DIOPI local variable (the cnnlHandle_t its handle pool creates)",
    "cnnlHandlePool_": "a DIOPI member variable (the map of handles per queue)",
    "cnnlGenerator": "a DIOPI local variable (a cnnlRandGenerator_t)",
    "cnnlDtype": "a DIOPI local variable (a cnnlDataType_t)",
    "cnnlType": "a DIOPI parameter name (a cnnlDataType_t *)",
    "cnnlLayout": "a DIOPI parameter name (a cnnlTensorLayout_t &)",
    "cnnlReduction": "a DIOPI local variable (a cnnlMSELossReduction_t)",
    "cnnlInShape": "a DIOPI local variable (a shape vector in common/basic_op.cpp)",
    "cnnlInStride": "a DIOPI local variable (a stride vector in common/basic_op.cpp)",
    "cnnlOtherShape": "a DIOPI local variable (a shape vector in common/basic_op.cpp)",
    "cnnlOtherStride": "a DIOPI local variable (a stride vector in common/basic_op.cpp)",
}

_PARAMETER = re.compile(r"^(&)?(\w+)(?:\[(\w+)\])?$")


def _listed_names() -> list[str]:
    return [line.strip() for line in (DATA / "cnnl-functions-used-by-diopi.txt").read_text().splitlines()
            if line.strip()]


def _signatures() -> dict[str, list[str]]:
    result = {}
    for line in (DATA / "cnnl-c-signatures.txt").read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = re.fullmatch(r"(\w+)\((.*)\)", line)
        assert match, f"unparsable signature line {line!r}"
        text = match.group(2).strip()
        result[match.group(1)] = [p.strip() for p in text.split(",")] if text else []
    return result


def python_arity(parameters: list[str]) -> int:
    """The number of arguments the Python form takes: C parameters minus outputs and array counts."""
    parsed = []
    for parameter in parameters:
        match = _PARAMETER.match(parameter)
        assert match, f"bad parameter {parameter!r}"
        parsed.append(match.groups())
    names = [name for _, name, _ in parsed]
    counts = {count for _, _, count in parsed if count}
    for count in counts:
        assert count in names, f"array count {count!r} is not a parameter"
    outputs = sum(1 for output, _, _ in parsed if output)
    return len(parsed) - outputs - len(counts)


def _accepts(function, arity: int) -> bool:
    try:
        inspect.signature(function).bind(*range(arity))
    except TypeError:
        return False
    return True


LISTED = _listed_names()
SIGNATURES = _signatures()
FUNCTIONS = [name for name in LISTED if name not in NOT_FUNCTIONS]


def test_the_list_is_split_into_functions_and_named_non_functions():
    assert len(LISTED) == len(set(LISTED)) == 311
    assert set(NOT_FUNCTIONS) <= set(LISTED)
    assert set(SIGNATURES) == set(FUNCTIONS), "every listed function has a C signature, and nothing else does"


def test_python_arity_rule():
    assert python_arity(["handle", "x_desc", "&size"]) == 2
    assert python_arity(["handle", "n", "descs[n]", "ptrs[n]", "out"]) == 4
    assert python_arity(["&desc"]) == 0


@pytest.mark.parametrize("name", FUNCTIONS)
def test_listed_function_exists_with_its_c_arity(name):
    function = getattr(cnnl, name, None)
    assert function is not None, f"cnnl has no {name}"
    python_name = name[len("cnnl"):][:1].lower() + name[len("cnnl") + 1:]
    assert getattr(cnnl, python_name) is function, f"cnnl.{python_name} is not cnnl.{name}"
    arity = python_arity(SIGNATURES[name])
    assert _accepts(function, arity), (f"{name} should take {arity} arguments ({SIGNATURES[name]}); the Python "
                                       f"form is {inspect.signature(function)}")
