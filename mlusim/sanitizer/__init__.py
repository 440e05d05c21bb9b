"""The sanitizer: memcheck, racecheck, initcheck and leakcheck for programs on the simulated MLU, after NVIDIA's
compute-sanitizer. See docs/sanitizer.md.

    MLUSIM_SANITIZE=all python app.py          # every tool; errors summarised at exit (stderr)

    from mlusim import sanitizer
    with sanitizer.scope("racecheck,leakcheck") as found:   # collect what happens inside
        ...
    assert not found.errors, found.text()
    sanitizer.enable("all", raise_first=True)  # or: raise a SanitizerFault at the first error

Tools: memcheck (bad device pointers at every call, illegal accesses in kernels with their task), racecheck (accesses
of queued work not ordered by queues, notifiers, syncs or collectives, including a synchronous host call against
pending work; tasks of one kernel not separated by a barrier), initcheck (reads of device bytes never written),
leakcheck (allocations and handles still alive at the end of a scope or at exit).
"""
from __future__ import annotations

import contextlib
import importlib
import sys
import threading
from typing import Iterator, Optional

from mlusim import config as mlusim_config

from . import config
from .config import TOOLS, parse_tools
from .report import Access, Report, format_reports, summary
from .scope import SanitizerFault, Scope

__all__ = ["TOOLS", "enable", "disable", "enabled", "scope", "reports", "clear", "check_leaks", "drain", "exempt",
           "track",
           "host_waited", "host_observed", "Report", "Access", "Scope", "SanitizerFault", "format_reports",
           "summary", "parse_tools", "enable_from_environment"]

_switch = threading.RLock()
_ENGINE_MODULE = __name__ + ".engine"


def _engine(create: bool = True, **options):
    """The process's sanitizer engine (None when it was never turned on and `create` is False)."""
    module = sys.modules.get(_ENGINE_MODULE)
    if not create:
        return module._engine if module is not None else None
    if module is None:
        module = importlib.import_module(_ENGINE_MODULE)
    return module.engine(**options)


def enable(tools: config.Tools = "all", *, raise_first: bool = False, host: Optional[str] = None) -> frozenset:
    """Turn the sanitizer on for the whole process (what MLUSIM_SANITIZE does): `tools` is "all", a comma-separated
    string or a list of memcheck/racecheck/initcheck/leakcheck. Errors are collected and summarised at exit, or
    raised at once (SanitizerFault) with `raise_first`. `host`: "shared" (default) or "separate" host-thread clocks.
    Returns the tools now on."""
    chosen = parse_tools(tools)
    with _switch:
        current = _engine(host_mode=config.host_mode(host, "host"), log_entries=config.log_entries_from_env())
        if host is not None:
            current.host.mode = config.host_mode(host, "host")
        current.process.tools = chosen
        current.process.raise_first = bool(raise_first)
        current.refresh()
        return current.tools


def disable() -> None:
    """Turn the process-wide sanitizer off (open scopes keep their tools); its collected reports stay readable."""
    with _switch:
        current = _engine(create=False)
        if current is None:
            return
        current.process.tools = frozenset()
        current.refresh()
        if not current.tools:
            current.reset_state()
            current.leaks.clear()


def enabled() -> frozenset:
    """The tools running now (process-wide or in an open scope)."""
    current = _engine(create=False)
    return current.tools if current is not None else frozenset()


@contextlib.contextmanager
def scope(tools: config.Tools = "all", *, raise_first: bool = False, leaks: bool = True) -> Iterator["Scope"]:
    """Run `tools` inside the `with` block and collect what they find there into the yielded Scope (`.reports`,
    `.errors`, `.warnings`, `.of(tool, kind)`, `.text()`). At the end, queued work is waited for (without counting as
    a sync) and, with `leaks`, allocations and handles made inside and still alive are reported. Reports go to the
    innermost open scope that runs their tool, so a scope inside a sanitized program keeps what happens in it."""
    chosen = parse_tools(tools)
    with _switch:
        current = _engine(log_entries=config.log_entries_from_env())
        opened = Scope(chosen, raise_first, current.leaks.mark())
        current.scopes.append(opened)
        current.refresh()
    failed = None
    try:
        yield opened
    except BaseException as exc:
        failed = exc
        raise
    finally:
        raised = len(opened.errors)  # errors found inside were raised where they were found
        try:
            current.drain()
            if leaks and "leakcheck" in chosen:
                for report in current.check_leaks(opened.leak_mark):
                    opened.add(report)
        finally:
            with _switch:
                current.scopes.remove(opened)
                current.refresh()
                if not current.tools:
                    current.reset_state()
        if failed is None and raise_first and len(opened.errors) > raised:
            raise SanitizerFault(opened.errors[raised])


def reports() -> list[Report]:
    """The reports collected for the whole process so far (not those kept by scopes)."""
    current = _engine(create=False)
    return list(current.process.reports) if current is not None else []


def clear() -> None:
    """Forget the process-wide reports collected so far."""
    current = _engine(create=False)
    if current is not None:
        current.process.reports.clear()
        current.process._keys.clear()


def check_leaks() -> list[Report]:
    """Report, now, the allocations and handles made while leakcheck ran in the innermost scope (or the process)
    and still alive; each is reported once. Returns the new reports (also delivered to the scope)."""
    current = _engine(create=False)
    if current is None or not current.leakcheck:
        return []
    mark = current.scopes[-1].leak_mark if current.scopes else 0
    found = current.check_leaks(mark)
    for report in found:
        current.deliver(report)
    return found


def drain(timeout: float = 30.0) -> bool:
    """Wait (at most `timeout` s) until no device has queued work left, so that what it does is checked, without
    counting the wait as a sync of the host (which would order later accesses after that work). False on timeout."""
    current = _engine(create=False)
    return current.drain(timeout) if current is not None else True


@contextlib.contextmanager
def exempt() -> Iterator[None]:
    """Allocations and handles made by this thread inside the block are never leaks (long-lived fixtures, caches)."""
    current = _engine(create=False)
    if current is None:
        yield
        return
    local = current.leaks.exempt
    local.depth = getattr(local, "depth", 0) + 1
    try:
        yield
    finally:
        local.depth -= 1


def track(obj, what: str, label: Optional[str] = None) -> None:
    """Called by the API layers when they make a handle (`what`: "queue", "notifier", "cnnlHandle_t", ...), so that
    leakcheck reports it if it is still alive (its `destroyed` flag unset) at the end of a scope or at exit."""
    current = _engine(create=False)
    if current is not None and current.leakcheck:
        current.track(obj, what, label or what)


def host_waited(placement) -> None:
    """Called by the runtime when a host thread waited for (or found reached) a notifier placement."""
    current = _engine(create=False)
    if current is not None and current.commands and placement is not None:
        current.host_waited(placement)


def host_observed(queue) -> None:
    """Called by the runtime when a host thread found a queue idle (a query that succeeded): a sync."""
    current = _engine(create=False)
    if current is not None and current.commands:
        current.queue_synced(queue)


def enable_from_environment(environ=None) -> None:
    """Apply MLUSIM_SANITIZE, MLUSIM_SANITIZE_RAISE, MLUSIM_SANITIZE_HOST and MLUSIM_SANITIZE_EXITCODE (from the
    environment's snapshot, mlusim.config, or `environ`)."""
    tools = config.tools_from_env(environ)
    if not tools:
        return
    settings = mlusim_config.environ() if environ is None else environ
    enable(tools, raise_first=config.raise_from_env(environ),
           host=config.host_mode(settings.get("MLUSIM_SANITIZE_HOST")))
    _engine().exit_code = config.exit_code_from_env(environ)
