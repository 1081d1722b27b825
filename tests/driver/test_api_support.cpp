// The API boundary helpers behind every export: the exception wrapper, result names and the
// trace formatting by argument type. Run with MIMIC_TRACE=0, so trace lines go to stderr.
#include "driver/api_support.h"

#include <gtest/gtest.h>
#include <stdexcept>
#include <string>

namespace mimic::driver {
namespace {

TEST(GuardedCall, PassesTheResultThrough) {
  EXPECT_EQ(guarded_call("cuFoo", [] { return CUDA_ERROR_INVALID_HANDLE; }),
            CUDA_ERROR_INVALID_HANDLE);
}

TEST(GuardedCall, ExceptionsBecomeUnknown) {
  testing::internal::CaptureStderr();
  CUresult r = guarded_call("cuFoo", []() -> CUresult { throw std::runtime_error("boom"); });
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(r, CUDA_ERROR_UNKNOWN);
  EXPECT_EQ(err, "mimic: cuFoo: internal error: boom (returns CUDA_ERROR_UNKNOWN)\n");

  testing::internal::CaptureStderr();
  r = guarded_call("cuBar", []() -> CUresult { throw 42; });
  err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(r, CUDA_ERROR_UNKNOWN);
  EXPECT_EQ(err, "mimic: cuBar: internal error: unknown exception (returns CUDA_ERROR_UNKNOWN)\n");
}

TEST(ResultName, FromTheHeader) {
  EXPECT_STREQ(result_name(CUDA_SUCCESS), "CUDA_SUCCESS");
  EXPECT_STREQ(result_name(CUDA_ERROR_NOT_FOUND), "CUDA_ERROR_NOT_FOUND");
  EXPECT_STREQ(result_name(CUDA_ERROR_UNKNOWN), "CUDA_ERROR_UNKNOWN");
  EXPECT_EQ(result_name(CUresult(123456)), nullptr);
}

template <typename T> std::string formatted(const T& value) {
  std::string out;
  append_value(out, value);
  return out;
}

TEST(TraceFormat, ByType) {
  EXPECT_EQ(formatted((void*)0x7ffd1000), "0x7ffd1000");
  EXPECT_EQ(formatted((int*)nullptr), "NULL");
  EXPECT_EQ(formatted((const char*)"vector_add"), "\"vector_add\"");
  EXPECT_EQ(formatted((const char*)"a\"b\\c\n"), "\"a\\\"b\\\\c\\x0a\"");
  EXPECT_EQ(formatted((const char*)nullptr), "NULL");
  EXPECT_EQ(formatted(std::string(300, 'x').c_str()), "\"" + std::string(256, 'x') + "\"...");
  EXPECT_EQ(formatted((char*)0x10), "0x10") << "char* is an output buffer, not a string";
  EXPECT_EQ(formatted(-3), "-3");
  EXPECT_EQ(formatted(4096ull), "4096");
  EXPECT_EQ(formatted((unsigned char)7), "7");
  EXPECT_EQ(formatted(CU_DEVICE_ATTRIBUTE_WARP_SIZE), "10");
  EXPECT_EQ(formatted(0.5f), "0.5");
  EXPECT_EQ(formatted(DevicePtr{0x1234}), "0x1234");
  CUuuid uuid = {{0x6b, (char)0xd5, (char)0xfb, 0x6c, 0x5b, (char)0xf4, (char)0xe7, 0x4a,
                  (char)0x89, (char)0x87, (char)0xd9, 0x39, 0x12, (char)0xfd, (char)0x9d,
                  (char)0xf9}};
  const CUuuid* id = &uuid;
  EXPECT_EQ(formatted(id), formatted((const void*)id) + " {6bd5fb6c5bf4e74a8987d93912fd9df9}");
  CUmemLocation location = {CU_MEM_LOCATION_TYPE_DEVICE, 2};
  EXPECT_EQ(formatted(location), "{0100000002000000}");
}

TEST(TraceFormat, Line) {
  testing::internal::CaptureStderr();
  trace_call("cuModuleGetFunction", CUDA_ERROR_NOT_FOUND, [](TraceLine& line) {
    line.arg("hfunc", (CUfunction*)nullptr).arg("name", (const char*)"k").arg("n", 3u);
  });
  trace_call("cuCtxSynchronize", CUresult(999999), [](TraceLine&) {});
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "cuModuleGetFunction(hfunc=NULL, name=\"k\", n=3) = CUDA_ERROR_NOT_FOUND\n"
            "cuCtxSynchronize() = 999999\n");
}

} // namespace
} // namespace mimic::driver
