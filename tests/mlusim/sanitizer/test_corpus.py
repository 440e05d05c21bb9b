"""Each buggy program is found by the right tool with the right kind, with the accesses and lines involved; its
fixed form runs with no report at all (no false positives)."""
import pytest

from mlusim import sanitizer

from .programs import CORPUS


def _details(name, report):
    """What the report of each bug must say beyond its kind."""
    sides = report.accesses
    if name == "race between two queues":
        assert [a.command for a in sides] == ["cnrtMemcpyAsync"] * 2
        assert {a.access for a in sides} == {"read", "write"} and sides[0].queue != sides[1].queue
        assert report.size == 4096 * 4
    elif name == "host read during a pending write":
        assert {(a.command, a.host) for a in sides} == {("scale_slices", False), ("cnrtMemcpy", True)}
    elif name == "race between the tasks of a kernel":
        assert report.address is None and "SRAM" in report.message  # the slices in SRAM
        assert sides[0].task != sides[1].task and report.hazard == "read-write"
    elif name == "read of uninitialised memory":
        assert sides[0].command == "scale_slices" and report.size == 4096 * 4
    elif name == "leak":
        assert report.size == 1000 and sides[0].access == "allocation"
    elif name == "use after free":
        assert sides[0].command == "cnrtMemcpy" and report.raised
    elif name == "out of bounds in a kernel":
        assert report.task == 3 and sides[0].task == 3 and report.address is not None
        assert "scale_slices" in report.message
    elif name == "collective buffer overwritten in flight":
        assert {a.kind for a in sides} == {"collective", "memcpy"}
        assert {a.command for a in sides} == {"cnclAllReduce", "cnrtMemcpyAsync"}
    frames = [frame for access in sides for frame in access.frames()]
    assert any("programs.py" in frame for frame in frames), frames


@pytest.mark.parametrize("name", list(CORPUS))
def test_the_bug_is_found_with_its_tool_and_kind(name):
    program, tool, kind = CORPUS[name]
    with sanitizer.scope("all") as found:
        program(fixed=False)
    matching = found.of(tool, kind)
    assert matching, found.text()
    assert {report.tool for report in found.errors} == {tool}, found.text()
    assert all(report.severity == "error" for report in matching)
    _details(name, matching[0])


@pytest.mark.parametrize("name", list(CORPUS))
def test_the_fixed_program_has_no_report(name):
    program, _, _ = CORPUS[name]
    with sanitizer.scope("all") as found:
        program(fixed=True)
    assert found.reports == [], found.text()
