"""The reducing collectives of the cncl backend (a part of `CnclBackend`): all-reduce (and its fast path for one
dense tensor), reduce, reduce-scatter, each by the plan reduce_ops makes for the op and dtype: a cncl reduction, or
a gather and a reduction on the device in rank order where cncl has no such op or type (AVG as SUM and a division,
PREMUL_SUM as a multiplication first)."""
from __future__ import annotations

import torch

import cncl

from .. import _state
from . import reduce_ops
from .connection import Connection
from .reduce_ops import Plan
from .work import Work


class Reductions:
    """all-reduce, reduce and reduce-scatter (mixed into CnclBackend, whose connections and checks they use)."""

    def _reduce(self, connection: Connection, kind: str, send: torch.Tensor, recv: torch.Tensor | None, plan: Plan,
                root: int = 0) -> None:
        """One reduction of `send` into `recv` (kind: allReduce, reduce, reduceScatter) by `plan`."""
        comm, queue = connection.comm, connection.queue
        if plan.premul is not None:
            factor = plan.premul
            send = self._on_stream(connection, lambda: send * factor)
            connection.record(send)
        if plan.emulated:
            self._reduce_by_gathering(connection, kind, send, recv, plan, root)
        else:
            source = plan.view(send) if plan.view else send
            target = plan.view(recv) if plan.view and recv is not None else recv
            count = source.numel()
            target_ptr = target.data_ptr() if target is not None else 0
            if kind == "allReduce":
                cncl.allReduce(source.data_ptr(), target_ptr, count, plan.cncl_type, plan.cncl_op, comm, queue)
            elif kind == "reduce":
                cncl.reduce(source.data_ptr(), target_ptr, count, plan.cncl_type, plan.cncl_op, root, comm, queue)
            else:
                cncl.reduceScatter(source.data_ptr(), target_ptr, count // self.size, plan.cncl_type, plan.cncl_op,
                                   comm, queue)
        if plan.average and recv is not None:
            self._average(connection, recv)

    def _average(self, connection: Connection, recv: torch.Tensor) -> None:
        """AVG: the sum in `recv` divided by the group size on the cncl stream (integers: truncating)."""
        size = self.size
        if recv.dtype.is_floating_point or recv.dtype.is_complex:
            self._after(connection, lambda: recv.div_(size))
        else:
            self._after(connection, lambda: recv.div_(size, rounding_mode="trunc"))

    def _reduce_by_gathering(self, connection: Connection, kind: str, send: torch.Tensor, recv, plan: Plan,
                             root: int) -> None:
        """What cncl cannot reduce: gather every rank's input, combine in rank order on the cncl stream."""
        source = plan.view(send) if plan.view else send
        gathered = self._on_stream(connection, lambda: torch.empty((self.size,) + tuple(source.shape),
                                                                    dtype=source.dtype, device=source.device))
        code, count = reduce_ops.movement_type(source)
        cncl.allGather(source.contiguous().data_ptr(), gathered.data_ptr(), count, code, connection.comm,
                       connection.queue)
        rank, size = self.rank, self.size

        def combine() -> None:
            result = reduce_ops.combine_in_rank_order(gathered, plan.op)
            if recv is None:
                return
            target = plan.view(recv) if plan.view else recv
            if kind == "reduceScatter":
                chunk = result.reshape(size, -1)[rank]
                target.copy_(chunk.view(target.shape))
            else:
                target.copy_(result)

        if kind != "reduce" or self.rank == root:
            self._after(connection, combine)

    def allreduce(self, tensors: list, reduce_op: tuple) -> Work:
        """ProcessGroup.allreduce (dist.all_reduce): in place on each tensor."""
        connection = self._begin(tensors, "allreduce")
        op, factor = reduce_op
        for tensor in tensors:
            self._reduce(connection, "allReduce", tensor, tensor, reduce_ops.plan(op, factor, tensor.dtype))
        return self._finish(connection, tensors, "allreduce", tensors)

    def allreduce_dense(self, tensor: torch.Tensor, device: int, stream_id: int, op: int) -> Work:
        """ProcessGroup.allreduce of one tensor, which the C++ side found dense and on mlu `device`, whose current
        stream it read (`stream_id`), with a ReduceOp other than PREMUL_SUM: the steps of `allreduce` without its
        checks of the tensor list, for the common call of small tensors, where those checks would cost as much as
        the collective."""
        connection = self._connections.get(device)
        plan = reduce_ops.plan(op, None, tensor.dtype)
        if connection is None or plan.emulated or plan.view is not None or self._thread.coalescing is not None:
            return self.allreduce([tensor], (op, None))
        connection.check()
        self.sequence_number += 1
        connection.follow(_state.runtime.streams.queue(device, stream_id))
        address = tensor.data_ptr()
        cncl.allReduce(address, address, tensor.numel(), plan.cncl_type, plan.cncl_op, connection.comm,
                       connection.queue)
        if plan.average:
            self._average(connection, tensor)
        return self._finish(connection, [tensor], "allreduce", (tensor,))

    def allreduce_coalesced(self, tensors: list, reduce_op: tuple) -> Work:
        """ProcessGroup.allreduce_coalesced: the all-reduces of several tensors as one group."""
        return self._coalesced(lambda: [self.allreduce([tensor], reduce_op) for tensor in tensors], tensors)

    def reduce(self, tensors: list, reduce_op: tuple, root: int, root_tensor: int) -> Work:
        """ProcessGroup.reduce (dist.reduce): the result lands in the root's tensor."""
        connection = self._begin(tensors, "reduce")
        self._check_rank(root, "root")
        op, factor = reduce_op
        for tensor in tensors:
            target = tensor if self.rank == root else None
            self._reduce(connection, "reduce", tensor, target, reduce_ops.plan(op, factor, tensor.dtype), root)
        return self._finish(connection, tensors, "reduce", tensors)

    def reduce_scatter_tensor(self, output: torch.Tensor, input: torch.Tensor, reduce_op: tuple) -> Work:
        """ProcessGroup._reduce_scatter_base (dist.reduce_scatter_tensor): chunk `rank` of the reduction of every
        rank's input."""
        connection = self._begin([output, input], "reduce_scatter_tensor")
        if input.numel() != output.numel() * self.size:
            raise ValueError(f"cncl reduce_scatter_tensor: the input must have {self.size} times the output's "
                             f"{output.numel()} elements, got {input.numel()}")
        self._check_same_dtype(output, input, "reduce_scatter_tensor")
        op, factor = reduce_op
        self._reduce(connection, "reduceScatter", input, output, reduce_ops.plan(op, factor, input.dtype))
        return self._finish(connection, [output], "reduce_scatter_tensor", [output, input])

    def reduce_scatter_tensor_coalesced(self, outputs: list, inputs: list, reduce_op: tuple) -> Work:
        return self._coalesced(lambda: [self.reduce_scatter_tensor(o, i, reduce_op)
                                        for o, i in zip(outputs, inputs)], outputs)

    def reduce_scatter(self, outputs: list, input_lists: list, reduce_op: tuple) -> Work:
        """ProcessGroup.reduce_scatter (dist.reduce_scatter): output = the reduction of input_list[rank] of
        every rank."""
        flat = [tensor for inputs in input_lists for tensor in inputs]
        connection = self._begin(list(outputs) + flat, "reduce_scatter")
        op, factor = reduce_op
        for output, inputs in zip(outputs, input_lists):
            self._check_list(inputs, output, "reduce_scatter", "input_list")
            joined = self._adjacent(inputs)
            if joined is None:
                joined = self._on_stream(connection, lambda: torch.cat([t.reshape(-1) for t in inputs]))
                connection.record(joined)
            self._reduce(connection, "reduceScatter", joined, output, reduce_ops.plan(op, factor, output.dtype))
        return self._finish(connection, list(outputs), "reduce_scatter", list(outputs) + flat)

    # ---- data movement -------------------------------------------------------------------------------------------
