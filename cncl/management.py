"""Communicator management: cnclInitComms, cnclDestroyComms, cnclFreeComm, cnclAbortComm, the getters,
cnclGetCommAsyncError, cnclSetCommConfig and cnclGetLibVersion."""
from __future__ import annotations

from dataclasses import dataclass

from mlusim import device as devices
from mlusim import sanitizer
from mlusim.host import sharedmem
from mlusim.lazymodule import LazyModule
from mlusim.validate import as_enum, as_int, as_int_sequence, as_number

from . import rendezvous
from .clique import clique_arg
from .comm import Clique, cnclComm, comm_arg
from .datatypes import CNCL_PRIORITY_DEFAULT, CNCL_PRIORITY_HIGH, CNCL_PRIORITY_HIGH_FOR_ONCE
from .errors import CNCL_RET_ERR_ARGUMENTS, CnclError, api

#: the small-message code (numba), imported when a communicator needs it: loading cncl does not load numba
tiny = LazyModule(f"{__package__}.tiny")

#: The cncl.h version this clone follows.
LIB_VERSION = (1, 25, 0)


@dataclass
class cnclCommConfig:
    """struct cnclCommConfig { cnclPriority_t priority; }."""

    priority: int = CNCL_PRIORITY_DEFAULT


def _argument_error(arg: str, message: str) -> CnclError:
    return CnclError(CNCL_RET_ERR_ARGUMENTS, f"argument '{arg}': {message}")


@api("cnclInitComms")
def initComms(num_comm: int, dev_list, rank_list, nrank: int, clique_id=None, *, timeout=None) -> list[cnclComm]:
    """cnclInitComms(cnclComm_t *comms, int num_comm, const int *dev_list, const int *rank_list, int nrank,
    const cnclCliqueId_t clique_id) -> list of num_comm communicators.

    `timeout` (seconds; an mlusim extension, default MLUSIM_CNCL_TIMEOUT) bounds the wait for the other ranks
    here and becomes the communicators' timeout (`cnclComm.set_timeout`).

    clique_id None: every rank lives in this process (num_comm == nrank). Otherwise the ranks of the clique may be
    spread over processes of this host, each calling initComms with its own ranks and the same clique id; the call
    returns when every rank of the clique has joined (or fails with CNCL_RET_ERR_INIT after MLUSIM_CNCL_TIMEOUT)."""
    count = as_int(num_comm, "num_comm", minimum=1)
    total = as_int(nrank, "nrank", minimum=1)
    if count > total:
        raise _argument_error("num_comm", f"{count} communicators for a clique of {total} ranks")
    device_ids = list(as_int_sequence(dev_list, "dev_list", length=count, minimum=0))
    ranks = list(as_int_sequence(rank_list, "rank_list", length=count, minimum=0))
    for index, rank in enumerate(ranks):
        if rank >= total:
            raise _argument_error(f"rank_list[{index}]", f"rank {rank} is outside 0..{total - 1}")
    if len(set(ranks)) != len(ranks):
        raise _argument_error("rank_list", f"ranks must be unique, got {ranks}")
    targets = [devices.get(device, f"dev_list[{index}]") for index, device in enumerate(device_ids)]
    timeout = rendezvous.timeout_setting() if timeout is None else as_number(timeout, "timeout")
    if not timeout > 0:
        raise _argument_error("timeout", f"must be a positive number of seconds, got {timeout}")
    if clique_id is None:
        if count != total:
            raise _argument_error("clique_id", f"NULL is only for a clique whose ranks all live in this process "
                                               f"(num_comm {count} != nrank {total}); use cnclGetCliqueId")
        order = sorted(range(count), key=lambda i: ranks[i])
        fabric = rendezvous.private_fabric(total, [device_ids[i] for i in order])
    else:
        # device memory allocated from now on can be mapped by the peers' processes (zero-copy collectives)
        sharedmem.enable()
        fabric = rendezvous.join(clique_arg(clique_id), total, ranks, device_ids, timeout)
        tiny.warm()  # after the join: its timeout must not include loading the compiled message code
    clique = Clique(fabric, timeout)
    comms = [cnclComm(clique, rank, target) for rank, target in zip(ranks, targets)]
    for comm in comms:
        sanitizer.track(comm, "cnclComm_t")  # leakcheck: alive until cnclDestroyComms / cnclFreeComm
    return comms


def _comm_list(comms, num_comm, arg: str = "comms") -> list[cnclComm]:
    count = as_int(num_comm, "num_comm", minimum=0)
    if isinstance(comms, cnclComm):
        comms = [comms]
    if not hasattr(comms, "__len__") or len(comms) < count:
        raise _argument_error(arg, f"expected a sequence of at least {count} communicators")
    return [comm_arg(comms[index], f"{arg}[{index}]") for index in range(count)]


@api("cnclDestroyComms")
def destroyComms(comms, num_comm: int) -> None:
    """cnclDestroyComms(cnclComm_t *comms, int num_comm): free each communicator after its queued work ran."""
    for comm in _comm_list(comms, num_comm):
        comm.destroy()


@api("cnclFreeComm")
def freeComm(comm) -> None:
    """cnclFreeComm(cnclComm_t comm): free one communicator after its queued work ran."""
    comm_arg(comm).destroy()


@api("cnclAbortComm")
def abortComm(comm) -> None:
    """cnclAbortComm(cnclComm_t comm): make the communicator's running and queued operations fail at once (and
    its peers' operations with it), then free it."""
    target = comm_arg(comm)
    target.abort()
    target.destroy()


@api("cnclGetCommCount")
def getCommCount(comm) -> int:
    """cnclGetCommCount(int *count, const cnclComm_t comm) -> the number of ranks in the clique."""
    return comm_arg(comm).nrank


@api("cnclGetCommRank")
def getCommRank(comm) -> int:
    """cnclGetCommRank(int *rank, const cnclComm_t comm) -> the communicator's rank."""
    return comm_arg(comm).rank


@api("cnclGetCommDevice")
def getCommDevice(comm) -> int:
    """cnclGetCommDevice(int *rank, const cnclComm_t comm) -> the device ordinal of the communicator."""
    return comm_arg(comm).device.index


@api("cnclGetCommAsyncError")
def getCommAsyncError(comm) -> int:
    """cnclGetCommAsyncError(const cnclComm_t comm) -> CNCL_RET_SUCCESS, or CNCL_RET_ASYNC_ERROR once an operation
    of the communicator failed (the failure itself is `comm.error`)."""
    return comm_arg(comm).async_error()


@api("cnclSetCommConfig")
def setCommConfig(comm, config) -> None:
    """cnclSetCommConfig(cnclComm_t comm, const cnclCommConfig_t config): the priority is recorded (the simulated
    queues run communication in issue order whatever the priority)."""
    target = comm_arg(comm)
    if not isinstance(config, cnclCommConfig):
        raise _argument_error("config", f"expected a cnclCommConfig, got {type(config).__name__}")
    target.priority = as_enum(config.priority, "config.priority",
                              (CNCL_PRIORITY_DEFAULT, CNCL_PRIORITY_HIGH, CNCL_PRIORITY_HIGH_FOR_ONCE),
                              "cnclPriority_t")


@api("cnclGetLibVersion")
def getLibVersion() -> tuple[int, int, int]:
    """cnclGetLibVersion(int *major, int *minor, int *patch) -> (major, minor, patch)."""
    return LIB_VERSION
