"""Unicode spaces between tokens (U+00A0 pasted after commas, as in DIOPI's nms_utils.hpp) are whitespace, as the
real cncc (a clang) reads them, with clang's warning; inside string literals they stay; the dependency output and
the line markers name the real files."""
from __future__ import annotations

import numpy as np

import cnrt
from neuware import bangc
from neuware.bangc import unicode_space

from .conftest import cncc

NBSP = "\u00a0"
HEADER = ("#pragma once\n"
          f"__mlu_func__ float combine(float a,{NBSP}float b) {{\n"
          f'  const char *kept = "a{NBSP}b";  // the literal keeps its no-break space (2 bytes in UTF-8)\n'
          "  return a + 2.0f * b + (sizeof(\"x" + NBSP + "\") == 4 ? 0.0f : 100.0f) + (kept[1] == (char)0xc2 ? 0.0f : 1000.0f);\n"
          "}\n")
KERNEL = ('#include <bang.h>\n#include "../util/combine.hpp"\n'
          f"__mlu_global__ void combined(float *y,{NBSP}float a) {{ y[taskId] = combine(a, (float)taskId); }}\n")


def _project(tmp_path):
    (tmp_path / "util").mkdir()
    (tmp_path / "util" / "combine.hpp").write_text(HEADER, encoding="utf-8")
    (tmp_path / "kernels").mkdir()
    source = tmp_path / "kernels" / "combined.mlu"
    source.write_text(KERNEL, encoding="utf-8")
    return source


def test_unicode_spaces_are_whitespace_and_literals_keep_them(tmp_path, library_dir):
    source = _project(tmp_path)
    library = tmp_path / "libcombined.so"
    done = cncc("-shared", "combined.mlu", "-o", library, cwd=source.parent)
    assert "combined.mlu:3:" in done.stderr and "../util/combine.hpp:2:" in done.stderr
    assert "warning: treating Unicode character <U+00A0> as whitespace [-Wunicode-whitespace]" in done.stderr
    kernels = bangc.load(library)
    y = cnrt.malloc(4 * 4)
    queue = cnrt.queueCreate()
    kernels["combined"][(4, 1, 1), cnrt.cnrtFuncTypeBlock, queue](y, 1.5)
    cnrt.queueSync(queue)
    out = np.empty(4, np.float32)
    cnrt.memcpy(out, y, out.nbytes, cnrt.cnrtMemcpyDevToHost)
    np.testing.assert_array_equal(out, 1.5 + 2.0 * np.arange(4, dtype=np.float32))
    cnrt.free(y)
    cnrt.queueDestroy(queue)
    assert (tmp_path / "util" / "combine.hpp").read_text(encoding="utf-8") == HEADER  # the user's file is as it was


def test_dependencies_and_line_markers_name_the_real_files(tmp_path):
    source = _project(tmp_path)
    depend = cncc("-M", "combined.mlu", cwd=source.parent).stdout
    assert depend.startswith("combined.o: combined.mlu ") and " ../util/combine.hpp" in depend
    assert "cncc-unicode-space" not in depend
    preprocessed = cncc("-E", "combined.mlu", cwd=source.parent).stdout
    assert '"combined.mlu"' in preprocessed and "combine.hpp" in preprocessed
    assert "cncc-unicode-space" not in preprocessed


def test_other_extended_characters_are_still_refused(tmp_path):
    source = tmp_path / "bad.mlu"
    source.write_text("#include <bang.h>\n__mlu_global__ void k(float *y) { float \u00d7 = 1; y[0] = \u00d7; }\n"
                      "__mlu_global__ void j(float *y) { y[0] = 1 \u00f7 2; }\n", encoding="utf-8")
    done = cncc("-c", source, "-o", tmp_path / "bad.o", check=False)
    assert done.returncode == 1 and "bad.mlu:3" in done.stderr and "Unicode character" not in done.stderr


def test_plain_spaces_leave_literals_and_comments():
    text = f'f(a,{NBSP}b); s = "x{NBSP}y"; c = \'{NBSP}\'; // a{NBSP}b\n/* c{NBSP}d */ g(\u3000)'
    assert unicode_space.plain_spaces(text) == (f'f(a, b); s = "x{NBSP}y"; c = \'{NBSP}\'; // a{NBSP}b\n'
                                                f"/* c{NBSP}d */ g( )")
