"""The hardware core of the simulated MLU (floor 1 of docs/architecture.md): boards, memory, queues, the submission
builder, the kernel language, time.

The features the settings ask for start here, at the package's first import: the sanitizer (MLUSIM_SANITIZE) and the
trace recorder (MLUSIM_TRACE). mlusim.config reads the settings; no module switches a feature on by being imported.
"""
from . import config as _config


def _switch_on_features() -> None:
    settings = _config.environ()
    if settings.get("MLUSIM_TRACE"):
        from . import trace
        trace.record_from_environment(settings)
    if settings.get("MLUSIM_SANITIZE"):
        from . import sanitizer
        sanitizer.enable_from_environment(settings)


_switch_on_features()
