/* cnrt.h from C: the CNRT 5/6 spellings (data types, job types, cnrtMemcpyAsync_V2, cnrtMallocConstant,
 * cnrtDeviceGetPCIBusId), the host conversions with their host pointers (cnrtCastDataType, cnrtCastDataType_V2 and
 * its rounding modes, quantized casts) and CNRT_CHECK; every call also with bad arguments. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"

static uint16_t half_bits(float value) {
  uint16_t bits = 0;
  cnrtConvertFloatToHalf(&bits, value);
  return bits;
}

static void spellings(void) {
  /* CNRT 6 names of cnrtDataType_t next to the v4 ones, and the job type is the function type */
  cnrtDataType_t f32 = cnrtFloat32, f16 = cnrtFloat16;
  EXPECT(f32 == CNRT_FLOAT32 && f16 == CNRT_FLOAT16 && cnrtInt64 == CNRT_INT64 && cnrtBool == CNRT_BOOL, "names");
  EXPECT(cnrtDataTypeSize(cnrtFloat32) == 4 && cnrtDataTypeSize(cnrtUInt16) == 2, "sizes");
  cnrtJobType_t job = CNRT_FUNC_TYPE_UNION1;
  EXPECT(job == cnrtJobTypeUnion1 && CNRT_JOB_TYPE_BLOCK == cnrtFuncTypeBlock, "job types");
  EXPECT(cnrtFloat == 2 && cnrtHalf == 3 && cnrtBfloat == 4 && cnrtBoolean == 0x31 && cnrtRounding_rm == 5, "V2");
}

static void cast_v4(void) {
  float in[4] = {1.5f, -2.25f, 65504.0f, 1e-8f};
  uint16_t halves[4] = {0};
  OK(cnrtCastDataType(in, cnrtFloat32, halves, cnrtFloat16, 4, NULL));
  for (int i = 0; i < 4; i++) EXPECT(halves[i] == half_bits(in[i]), "element %d: 0x%04x", i, halves[i]);
  float back[4] = {0};
  OK(cnrtCastDataType(halves, CNRT_FLOAT16, back, CNRT_FLOAT32, 4, NULL));
  EXPECT(back[0] == 1.5f && back[1] == -2.25f && back[2] == 65504.0f, "back %g %g %g", back[0], back[1], back[2]);
  int32_t ints[3] = {0};
  float truncated[3] = {2.9f, -2.9f, 0.5f};
  OK(cnrtCastDataType(truncated, CNRT_FLOAT32, ints, CNRT_INT32, 3, NULL));
  EXPECT(ints[0] == 2 && ints[1] == -2 && ints[2] == 0, "toward zero: %d %d %d", ints[0], ints[1], ints[2]);
  OK(cnrtCastDataType(in, CNRT_FLOAT32, halves, CNRT_FLOAT16, 0, NULL)); /* nothing to do */
  /* bad arguments: NULL buffers, a negative count, a type without a conversion, an integer overflow */
  FAILS_WITH(cnrtCastDataType(NULL, CNRT_FLOAT32, halves, CNRT_FLOAT16, 4, NULL), cnrtErrorArgsInvalid, "src_addr");
  FAILS_WITH(cnrtCastDataType(in, CNRT_FLOAT32, NULL, CNRT_FLOAT16, 4, NULL), cnrtErrorArgsInvalid, "dst_addr");
  FAILS_WITH(cnrtCastDataType(in, CNRT_FLOAT32, halves, CNRT_FLOAT16, -1, NULL), cnrtErrorArgsInvalid,
             "data_num");
  FAILS_WITH(cnrtCastDataType(in, CNRT_FIX8, halves, CNRT_FLOAT16, 1, NULL), cnrtErrorNotSupport, "src_data_type");
  FAILS_WITH(cnrtCastDataType(in, (cnrtDataType_t)0x77, halves, CNRT_FLOAT16, 1, NULL), cnrtErrorArgsInvalid,
             "src_data_type");
  int8_t small[1];
  float big[1] = {300.0f};
  FAILS_WITH(cnrtCastDataType(big, CNRT_FLOAT32, small, CNRT_INT8, 1, NULL), cnrtErrorArgsInvalid, "does not fit");
}

static void cast_v2(void) {
  /* 1 + 2^-11 lies halfway between two halves: nearest-even goes down, up and away-from-zero go up */
  float tie[2] = {1.0f + 1.0f / 2048.0f, -(1.0f + 1.0f / 2048.0f)};
  uint16_t h[2];
  OK(cnrtCastDataType_V2(tie, cnrtFloat, h, cnrtHalf, 2, NULL, cnrtRounding_rn));
  EXPECT(h[0] == 0x3c00 && h[1] == 0xbc00, "rn: 0x%04x 0x%04x", h[0], h[1]);
  OK(cnrtCastDataType_V2(tie, cnrtFloat, h, cnrtHalf, 2, NULL, cnrtRounding_rm));
  EXPECT(h[0] == 0x3c01 && h[1] == 0xbc01, "rm: 0x%04x 0x%04x", h[0], h[1]);
  OK(cnrtCastDataType_V2(tie, cnrtFloat, h, cnrtHalf, 2, NULL, cnrtRounding_ru));
  EXPECT(h[0] == 0x3c01 && h[1] == 0xbc00, "ru: 0x%04x 0x%04x", h[0], h[1]);
  OK(cnrtCastDataType_V2(tie, cnrtFloat, h, cnrtHalf, 2, NULL, cnrtRounding_rd));
  EXPECT(h[0] == 0x3c00 && h[1] == 0xbc01, "rd: 0x%04x 0x%04x", h[0], h[1]);
  OK(cnrtCastDataType_V2(tie, cnrtFloat, h, cnrtHalf, 2, NULL, cnrtRounding_rz));
  EXPECT(h[0] == 0x3c00 && h[1] == 0xbc00, "rz: 0x%04x 0x%04x", h[0], h[1]);
  /* bfloat16: 1 + 2^-8 + 2^-9 rounds up to 1 + 2^-7 to nearest */
  float bf_in[1] = {1.0f + 1.0f / 256.0f + 1.0f / 512.0f};
  uint16_t bf[1];
  OK(cnrtCastDataType_V2(bf_in, cnrtFloat, bf, cnrtBfloat, 1, NULL, cnrtRounding_rn));
  EXPECT(bf[0] == 0x3f81, "bfloat16 0x%04x", bf[0]);
  float widened[1];
  OK(cnrtCastDataType_V2(bf, cnrtBfloat, widened, cnrtFloat, 1, NULL, cnrtRounding_rm));
  EXPECT(widened[0] == 1.0f + 1.0f / 128.0f, "widened %g", widened[0]);
  float halves_of_ints[3] = {2.5f, -2.5f, 3.5f};
  int32_t rounded[3];
  OK(cnrtCastDataType_V2(halves_of_ints, cnrtFloat, rounded, cnrtInt, 3, NULL, cnrtRounding_rm));
  EXPECT(rounded[0] == 3 && rounded[1] == -3 && rounded[2] == 4, "rm ints %d %d %d", rounded[0], rounded[1],
         rounded[2]);
  OK(cnrtCastDataType_V2(halves_of_ints, cnrtFloat, rounded, cnrtInt, 3, NULL, cnrtRounding_rn));
  EXPECT(rounded[0] == 2 && rounded[1] == -2 && rounded[2] == 4, "rn ints %d %d %d", rounded[0], rounded[1],
         rounded[2]);
  FAILS_WITH(cnrtCastDataType_V2(tie, cnrtFloat, NULL, cnrtHalf, 2, NULL, cnrtRounding_rn), cnrtErrorArgsInvalid,
             "dst_addr");
  FAILS_WITH(cnrtCastDataType_V2(NULL, cnrtFloat, h, cnrtHalf, 2, NULL, cnrtRounding_rn), cnrtErrorArgsInvalid,
             "src_addr");
  FAILS_WITH(cnrtCastDataType_V2(tie, cnrtUnknown, h, cnrtHalf, 2, NULL, cnrtRounding_rn), cnrtErrorArgsInvalid,
             "src_data_type");
  FAILS_WITH(cnrtCastDataType_V2(tie, cnrtFloat, h, cnrtHalf, 2, NULL, cnrtRounding_max), cnrtErrorArgsInvalid,
             "round_mode");
}

static void quantized(void) {
  cnrtQuantizedParam_t param = NULL;
  OK(cnrtCreateQuantizedParam(&param, 1, 4.0f, 3)); /* q = round(x * 4 / 2 + 3) */
  float x[4] = {1.0f, -1.25f, 100.0f, -100.0f};
  int8_t q[4];
  OK(cnrtCastDataType(x, CNRT_FLOAT32, q, CNRT_INT8, 4, param));
  EXPECT(q[0] == 5 && q[1] == 1 && q[2] == 127 && q[3] == -128, "q %d %d %d %d", q[0], q[1], q[2], q[3]);
  float back[2];
  OK(cnrtCastDataType_V2(q, cnrtChar, back, cnrtFloat, 2, param, cnrtRounding_rm));
  EXPECT(back[0] == 1.0f && back[1] == -1.0f, "dequantized %g %g", back[0], back[1]);
  uint16_t h[1];
  FAILS_WITH(cnrtCastDataType(x, CNRT_FLOAT32, h, CNRT_FLOAT16, 1, param), cnrtErrorArgsInvalid, "param");
  OK(cnrtDestroyQuantizedParam(param));
  FAILS_WITH(cnrtCastDataType(x, CNRT_FLOAT32, q, CNRT_INT8, 1, param), cnrtErrorInvalidResourceHandle,
             "destroyed");
  FAILS_WITH(cnrtCreateQuantizedParam(NULL, 0, 1.0f, 0), cnrtErrorArgsInvalid, "param");
  FAILS_WITH(cnrtCreateQuantizedParam(&param, 0, 0.0f, 0), cnrtErrorArgsInvalid, "scale");
  FAILS_WITH(cnrtDestroyQuantizedParam(NULL), cnrtErrorArgsInvalid, "param");
}

static void memory(void) {
  cnrtQueue_t queue;
  OK(cnrtQueueCreate(&queue));
  void *constant = NULL;
  OK(cnrtMallocConstant(&constant, 64));
  EXPECT(constant != NULL, "a block");
  int32_t in[16], out[16];
  for (int i = 0; i < 16; i++) in[i] = i * i;
  OK(cnrtMemcpyAsync_V2(constant, in, sizeof in, queue, cnrtMemcpyHostToDev));
  OK(cnrtMemcpyAsync_V2(out, constant, sizeof out, queue, cnrtMemcpyDevToHost));
  OK(cnrtQueueSync(queue));
  EXPECT(memcmp(in, out, sizeof in) == 0, "round trip");
  FAILS_WITH(cnrtMemcpyAsync_V2(constant, NULL, 64, queue, cnrtMemcpyHostToDev), cnrtErrorArgsInvalid, "src");
  FAILS_WITH(cnrtMemcpyAsync_V2((char *)constant + 32, in, 64, queue, cnrtMemcpyHostToDev), cnrtErrorArgsInvalid,
             "dst");
  FAILS_WITH(cnrtMallocConstant(NULL, 64), cnrtErrorArgsInvalid, "pPtr");
  FAILS_WITH(cnrtMallocConstant(&constant, (size_t)1 << 62), cnrtErrorNoMem, "bytes");
  OK(cnrtFree(constant));
  OK(cnrtQueueDestroy(queue));
}

static void pci_bus_id(void) {
  char id[32];
  OK(cnrtDeviceGetPCIBusId(id, sizeof id, 0));
  EXPECT(strlen(id) == 12 && id[4] == ':' && id[7] == ':' && id[10] == '.', "%s", id);
  char tiny[4];
  FAILS_WITH(cnrtDeviceGetPCIBusId(tiny, sizeof tiny, 0), cnrtErrorArgsInvalid, "len");
  FAILS_WITH(cnrtDeviceGetPCIBusId(NULL, 32, 0), cnrtErrorArgsInvalid, "pciBusId");
  FAILS_WITH(cnrtDeviceGetPCIBusId(id, sizeof id, 99), cnrtErrorDeviceInvalid, "device");
}

static void check_macro(void) {
  CNRT_CHECK(cnrtSetDevice(0)); /* success: silent */
  CNRT_CHECK(cnrtFree((void *)0x1234)); /* prints where, what and why on stderr */
}

int main(void) {
  spellings();
  cast_v4();
  cast_v2();
  quantized();
  memory();
  pci_bus_id();
  check_macro();
  DONE();
}
