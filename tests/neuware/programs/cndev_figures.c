/* cndev.h from C: the board's published figures as torch_mlu and mlu-ops read them (cndevGetDDRInfo,
 * cndevGetFrequencyInfo, cndevGetDeviceMaxPerformance), checked against what CNRT and CNDrv report of the same
 * board; the caller's version field is kept; bad arguments. */
#include <cn_api.h>
#include <cndev.h>

#include "check.h"

int main(void) {
  cndevDDRInfo_t ddr;
  ddr.version = CNDEV_VERSION_5;
  FAILS_WITH(cndevGetDDRInfo(&ddr, 0), CNDEV_ERROR_UNINITIALIZED, "cndevInit");
  OK(cndevInit(0));
  OK(cndevGetDDRInfo(&ddr, 0));
  int bus_width = 0, memory_clock_khz = 0, cluster_clock_khz = 0, clusters = 0;
  OK(cnrtDeviceGetAttribute(&bus_width, cnrtAttrGmemBusWidth, 0));
  OK(cnrtDeviceGetAttribute(&memory_clock_khz, cnrtAttrMemClockRate, 0));
  OK(cnrtDeviceGetAttribute(&cluster_clock_khz, cnrtAttrIpuClockRate, 0));
  OK(cnrtDeviceGetAttribute(&clusters, cnrtAttrClusterCount, 0));
  EXPECT(ddr.version == CNDEV_VERSION_5 && (int)ddr.dataWidth == bus_width, "width %u", ddr.dataWidth);
  /* bandwidth = bus bytes x transfers: 2 per memory clock */
  double from_clock = bus_width / 8.0 * 2.0 * memory_clock_khz * 1e3 / 1e9;
  double reported = ddr.bandWidth + ddr.bandWidthDecimal / 100.0;
  EXPECT(close_to(reported, from_clock, 1e-3) && ddr.bandWidthDecimal < 100, "%u.%02u GB/s vs %g", ddr.bandWidth,
         ddr.bandWidthDecimal, from_clock);

  cndevFrequencyInfo_t frequency;
  frequency.version = CNDEV_VERSION_5;
  OK(cndevGetFrequencyInfo(&frequency, 0));
  EXPECT(frequency.boardFreq == cluster_clock_khz / 1000 && frequency.boardDefaultFreq == frequency.boardFreq,
         "%d MHz", frequency.boardFreq);
  EXPECT(frequency.boardFreqArange[0] == frequency.boardFreq && frequency.boardFreqArange[1] == frequency.boardFreq,
         "fixed clock");
  EXPECT(frequency.ddrFreq == 2 * memory_clock_khz / 1000, "%d MT/s", frequency.ddrFreq);
  EXPECT(frequency.mluClusterFreqCount == clusters && frequency.mluClusterFreq[0] == frequency.boardFreq &&
             frequency.mluClusterFreq[clusters] == 0,
         "%u clusters", frequency.mluClusterFreqCount);
  EXPECT(frequency.overtempDfsFlag == 0 && frequency.fastDfsFlag == 0, "no throttling");

  cndevDeviceMaxPerformance_t peak;
  peak.version = CNDEV_VERSION_5;
  OK(cndevGetDeviceMaxPerformance(&peak, 0));
  EXPECT(peak.version == CNDEV_VERSION_5 && peak.int8Tensor > peak.fp16Tensor && peak.fp16Tensor > peak.fp32Tensor &&
             peak.fp32Tensor > 0,
         "int8 %llu fp16 %llu fp32 %llu", (unsigned long long)peak.int8Tensor, (unsigned long long)peak.fp16Tensor,
         (unsigned long long)peak.fp32Tensor);
  EXPECT(peak.fp32Vector == 0, "no vector rates in the catalog");

  FAILS_WITH(cndevGetDDRInfo(NULL, 0), CNDEV_ERROR_INVALID_ARGUMENT, "ddrinfo");
  FAILS_WITH(cndevGetFrequencyInfo(&frequency, 42), CNDEV_ERROR_INVALID_DEVICE_ID, "device");
  FAILS_WITH(cndevGetDeviceMaxPerformance(NULL, 0), CNDEV_ERROR_INVALID_ARGUMENT, "maxPerformance");
  OK(cndevRelease());
  DONE();
}
