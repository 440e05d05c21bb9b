"""The floors of docs/architecture.md: imports point down only. The hardware core (mlusim, but its front ends)
imports no API package; cnrt imports neither cnnl nor cncl (nor cndev, cndrv); cnnl and cncl do not import each
other; cndev and cndrv (beside cnrt, over it) import neither each other nor the op libraries; only front ends import
torch_mlu, and the magicmind front end does not. Checked on the source's import statements, including imports inside functions."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
API_PACKAGES = {"cnrt", "cnnl", "cncl", "cndev", "cndrv", "torch_mlu"}
#: Parts of the mlusim package that are front ends (floor 4): they may import the API packages.
FRONT_ENDS = ("mlusim/cli.py", "mlusim/bench/", "mlusim/capi/", "mlusim/pytest_plugin.py")
FORBIDDEN = {
    "mlusim": API_PACKAGES,
    "cnrt": {"cnnl", "cncl", "cndev", "cndrv", "torch_mlu"},
    "cnnl": {"cncl", "torch_mlu"},
    "cncl": {"cnnl", "torch_mlu"},
    "cndev": {"cnnl", "cncl", "cndrv", "torch_mlu"},  # CNDev and CNDrv sit beside CNRT and may use it
    "cndrv": {"cnnl", "cncl", "cndev", "torch_mlu"},
    "magicmind": {"torch_mlu"},  # a front end beside torch_mlu: over cnrt/cnnl and the core, never torch_mlu
}


def _imported_packages(path: Path) -> set:
    tree = ast.parse(path.read_text(), str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _modules(package: str):
    for path in sorted((ROOT / package).rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if package == "mlusim" and relative.startswith(FRONT_ENDS):
            continue
        yield relative, path


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_imports_point_down(package):
    wrong = {relative: sorted(_imported_packages(path) & FORBIDDEN[package])
             for relative, path in _modules(package)}
    assert {k: v for k, v in wrong.items() if v} == {}


def test_the_checker_sees_imports_inside_functions(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    import cnrt\n    from cncl.clique import x\n")
    assert _imported_packages(probe) == {"cnrt", "cncl"}
