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

    def rank_environment(self, mpi_root=None) -> dict:
        """The variables every rank gets: its session and the shared clique id (cnclCliqueId.from_env); ranks
        started by an MPI launcher get an id whose root is the process of MPI world rank `mpi_root`."""
        return {SESSION_ENV: self.session, "CNCL_CLIQUE_ID": new_clique_id(mpi_root).hex()}

    def finish(self) -> None:
        """After the job: remove this session's segments that killed ranks could not remove themselves."""
        for path in glob.glob(f"/dev/shm/{SEGMENT_PREFIX}{self.session}-*"):
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
