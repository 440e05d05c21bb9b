"""cncl.h from C across two processes: after fork(), and as separate processes that share the clique id through
a file (programs/cncl_ranks.c: allReduce on the copy and zero-copy paths, allGather, broadcast, bad arguments)."""
from .conftest import start


def test_fork(programs):
    result = programs.run("cncl_ranks.c", "fork", timeout=180)
    assert result.stdout.count("0 failure(s)") == 2, result.stdout


def test_separate_processes_share_the_clique_id_through_a_file(programs, tmp_path):
    id_file = tmp_path / "clique.id"
    ranks = [start(programs, "cncl_ranks.c", "file", str(rank), str(id_file)) for rank in (1, 0)]
    outputs = [rank.communicate(timeout=180) for rank in ranks]
    for rank, (stdout, stderr) in zip(ranks, outputs):
        assert rank.returncode == 0, f"{stdout}\n{stderr}"
        assert "0 failure(s)" in stdout
    assert id_file.stat().st_size == 136  # struct cnclCliqueId: char data[128]; uint64_t hash
