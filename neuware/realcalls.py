"""The calls real back ends make into the Neuware libraries, read from their sources: the table the headers are
checked against.

    python -m neuware.realcalls DIOPI=<DIOPI>/impl/camb mlu-ops=<mlu-ops> torch_mlu=<torch_mlu>/torch_mlu/csrc \
        > tests/neuware/data/real_calls.tsv

(`name=directory@commit` records the commit when the directory is no git checkout.)

For every call `name(arguments)` of a CNRT, CNNL, CNCL, CNDev or CNDrv function (a name of theirs: cnrt*, cnnl*,
cncl*, cndev*, cn[A-Z]*) in a project's C/C++/BANG C sources (comments and strings removed) it records the number of
arguments, and each argument that is a bare enumerator constant (`CNNL_ACTIVATION_HIGH_PRECISION`) with its position.
A name the project defines itself (a function body `name(...) {` or a macro) is skipped, so a helper that shares a
library's name is not taken for it. Since C has no overloading, a project that builds against the real headers calls
each function with exactly its parameter count and passes an enumerator only where its enum type is expected; so the
table gives the real parameter counts and enum-typed positions (tests/neuware/test_real_calls.py compares our headers
to it). Types of other arguments are not recoverable from call sites alone.

Output: tab-separated `function`, `arguments`, `position`, `enumerator` (empty when the row is an arity), `project`,
`calls` (how many call sites), sorted; the first lines are comments naming the projects and their commits.
"""
from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

#: the prefixes of the libraries' function names
FUNCTION = re.compile(r"\b((?:cnrt|cnnl|cncl|cndev)[A-Z]\w*|cn[A-Z]\w*)\s*\(")
ENUMERATOR = re.compile(r"^(?:CNRT|CNNL|CNCL|CNDEV|CN)_[A-Z0-9_]+$|^cnrt[A-Z]\w*$")
SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".h", ".hpp", ".hh", ".cuh", ".mlu", ".mluh")
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_STRINGS = re.compile(r'"(?:\\.|[^"\\\n])*"' + r"|'(?:\\.|[^'\\\n])*'")
#: a template argument list (`convert<float, double>(x)`): its commas are no argument separators
_TEMPLATE_ARGUMENTS = re.compile(r"(\w)\s*<[\w\s:,*&]*>")


def strip(text: str) -> str:
    """Source without comments, string or character literals (each becomes an empty "" / '') and template
    argument lists."""
    text = _STRINGS.sub(lambda m: m.group(0)[0] * 2, text)
    text = _COMMENTS.sub(" ", text)
    while True:
        simpler = _TEMPLATE_ARGUMENTS.sub(r"\1", text)
        if simpler == text:
            return text
        text = simpler


def _arguments(text: str, start: int):
    """The top-level arguments of the call whose '(' is at `start`, or None if the parentheses do not close."""
    depth, current, arguments = 0, [], []
    brackets = {"(": ")", "[": "]", "{": "}"}
    closing = []
    for index in range(start, len(text)):
        char = text[index]
        if char in brackets:
            closing.append(brackets[char])
            if len(closing) == 1:
                continue
        elif closing and char == closing[-1]:
            closing.pop()
            if not closing:
                arguments.append("".join(current).strip())
                return [a for a in arguments if a] if arguments != [""] else []
        elif char == "," and len(closing) == 1:
            arguments.append("".join(current).strip())
            current = []
            continue
        if closing:
            current.append(char)
    return None


def definitions(text: str, function=FUNCTION) -> set:
    """Names the source defines: function bodies (`name(...) {` or `name(...) const {`) of the names `function`
    matches, and macros."""
    names = set(re.findall(r"^\s*#\s*define\s+(\w+)", text, re.M))
    for match in function.finditer(text):
        arguments_end = _closing(text, match.end() - 1)
        if arguments_end is not None and re.match(r"\s*(?:const\s*)?(?:noexcept\s*)?\{", text[arguments_end:]):
            names.add(match.group(1))
    return names


def _closing(text: str, start: int):
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index + 1
    return None


def scan(project: Path) -> tuple:
    """(Counter of (function, arguments), Counter of (function, arguments, position, enumerator)) of one project."""
    texts = [strip(path.read_text(errors="replace")) for path in sorted(project.rglob("*"))
             if path.suffix in SOURCE_SUFFIXES and path.is_file()]
    defined = set().union(*(definitions(text) for text in texts)) if texts else set()
    arities, enumerators = Counter(), Counter()
    for text in texts:
        for match in FUNCTION.finditer(text):
            name = match.group(1)
            if name in defined:
                continue
            before = text[max(0, match.start() - 40):match.start()]
            if re.search(r"(?:->|\.|::)\s*$", before):  # a member or a namespaced helper, not the C function
                continue
            arguments = _arguments(text, match.end() - 1)
            if arguments is None:
                continue
            arities[(name, len(arguments))] += 1
            for position, argument in enumerate(arguments):
                if ENUMERATOR.match(argument):
                    enumerators[(name, len(arguments), position, argument)] += 1
    return arities, enumerators


def _commit(project: Path) -> str:
    head = subprocess.run(["git", "-C", str(project), "rev-parse", "HEAD"], capture_output=True, text=True)
    return head.stdout.strip() if head.returncode == 0 else "unknown commit"


def location(spec: str) -> tuple:
    """(directory, commit) of `directory` or `directory@commit`."""
    path, _, commit = spec.partition("@")
    return Path(path), commit or _commit(Path(path))


def table(projects: dict) -> str:
    """The TSV of every project (name -> source directory)."""
    located = {name: location(spec) for name, spec in projects.items()}
    lines = ["# generated by: python -m neuware.realcalls " + " ".join(f"{n}=<{n} source directory>" for n in projects)]
    lines += [f"# {name}: {commit}" for name, (_, commit) in located.items()]
    lines.append("function\targuments\tposition\tenumerator\tproject\tcalls")
    rows = []
    for name, (path, _) in located.items():
        arities, enumerators = scan(path)
        rows += [(f, n, "", "", name, count) for (f, n), count in arities.items()]
        rows += [(f, n, p, e, name, count) for (f, n, p, e), count in enumerators.items()]
    rows.sort(key=lambda r: (r[0], r[1], str(r[2]), r[3], r[4]))
    lines += ["\t".join(str(v) for v in row) for row in rows]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or any("=" not in a for a in args):
        print(__doc__, file=sys.stderr)
        return 2
    sys.stdout.write(table(dict(a.split("=", 1) for a in args)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
