"""FSDP2 (fully_shard: sharded parameters all-gathered, gradients reduce-scattered) on mlu through cncl trains
like the same script on cpu through gloo, on 2 and 4 ranks."""
import pytest


@pytest.mark.parametrize("world", [2, 4])
def test_fully_shard_matches_gloo_on_cpu(request, world):
    ranks = request.getfixturevalue("two_ranks" if world == 2 else "four_ranks")
    for result in ranks.run("fsdp", 4):
        assert result["moved"] > 1e-3
        assert result["mlu_vs_cpu"] < 1e-5
