"""The board catalog holds the reference's numbers."""
import pytest

from mlusim import arch

GB = 1e9


@pytest.mark.parametrize("name, clusters, max_union, clock, bandwidth, l2_mib, sram_mib, isa", [
    ("MLU270-S4", 4, 4, 1.0e9, 102.4, 1, 2, 270),
    ("MLU290-M5", 16, 16, 1.0e9, 1228.8, 2, 2, 290),
    ("MLU370-X4", 8, 8, 1.0e9, 307.2, 2, 4, 372),
    ("MLU370-S4", 6, 4, 1.0e9, 307.2, 2, 4, 372),
    ("MLU370-X8", 4, 4, 1.0e9, 307.2, 2, 4, 372),
    ("MLU590-M9", 12, 8, 1.6e9, 2764.8, 48, 2, 592),
    ("MLU590-H8", 12, 8, 1.5e9, 2048.0, 40, 2, 592),
])
def test_board_numbers_follow_the_reference(name, clusters, max_union, clock, bandwidth, l2_mib, sram_mib, isa):
    spec = arch.board(name)
    assert spec.cluster_count == clusters
    assert spec.cores_per_cluster == 4
    assert spec.max_union == max_union
    assert spec.clock_hz == clock
    assert spec.gdram_bandwidth == pytest.approx(bandwidth * GB)
    assert spec.l2_bytes == l2_mib * arch.MiB
    assert spec.sram_bytes == sram_mib * arch.MiB
    assert spec.isa == isa


@pytest.mark.parametrize("isa, nram_kib, wram_kib, capability", [
    (270, 512, 1024, (2, 0)), (290, 512, 512, (2, 0)), (372, 768, 1024, (3, 0))])
def test_on_chip_memory_per_isa(isa, nram_kib, wram_kib, capability):
    for spec in arch.BOARDS.values():
        if spec.isa == isa:
            assert spec.nram_bytes == nram_kib * arch.KiB
            assert spec.wram_bytes == wram_kib * arch.KiB
            assert spec.compute_capability == capability


def test_mtp592_usable_on_chip_memory_matches_mlu_ops():
    spec = arch.board("MLU590-M9")
    assert spec.nram_usable == 327680
    assert spec.sram_usable == 1966080


def test_peaks_reproduce_published_figures():
    x8 = arch.board("MLU370-X8")
    # Published per board (two chips): 96 TFLOPS half, 256 TOPS int8, 614.4 GB/s.
    assert 2 * x8.peak_ops("half") == pytest.approx(96e12, rel=0.05)
    assert 2 * x8.peak_ops("int8") == pytest.approx(256e12, rel=0.05)
    assert 2 * x8.gdram_bandwidth == pytest.approx(614.4e9)
    assert arch.board("MLU290-M5").peak_ops("int8") == pytest.approx(512e12, rel=0.05)
    assert arch.board("MLU270-S4").peak_ops("int8") == pytest.approx(128e12, rel=0.05)
    assert arch.board("MLU370-X4").peak_ops("half") == pytest.approx(98e12, rel=0.05)


def test_bfloat16_only_from_compute_capability_3():
    for spec in arch.BOARDS.values():
        assert spec.supports("bfloat16") == (spec.compute_capability[0] >= 3)


def test_lookup_is_case_insensitive_and_unknown_names_list_the_boards():
    assert arch.board("mlu370-x4") is arch.BOARDS["MLU370-X4"]
    with pytest.raises(KeyError, match="MLU590-H8"):
        arch.board("MLU999")
