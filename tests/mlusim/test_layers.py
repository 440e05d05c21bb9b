"""The floors of docs/architecture.md: imports point down only. Checked on the source's import statements, including
imports inside functions. A folder is a floor: no package holds a part of a higher floor, so no carve-out is needed.

floor 1  mlusim                               the hardware core: imports no API package
floor 2  cnrt                                 over mlusim
floor 3  cnnl, cncl, cndev, cndrv             over cnrt; none of them imports another
floor 4  torch_mlu, neuware, magicmind        the front ends, over the libraries; none imports another
floor 5  mlutools                             the `mlusim` command, bench suites, pytest plugin: over everything

The front ends call the libraries' public functions only, never their internals (INTERNAL_MODULES).
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FLOORS = {
    "mlusim": 1,
    "cnrt": 2,
    "cnnl": 3, "cncl": 3, "cndev": 3, "cndrv": 3,
    "torch_mlu": 4, "neuware": 4, "magicmind": 4,
    "mlutools": 5,
}
#: Packages of one floor that may not import each other (on floor 5 there is only one).
SIDE_BY_SIDE = {3, 4}
#: The libraries' internals, which the front ends never import: they call the public functions (cnnl.opTensor),
#: whose checks, and whose memory of what they checked (cnnl.validated), they would otherwise reach around.
INTERNAL_MODULES = ("cnnl.kernels", "cnnl.ops", "cnnl.opcall")
#: The front ends held to that (all of floor 4).
PUBLIC_API_ONLY = ("torch_mlu", "neuware", "magicmind")


def _imported_modules(path: Path) -> set:
    """Every module an import statement of the file names (for `from a import b`: a and a.b, since b may be a
    module)."""
    tree = ast.parse(path.read_text(), str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _imported_packages(path: Path) -> set:
    return {name.split(".")[0] for name in _imported_modules(path)}


def _internal_imports(package: str, root: Path = ROOT) -> dict:
    found = {}
    for path in sorted((root / package).rglob("*.py")):
        bad = sorted(name for name in _imported_modules(path)
                     if any(name == internal or name.startswith(internal + ".") for internal in INTERNAL_MODULES))
        if bad:
            found[path.relative_to(root).as_posix()] = bad
    return found


def _wrong_imports(package: str, root: Path = ROOT) -> dict:
    floor = FLOORS[package]
    wrong = {}
    for path in sorted((root / package).rglob("*.py")):
        bad = sorted(other for other in _imported_packages(path) & FLOORS.keys() if other != package and (
            FLOORS[other] > floor or (FLOORS[other] == floor and floor in SIDE_BY_SIDE)))
        if bad:
            wrong[path.relative_to(root).as_posix()] = bad
    return wrong


@pytest.mark.parametrize("package", sorted(p for p in FLOORS if (ROOT / p).is_dir()))
def test_imports_point_down(package):
    assert _wrong_imports(package) == {}


@pytest.mark.parametrize("package", PUBLIC_API_ONLY)
def test_front_ends_call_only_the_public_functions(package):
    assert _internal_imports(package) == {}


def test_every_package_has_a_floor():
    packages = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests", "benchmarks"}
    assert packages <= FLOORS.keys()


def test_the_checker_sees_imports_inside_functions(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    import cnrt\n    from cncl.clique import x\n")
    assert _imported_packages(probe) == {"cnrt", "cncl"}


def test_the_checker_finds_upward_and_sideways_imports(tmp_path):
    (tmp_path / "cnrt").mkdir()
    (tmp_path / "cnrt" / "up.py").write_text("import cnnl\nimport mlusim\n")
    (tmp_path / "cncl").mkdir()
    (tmp_path / "cncl" / "beside.py").write_text("from cnnl import ops\nimport cnrt\n")
    assert _wrong_imports("cnrt", tmp_path) == {"cnrt/up.py": ["cnnl"]}
    assert _wrong_imports("cncl", tmp_path) == {"cncl/beside.py": ["cnnl"]}


def test_the_checker_finds_imports_of_internal_modules(tmp_path):
    (tmp_path / "torch_mlu").mkdir()
    (tmp_path / "torch_mlu" / "reach.py").write_text(
        "import cnnl\nfrom cnnl import kernels\nfrom cnnl.opcall import OpCall\nfrom cnnl.dtypes import name\n"
        "def f():\n    import cnnl.ops.binary\n")
    assert _internal_imports("torch_mlu", tmp_path) == {
        "torch_mlu/reach.py": ["cnnl.kernels", "cnnl.opcall", "cnnl.opcall.OpCall", "cnnl.ops.binary"]}
