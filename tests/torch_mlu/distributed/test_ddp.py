"""DistributedDataParallel on mlu through cncl (bucketed gradient all-reduce, no_sync, find_unused_parameters)
trains like the same script on cpu through gloo, on 2 and 4 ranks."""
import pytest


@pytest.mark.parametrize("world", [2, 4])
@pytest.mark.parametrize("find_unused", [False, True], ids=["all_used", "find_unused"])
def test_ddp_matches_gloo_on_cpu(request, world, find_unused):
    ranks = request.getfixturevalue("two_ranks" if world == 2 else "four_ranks")
    for result in ranks.run("ddp", 5, find_unused):
        assert result["moved"] > 1e-3            # it trained
        assert result["between_ranks"] == 0.0    # every rank holds the same parameters
        assert result["mlu_vs_cpu"] < 1e-5
