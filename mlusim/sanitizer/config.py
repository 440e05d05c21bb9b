"""The sanitizer's tools and how they are named: in MLUSIM_SANITIZE, in the Python API and in the pytest plugin.

  MLUSIM_SANITIZE          tools to run: memcheck, racecheck, initcheck, leakcheck (comma-separated) or all
  MLUSIM_SANITIZE_RAISE    1: the first error raises (SanitizerFault) where it is found instead of being collected
  MLUSIM_SANITIZE_HOST     how host threads see each other's syncs: shared (default) or separate
  MLUSIM_SANITIZE_EXITCODE the exit status of a process that ends with sanitizer errors (default: unchanged)
  MLUSIM_SANITIZE_LOG      access-log entries per simulated core for BANG kernels (default 65536)
"""
from __future__ import annotations

from typing import Iterable, Optional, Union

from mlusim import config as settings

TOOLS = ("memcheck", "racecheck", "initcheck", "leakcheck")
HOST_MODES = ("shared", "separate")
DEFAULT_LOG_ENTRIES = 1 << 16

Tools = Union[None, bool, str, Iterable[str]]


def parse_tools(spec: Tools, arg: str = "tools") -> frozenset:
    """The tool set a spec names: "all", "memcheck,racecheck", an iterable of names, True (all); None, False, "",
    "0", "off" and "none" name no tool. ValueError naming the valid tools for anything else."""
    if spec is None or spec is False:
        return frozenset()
    if spec is True:
        return frozenset(TOOLS)
    if isinstance(spec, str):
        text = spec.strip().lower()
        if text in ("", "0", "off", "none", "false", "no"):
            return frozenset()
        if text in ("1", "all", "true", "yes", "on"):
            return frozenset(TOOLS)
        names = [part.strip() for part in text.split(",") if part.strip()]
    else:
        names = [str(part).strip().lower() for part in spec]
    if "all" in names:
        return frozenset(TOOLS)
    unknown = [name for name in names if name not in TOOLS]
    if unknown:
        raise ValueError(f"{arg}: unknown sanitizer tool(s) {', '.join(map(repr, unknown))}; the tools are "
                         f"{', '.join(TOOLS)} (or all)")
    return frozenset(names)




def tools_from_env(environ=None) -> frozenset:
    environ = settings.environ() if environ is None else environ
    return parse_tools(environ.get("MLUSIM_SANITIZE"), "MLUSIM_SANITIZE")


def raise_from_env(environ=None) -> bool:
    environ = settings.environ() if environ is None else environ
    return settings.flag(environ.get("MLUSIM_SANITIZE_RAISE"))


def host_mode(value: Optional[str], arg: str = "MLUSIM_SANITIZE_HOST") -> str:
    mode = (value or "shared").strip().lower()
    if mode not in HOST_MODES:
        raise ValueError(f"{arg}: expected one of {', '.join(HOST_MODES)}, got {value!r}")
    return mode


def exit_code_from_env(environ=None) -> Optional[int]:
    environ = settings.environ() if environ is None else environ
    value = environ.get("MLUSIM_SANITIZE_EXITCODE", "").strip()
    if not value:
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"MLUSIM_SANITIZE_EXITCODE: expected an integer, got {value!r}") from None


def log_entries_from_env(environ=None) -> int:
    environ = settings.environ() if environ is None else environ
    value = environ.get("MLUSIM_SANITIZE_LOG", "").strip()
    if not value:
        return DEFAULT_LOG_ENTRIES
    try:
        entries = int(value)
    except ValueError:
        raise ValueError(f"MLUSIM_SANITIZE_LOG: expected a number of entries, got {value!r}") from None
    if not 16 <= entries <= 1 << 24:
        raise ValueError(f"MLUSIM_SANITIZE_LOG: must be 16 .. 2^24 entries, got {entries}")
    return entries
