"""pytest plugin for CI on the simulated MLU: each test under the sanitizer, and fixtures for a fresh device and for a
clique of ranks. Load it with `pytest -p mlutools.pytest_plugin`; an installed mlusim registers it as a pytest11 entry
point, so it is there in every pytest run (and does nothing until asked).

Turning the sanitizer on, per test (the first that is set wins):
  @pytest.mark.mlusim_sanitize("racecheck,leakcheck")   this test (or "all"; "off" for none)
  --mlusim-sanitize=all                                  every test of the run
  mlusim_sanitize = all                                  the same, in the ini file
  MLUSIM_SANITIZE=all                                    the same, from the environment (the sanitizer then also
                                                         runs outside tests, summarised at exit)
Each test runs in its own sanitizer scope, from its setup to the end of its teardown. A test fails when its scope
found an error of a failing tool (--mlusim-fail / ini mlusim_sanitize_fail; default racecheck, initcheck and
leakcheck: it raced, read memory nothing wrote, or leaked device memory); the failure message is the report.
memcheck's errors are already raised by the calls that make them, so by default they are shown, not failed on;
leaked handles (queues, notifiers, descriptors) are warnings. A marker can take tools out for one test:
`@pytest.mark.mlusim_sanitize(exclude="initcheck")`. Long-lived fixtures (module, class, session scope) are exempt
from leak checks: what they make is not a test's leak.

Fixtures:
  mlu_device   a fresh simulated machine (256 MiB per device unless @pytest.mark.mlusim_device(memory=..., arch=...,
               count=...) says otherwise); the test gets device 0 (a mlusim.device.Device), current on its thread.
               At teardown the device's leaks are checked, then the machine is reset.
  mlu_clique   a clique of N ranks in this process, one simulated device each (N from
               @pytest.mark.mlusim_ranks(N), an indirect parametrisation, or 2): `clique.run(fn, *args)` calls
               fn(rank, *args) on N threads at once, one per rank (rank.rank, .world, .comm, .device, .queue), and
               returns their results in rank order.
"""
from __future__ import annotations

import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Optional

import pytest


def _library_not_rewritten() -> None:
    """Take this distribution's packages (mlusim, cnrt, cnnl, ..., torch_mlu) out of pytest's assertion rewriting.

    pytest rewrites every module of a distribution that registers a pytest11 plugin, by parsing it into Python
    ast objects at import. CPython 3.11's ast constructor keeps its recursion depth in state shared by all threads,
    and numba parses source with `ast` while it compiles a kernel: a module of ours imported on one thread (cnnl
    loads its op modules on first use) while a queue's thread compiled failed either side with "SystemError: AST
    constructor recursion depth mismatch". The library's few internal asserts need no rewritten messages; imported
    plainly, its modules are compiled without Python ast objects."""
    from importlib.metadata import packages_distributions

    ours = {name for name, owners in packages_distributions().items() if "mlusim" in owners}
    for finder in sys.meta_path:
        marked = getattr(finder, "_must_rewrite", None)
        if type(finder).__name__ == "AssertionRewritingHook" and isinstance(marked, set):
            marked.difference_update(ours)


_library_not_rewritten()

from mlusim import device as devices  # noqa: E402  (imported after the above, so that they are not rewritten)
from mlusim import sanitizer  # noqa: E402
from mlusim.sanitizer import config as tools_config  # noqa: E402

DEFAULT_FAIL = "racecheck,initcheck,leakcheck"
DEVICE_MEMORY = "256MiB"
DEFAULT_RANKS = 2
SECTION = "mlusim sanitizer"


def pytest_addoption(parser) -> None:
    group = parser.getgroup("mlusim", "mlusim: the simulated MLU")
    group.addoption("--mlusim-sanitize", default=None, metavar="TOOLS",
                    help="run every test under the mlusim sanitizer with these tools (memcheck, racecheck, "
                         "initcheck, leakcheck, comma-separated, or all); default: ini mlusim_sanitize, then the "
                         "MLUSIM_SANITIZE environment variable")
    group.addoption("--mlusim-fail", default=None, metavar="TOOLS",
                    help=f"tools whose errors fail a test (default: ini mlusim_sanitize_fail or {DEFAULT_FAIL})")
    parser.addini("mlusim_sanitize", "sanitizer tools for every test (see --mlusim-sanitize)", default="")
    parser.addini("mlusim_sanitize_fail", "tools whose errors fail a test (see --mlusim-fail)", default="")


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "mlusim_sanitize(tools='all', exclude=None, fail=None): run this test under "
                                        "the mlusim sanitizer ('off': without it)")
    config.addinivalue_line("markers", "mlusim_device(memory='256MiB', arch=None, count=1): the machine of the "
                                        "mlu_device fixture")
    config.addinivalue_line("markers", "mlusim_ranks(n): the number of ranks of the mlu_clique fixture")
    option = config.getoption("--mlusim-sanitize")
    spec = option if option is not None else (config.getini("mlusim_sanitize") or None)
    config._mlusim_tools = tools_config.parse_tools(spec, "--mlusim-sanitize") if spec is not None \
        else tools_config.tools_from_env()
    fail = config.getoption("--mlusim-fail") or config.getini("mlusim_sanitize_fail") or DEFAULT_FAIL
    config._mlusim_fail = tools_config.parse_tools(fail, "--mlusim-fail")


def _plan(item) -> tuple[frozenset, frozenset, frozenset]:
    """(tools, failing tools, excluded tools that the run sanitizes anyway) of one test."""
    tools = item.config._mlusim_tools
    fail = item.config._mlusim_fail
    excluded = frozenset()
    marker = item.get_closest_marker("mlusim_sanitize")
    if marker is not None:
        if marker.args or "tools" in marker.kwargs:
            tools = tools_config.parse_tools(marker.kwargs.get("tools", marker.args[0] if marker.args else "all"),
                                             "mlusim_sanitize")
        elif not tools:
            tools = frozenset(tools_config.TOOLS)
        excluded = tools_config.parse_tools(marker.kwargs.get("exclude"), "mlusim_sanitize(exclude=...)")
        tools -= excluded
        if marker.kwargs.get("fail") is not None:
            fail = tools_config.parse_tools(marker.kwargs["fail"], "mlusim_sanitize(fail=...)")
    return tools, fail & tools, excluded & item.config._mlusim_tools


class _TestScope:
    """The sanitizer scope of one running test. Tools the test excludes but the run sanitizes anyway still run in
    it (their reports would otherwise reach the process-wide summary) and are not shown."""

    def __init__(self, tools: frozenset, fail: frozenset, excluded: frozenset = frozenset()):
        self.tools = tools
        self.fail = fail
        self.context = sanitizer.scope(tools | excluded)
        self.found = self.context.__enter__()
        self.shown = 0
        self.failed = 0  # failing errors already put into a report

    def failing(self) -> list:
        return [r for r in self.found.errors if r.tool in self.fail]

    def new_text(self) -> str:
        """The reports (of the test's tools) not yet shown in an earlier phase's report."""
        fresh = [r for r in self.found.reports[self.shown:] if r.tool in self.tools]
        self.shown = len(self.found.reports)
        return sanitizer.format_reports(fresh) if fresh else ""

    def close(self) -> None:
        self.context.__exit__(None, None, None)


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_runtest_setup(item):
    tools, fail, excluded = _plan(item)
    if tools or excluded:
        item._mlusim_scope = _TestScope(tools, fail, excluded)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef, request):
    if fixturedef.scope == "function":
        yield
        return
    with sanitizer.exempt():  # what a long-lived fixture makes is not the leak of the test that set it up
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    scope: Optional[_TestScope] = getattr(item, "_mlusim_scope", None)
    if scope is None:
        return
    report = outcome.get_result()
    if call.when == "call":
        sanitizer.drain()
    elif call.when == "teardown":
        scope.close()
        del item._mlusim_scope
    else:
        return
    failing = scope.failing()[scope.failed:]
    scope.failed += len(failing)
    text = scope.new_text()
    if not text:
        return
    if failing and report.outcome == "passed":
        report.outcome = "failed"
        report.longrepr = (f"mlusim sanitizer: {len(failing)} error(s) ({', '.join(sorted({r.tool for r in failing}))})"
                           f" in {item.nodeid}\n{text}")
    else:
        report.sections.append((SECTION, text))


# ---- fixtures ----------------------------------------------------------------------------------------------------

def _marker_kwargs(request, name: str) -> dict:
    marker = request.node.get_closest_marker(name)
    return dict(marker.kwargs) if marker is not None else {}


def _check_leaks_before_reset() -> None:
    """A leak checkpoint of the test's scope: what the test left on the device is its leak, not the reset's."""
    if "leakcheck" in sanitizer.enabled():
        sanitizer.drain()
        sanitizer.check_leaks()


@pytest.fixture
def mlu_device(request):
    """A fresh simulated machine; yields device 0 (current on the test's thread). Leaks are checked, then the
    machine is reset, at teardown."""
    import cnrt

    options = _marker_kwargs(request, "mlusim_device")
    memory = devices.parse_size(str(options.get("memory", DEVICE_MEMORY)))
    overrides = {"memory": memory, "device_count": int(options.get("count", 1))}
    if options.get("arch"):
        overrides["arch"] = options["arch"]
    table = devices.configure(**overrides)
    cnrt.setDevice(0)
    yield table[0]
    _check_leaks_before_reset()
    devices.configure()


class Rank:
    """One rank of a clique: `rank`, `world`, `comm` (cnclComm_t), `device` (ordinal), `queue` (its cnrt queue)."""

    def __init__(self, rank: int, world: int, comm, device: int, queue):
        self.rank, self.world, self.comm, self.device, self.queue = rank, world, comm, device, queue

    def __repr__(self) -> str:
        return f"<rank {self.rank} of {self.world} on device {self.device}>"


class Clique:
    """N ranks in this process, each with its own simulated device, communicator and queue, run by N threads."""

    def __init__(self, world: int):
        import cncl
        import cnrt

        self.world = world
        self.comms = cncl.initComms(world, list(range(world)), list(range(world)), world, None)
        self.ranks = []
        for rank, comm in enumerate(self.comms):
            cnrt.setDevice(rank)
            self.ranks.append(Rank(rank, world, comm, rank, cnrt.queueCreate()))
        cnrt.setDevice(0)
        self._pool = ThreadPoolExecutor(world, thread_name_prefix="mlu-rank")

    def run(self, fn: Callable, *args) -> list:
        """fn(rank, *args) on every rank at once (one thread each, its device current); their results in rank
        order. A rank that raises fails the call with its traceback."""
        import cnrt

        def call(rank: Rank):
            cnrt.setDevice(rank.device)
            try:
                return True, fn(rank, *args)
            except BaseException:
                return False, traceback.format_exc()

        results = list(self._pool.map(call, self.ranks))
        failed = [(rank, text) for rank, (ok, text) in enumerate(results) if not ok]
        if failed:
            raise AssertionError("\n".join(f"rank {rank} failed:\n{text}" for rank, text in failed))
        return [value for _, value in results]

    def close(self) -> None:
        import cncl
        import cnrt

        self._pool.shutdown(wait=True)
        for rank in self.ranks:
            cnrt.setDevice(rank.device)
            cnrt.queueSync(rank.queue)
            cnrt.queueDestroy(rank.queue)
        cnrt.setDevice(0)
        cncl.destroyComms(self.comms, self.world)


@pytest.fixture
def mlu_clique(request):
    """A clique of N ranks (threads with one simulated device each; N from @pytest.mark.mlusim_ranks(N), an
    indirect parametrisation, or 2). Leaks are checked, then the machine is reset, at teardown."""
    world = getattr(request, "param", None)
    if world is None:
        marker = request.node.get_closest_marker("mlusim_ranks")
        world = marker.args[0] if marker is not None and marker.args else DEFAULT_RANKS
    world = int(world)
    if world < 1:
        raise pytest.UsageError(f"mlu_clique needs at least 1 rank, got {world}")
    options = _marker_kwargs(request, "mlusim_device")
    memory = devices.parse_size(str(options.get("memory", DEVICE_MEMORY)))
    overrides = {"memory": memory, "device_count": world}
    if options.get("arch"):
        overrides["arch"] = options["arch"]
    devices.configure(**overrides)
    clique = Clique(world)
    try:
        yield clique
    finally:
        clique.close()
        _check_leaks_before_reset()
        devices.configure()

