"""The board's published figures through CNDev: GDRAM width and bandwidth (cndevGetDDRInfo), clocks
(cndevGetFrequencyInfo) and peak tensor MACs per cycle per core (cndevGetDeviceMaxPerformance), all from the
simulated board's catalog entry (mlusim.arch). The simulator runs at a fixed clock: no frequency scaling, so the
current, default and adjustable frequencies are the board's one clock and the throttling flags are 0."""
from __future__ import annotations

from dataclasses import dataclass

from .cards import _device
from .status import api

#: the length of cndevFrequencyInfo_t.mluClusterFreq
CNDEV_MLU_CLUSTER_FREQUENCY_COUNT = 20


@dataclass(frozen=True)
class cndevDDRInfo_t:
    """GDRAM bus width in bits and bandwidth in GB/s (integer part, and the first two decimals as an integer)."""

    dataWidth: int
    bandWidth: int
    bandWidthDecimal: int


@api("cndevGetDDRInfo")
def getDDRInfo(device: int) -> cndevDDRInfo_t:
    """cndevGetDDRInfo(cndevDDRInfo_t *ddrinfo, cndevDevice_t device) -> the board's GDRAM bus width and bandwidth
    (the MLU370-X4: 384 bits, 307.20 GB/s)."""
    spec = _device(device).spec
    hundredths = round(spec.gdram_bandwidth / 1e9 * 100)
    return cndevDDRInfo_t(dataWidth=spec.bus_width_bits, bandWidth=hundredths // 100,
                          bandWidthDecimal=hundredths % 100)


@dataclass(frozen=True)
class cndevFrequencyInfo_t:
    """Clocks in MHz; ddrFreq is the GDRAM transfer rate (MT/s: twice the memory clock)."""

    boardFreq: int
    ddrFreq: int
    overtempDfsFlag: int
    fastDfsFlag: int
    mluClusterFreqCount: int
    mluClusterFreq: tuple
    boardDefaultFreq: int
    boardFreqArange: tuple


@api("cndevGetFrequencyInfo")
def getFrequencyInfo(device: int) -> cndevFrequencyInfo_t:
    """cndevGetFrequencyInfo(cndevFrequencyInfo_t *freqInfo, cndevDevice_t device) -> the board's clock as the
    current, default and only adjustable frequency, per cluster too; the GDRAM transfer rate."""
    spec = _device(device).spec
    clock = round(spec.clock_hz / 1e6)
    clusters = min(spec.cluster_count, CNDEV_MLU_CLUSTER_FREQUENCY_COUNT)
    return cndevFrequencyInfo_t(
        boardFreq=clock, ddrFreq=round(2 * spec.mem_clock_hz / 1e6), overtempDfsFlag=0, fastDfsFlag=0,
        mluClusterFreqCount=clusters,
        mluClusterFreq=(clock,) * clusters + (0,) * (CNDEV_MLU_CLUSTER_FREQUENCY_COUNT - clusters),
        boardDefaultFreq=clock, boardFreqArange=(clock, clock))


@dataclass(frozen=True)
class cndevDeviceMaxPerformance_t:
    """Peak tensor MACs per cycle per core by data type (0 for a type the board has no tensor rate for), and the
    vector operations per cycle per core (0: the board catalog gives no vector rates)."""

    int4Tensor: int
    int8Tensor: int
    int16Tensor: int
    fp16Tensor: int
    bf16Tensor: int
    fp32Tensor: int
    fp16Vector: int = 0
    bf16Vector: int = 0
    fp32Vector: int = 0
    int8Vector: int = 0
    int16Vector: int = 0


@api("cndevGetDeviceMaxPerformance")
def getDeviceMaxPerformance(device: int) -> cndevDeviceMaxPerformance_t:
    """cndevGetDeviceMaxPerformance(cndevDeviceMaxPerformance_t *maxPerformance, cndevDevice_t device) -> the
    board's tensor MACs per cycle per core (int4 at twice int8 where the board supports it)."""
    spec = _device(device).spec
    macs = spec.macs_per_cycle
    return cndevDeviceMaxPerformance_t(
        int4Tensor=2 * macs.get("int8", 0) if spec.int4_supported else 0, int8Tensor=macs.get("int8", 0),
        int16Tensor=macs.get("int16", 0), fp16Tensor=macs.get("half", 0), bf16Tensor=macs.get("bfloat16", 0),
        fp32Tensor=macs.get("float", 0))
