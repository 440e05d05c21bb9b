"""What a multi-process launcher (`mlusim run`) needs from cncl: a session that names the job's shared-memory
segments, one clique id for all its ranks, the ranks' cncl environment, and the sweep of segments left behind by
ranks that were killed while setting up a clique. Registered as the launcher's job service "cncl" (entry point group
`mlusim.job_services` in pyproject.toml)."""
from __future__ import annotations

import glob
import os
import secrets

from .clique import SEGMENT_PREFIX, SESSION_ENV, new_clique_id


class JobSession:
    """The cncl side of one multi-process job."""

    def __init__(self):
        self.session = secrets.token_hex(6)
        os.environ[SESSION_ENV] = self.session  # the clique id made below names segments of this session
        self.clique_hex = new_clique_id().hex()

    def rank_environment(self) -> dict:
        """The variables every rank gets: its session and the shared clique id (cnclCliqueId.from_env)."""
        return {SESSION_ENV: self.session, "CNCL_CLIQUE_ID": self.clique_hex}

    def finish(self) -> None:
        """After the job: remove this session's segments that killed ranks could not remove themselves."""
        for path in glob.glob(f"/dev/shm/{SEGMENT_PREFIX}{self.session}-*"):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
