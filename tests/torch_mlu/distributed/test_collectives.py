"""Every collective of torch.distributed on mlu tensors through the "cncl" backend, against the same call on cpu
tensors through gloo (or the rank-order reduction of the gloo-gathered inputs), with 2 and 4 rank processes."""
import pytest

pytestmark = pytest.mark.child_processes  # rank processes


@pytest.fixture(params=["two", "four"], ids=["2ranks", "4ranks"])
def ranks(request):
    return request.getfixturevalue(f"{request.param}_ranks")


def test_reductions_every_op_and_dtype(ranks):
    # 2 ranks: 1500 elements, several message windows of the tests' 4 KiB slots; 4 ranks: 7, within one
    count = 1500 if ranks.world == 2 else 7
    assert ranks.run("reductions", count) == [[]] * ranks.world


def test_reductions_of_empty_tensors(two_ranks):
    assert two_ranks.run("reductions", 0) == [[]] * 2


def test_data_movement(ranks):
    assert ranks.run("movements", 1029 if ranks.world == 2 else 5) == [[]] * ranks.world


def test_point_to_point(ranks):
    # 900 floats fit the tests' 4 KiB slots: plain isend/irecv pairs need the message buffered, as with NCCL
    assert ranks.run("point_to_point", 900) == [[]] * ranks.world


def test_object_collectives(two_ranks):
    results = two_ranks.run("objects")
    for rank, (got, items, gathered, scattered, received) in enumerate(results):
        assert got == [{"rank": 0, "data": []}, {"rank": 1, "data": [0]}]
        assert items == ["item 0", 0]
        assert gathered == ([("g", 0), ("g", 1)] if rank == 0 else None)
        assert scattered == [("s", rank)]
        assert received == (["to", 0] if rank == 1 else None)


def test_sub_groups(four_ranks):
    results = four_ranks.run("sub_groups")
    for rank, (reduced, gathered, group_rank, total) in enumerate(results):
        members = [r for r in range(4) if r % 2 == rank % 2]
        assert reduced == [float(sum(r + 1 for r in members))] * 3
        assert gathered == [float(r) for r in members for _ in range(3)]
        assert group_rank == members.index(rank)
        assert total == [4.0, 4.0]


def test_coalesced_and_functional_collectives(ranks):
    assert ranks.run("coalesced") == [[]] * ranks.world
