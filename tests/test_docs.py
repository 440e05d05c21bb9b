"""Every code block of README.md and docs/*.md runs as pasted.

Blocks are marked by their fence's language: `python` blocks are programs and run, each as a file in a fresh
simulator (one interpreter runs them one after the other, resetting the simulator and the environment in between;
blocks that import torch run in a second interpreter, on one simulator);
a `python` block whose first line is `# mlusim run -n N name.py` runs under the launcher with N ranks. `sh`, `text`,
`c` and `cpp` blocks are commands, output and C excerpts (tests/neuware compiles whole C programs) and are skipped; a
block with any other mark (or none) fails the test.
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.child_processes  # the blocks run as programs

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)
RUN, SKIP = {"python"}, {"sh", "text", "c", "cpp"}
LAUNCH = re.compile(r"#\s*mlusim run -n (\d+)\b")


def blocks():
    """(page, line, mark, code) of every fenced block."""
    found = []
    for page in PAGES:
        text = page.read_text()
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((page.relative_to(ROOT).as_posix(), line, match.group(1).strip(), match.group(2)))
    return found


def _stable_file(code: str) -> Path:
    """The block as a file whose path and mtime stay the same from run to run (so numba's on-disk cache of the
    kernels it defines keeps working)."""
    folder = Path(tempfile.gettempdir()) / f"mlusim-doc-blocks-{os.getuid()}"
    folder.mkdir(exist_ok=True)
    path = folder / f"block_{hashlib.sha256(code.encode()).hexdigest()[:16]}.py"
    if not path.exists():
        path.write_text(code)
    return path


_RUNNER = textwrap.dedent("""
    import os, runpy, sys, traceback
    from mlusim import device as devices

    failures = []
    fresh = sys.argv[1] == "fresh"
    for label, path in zip(sys.argv[2::2], sys.argv[3::2]):
        environment = dict(os.environ)
        with devices._table_lock:  # a fresh simulator, configured from the environment at its first use
            for device in devices._devices if fresh else ():
                device.shutdown()
            if fresh:
                devices._config, devices._devices = None, []
        try:
            runpy.run_path(path, run_name="__main__")
        except BaseException:
            failures.append(label + "\\n" + traceback.format_exc())
        os.environ.clear()
        os.environ.update(environment)
    print("\\n\\n".join(failures))
    sys.exit(1 if failures else 0)
""")


def test_every_block_is_marked_as_a_program_or_as_output():
    unmarked = [f"{page}:{line} ({mark or 'no mark'})" for page, line, mark, _ in blocks() if mark not in RUN | SKIP]
    assert not unmarked, f"mark these blocks python, sh or text: {unmarked}"
    assert any(mark == "python" for _, _, mark, _ in blocks())


def test_python_blocks_run_as_pasted(tmp_path):
    plain, torch_blocks, launched = [], [], []
    for page, line, mark, code in blocks():
        if mark != "python":
            continue
        ranks = LAUNCH.match(code.lstrip().splitlines()[0]) if code.strip() else None
        group = launched if ranks else torch_blocks if re.search(r"^import torch\b", code, re.M) else plain
        group.append((f"{page}:{line}", _stable_file(code), ranks))
    env = dict(os.environ, MLUSIM_MEMORY="1GiB", PYTHONPATH=str(ROOT))
    # torch_mlu's caching allocator outlives a simulator reset (as PyTorch's outlives a device reset): the torch
    # blocks share one simulator, in an interpreter of their own
    for mode, group in (("fresh", plain), ("shared", torch_blocks)):
        arguments = [str(item) for label, path, _ in group for item in (label, path)]
        result = subprocess.run([sys.executable, "-c", _RUNNER, mode, *arguments], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr
    if any(re.search(r"^import torch\b", path.read_text(), re.M) for _, path, _ in launched):
        # the backend's C++ part is built here once, not by rank processes racing under their reply timeouts (as
        # tests/torch_mlu/distributed does)
        torch_mlu_distributed = pytest.importorskip("torch_mlu.distributed")
        torch_mlu_distributed.native()
    for label, path, ranks in launched:
        result = subprocess.run([sys.executable, "-m", "mlutools.run", "-n", ranks.group(1), str(path)],
                                cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"{label}:\n{result.stdout}{result.stderr}"


@pytest.mark.parametrize("text, expected", [
    ("```python\nx = 1\n```\n", [("python", "x = 1\n")]),
    ("```sh\nls\n```\n\n```\nout\n```\n", [("sh", "ls\n"), ("", "out\n")]),
])
def test_blocks_are_found_with_their_marks(tmp_path, monkeypatch, text, expected):
    page = tmp_path / "page.md"
    page.write_text(text)
    monkeypatch.setattr(sys.modules[__name__], "PAGES", [page])
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert [(mark, code) for _, _, mark, code in blocks()] == expected
