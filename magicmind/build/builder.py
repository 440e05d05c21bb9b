"""magicmind::IBuilder (Python `mm.Builder`): Network + BuilderConfig -> Model."""
from __future__ import annotations

import logging
import sys
import time

from ..status import MagicMindError
from .config import BuilderConfig
from . import lower, passes, pipeline

log = logging.getLogger("magicmind")


class Builder:
    """mm.Builder()."""

    def __init__(self):
        self.last_status = None

    def build_model(self, name, network, config=None):
        """IBuilder::BuildModel(name, network[, config]) -> Model, or None on failure (the reason is printed, as
        MagicMind's log does, and kept in `last_status`)."""
        from ..model.model import Model
        try:
            if not isinstance(name, str):
                raise MagicMindError(3, f"build_model: name must be a str, not {type(name).__name__}")
            if config is not None and not isinstance(config, BuilderConfig):
                raise MagicMindError(3, f"build_model: config must be a BuilderConfig, not {type(config).__name__}")
            started = time.perf_counter()
            program = lower.lower(network)
            info = pipeline.build(program, config or BuilderConfig(), network)
            passes.check_outputs(program)
            info["build_seconds"] = time.perf_counter() - started
            self.last_status = None
            return Model(program, {"name": name, "build": info})
        except MagicMindError as error:
            self.last_status = error.status
            print(f"[MM_ERROR] build_model {name!r}: {error}", file=sys.stderr)
            return None
