"""Unicode spaces between tokens, as the real cncc (a clang) reads them: as whitespace.

Clang takes U+00A0 (no-break space) and the other Unicode space characters between tokens for whitespace, with a
warning (-Wunicode-whitespace); GCC, which compiles mlusim's BANG C, refuses them ("extended character is not
valid in an identifier"). Sources written for cncc have them (DIOPI's nms_utils.hpp, pasted after commas), so when
the preprocessor refuses a file for it, that file is read through a mirror of its directory tree in which the
spaces are plain ones (outside string and character literals, which keep them), and the paths in the output are
the real ones again. Files without them cost nothing: the mirror is made only after such a refusal.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Sequence

#: the characters clang's lexer takes for whitespace (its isUnicodeWhitespace)
UNICODE_SPACES = "\u0085\u00a0\u1680\u180e\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
                 "\u2028\u2029\u202f\u205f\u3000"
_REFUSED = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):(?P<column>\d+): error: extended character (?P<char>.+?) "
                      r"is not valid in an identifier", re.MULTILINE)
_SPACE_OR_LITERAL = re.compile(r"""(?P<literal>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|//[^\n]*|/\*.*?\*/)"""
                               rf"|(?P<space>[{UNICODE_SPACES}])", re.DOTALL)
#: rounds of refusals followed (each can name new files: a header is read only once its includer reads)
MAX_ROUNDS = 16
_PATH_FLAGS = ("-I", "-iquote", "-isystem", "-idirafter")


def refused_files(stderr: str) -> list:
    """The files the preprocessor refused for a Unicode space, with the first place in each."""
    found = {}
    for match in _REFUSED.finditer(stderr):
        char = match.group("char").strip(" ")
        if char and all(c in UNICODE_SPACES for c in char):
            found.setdefault(match.group("file"), (int(match.group("line")), int(match.group("column"))))
    return list(found.items())


def plain_spaces(text: str) -> str:
    """`text` with each Unicode space outside literals and comments made a plain space."""
    return _SPACE_OR_LITERAL.sub(lambda m: m.group("literal") or " ", text)


def _space_at(file: Path, line: int) -> int:
    """The code point of the first Unicode space on `line` of `file` (U+00A0 when it cannot be read)."""
    try:
        text = file.read_text(encoding="utf-8", errors="replace").splitlines()[line - 1]
    except (OSError, IndexError):
        return 0xA0
    return next((ord(c) for c in text if c in UNICODE_SPACES), 0xA0)


class Mirror:
    """A directory tree standing in for `root`: symbolic links to its entries, except the files given plain
    spaces (copies) and the directories leading to them (real directories, so a file's own directory, where
    its quoted includes are looked up first, is the mirror's)."""

    def __init__(self, root: Path):
        self.root = root
        self.path = Path(tempfile.mkdtemp(prefix="cncc-unicode-space-"))
        self._made: set = set()

    def _directory(self, relative: Path) -> Path:
        target = self.path / relative
        if relative not in self._made:
            if relative != Path("."):
                self._directory(relative.parent)
            if target.is_symlink():
                target.unlink()
            target.mkdir(exist_ok=True)
            for entry in os.scandir(self.root / relative):
                link = target / entry.name
                if not os.path.lexists(link):
                    link.symlink_to(entry.path)
            self._made.add(relative)
        return target

    def hold(self, file: Path) -> None:
        """Make `file`'s directory a real one of the mirror (its includes through `..` then stay inside)."""
        self._directory(file.parent.relative_to(self.root))

    def fix(self, file: Path) -> None:
        relative = file.relative_to(self.root)
        self._directory(relative.parent)
        copy = self.path / relative
        if copy.is_symlink():
            copy.unlink()
        copy.write_text(plain_spaces(file.read_text(encoding="utf-8", errors="surrogateescape")),
                        encoding="utf-8", errors="surrogateescape")

    def inside(self, argument: str) -> str:
        """A path argument moved into the mirror when it is under the root."""
        try:
            relative = Path(os.path.abspath(argument)).relative_to(self.root)
        except ValueError:
            return argument
        return str(self.path / relative)

    def restore(self, text: str, source: str) -> str:
        """Paths in the mirror made the real ones again; the input file, and paths next to it, as the command line
        spelled them."""
        spelled = os.path.dirname(source)
        text = text.replace(self.inside(source), source)
        text = text.replace(os.path.dirname(self.inside(source)) + os.sep, spelled + os.sep if spelled else "")
        return text.replace(str(self.path), str(self.root))

    def remove(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def _moved(command: Sequence[str], source: str, mirror: Mirror) -> list:
    moved, previous = [], None
    for argument in command:
        if previous in _PATH_FLAGS or argument == source:
            argument = mirror.inside(argument)
        else:
            if argument.startswith("-I") and len(argument) > 2:
                argument = "-I" + mirror.inside(argument[2:])
        moved.append(argument)
        previous = argument if argument in _PATH_FLAGS else None
    return moved


def preprocess(command: Sequence[str], source: str, run: Callable[[list], subprocess.CompletedProcess],
               outputs: Sequence[str] = ()) -> subprocess.CompletedProcess:
    """Run the preprocessor `command` (whose input is `source`) with `run`; where it refuses files for Unicode
    spaces, again through a mirror that has them as plain spaces, warning as clang does. `outputs`: files the
    command writes (a -MF dependency file), whose paths are made the real ones again."""
    done = run(list(command))
    refused = refused_files(done.stderr or "") if done.returncode else []
    if not refused:
        return done
    files = [Path(os.path.abspath(f)) for f, _ in refused]
    root = Path(os.path.commonpath([os.path.dirname(os.path.abspath(source))] + [str(f.parent) for f in files]))
    mirror = Mirror(root)
    try:
        mirror.hold(Path(os.path.abspath(source)))
        fixed: set = set()
        for _ in range(MAX_ROUNDS):
            for (name, (line, column)), file in zip(refused, files):
                if file in fixed:
                    continue
                sys.stderr.write(f"{name}:{line}:{column}: warning: treating Unicode character "
                                 f"<U+{_space_at(file, line):04X}> as whitespace [-Wunicode-whitespace]\n")
                mirror.fix(file)
                fixed.add(file)
            done = run(_moved(command, source, mirror))
            done.stdout = mirror.restore(done.stdout, source) if isinstance(done.stdout, str) else done.stdout
            done.stderr = mirror.restore(done.stderr or "", source)
            refused = [(f, at) for f, at in refused_files(done.stderr) if Path(os.path.abspath(f)) not in fixed]
            if not done.returncode or not refused:
                break
            files = [Path(os.path.abspath(f)) for f, _ in refused]
            if any(root not in f.parents for f in files):
                break  # a refused file outside the mirrored tree: report the refusal as it is
        for output in outputs:
            path = Path(output)
            if path.is_file():
                path.write_text(mirror.restore(path.read_text(), source))
        return done
    finally:
        mirror.remove()
