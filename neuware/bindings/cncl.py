"""libcncl: the annotations of the cncl.h functions whose C types alone do not say how they map to Python."""
from __future__ import annotations

from ..kinds import OutArray, Seq, StructIn


def _clique_id(ffi, pointer):
    import cncl
    return cncl.cnclCliqueId.from_bytes(bytes(ffi.buffer(pointer)))


def _comm_config(ffi, pointer):
    import cncl
    return cncl.cnclCommConfig(priority=pointer.priority)


def _nrank(comm) -> int:
    """The clique size of a communicator (the length of alltoallv's arrays); 0 for anything else, which the call
    then rejects."""
    return getattr(comm, "nrank", 0) if not isinstance(getattr(comm, "nrank", 0), bool) else 0


ANNOTATIONS = {
    "cnclInitComms": {"comms": OutArray(capacity="num_comm"), "dev_list": Seq("num_comm"),
                      "rank_list": Seq("num_comm"), "clique_id": StructIn(_clique_id)},
    "cnclDestroyComms": {"comms": Seq("num_comm")},
    "cnclSetCommConfig": {"config": StructIn(_comm_config)},
    "cnclAlltoAllv": {name: Seq(lambda comm: _nrank(comm)) for name in (
        "send_buffers", "send_counts", "send_types", "recv_buffers", "recv_counts", "recv_types")},
}

DESTROYS = {
    "cnclDestroyComms": "comms",
    "cnclFreeComm": "comm",
    "cnclAbortComm": "comm",
}

ERROR_STRINGS = {"cnclGetErrorStr": "ret"}
