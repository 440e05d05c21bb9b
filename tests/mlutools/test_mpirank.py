"""mlutools/mpirank.py: the torchrun-style environment from an MPI launcher's, and whole prefixed output lines."""
import os

import pytest

from mlutools import mpirank


def test_the_rank_environment_comes_from_mpich_or_open_mpi_variables():
    assert mpirank.rank_environment({"PMI_RANK": "3", "PMI_SIZE": "4", "MPI_LOCALRANKID": "1",
                                     "MPI_LOCALNRANKS": "2"}) == {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1",
                                                                 "LOCAL_WORLD_SIZE": "2"}
    open_mpi = {"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_LOCAL_RANK": "0",
                "OMPI_COMM_WORLD_LOCAL_SIZE": "1"}
    assert mpirank.rank_environment(open_mpi)["RANK"] == "0"
    with pytest.raises(SystemExit, match="start this under mpiexec"):
        mpirank.rank_environment({"PMI_RANK": "0"})


def test_output_goes_out_in_whole_prefixed_lines(tmp_path):
    path = tmp_path / "out"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    lines = mpirank.PrefixedLines(fd, b"[rank 2] ")
    lines.write(b"half a ")
    assert path.read_bytes() == b""  # nothing until the line is whole
    lines.write(b"line\nand two\nmore")
    assert path.read_bytes() == b"[rank 2] half a line\n[rank 2] and two\n"
    lines.close()
    os.close(fd)
    assert path.read_bytes().endswith(b"[rank 2] more\n")
