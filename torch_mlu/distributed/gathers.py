"""The gathering and scattering collectives of the cncl backend (a part of `CnclBackend`): broadcast, all-gather
(into one tensor or a list), gather and scatter (point-to-point in a group where cncl has none)."""
from __future__ import annotations

import torch

import cncl

from . import reduce_ops
from .work import Work


class Gathers:
    """broadcast, all-gather, gather, scatter (mixed into CnclBackend, whose connections and checks they use)."""

    def broadcast(self, tensors: list, root: int, root_tensor: int) -> Work:
        """ProcessGroup.broadcast (dist.broadcast): the root's tensor into every rank's."""
        connection = self._begin(tensors, "broadcast")
        self._check_rank(root, "root")
        for tensor in tensors:
            code, count = reduce_ops.movement_type(tensor)
            cncl.bcast(tensor.data_ptr(), count, code, root, connection.comm, connection.queue)
        return self._finish(connection, tensors, "broadcast", tensors)

    def allgather_into_tensor(self, output: torch.Tensor, input: torch.Tensor) -> Work:
        """ProcessGroup._allgather_base (dist.all_gather_into_tensor): every rank's input, in rank order."""
        connection = self._begin([output, input], "all_gather_into_tensor")
        if output.numel() != input.numel() * self.size:
            raise ValueError(f"cncl all_gather_into_tensor: the output must have {self.size} times the input's "
                             f"{input.numel()} elements, got {output.numel()}")
        self._check_same_dtype(output, input, "all_gather_into_tensor")
        code, count = reduce_ops.movement_type(input)
        cncl.allGather(input.data_ptr(), output.data_ptr(), count, code, connection.comm, connection.queue)
        return self._finish(connection, [output], "all_gather_into_tensor", [output, input])

    def allgather_into_tensor_coalesced(self, outputs: list, inputs: list) -> Work:
        return self._coalesced(lambda: [self.allgather_into_tensor(o, i) for o, i in zip(outputs, inputs)], outputs)

    def allgather(self, output_lists: list, inputs: list) -> Work:
        """ProcessGroup.allgather (dist.all_gather): output_list[r] = rank r's input."""
        flat = [tensor for outputs in output_lists for tensor in outputs]
        connection = self._begin(flat + list(inputs), "all_gather")
        for outputs, input in zip(output_lists, inputs):
            self._check_list(outputs, input, "all_gather", "output_list")
            target = joined = self._adjacent(outputs)
            if joined is None:
                target = self._on_stream(connection, lambda: torch.empty(
                    (self.size * input.numel(),), dtype=input.dtype, device=input.device))
                connection.record(target)
            code, count = reduce_ops.movement_type(input)
            cncl.allGather(input.contiguous().data_ptr(), target.data_ptr(), count, code, connection.comm,
                           connection.queue)
            if joined is None:
                self._after(connection, self._scatter_copy(target, outputs))
        return self._finish(connection, flat, "all_gather", flat + list(inputs))

    def allgather_coalesced(self, output_lists: list, inputs: list) -> Work:
        return self._coalesced(lambda: [self.allgather([outputs], [input])
                                        for outputs, input in zip(output_lists, inputs)],
                               [t for outputs in output_lists for t in outputs])

    def gather(self, output_lists: list, inputs: list, root: int) -> Work:
        """ProcessGroup.gather (dist.gather): the root's output_list[r] = rank r's input (grouped send/recv)."""
        flat = [tensor for outputs in output_lists for tensor in outputs]
        connection = self._begin(flat + list(inputs), "gather")
        self._check_rank(root, "root")
        input, = inputs
        comm, queue = connection.comm, connection.queue
        cncl.groupStart()
        try:
            if self.rank == root:
                outputs, = output_lists
                self._check_list(outputs, input, "gather", "gather_list")
                for peer, output in enumerate(outputs):
                    if peer == root:
                        continue
                    code, count = reduce_ops.movement_type(output)
                    cncl.recv(output.data_ptr(), count, code, peer, comm, queue)
            else:
                code, count = reduce_ops.movement_type(input)
                cncl.send(input.data_ptr(), count, code, root, comm, queue)
        finally:
            cncl.groupEnd()
        if self.rank == root:
            own = output_lists[0][root]
            self._after(connection, lambda: own.copy_(input))
        return self._finish(connection, flat, "gather", flat + list(inputs))

    def scatter(self, outputs: list, input_lists: list, root: int) -> Work:
        """ProcessGroup.scatter (dist.scatter): rank r's output = the root's scatter_list[r]."""
        flat = [tensor for inputs in input_lists for tensor in inputs]
        connection = self._begin(list(outputs) + flat, "scatter")
        self._check_rank(root, "root")
        output, = outputs
        comm, queue = connection.comm, connection.queue
        cncl.groupStart()
        try:
            if self.rank == root:
                inputs, = input_lists
                self._check_list(inputs, output, "scatter", "scatter_list")
                for peer, input in enumerate(inputs):
                    if peer != root:
                        code, count = reduce_ops.movement_type(input)
                        cncl.send(input.contiguous().data_ptr(), count, code, peer, comm, queue)
            else:
                code, count = reduce_ops.movement_type(output)
                cncl.recv(output.data_ptr(), count, code, root, comm, queue)
        finally:
            cncl.groupEnd()
        if self.rank == root:
            own = input_lists[0][root]
            self._after(connection, lambda: output.copy_(own))
        return self._finish(connection, [output], "scatter", [output] + flat)
