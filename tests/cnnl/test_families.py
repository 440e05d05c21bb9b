"""The op families of docs/cnnl.md are the one map of cnnl by subject: every op module belongs to exactly one family,
the family's page names its modules, and each bench case sits in the case module of its function's family."""
import re
from pathlib import Path

import cnnl
from cnnl._function_index import FUNCTION_MODULES
from mlutools.bench import cases

DOCS = Path(__file__).resolve().parents[2] / "docs"
ROW = re.compile(r"^\| [^|]*\(`docs/(cnnl_\w+)\.md`\) \| ([^|]+) \|", re.M)


def families() -> dict:
    """page name (cnnl_<family>) -> the op modules its row of the table in docs/cnnl.md lists."""
    table = {}
    for page, modules in ROW.findall((DOCS / "cnnl.md").read_text()):
        table[page] = {re.sub(r"\s*\(.*\)", "", name).strip() for name in modules.split(",")}
    return table


def test_every_op_module_is_in_exactly_one_family():
    listed = [module for modules in families().values() for module in modules]
    assert sorted(listed) == sorted(cnnl.OP_MODULES)


def test_each_family_page_exists_and_names_its_op_modules():
    for page, modules in families().items():
        text = (DOCS / f"{page}.md").read_text()
        code = text[text.index("## Code"):text.index("\n## ", text.index("## Code") + 1)]
        for module in modules:
            assert f"{module}.py" in code, f"docs/{page}.md does not name cnnl/ops/{module}.py in its Code table"


def test_each_bench_case_sits_with_its_family():
    family_of = {module: page.removeprefix("cnnl_") for page, modules in families().items() for module in modules}
    for family in cases.FAMILIES:
        name = family.__name__.rsplit(".", 1)[-1]
        for case in family.CASES:
            if not case.function.startswith("cnnl"):
                assert name == "transfers", (case.op, name)
                continue
            module = FUNCTION_MODULES[case.function]
            assert family_of[module] == name, f"{case.op} ({case.function}, ops/{module}.py) is in cases/{name}.py"
