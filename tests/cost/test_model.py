"""The formulas of mlusim.cost, and their agreement with the boards' published figures."""
import math

import pytest

from mlusim import arch, cost

X4, X8, S4 = arch.board("MLU370-X4"), arch.board("MLU370-X8"), arch.board("MLU370-S4")
M9, MLU270 = arch.board("MLU590-M9"), arch.board("MLU270-S4")


def test_board_peaks_reproduce_the_published_figures():
    assert cost.board_peak_ops(X8, "half") == pytest.approx(96e12, rel=0.03)
    assert cost.board_peak_ops(X8, "bfloat16") == pytest.approx(96e12, rel=0.03)
    # FP32: 384 MACs/cycle (the reference's figure) give 24.6 TFLOPS, below the published 32 (docs/cost.md)
    assert 0.7 * 32e12 < cost.board_peak_ops(X8, "float") < 32e12
    assert cost.board_peak_ops(X8, "int8") == pytest.approx(256e12, rel=0.03)
    assert cost.board_peak_ops(arch.board("MLU290-M5"), "int8") == pytest.approx(512e12, rel=0.03)
    assert cost.board_peak_ops(MLU270, "int8") == pytest.approx(128e12, rel=0.03)


def test_a_large_half_matmul_models_the_stated_efficiency_of_the_peak():
    n = 8192
    flops = 2 * n ** 3
    seconds = cost.op_us(X8, flops, 3 * n * n * 2, "half", cost.TENSOR) / 1e6
    board_rate = flops / seconds * X8.chips_per_board  # one device is one chip; the board has two
    assert board_rate == pytest.approx(96e12 * cost.TENSOR_EFFICIENCY, rel=0.03)
    assert cost.op_estimate(X8, flops, 3 * n * n * 2, "half", cost.TENSOR).bound == "compute"


def test_a_large_elementwise_op_models_the_gdram_bandwidth():
    n = 1 << 26
    estimate = cost.op_estimate(X4, n, 3 * 4 * n, "float", cost.VECTOR)
    assert estimate.bound == "memory"
    assert 3 * 4 * n / (estimate.total_us / 1e6) == pytest.approx(X4.gdram_bandwidth, rel=0.01)


def test_roofline_is_launch_plus_the_slower_of_compute_and_memory():
    flops, nbytes = 3e9, 1e8
    estimate = cost.op_estimate(X4, flops, nbytes, "float", cost.VECTOR)
    compute = flops / (X4.macs_per_cycle["float"] * X4.core_count * X4.clock_hz) * 1e6
    memory = nbytes / X4.gdram_bandwidth * 1e6
    assert estimate.compute_us == pytest.approx(compute)
    assert estimate.memory_us == pytest.approx(memory)
    assert estimate.total_us == pytest.approx(X4.kernel_launch_us + max(compute, memory))
    assert cost.op_estimate(X4, 10, 10).bound == "launch"


def test_tensor_ops_use_the_mac_rate_of_their_data_type_and_double_is_emulated():
    flops = 1e13
    half = cost.op_estimate(X4, flops, 0, "half", cost.TENSOR).compute_us
    single = cost.op_estimate(X4, flops, 0, "float", cost.TENSOR).compute_us
    double = cost.op_estimate(X4, flops, 0, "double", cost.TENSOR).compute_us
    assert single / half == pytest.approx(X4.macs_per_cycle["half"] / X4.macs_per_cycle["float"])
    assert double / single == pytest.approx(1 / cost.DOUBLE_FRACTION)
    assert half == pytest.approx(flops / (X4.peak_ops("half") * cost.TENSOR_EFFICIENCY) * 1e6)


def test_matmul_traffic_is_at_least_the_sram_tiled_traffic():
    tile = cost.sram_tile_edge(X4, "half")
    assert 2 * tile * tile * 2 <= X4.sram_usable < 2 * (tile + 1) ** 2 * 2
    small = cost.op_estimate(X4, 2 * 64 ** 3, 3 * 64 * 64 * 2, "half", cost.TENSOR)
    assert small.traffic_bytes == 3 * 64 * 64 * 2  # fits on chip: the operands once
    n = 16384
    large = cost.op_estimate(X4, 2 * n ** 3, 3 * n * n * 2, "half", cost.TENSOR)
    assert large.traffic_bytes == pytest.approx(2 * n ** 3 * 2 / tile)
    # a board with less SRAM per cluster re-reads the operands more often
    assert cost.tiled_matmul_traffic(M9, 2 * n ** 3, "half") > cost.tiled_matmul_traffic(X4, 2 * n ** 3, "half")


def test_switching_the_board_scales_the_time_as_the_specs_say():
    n = 1 << 26
    memory_bound = {spec.name: cost.op_estimate(spec, n, 12 * n).memory_us for spec in (X4, M9, MLU270)}
    assert memory_bound["MLU370-X4"] / memory_bound["MLU590-M9"] == pytest.approx(
        M9.gdram_bandwidth / X4.gdram_bandwidth)
    assert memory_bound["MLU270-S4"] / memory_bound["MLU370-X4"] == pytest.approx(3.0)
    flops = 2 * 8192 ** 3
    compute_bound = {spec.name: cost.op_estimate(spec, flops, 0, "half", cost.TENSOR).compute_us
                     for spec in (X4, M9)}
    assert compute_bound["MLU370-X4"] / compute_bound["MLU590-M9"] == pytest.approx(
        M9.peak_ops("half") / X4.peak_ops("half"))


def test_copies_and_memset():
    nbytes = 64 << 20
    assert cost.copy_us(X4, cost.HOST_TO_DEVICE, nbytes) == pytest.approx(
        X4.copy_latency_us + nbytes / X4.pcie_bandwidth * 1e6)
    assert cost.copy_us(X4, cost.DEVICE_TO_DEVICE, nbytes) == pytest.approx(
        X4.copy_latency_us + 2 * nbytes / X4.gdram_bandwidth * 1e6)
    assert cost.copy_us(X4, cost.PEER_TO_PEER, nbytes) == pytest.approx(
        X4.copy_latency_us + nbytes / min(X4.link_bandwidth, X4.gdram_bandwidth) * 1e6)
    assert cost.copy_us(X4, cost.HOST_TO_HOST, nbytes) == 0.0
    assert cost.memset_us(X4, nbytes) == pytest.approx(X4.copy_latency_us + nbytes / X4.gdram_bandwidth * 1e6)
    with pytest.raises(ValueError):
        cost.copy_us(X4, "sideways", 1)


def _kernel(spec, task_dim, union=0, gdram=0, onchip=0, vector=0, macs=None):
    return cost.kernel_us(spec, task_dim, union, gdram, onchip, vector, macs or {})


def test_a_kernel_in_one_wave_is_a_roofline_of_its_counts():
    n = 1 << 20
    cores = X4.core_count
    assert _kernel(X4, cores, gdram=12 * n, vector=n) == pytest.approx(
        X4.kernel_launch_us + 12 * n / X4.gdram_bandwidth * 1e6)
    compute = _kernel(X4, cores, macs={"half": 10 ** 9})
    assert compute == pytest.approx(X4.kernel_launch_us + 1e9 / (cores * X4.clock_hz * 1536) * 1e6)
    onchip = _kernel(X4, cores, onchip=1 << 30)
    assert onchip == pytest.approx(X4.kernel_launch_us + (1 << 30) / (cores * X4.clock_hz * 64) * 1e6)


def test_kernel_waves_follow_the_task_schedule():
    cores = X4.core_count
    assert cost.task_waves(X4, cores, 0) == (cores, 1)
    assert cost.task_waves(X4, cores + 1, 0) == (cores, 2)
    assert cost.task_waves(X4, 4, 0) == (4, 1)
    # Union4 on MLU370-S4: 6 clusters hold one 4-cluster union at a time; 32 tasks = 2 rounds = 2 waves
    assert cost.task_waves(S4, 32, 4) == (16, 2)
    # Union1 on MLU370-X4: 8 one-cluster unions at once
    assert cost.task_waves(X4, 64, 1) == (32, 2)
    # one more task than the cores: the same work in two waves of smaller tasks
    work = dict(vector=10 ** 9)
    one_wave = _kernel(X4, cores, **work) - X4.kernel_launch_us
    two_waves = _kernel(X4, cores + 1, **work) - X4.kernel_launch_us
    assert two_waves == pytest.approx(one_wave * 2 * cores / (cores + 1))
    # a single task uses one core: 32x slower on compute than the whole board
    assert _kernel(X4, 1, **work) - X4.kernel_launch_us == pytest.approx(one_wave * cores)


def test_kernel_gdram_copies_share_the_bandwidth_whatever_the_task_count():
    nbytes = 1 << 28
    for tasks in (1, 8, 32, 64):
        assert _kernel(X4, tasks, gdram=nbytes) == pytest.approx(
            X4.kernel_launch_us + nbytes / X4.gdram_bandwidth * 1e6)


def test_ring_collectives():
    nbytes, ranks = 1 << 26, 4
    rate = min(X4.link_bandwidth, X4.gdram_bandwidth)
    step = cost.LINK_LATENCY_US + nbytes / ranks / rate * 1e6
    assert cost.collective_us(X4, cost.ALL_REDUCE, nbytes, ranks) == pytest.approx(2 * 3 * step)
    assert cost.collective_us(X4, cost.ALL_GATHER, nbytes, ranks) == pytest.approx(3 * step)
    assert cost.collective_us(X4, cost.BROADCAST, nbytes, ranks) == pytest.approx(
        3 * cost.LINK_LATENCY_US + nbytes / rate * 1e6)
    assert cost.collective_us(X4, cost.SEND_RECV, nbytes, 2) == pytest.approx(
        cost.LINK_LATENCY_US + nbytes / rate * 1e6)
    assert cost.collective_us(X4, cost.ALL_REDUCE, nbytes, 1) == pytest.approx(2 * nbytes / X4.gdram_bandwidth * 1e6)
    # the bus bandwidth of a large allReduce approaches the link bandwidth
    big = 1 << 32
    seconds = cost.collective_us(X4, cost.ALL_REDUCE, big, ranks) / 1e6
    assert big * 2 * (ranks - 1) / ranks / seconds == pytest.approx(rate, rel=0.01)
    with pytest.raises(ValueError):
        cost.collective_us(X4, "gossip", 1, 2)


def test_a_ring_across_hosts_goes_at_the_network_pace():
    nbytes, ranks = 1 << 26, 4
    step = X4.network_latency_us + nbytes / ranks / X4.network_bandwidth * 1e6
    assert X4.network_bandwidth < X4.link_bandwidth
    assert cost.collective_us(X4, cost.ALL_REDUCE, nbytes, ranks, hosts=2) == pytest.approx(2 * 3 * step)
    assert cost.collective_us(X4, cost.SEND_RECV, nbytes, 2, hosts=2) == pytest.approx(
        X4.network_latency_us + nbytes / X4.network_bandwidth * 1e6)
    big = 1 << 32
    seconds = cost.collective_us(X4, cost.ALL_REDUCE, big, ranks, hosts=2) / 1e6
    assert big * 2 * (ranks - 1) / ranks / seconds == pytest.approx(X4.network_bandwidth, rel=0.01)
    m9 = arch.board("MLU590-M9")
    assert m9.network_bandwidth == 2 * X4.network_bandwidth  # 200 against 100 Gb/s per card


def test_unknown_unit_is_refused():
    with pytest.raises(ValueError):
        cost.op_estimate(X4, 1, 1, "float", "quantum")


def test_the_x8_board_is_two_chips_of_half_the_peak():
    assert X8.chips_per_board == 2
    assert math.isclose(cost.board_peak_ops(X8, "half"), 2 * cost.tensor_ops_per_s(X8, "half"))
