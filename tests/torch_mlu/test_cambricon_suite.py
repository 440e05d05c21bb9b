"""`mlusim conformance torch_mlu PATH` on a small suite laid out as Cambricon's (test/common_utils.py, test/<folder>/
test_*.py): each file in its own pytest process, every case's outcome and each skip's reason read back, a file that
hangs ended at its limit, cases that need a real card skipped with the reason, the per-file table and totals."""
import json
import textwrap

import pytest

from mlutools import cli
from torch_mlu.conformance import cambricon, hardware

pytestmark = pytest.mark.child_processes  # the suite runs in pytest processes

COMMON = """
import torch
from torch.testing._internal.common_utils import TestCase, run_tests
"""
OPS = """
import os, sys, unittest
sys.path.append(os.path.dirname(os.path.abspath(__file__)) + "/../")
from common_utils import TestCase
import torch


class TestAdd(TestCase):
    def test_add_matches_cpu(self):
        a = torch.randn(4, 3)
        self.assertEqual((a.to("mlu") + 1).cpu(), a + 1)

    def test_wrong_on_purpose(self):
        self.assertEqual(torch.ones(2, device="mlu").cpu(), torch.zeros(2))

    @unittest.skip("not test")
    def test_skipped_by_the_suite(self):
        pass

    def test_reads_a_card_counter(self):
        raise RuntimeError("only a real card has this")
"""
HANG = """
import time
from torch.testing._internal.common_utils import TestCase


class TestHang(TestCase):
    def test_forever(self):
        time.sleep(3600)
"""


@pytest.fixture
def suite(tmp_path):
    test = tmp_path / "torch_mlu" / "test"
    (test / "torch_ops").mkdir(parents=True)
    (test / "mlu").mkdir()
    (test / "common_utils.py").write_text(textwrap.dedent(COMMON))
    (test / "torch_ops" / "test_add.py").write_text(textwrap.dedent(OPS))
    (test / "mlu" / "test_hang.py").write_text(textwrap.dedent(HANG))
    return tmp_path / "torch_mlu"


SKIPS = {"torch_ops/test_add.py::TestAdd::test_reads_a_card_counter": "the card's performance counters"}


def test_every_case_is_counted_and_every_skip_has_its_reason(suite):
    reports = cambricon.run(suite, folders=("torch_ops",), timeout=600, case_timeout=300, skips=SKIPS)
    (report,) = reports
    outcomes = {case.name.rsplit("::", 1)[-1]: (case.outcome, case.message) for case in report.cases}
    assert outcomes["test_add_matches_cpu"][0] == "passed"
    assert outcomes["test_wrong_on_purpose"][0] == "failed"
    assert outcomes["test_skipped_by_the_suite"] == ("skipped", "not test")
    assert outcomes["test_reads_a_card_counter"] == ("skipped", "needs a real MLU: the card's performance counters")
    lines = cambricon.table_lines(reports)
    assert any(line.startswith("torch_ops/test_add.py") and line.split()[1:5] == ["1", "1", "0", "2"]
               for line in lines)
    assert any(line.startswith("all") and "pass rate 50.0%" in line for line in lines)
    assert cambricon.skip_reasons(reports) == {"not test": 1, "needs a real MLU: the card's performance counters": 1}


def test_a_file_that_hangs_ends_at_its_limit_and_the_command_fails(suite, tmp_path, capsys):
    status = cli.main(["conformance", "torch_mlu", str(suite / "test"), "--folders", "mlu", "--timeout", "600",
                       "--case-timeout", "3", "--quiet", "--json", str(tmp_path / "out.json")])
    out = capsys.readouterr().out
    assert status == 1
    row = next(line for line in out.splitlines() if line.startswith("mlu/test_hang.py"))
    assert row.split()[1:5] == ["0", "1", "0", "0"] and "Timeout" in json.loads(
        (tmp_path / "out.json").read_text())[0]["cases"][0]["message"]


def test_a_path_that_is_no_checkout_is_refused(tmp_path, capsys):
    assert cli.main(["conformance", "torch_mlu", str(tmp_path)]) == 2
    assert "no common_utils.py" in capsys.readouterr().err
    with pytest.raises(ValueError, match="not a folder of the suite"):
        (tmp_path / "test").mkdir()
        (tmp_path / "test" / "common_utils.py").write_text("")
        cambricon.run(tmp_path, folders=("mlu",))


def test_case_ids_are_read_from_the_suites_test_folder(tmp_path):
    (tmp_path / "test" / "mlu").mkdir(parents=True)
    (tmp_path / "test" / "common_utils.py").write_text("")
    case = hardware.suite_id(tmp_path / "test" / "mlu" / "test_x.py", "test_x.py::TestX::test_y")
    assert case == "mlu/test_x.py::TestX::test_y"
    assert hardware.reason_for(case, {"mlu/test_x.py::TestX": "cnmon"}) == "cnmon"
    assert hardware.reason_for(case, {"mlu/test_z.py": "cnmon"}) is None
