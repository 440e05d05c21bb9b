"""The point-to-point calls of the cncl backend (a part of `CnclBackend`): send and recv (tagged, to and from named
ranks), all-to-all (with splits: the sends and receives of one cncl group) and barrier (an all-reduce of one
element whose wait() blocks the host, as NCCL's)."""
from __future__ import annotations

import torch

import cncl

from . import reduce_ops
from .connection import Connection
from .work import BlockingWork, Work


class PointToPoint:
    """send, recv, all-to-all, barrier (mixed into CnclBackend, whose connections and checks they use)."""

    def alltoall_base(self, output: torch.Tensor, input: torch.Tensor, output_splits: list,
                      input_splits: list) -> Work:
        """ProcessGroup.alltoall_base (dist.all_to_all_single): the input's block r (input_splits[r] rows, or an
        equal share) goes to rank r; the output's block r (output_splits[r] rows) comes from rank r."""
        connection = self._begin([output, input], "all_to_all_single")
        self._check_same_dtype(output, input, "all_to_all_single")
        if not output_splits and not input_splits and input.numel() % self.size == 0 \
                and output.numel() == input.numel():
            code, count = reduce_ops.movement_type(input)
            cncl.alltoAll(input.data_ptr(), output.data_ptr(), count // self.size, code, connection.comm,
                          connection.queue)
        else:
            sends = self._blocks(input, input_splits, "input_split_sizes")
            receives = self._blocks(output, output_splits, "output_split_sizes")
            self._exchange(connection, sends, receives, input.element_size())
        return self._finish(connection, [output], "all_to_all_single", [output, input])

    def alltoall(self, outputs: list, inputs: list) -> Work:
        """ProcessGroup.alltoall (dist.all_to_all): inputs[r] goes to rank r, outputs[r] comes from rank r."""
        connection = self._begin(list(outputs) + list(inputs), "all_to_all")
        if len(outputs) != self.size or len(inputs) != self.size:
            raise ValueError(f"cncl all_to_all: expected {self.size} input and output tensors, got "
                             f"{len(inputs)} and {len(outputs)}")
        sends = [(t.data_ptr(), t.numel() * t.element_size()) for t in inputs]
        receives = [(t.data_ptr(), t.numel() * t.element_size()) for t in outputs]
        self._exchange(connection, sends, receives, 1)
        return self._finish(connection, list(outputs), "all_to_all", list(outputs) + list(inputs))

    def _blocks(self, tensor: torch.Tensor, splits: list, arg: str) -> list[tuple[int, int]]:
        """(address, nbytes) of each rank's block of rows of `tensor`."""
        rows = tensor.shape[0] if tensor.dim() else 1
        if not splits:
            if rows % self.size:
                raise ValueError(f"cncl all_to_all_single: {rows} rows do not split equally among {self.size} "
                                 f"ranks; pass {arg}")
            splits = [rows // self.size] * self.size
        if len(splits) != self.size or sum(splits) != rows or min(splits) < 0:
            raise ValueError(f"cncl all_to_all_single: {arg} {list(splits)} must be {self.size} sizes adding up to "
                             f"the {rows} rows")
        row_bytes = tensor.numel() // max(rows, 1) * tensor.element_size()
        blocks, offset = [], 0
        for split in splits:
            blocks.append((tensor.data_ptr() + offset * row_bytes, split * row_bytes))
            offset += split
        return blocks

    def _exchange(self, connection: Connection, sends: list, receives: list, unit: int) -> None:
        """Every rank sends sends[r] = (address, nbytes) to rank r and receives receives[r] from it (one grouped
        command: all directions progress together)."""
        comm, queue = connection.comm, connection.queue
        cncl.groupStart()
        try:
            for peer in range(self.size):
                address, nbytes = sends[peer]
                cncl.send(address if nbytes else 0, nbytes, cncl.cnclUint8, peer, comm, queue)
                address, nbytes = receives[peer]
                cncl.recv(address if nbytes else 0, nbytes, cncl.cnclUint8, peer, comm, queue)
        finally:
            cncl.groupEnd()

    # ---- point to point ------------------------------------------------------------------------------------------
    def send(self, tensors: list, dst: int, tag: int) -> Work:
        """ProcessGroup.send (dist.send / isend)."""
        connection = self._begin(tensors, "send")
        self._check_rank(dst, "dst")
        tensor, = tensors
        code, count = reduce_ops.movement_type(tensor)
        cncl.send(tensor.data_ptr(), count, code, dst, connection.comm, connection.queue)
        return self._finish(connection, list(tensors), "send", tensors)

    def recv(self, tensors: list, src: int, tag: int) -> Work:
        """ProcessGroup.recv (dist.recv / irecv)."""
        connection = self._begin(tensors, "recv")
        self._check_rank(src, "src")
        tensor, = tensors
        code, count = reduce_ops.movement_type(tensor)
        cncl.recv(tensor.data_ptr(), count, code, src, connection.comm, connection.queue)
        work = self._finish(connection, list(tensors), "recv", tensors)
        work._source = src
        return work

    def recv_anysource(self, tensors: list, tag: int) -> Work:
        raise RuntimeError("cncl does not support receiving from any source (recv with src=None); name the source")

    def barrier(self, device_ids: list, device) -> Work:
        """ProcessGroup.barrier (dist.barrier): an all-reduce of one element; its wait() blocks the host."""
        if device is None:
            device = device_ids[0] if device_ids else torch.mlu.current_device()
        with torch.mlu.device(device):
            flag = torch.zeros(1, device=f"mlu:{device}")
        work = self.allreduce([flag], (reduce_ops.SUM, None))
        work.name = "barrier"
        return BlockingWork(work)
