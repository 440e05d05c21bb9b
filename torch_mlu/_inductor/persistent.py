"""Persistent reductions (`NumbaKernel.persistent`): a value computed in one stage of a reduction kernel and needed
again by a later stage is kept in a per-row scratch array (`<name>_row`) instead of being loaded and computed again,
so each input element is read from device memory once, as a GPU keeps a persistent reduction's row in registers.
`mark_stage` records, loop by loop, which stage defines each temporary (and which are constants); `keep_rows`
rewrites the kernel body to store and reload the temporaries later stages use.
"""
from __future__ import annotations

import re

_TMP = re.compile(r"\btmp\d+\b")
#: a line defining temporaries: "tmp3 = ..." or "tmp3, tmp4 = ..."
_DEFINES = re.compile(r"^\s*(tmp\d+(?:\s*,\s*tmp\d+)*)\s*=(?!=)\s*(.*)$")
#: a constant: "np.float32(0.5)", "np.int64(-3)", "True", "np.float32(-np.inf)", "c3" (a module-level constant)
_CONSTANT = re.compile(r"^(np\.\w+\()?(-?[\d.]+(e[-+]?\d+)?|-?np\.(inf|nan)|True|False|c\d+)\)?$")


def mark_stage(text: str, stage: int, var_stage: dict, var_constant: dict) -> None:
    """Record in `var_stage` the stage defining each temporary of a reduction loop's body `text`, and in
    `var_constant` the temporaries that are constants (re-set, not kept, where a later stage needs them)."""
    for line in text.splitlines():
        match = _DEFINES.match(line)
        if match:
            for name in _TMP.findall(match.group(1)):
                var_stage.setdefault(name, stage)
            if _CONSTANT.match(match.group(2).strip()) and "," not in match.group(1):
                var_constant.setdefault(match.group(1).strip(), match.group(2).strip())


def keep_rows(body: str, var_stage: dict, var_constant: dict, index: str) -> tuple[str, list[str]]:
    """Rewrite the loops of a persistent reduction so a temporary defined in one stage and used by a later one
    is stored into its row array where it is defined and read back in the later stage (instead of being
    undefined there: the temporaries of a stage live inside its loop). `var_stage` and `var_constant` are what
    `mark_stage` recorded, `index` the linear index within the reduction range. Returns the body and the kept
    temporaries (each gets a `<name>_row` array)."""
    lines = body.splitlines()
    loop_starts = [i for i, line in enumerate(lines) if re.match(r"\s*for r0_index in range", line)]
    if not loop_starts:
        return body, []
    stage_of_line: list[int] = []
    stage = -1
    loop_indent = None
    for i, line in enumerate(lines):
        if i in loop_starts:
            stage += 1
            loop_indent = len(line) - len(line.lstrip())
            stage_of_line.append(-1)
            continue
        indent = len(line) - len(line.lstrip())
        inside = loop_indent is not None and line.strip() and indent > loop_indent
        stage_of_line.append(stage if inside else -1)
    needed: dict[int, list[str]] = {}
    for i, line in enumerate(lines):
        use_stage = stage_of_line[i]
        if use_stage < 0:
            continue
        for name in _TMP.findall(line):
            defined = var_stage.get(name)
            if defined is not None and defined < use_stage and name not in needed.get(use_stage, []):
                needed.setdefault(use_stage, []).append(name)
    rows = sorted({name for names in needed.values() for name in names if name not in var_constant},
                  key=lambda n: int(n[3:]))
    if not needed:
        return body, []
    out: list[str] = []
    for i, line in enumerate(lines):
        out.append(line)
        if i in loop_starts:
            stage = loop_starts.index(i)
            pad = " " * (len(line) - len(line.lstrip()) + 4)
            for name in needed.get(stage, []):
                if name in var_constant:
                    out.append(f"{pad}{name} = {var_constant[name]}")
                else:
                    out.append(f"{pad}{name} = {name}_row[{index}]")
            continue
        match = _DEFINES.match(line)
        if stage_of_line[i] >= 0 and match:
            for name in _TMP.findall(match.group(1)):
                if name in rows and var_stage.get(name) == stage_of_line[i]:
                    pad = line[: len(line) - len(line.lstrip())]
                    out.append(f"{pad}{name}_row[{index}] = {name}")
    return "\n".join(out) + "\n", rows
