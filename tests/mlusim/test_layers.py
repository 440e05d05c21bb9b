"""The floors of docs/architecture.md: imports point down only. Checked on the source's import statements, including
imports inside functions. A folder is a floor: no package holds a part of a higher floor, so no carve-out is needed.

floor 1  mlusim                               the hardware core: imports no API package
floor 2  cnrt                                 over mlusim
floor 3  cnnl, cncl, cndev, cndrv             over cnrt; none of them imports another
floor 4  torch_mlu, neuware, magicmind        the front ends, over the libraries; none imports another
floor 5  mlutools                             the `mlusim` command, bench suites, pytest plugin: over everything
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


def _imported_packages(path: Path) -> set:
    tree = ast.parse(path.read_text(), str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


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
