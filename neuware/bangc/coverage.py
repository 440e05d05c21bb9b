"""Which BANG C intrinsics real kernels call, and which of them mlusim's device headers provide.

    python -m neuware.bangc.coverage DIOPI=<DIOPI>/impl/camb mlu-ops=<mlu-ops>/kernels [--table F] [--top 60]

Counts, over each project's device sources (`.mlu`, `.mluh` and the headers beside them; comments and literals
removed), the calls of BANG's built-in functions: the names of its intrinsic families (`__bang_*`, `__memcpy*`,
`__sync*`, `__nramset`, `__float2half*`, ...). A name the project defines itself (a macro or a function body) is
its own helper and is not counted. A name counts as provided when mlusim's headers (neuware/bangc/include)
define it. Prints every name with its call sites and files per project and whether it is provided, then the share
provided among the `--top` most called and among all; `--table F` writes the rows as TSV (the test data
tests/neuware/data/bang_intrinsics.tsv is made so, with the commits read in its header lines).
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path

from .. import realcalls

#: BANG's built-in function families (the device library's names; compiler built-ins are not among them)
INTRINSIC = re.compile(r"\b((?:__bang_|__memcpy|__memset|__sync|__gdramset|__nramset|__sramset|__wramset|"
                       r"__ldramset|__float2|__half2|__bfloat162|__int2|__cn_|__vv_|__is_|__load_|__store_|"
                       r"__gather|__scatter|__atomic_|__assert|__abort)\w*)\s*\(")
DEVICE_SUFFIXES = (".mlu", ".mluh", ".h", ".hpp")
HEADERS = Path(__file__).resolve().parent / "include"
#: GCC's own __atomic_* built-ins, which BANG C code may call as any C++ does
_COMPILER_BUILTINS = re.compile(r"^__atomic_(?:load|store|exchange|compare_exchange|add_fetch|sub_fetch|and_fetch|"
                                r"or_fetch|xor_fetch|fetch_\w+|test_and_set|clear|thread_fence|signal_fence|"
                                r"always_lock_free|is_lock_free)(?:_n)?$")


def scan(project: Path) -> dict:
    """name -> (call sites, files) of the intrinsics one project's device sources call."""
    texts = {path: realcalls.strip(path.read_text(errors="replace")) for path in sorted(project.rglob("*"))
             if path.suffix in DEVICE_SUFFIXES and path.is_file()}
    defined = set().union(*(realcalls.definitions(text, INTRINSIC) for text in texts.values())) if texts else set()
    calls, files = Counter(), {}
    for path, text in texts.items():
        for match in INTRINSIC.finditer(text):
            name = match.group(1)
            if name in defined or _COMPILER_BUILTINS.match(name):
                continue
            calls[name] += 1
            files.setdefault(name, set()).add(path)
    return {name: (calls[name], len(files[name])) for name in calls}


def provided(headers: Path = HEADERS) -> set:
    """The intrinsic names mlusim's device headers define (in code: comments and messages do not count)."""
    names = set()
    for path in headers.rglob("*.h"):
        text = realcalls.strip(path.read_text())
        names.update(match.group(0) for match in re.finditer(r"\b__[a-z]\w*", text))
    return names


def rows(projects: dict) -> list:
    """(name, {project: (calls, files)}) for every intrinsic any project calls, most called first."""
    scanned = {name: scan(realcalls.location(spec)[0]) for name, spec in projects.items()}
    names = set().union(*(found.keys() for found in scanned.values()))
    table = [(name, {project: found[name] for project, found in scanned.items() if name in found})
             for name in names]
    return sorted(table, key=lambda row: (-sum(calls for calls, _ in row[1].values()), row[0]))


def shares(table: list, have: set, top: int) -> tuple:
    """(provided among the `top` most called, `top`, provided among all, all)."""
    head = table[:top]
    return (sum(name in have for name, _ in head), len(head), sum(name in have for name, _ in table), len(table))


def report(table: list, have: set, top: int) -> list:
    projects = sorted({project for _, uses in table for project in uses})
    lines = [f"{'intrinsic':36} {'provided':>8} " + " ".join(f"{p + ' calls/files':>22}" for p in projects)]
    for name, uses in table:
        cells = " ".join(f"{'%d / %d' % uses[p] if p in uses else '-':>22}" for p in projects)
        lines.append(f"{name:36} {'yes' if name in have else 'NO':>8} {cells}")
    head, head_total, every, total = shares(table, have, top)
    lines.append("")
    lines.append(f"provided: {head} of the {head_total} most called ({100.0 * head / max(head_total, 1):.1f}%), "
                 f"{every} of all {total} ({100.0 * every / max(total, 1):.1f}%)")
    missing = [name for name, _ in table if name not in have]
    if missing:
        lines.append("missing, most called first: " + ", ".join(missing))
    return lines


def tsv(projects: dict, table: list) -> str:
    """The rows as TSV: intrinsic, project, calls, files; header lines name the projects' commits."""
    lines = ["# generated by: python -m neuware.bangc.coverage " + " ".join(f"{n}=<{n} kernels>" for n in projects)]
    lines += [f"# {name}: {realcalls.location(spec)[1]}" for name, spec in projects.items()]
    lines.append("intrinsic\tproject\tcalls\tfiles")
    for name, uses in table:
        lines += [f"{name}\t{project}\t{calls}\t{files}" for project, (calls, files) in sorted(uses.items())]
    return "\n".join(lines) + "\n"


def read_tsv(path: Path) -> list:
    """The rows of a table written by `tsv`, in the same form as `rows` gives."""
    uses: dict = {}
    for line in path.read_text().splitlines():
        if line.startswith("#") or line.startswith("intrinsic\t") or not line.strip():
            continue
        name, project, calls, files = line.split("\t")
        uses.setdefault(name, {})[project] = (int(calls), int(files))
    return sorted(uses.items(), key=lambda row: (-sum(calls for calls, _ in row[1].values()), row[0]))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m neuware.bangc.coverage", description=__doc__.split("\n")[0])
    parser.add_argument("projects", nargs="+", help="name=directory[@commit] of each project's kernels")
    parser.add_argument("--top", type=int, default=60, help="the most called intrinsics to report apart")
    parser.add_argument("--table", help="also write the rows as TSV to this file")
    args = parser.parse_args(argv)
    projects = {}
    for spec in args.projects:
        name, _, directory = spec.partition("=")
        if not directory or not Path(directory.partition("@")[0]).is_dir():
            parser.error(f"{spec!r}: give name=directory of a project's kernels")
        projects[name] = directory
    table = rows(projects)
    print("\n".join(report(table, provided(), args.top)))
    if args.table:
        Path(args.table).write_text(tsv(projects, table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
