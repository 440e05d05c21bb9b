"""`mlusim bench` end to end on the small size set: every case runs, the table, CSV, JSON and plot outputs."""
import csv
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from mlutools import cli

from mlutools.bench import report, suite


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    """The whole suite at the small size, once, with every output asked for."""
    folder = tmp_path_factory.mktemp("bench")
    paths = {name: folder / f"bench.{name}" for name in ("csv", "json", "png")}
    captured = []
    original = cli._say
    cli._say = captured.append
    try:
        cli.main(["bench", "--sizes", "small", "--repeats", "1", "--warmup", "0", "--collectives", "--no-progress",
                  "--csv", str(paths["csv"]), "--json", str(paths["json"]), "--plot", str(paths["png"])])
    finally:
        cli._say = original
    return captured, paths


def test_every_case_and_data_type_gets_a_row(small_run):
    _, paths = small_run
    with paths["csv"].open() as handle:
        rows = list(csv.DictReader(handle))
    expected = [(case.op, dtype) for case, _, dtype in suite.plan(suite.CASES, ["small"])]
    assert [(r["op"], r["dtype"]) for r in rows] == expected + [("allReduce 2 ranks", "float")]
    assert set(rows[0]) == set(report.COLUMNS)
    for row in rows:
        assert float(row["host_ms"]) > 0 and float(row["model_us"]) > 0 and float(row["numpy_ms"]) > 0
        assert row["bound"] in ("compute", "memory", "launch", "copy", "kernel", "link")
        assert row["board"] == "MLU370-X4"


def test_the_table_lists_host_and_modelled_time_per_op(small_run):
    lines, _ = small_run
    header = next(line for line in lines if line.startswith("op "))
    for column in ("host ms", "noise", "MLU us", "MLU rate", "bound", "numpy ms", "host/np"):
        assert column in header
    assert any("estimate" in line for line in lines)
    matmul = next(line for line in lines if line.startswith("matmul ") and " half " in line)
    assert "256x256x256" in matmul


def test_json_holds_meta_and_the_rows(small_run):
    _, paths = small_run
    document = json.loads(paths["json"].read_text())
    assert document["meta"]["board"] == "MLU370-X4" and "estimate" in document["meta"]["note"]
    rows = document["results"]["ops"]
    assert rows and {"op", "host_ms", "model_us", "rate", "ratio"} <= set(rows[0])


def test_the_plot_is_a_png_or_says_why_not(small_run):
    lines, paths = small_run
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "plot skipped: matplotlib not installed" in " ".join(lines)
    else:
        assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_matplotlib_the_plot_is_skipped(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert report.write_plot([], tmp_path / "p.png", "title") is None
    assert not (tmp_path / "p.png").exists()


def test_a_large_half_matmul_is_compute_bound_near_the_efficiency_of_the_peak():
    row = suite.measure(next(c for c in suite.CASES if c.op == "matmul"), "medium", "half", repeats=1, warmup=0)
    assert row["bound"] == "compute" and row["rate_unit"] == "TFLOPS"
    from mlusim import arch, cost
    peak = arch.board("MLU370-X4").peak_ops("half") / 1e12
    assert 0.7 * cost.TENSOR_EFFICIENCY * peak < row["rate"] <= cost.TENSOR_EFFICIENCY * peak


def test_op_selection():
    assert [c.op for c in suite.select_cases(["matmul"])] == ["matmul"]
    assert [c.op for c in suite.select_cases(["batchmatmul"])] == ["batch matmul", "batch matmul v2"]
    assert [c.op for c in suite.select_cases(["cnnlCopy"])] == ["copy"]
    with pytest.raises(ValueError, match="no benchmark case matches"):
        suite.select_cases(["no such op"])
    with pytest.raises(ValueError, match="unknown size"):
        suite.check_sizes(["huge"])


def test_every_cnnl_op_has_a_case_or_is_reported():
    uncovered = suite.uncovered_functions()
    covered = {case.function for case in suite.CASES}
    assert not covered & set(uncovered)
    assert "cnnlMatMul" in covered and "cnnlGetOpTensorWorkspaceSize" not in uncovered


def test_every_queued_cnnl_op_has_a_case():
    assert suite.uncovered_functions() == []
    rand = next(c for c in suite.CASES if c.function == "cnnlRandGenerateUniform")
    assert "cnnlRandMakeMTGP32KernelState" in rand.exercises


def test_bad_options_are_usage_errors(capsys):
    for argv in (["bench", "--ops", "nothing"], ["bench", "--sizes", "huge"], ["bench", "--board", "MLU999"],
                 ["bench", "--repeats", "0"], ["bench", "nosuchsuite"]):
        with pytest.raises(SystemExit) as exit_info:
            cli.main(argv)
        assert exit_info.value.code == 2
    assert "unknown board" in capsys.readouterr().err


def test_the_command_line_runs_with_a_board_choice():
    done = subprocess.run([sys.executable, "-m", "mlutools.cli", "bench", "--ops", "copy", "--sizes", "small",
                           "--repeats", "1", "--board", "MLU590-M9"], capture_output=True, text=True, timeout=300,
                          check=True)
    assert "board MLU590-M9" in done.stdout
    assert "copy" in done.stdout and "2 measurements" in done.stdout
    assert "1/2" in done.stderr  # the progress bar


def test_suites_can_hand_their_functions_to_spawned_processes():
    """`mlusim bench cncl` starts its ranks with multiprocessing's spawn, which pickles a function of the loaded
    suite by module name: the child must be able to import that module."""
    import multiprocessing

    from mlutools.bench import suite_module

    module = suite_module("cncl")
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        assert pool.apply(module.iterations, (1024,)) == module.iterations(1024)


def _spin_setting(environment, statement):
    """(GOMP_SPINCOUNT after importing the CLI, after importing torch_spin, its note) in a fresh process."""
    env = {k: v for k, v in os.environ.items() if k != "GOMP_SPINCOUNT"}
    env.update(environment)
    code = (f"{statement}\nimport os, mlutools.cli\nbefore = os.environ.get('GOMP_SPINCOUNT')\n"
            "from mlutools.bench import torch_spin\n"
            "print(before, '|', os.environ.get('GOMP_SPINCOUNT'), '|', torch_spin.note())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True,
                          env=env)
    return done.stdout.strip().split(" | ")


def test_the_torch_suites_shorten_torchs_openmp_spin_before_torch_loads():
    """libgomp reads GOMP_SPINCOUNT when torch loads it: the torch-comparing suites set it first (unless the user
    did), and say which setting holds, also when torch was loaded first (then libgomp's own). The CLI alone leaves
    it unset, so the programs it launches never see it."""
    from mlutools.bench import torch_spin

    for suite_name in ("bench_torch", "bench_ops_torch"):  # read, not imported: this process keeps its environment
        source = open(importlib.util.find_spec(f"mlutools.bench.{suite_name}").origin).read()
        assert source.index("from mlutools.bench import torch_spin") < source.index("\nimport torch\n")
    before, value, note = _spin_setting({}, "")
    assert before == "None" and value == torch_spin.SPIN_COUNT
    assert note.endswith(f"GOMP_SPINCOUNT={torch_spin.SPIN_COUNT}")
    _, value, note = _spin_setting({"GOMP_SPINCOUNT": "50"}, "")
    assert value == "50" and note.endswith("GOMP_SPINCOUNT=50")
    _, _, note = _spin_setting({}, "import sys; sys.modules.setdefault('torch', None)")
    assert "libgomp's own" in note


def test_a_family_row_is_the_geometric_mean_of_its_rows_and_names_those_above_the_target():
    from mlutools.bench.common import geometric_mean_row, row
    rows = [row("a (ms)", 2.0, 1.0, None), row("b (ms)", 1.0, 2.0, None), row("c (ms)", 4.0, 2.0, None)]
    family = geometric_mean_row("all (ms)", rows, 1.5, short=lambda name: name.removesuffix(" (ms)"))
    assert family["ratio"] == pytest.approx((2.0 * 0.5 * 2.0) ** (1 / 3))  # each row weighs the same
    assert family["ours"] == pytest.approx(2.0) and family["reference"] == pytest.approx(4 ** (1 / 3))
    assert family["pass"] is True and "2 of them above 1.5x: a 2.00, c 2.00" in family["note"]
    assert geometric_mean_row("all (ms)", rows, 1.2)["pass"] is False
    assert "each within 3x" in geometric_mean_row("all (ms)", rows, 3.0)["note"]
