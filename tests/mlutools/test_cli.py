"""The mlusim command."""
import subprocess
import sys

import pytest

from mlutools import cli


def test_info_lists_the_devices(capsys, two_devices):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "2 simulated device(s), board MLU370-X4" in out
    assert out.count("MLU370-X4") >= 3
    assert "NRAM 768 KiB" in out


def test_info_runs_as_a_console_command_with_the_board_from_the_environment():
    env = {"MLUSIM_ARCH": "MLU590-H8", "PATH": ""}
    result = subprocess.run([sys.executable, "-m", "mlutools.cli", "info"], capture_output=True, text=True, env=env,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "MLU590-H8" in result.stdout and "65,536 MiB" in result.stdout


def test_unknown_bench_suite_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        cli.main(["bench", "no-such-suite"])


def test_run_starts_ranks_like_torchrun(tmp_path):
    script = tmp_path / "rank.py"
    script.write_text("import os\nprint('rank', os.environ['RANK'], 'of', os.environ['WORLD_SIZE'])\n")
    result = subprocess.run([sys.executable, "-m", "mlutools.cli", "run", "-n", "2", str(script)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "[rank 0] rank 0 of 2" in result.stdout and "[rank 1] rank 1 of 2" in result.stdout
