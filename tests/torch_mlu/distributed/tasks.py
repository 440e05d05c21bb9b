"""What the rank processes of the torch.distributed tests run (see ranks.py). Each task returns a list of failure
descriptions (empty when everything matched its CPU/gloo reference) or values for the test to check."""
from __future__ import annotations

import time

import torch
import torch.distributed as dist

R = dist.ReduceOp
FLOAT_TYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64]
INT_TYPES = [torch.int8, torch.int32, torch.int64, torch.uint8]


def _same(got: torch.Tensor, want: torch.Tensor) -> bool:
    got, want = got.cpu(), want.cpu()
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.is_complex:
        return _same(torch.view_as_real(got), torch.view_as_real(want))
    if got.is_floating_point():
        return bool(torch.equal(torch.isnan(got), torch.isnan(want))) and \
            bool(torch.equal(got.nan_to_num(0.0), want.nan_to_num(0.0)))
    return bool(torch.equal(got, want))


def _inputs(rank: int, dtype: torch.dtype, count: int, op=None) -> torch.Tensor:
    """This rank's input: different on every rank, reproducible, small enough that integer sums and products
    of a few ranks stay meaningful (wrapping is compared too), with NaN/inf/-0.0 among floats."""
    generator = torch.Generator().manual_seed(1000 * rank + count)
    if dtype == torch.bool:
        return torch.randint(0, 2, (count,), generator=generator).bool()
    if dtype.is_complex:
        return torch.randn(count, generator=generator, dtype=dtype)
    if dtype.is_floating_point:
        values = torch.randn(count, generator=generator, dtype=torch.float64) * 4
        if count > 4 and op in (R.MAX, R.MIN, R.SUM):
            values[1] = float("nan") if rank == 1 else values[1]
            values[2] = float("inf") if rank == 0 else -0.0
            values[3] = -0.0
        return values.to(dtype)
    low, high = (0, 4) if dtype == torch.uint8 else (-3, 4)
    return torch.randint(low, high, (count,), generator=generator, dtype=dtype)


_COMBINE = {R.SUM: torch.add, R.PRODUCT: torch.mul, R.MIN: torch.minimum, R.MAX: torch.maximum,
            R.BAND: torch.bitwise_and, R.BOR: torch.bitwise_or, R.BXOR: torch.bitwise_xor}


def _reference(rank: int, world: int, dtype, count: int, op, factor=None) -> torch.Tensor:
    """The reduction of every rank's input in rank order, from a gloo all_gather of the cpu inputs (half and
    bfloat16 accumulated in float32 and rounded once, as cncl documents)."""
    mine = _inputs(rank, dtype, count, op)
    gathered = [torch.empty_like(mine) for _ in range(world)]
    dist.all_gather(gathered, mine)  # cpu tensors: gloo
    if op == "premul":
        gathered = [part * factor for part in gathered]
    widen = dtype in (torch.float16, torch.bfloat16)
    if widen:
        gathered = [part.float() for part in gathered]
    if dtype == torch.bool:
        combine = {R.SUM: torch.logical_or, R.MAX: torch.logical_or, R.PRODUCT: torch.logical_and,
                   R.MIN: torch.logical_and, R.BAND: torch.logical_and, R.BOR: torch.logical_or,
                   R.BXOR: torch.logical_xor}[op]
    else:
        combine = _COMBINE[R.SUM if op in (R.AVG, "premul") else op]
    total = gathered[0].clone()
    for part in gathered[1:]:
        total = combine(total, part)
    if widen:
        total = total.to(dtype)
    if op == R.AVG:
        if dtype.is_floating_point:
            return total / world
        return torch.div(total, world, rounding_mode="trunc")
    return total


def _cases():
    for dtype in FLOAT_TYPES:
        for op in (R.SUM, R.AVG, R.PRODUCT, R.MIN, R.MAX, "premul"):
            yield dtype, op
    for dtype in INT_TYPES:
        for op in (R.SUM, R.AVG, R.PRODUCT, R.MIN, R.MAX, R.BAND, R.BOR, R.BXOR):
            yield dtype, op
    for op in (R.SUM, R.PRODUCT, R.MIN, R.MAX, R.BAND, R.BOR, R.BXOR):
        yield torch.bool, op


def _op(op, factor):
    return dist._make_nccl_premul_sum(factor) if op == "premul" else op


def reductions(rank: int, world: int, count: int) -> list[str]:
    """all_reduce, reduce and reduce_scatter_tensor for every ReduceOp and dtype, against the rank-order reduction
    of the gloo-gathered cpu inputs."""
    failures = []
    factor = 0.5
    for dtype, op in _cases():
        want = _reference(rank, world, dtype, count, op, factor)
        label = f"{dtype} {op}"
        tensor = _inputs(rank, dtype, count, op).to("mlu")
        dist.all_reduce(tensor, op=_op(op, factor))
        if not _same(tensor, want):
            failures.append(f"all_reduce {label}: {tensor.cpu()[:6]} != {want[:6]}")
        tensor = _inputs(rank, dtype, count, op).to("mlu")
        dist.reduce(tensor, dst=world - 1, op=_op(op, factor))
        expected = want if rank == world - 1 else _inputs(rank, dtype, count, op)
        if not _same(tensor, expected):
            failures.append(f"reduce {label} on rank {rank}")
        whole = _inputs(rank, dtype, count * world, op).to("mlu")
        out = torch.empty(count, dtype=dtype, device="mlu")
        dist.reduce_scatter_tensor(out, whole, op=_op(op, factor))
        want_whole = _reference(rank, world, dtype, count * world, op, factor)
        if not _same(out, want_whole[rank * count:(rank + 1) * count]):
            failures.append(f"reduce_scatter_tensor {label}")
    # dense in another memory order (channels-last) is reduced; a strided view is refused with the backend's error
    image = (torch.arange(24, dtype=torch.float32).reshape(2, 3, 2, 2) + rank).to(memory_format=torch.channels_last)
    on_device = image.to("mlu")
    dist.all_reduce(on_device)
    want = torch.arange(24, dtype=torch.float32).reshape(2, 3, 2, 2) * world + world * (world - 1) // 2
    if not on_device.is_contiguous(memory_format=torch.channels_last) or not torch.equal(on_device.cpu(), want):
        failures.append("all_reduce of a channels-last tensor")
    try:
        dist.all_reduce(torch.zeros(8, device="mlu")[::2])
        failures.append("all_reduce of a strided view was not refused")
    except ValueError as error:
        if "must be contiguous (dense)" not in str(error):
            failures.append(f"all_reduce of a strided view: {error}")
    return failures


def movements(rank: int, world: int, count: int) -> list[str]:
    """broadcast, all_gather (list and into tensor), reduce_scatter (list), all_to_all(_single, with splits),
    gather, scatter: mlu/cncl against cpu/gloo, for several dtypes."""
    failures = []
    for dtype in (torch.float32, torch.float64, torch.bfloat16, torch.int64, torch.bool):
        def both(make):
            return make("mlu"), make("cpu")

        def check(name, got, want):
            got, want = (got, want) if isinstance(got, (list, tuple)) else ([got], [want])
            if not all(_same(g, w) for g, w in zip(got, want)):
                failures.append(f"{name} {dtype}")

        mine = _inputs(rank, dtype, count)
        on_mlu, on_cpu = both(lambda d: mine.to(d))
        dist.broadcast(on_mlu, src=world - 1)
        dist.broadcast(on_cpu, src=world - 1)
        check("broadcast", on_mlu, on_cpu)

        outs = [torch.empty(count, dtype=dtype, device="mlu") for _ in range(world)]
        refs = [torch.empty(count, dtype=dtype) for _ in range(world)]
        dist.all_gather(outs, mine.to("mlu"))
        dist.all_gather(refs, mine)
        check("all_gather", outs, refs)

        big = torch.empty(world * count, dtype=dtype, device="mlu")
        dist.all_gather(list(big.chunk(world)), mine.to("mlu"))  # adjacent outputs: gathered in place
        check("all_gather (views of one tensor)", big, torch.cat(refs))
        big = torch.empty(world * count, dtype=dtype, device="mlu")
        dist.all_gather_into_tensor(big, mine.to("mlu"))
        check("all_gather_into_tensor", big, torch.cat(refs))

        whole = _inputs(rank, dtype, world * count)
        splits = [(r % 3) + 1 for r in range(world)]          # rows this rank sends to each rank
        rows_in = [(rank % 3) + 1] * world                    # rows each rank sends to this one
        source = _inputs(rank, dtype, sum(splits) * 2).reshape(-1, 2)
        got = torch.empty((sum(rows_in), 2), dtype=dtype, device="mlu")
        want = torch.empty((sum(rows_in), 2), dtype=dtype)
        dist.all_to_all_single(got, source.to("mlu"), rows_in, splits)
        dist.all_to_all_single(want, source, rows_in, splits)
        check("all_to_all_single with splits", got, want)
        got = torch.empty(world * count, dtype=dtype, device="mlu")
        want = torch.empty(world * count, dtype=dtype)
        dist.all_to_all_single(got, whole.to("mlu"))
        dist.all_to_all_single(want, whole)
        check("all_to_all_single", got, want)
        pieces = list(whole.chunk(world))
        got = [torch.empty(count, dtype=dtype, device="mlu") for _ in range(world)]
        want = [torch.empty(count, dtype=dtype) for _ in range(world)]
        dist.all_to_all(got, [p.to("mlu") for p in pieces])
        dist.all_to_all(want, pieces)
        check("all_to_all", got, want)

        root = world - 1
        got = [torch.empty(count, dtype=dtype, device="mlu") for _ in range(world)] if rank == root else None
        want = [torch.empty(count, dtype=dtype) for _ in range(world)] if rank == root else None
        dist.gather(mine.to("mlu"), got, dst=root)
        dist.gather(mine, want, dst=root)
        if rank == root:
            check("gather", got, want)
        got, want = torch.empty(count, dtype=dtype, device="mlu"), torch.empty(count, dtype=dtype)
        dist.scatter(got, [p.to("mlu") for p in pieces] if rank == 0 else None, src=0)
        dist.scatter(want, pieces if rank == 0 else None, src=0)
        check("scatter", got, want)
        if dtype not in (torch.bool, torch.complex64):
            got = torch.empty(count, dtype=dtype, device="mlu")
            inputs = [p.to("mlu") for p in _inputs(rank, dtype, world * count, R.SUM).chunk(world)]
            dist.reduce_scatter(got, inputs)
            check("reduce_scatter", got, _reference(rank, world, dtype, world * count, R.SUM)[
                rank * count:(rank + 1) * count])
    return failures


def point_to_point(rank: int, world: int, count: int) -> list[str]:
    """send/recv, isend/irecv and batch_isend_irecv in a ring, with messages larger than the cncl slots (a
    batch must progress both directions together)."""
    failures = []
    right, left = (rank + 1) % world, (rank - 1) % world
    mine = _inputs(rank, torch.float32, count)
    from_left = _inputs(left, torch.float32, count)
    got = torch.empty(count, device="mlu")
    if rank % 2 == 0:
        dist.send(mine.to("mlu"), dst=right)
        dist.recv(got, src=left)
    else:
        dist.recv(got, src=left)
        dist.send(mine.to("mlu"), dst=right)
    if not _same(got, from_left):
        failures.append("send/recv")
    got = torch.empty(count, device="mlu")
    requests = [dist.isend(mine.to("mlu"), dst=right), dist.irecv(got, src=left)]
    for request in requests:
        request.wait()
    if not _same(got, from_left):
        failures.append("isend/irecv")
    big = _inputs(rank, torch.float32, 64 * 1024)  # 256 KiB each way, many times the test's 4 KiB slots
    got_left = torch.empty_like(big, device="mlu")
    got_right = torch.empty_like(big, device="mlu")
    operations = [dist.P2POp(dist.isend, big.to("mlu"), right), dist.P2POp(dist.isend, big.to("mlu"), left),
                  dist.P2POp(dist.irecv, got_left, left), dist.P2POp(dist.irecv, got_right, right)]
    for request in dist.batch_isend_irecv(operations):
        request.wait()
    if not _same(got_left, _inputs(left, torch.float32, 64 * 1024)) or \
            not _same(got_right, _inputs(right, torch.float32, 64 * 1024)):
        failures.append("batch_isend_irecv")
    return failures


def objects(rank: int, world: int) -> list:
    """The object collectives, on mlu (the group's object device is mlu: its backend for mlu is cncl)."""
    cncl_group = dist.new_group(backend="cncl")
    got = [None] * world
    dist.all_gather_object(got, {"rank": rank, "data": list(range(rank))}, group=cncl_group)
    items = [f"item {rank}", rank * 10] if rank == 0 else [None, None]
    dist.broadcast_object_list(items, src=0, group=cncl_group)
    gathered = [None] * world if rank == 0 else None
    dist.gather_object(("g", rank), gathered, dst=0, group=cncl_group)
    scattered = [None]
    dist.scatter_object_list(scattered, [("s", r) for r in range(world)] if rank == 0 else None, src=0,
                             group=cncl_group)
    sent = ["to", rank]
    if rank == 0:
        dist.send_object_list(sent, dst=1, group=cncl_group)
        received = None
    elif rank == 1:
        received = [None, None]
        dist.recv_object_list(received, src=0, group=cncl_group)
    else:
        received = None
    return [got, items, gathered, scattered, received]


def sub_groups(rank: int, world: int) -> list:
    """new_group: groups of the even and of the odd ranks, and a group of all ranks in reverse order; each has
    its own communicator."""
    evens = dist.new_group([r for r in range(world) if r % 2 == 0], backend="cncl")
    odds = dist.new_group([r for r in range(world) if r % 2 == 1], backend="cncl")
    mine = evens if rank % 2 == 0 else odds
    tensor = torch.full((3,), float(rank + 1), device="mlu")
    dist.all_reduce(tensor, group=mine)
    size = dist.get_world_size(mine)
    gathered = torch.empty(3 * size, device="mlu")
    dist.all_gather_into_tensor(gathered, torch.full((3,), float(rank), device="mlu"), group=mine)
    everyone = dist.new_group(list(range(world)), backend="cncl")
    total = torch.ones(2, device="mlu")
    dist.all_reduce(total, group=everyone)
    return [tensor.cpu().tolist(), gathered.cpu().tolist(), dist.get_rank(mine), total.cpu().tolist()]


def coalesced(rank: int, world: int) -> list[str]:
    """Coalesced calls: torch's coalescing manager (all_reduce, all_gather_into_tensor, reduce_scatter_tensor as
    one cncl group each) and the functional collectives (what DTensor and FSDP2 call from C++)."""
    import torch.distributed._functional_collectives as funcol
    from torch.distributed.distributed_c10d import _coalescing_manager

    failures = []
    tensors = [torch.full((n,), float(rank + n), device="mlu") for n in (1, 5, 9)]
    with _coalescing_manager(async_ops=True) as manager:
        for tensor in tensors:
            dist.all_reduce(tensor)
    manager.wait()
    for n, tensor in zip((1, 5, 9), tensors):
        if tensor.cpu().tolist() != [float(sum(r + n for r in range(world)))] * n:
            failures.append(f"coalesced all_reduce {n}")
    outputs = [torch.empty(world * n, device="mlu") for n in (2, 3)]
    with _coalescing_manager():
        for n, output in zip((2, 3), outputs):
            dist.all_gather_into_tensor(output, torch.full((n,), float(rank), device="mlu"))
    for n, output in zip((2, 3), outputs):
        if output.cpu().tolist() != [float(r) for r in range(world) for _ in range(n)]:
            failures.append(f"coalesced all_gather_into_tensor {n}")
    group = dist.group.WORLD
    gathered = funcol.all_gather_tensor(torch.full((2,), float(rank), device="mlu"), 0, group)
    if gathered.cpu().tolist() != [float(r) for r in range(world) for _ in range(2)]:
        failures.append("functional all_gather_tensor")
    reduced = funcol.all_reduce(torch.full((2,), float(rank), device="mlu"), "sum", group)
    if reduced.cpu().tolist() != [float(sum(range(world)))] * 2:
        failures.append("functional all_reduce")
    scattered = funcol.reduce_scatter_tensor(torch.arange(2.0 * world, device="mlu"), "sum", 0, group)
    if scattered.cpu().tolist() != [float(world * (2 * rank)), float(world * (2 * rank + 1))]:
        failures.append("functional reduce_scatter_tensor")
    return failures


def asynchronous(rank: int, world: int, delay: float) -> dict:
    """async_op works: rank 0 issues an all_reduce that rank 1 joins only after `delay` seconds. wait() must
    return at once (it makes the current stream wait, it does not block the host), the result must still be
    right when read on the current stream, and the input's memory must not be handed out again meanwhile
    (record_stream)."""
    result = {}
    dist.all_reduce(torch.zeros(1, device="mlu"))  # the communicator exists (its creation waits for the peers)
    torch.mlu.synchronize()
    if rank == 1:
        time.sleep(delay)
    tensor = torch.full((1024,), float(rank + 1), device="mlu")
    address = tensor.data_ptr()
    started = time.monotonic()
    work = dist.all_reduce(tensor, async_op=True)
    result["completed_at_once"] = work.is_completed()
    work.wait()
    result["wait_seconds"] = time.monotonic() - started
    future = work.get_future()
    doubled = future.then(lambda f: f.value()[0] * 2)
    spare = torch.full((1024,), float(rank + 1), device="mlu")
    second = dist.all_reduce(spare, async_op=True)
    spare_address = spare.data_ptr()
    del spare
    reuse = torch.empty(1024, device="mlu")
    result["reused_while_pending"] = reuse.data_ptr() == spare_address and not second.is_completed()
    result["value"] = tensor.cpu()[:2].tolist()
    result["then"] = doubled.wait().cpu()[:2].tolist()
    second.wait()
    torch.mlu.synchronize()
    result["completed_after"] = work.is_completed() and work.is_success()
    result["address_kept"] = tensor.data_ptr() == address
    return result


def small_collective_done_inline(rank: int, world: int, delay: float) -> dict:
    """Rank 0 issues a small all_reduce at once, the others `delay` seconds later: rank 0's cncl call is handed to
    its queue (its work pending, its stream made to wait), the later ranks find every message there and cncl runs
    their call in the host thread (their work is complete when it is returned, nothing left to wait for). Then
    calls back to back: every result right."""
    result = {}
    tensor = torch.full((64,), float(rank + 1), device="mlu")
    dist.all_reduce(tensor)  # the communicator, and the call's plan
    torch.mlu.synchronize()
    dist.barrier()
    torch.mlu.synchronize()
    if rank != 0:
        time.sleep(delay)
    tensor.fill_(float(rank + 1))
    work = dist.all_reduce(tensor, async_op=True)
    result["completed_at_once"] = work.is_completed()
    result["future"] = work.get_future().wait()[0].cpu()[:2].tolist()
    work.wait()
    result["value"] = tensor.cpu()[:2].tolist()
    ones = torch.ones(16, device="mlu")
    for _ in range(30):
        dist.all_reduce(ones)
    result["chain"] = ones.cpu()[:2].tolist()
    return result


# ---- training ---------------------------------------------------------------------------------------------------

class _Model(torch.nn.Module):
    """A small MLP with a branch that `forward(skip=True)` leaves unused (find_unused_parameters)."""

    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(8, 16)
        self.second = torch.nn.Linear(16, 4)
        self.unused = torch.nn.Linear(16, 4)

    def forward(self, x, skip: bool = True):
        hidden = torch.relu(self.first(x))
        out = self.second(hidden)
        return out if skip else out + self.unused(hidden)


def _mse(out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    # not F.mse_loss: its CPU fallback on mlu fails ("resize storage that is not resizable"), a torch_mlu gap
    return ((out - target) ** 2).mean()


def _batches(rank: int, steps: int):
    generator = torch.Generator().manual_seed(7 + rank)
    return [(torch.randn(6, 8, generator=generator), torch.randn(6, 4, generator=generator)) for _ in range(steps)]


def _train_ddp(device: str, rank: int, steps: int, **options) -> list[torch.Tensor]:
    from torch.nn.parallel import DistributedDataParallel

    torch.manual_seed(0)
    model = _Model().to(device)
    ddp = DistributedDataParallel(model, bucket_cap_mb=0.0005, **options)  # several buckets
    skip = options.get("find_unused_parameters", False)  # leave a branch unused only when DDP is told
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
    for step, (x, y) in enumerate(_batches(rank, steps)):
        x, y = x.to(device), y.to(device)
        if step % 3 == 1:  # gradient accumulation: the first micro-batch without communication
            with ddp.no_sync():
                _mse(ddp(x[:3], skip), y[:3]).backward()
            _mse(ddp(x[3:], skip), y[3:]).backward()
        else:
            _mse(ddp(x, skip), y).backward()
        optimizer.step()
        optimizer.zero_grad()
    return [p.detach().cpu() for p in model.parameters()]


def ddp(rank: int, world: int, steps: int, find_unused: bool) -> dict:
    """DistributedDataParallel on mlu/cncl and the same script on cpu/gloo: the parameters after `steps` steps,
    and the largest difference between the two runs and between ranks."""
    on_mlu = _train_ddp("mlu", rank, steps, find_unused_parameters=find_unused)
    on_cpu = _train_ddp("cpu", rank, steps, find_unused_parameters=find_unused)
    gathered = [None] * world
    dist.all_gather_object(gathered, on_mlu)
    return {"mlu_vs_cpu": max(float((a - b).abs().max()) for a, b in zip(on_mlu, on_cpu)),
            "between_ranks": max(float((a - b).abs().max()) for other in gathered for a, b in zip(on_mlu, other)),
            "moved": max(float((a - b).abs().max()) for a, b in zip(on_mlu, _initial_parameters()))}


def _initial_parameters() -> list[torch.Tensor]:
    torch.manual_seed(0)
    return [p.detach() for p in _Model().parameters()]


def _train_fsdp(device: str, rank: int, world: int, steps: int) -> list[torch.Tensor]:
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard

    torch.manual_seed(0)
    model = _Model().to(device)
    mesh = init_device_mesh(device, (world,))
    fully_shard(model.first, mesh=mesh)
    fully_shard(model, mesh=mesh)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.01)
    for x, y in _batches(rank, steps):
        _mse(model(x.to(device)), y.to(device)).backward()
        optimizer.step()
        optimizer.zero_grad()
    return [p.full_tensor().detach().cpu() for p in model.parameters()]


def fsdp(rank: int, world: int, steps: int) -> dict:
    """FSDP2 (fully_shard: all_gather_into_tensor / reduce_scatter_tensor) on mlu/cncl and on cpu/gloo."""
    on_mlu = _train_fsdp("mlu", rank, world, steps)
    on_cpu = _train_fsdp("cpu", rank, world, steps)
    return {"mlu_vs_cpu": max(float((a - b).abs().max()) for a, b in zip(on_mlu, on_cpu)),
            "moved": max(float((a - b).abs().max()) for a, b in zip(on_mlu, _initial_parameters()))}
