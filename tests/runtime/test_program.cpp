// Loading device code into a Program: selection, parse and verification errors, kernel
// parameter layouts, global variables and their initial bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <cuda.h>

#include "../unit/fatbin_builder.h"
#include "runtime/program.h"

using namespace mimic;
using namespace mimic::runtime;

namespace {

const char* kPtx = R"(.version 9.0
.target sm_75
.address_size 64
.global .align 4 .u32 counter = 7;
.global .align 8 .f64 table[3] = {1.5, 0d4000000000000000, 3};
.global .align 8 .u64 self_pointer = generic(table)+8;
.global .attribute(.managed) .align 4 .f32 managed_value;
.const .align 1 .b8 message[4] = {104, 105};
.visible .entry k(.param .u32 a, .param .u64 b, .param .align 16 .b8 c[20], .param .u8 d)
.maxntid 128, 2, 1
{
  .reg .b32 %r<2>;
  .shared .align 4 .b8 tile[256];
  ld.param.u32 %r1, [a];
  ret;
}
)";

} // namespace

TEST(Program, KernelParameterLayoutFollowsNaturalAlignment) {
  auto p = load_program_from_ptx(kPtx, "test");
  ASSERT_TRUE(p) << p.error().message();
  const KernelInfo* k = p.value()->kernel("k");
  ASSERT_TRUE(k);
  ASSERT_EQ(k->params.size(), 4u);
  EXPECT_EQ(k->params[0].offset, 0u);
  EXPECT_EQ(k->params[1].offset, 8u);
  EXPECT_EQ(k->params[2].offset, 16u);
  EXPECT_EQ(k->params[2].size, 20u);
  EXPECT_EQ(k->params[3].offset, 36u);
  EXPECT_EQ(k->param_bytes, 37u);
  EXPECT_EQ(k->max_threads_per_block, 256);
  EXPECT_EQ(k->static_shared_bytes, 256u);
  EXPECT_EQ(p.value()->kernel("nope"), nullptr);
}

TEST(Program, GlobalsAndInitialBytes) {
  auto p = load_program_from_ptx(kPtx, "test");
  ASSERT_TRUE(p);
  const Program& prog = *p.value();
  ASSERT_EQ(prog.globals.size(), 5u);
  auto addr = [](std::string_view name) -> Result<uint64_t> {
    if (name == "table")
      return uint64_t(0x1000);
    return Error("unknown " + std::string(name));
  };
  uint8_t buf[64];
  const GlobalInfo* counter = prog.global("counter");
  ASSERT_TRUE(counter);
  ASSERT_TRUE(initialize_global(*counter, buf, addr));
  uint32_t c;
  std::memcpy(&c, buf, 4);
  EXPECT_EQ(c, 7u);
  const GlobalInfo* table = prog.global("table");
  ASSERT_TRUE(initialize_global(*table, buf, addr));
  double t[3];
  std::memcpy(t, buf, sizeof t);
  EXPECT_EQ(t[0], 1.5);
  EXPECT_EQ(t[1], 2.0);
  EXPECT_EQ(t[2], 3.0);
  const GlobalInfo* self = prog.global("self_pointer");
  ASSERT_TRUE(initialize_global(*self, buf, addr));
  uint64_t sp;
  std::memcpy(&sp, buf, 8);
  EXPECT_EQ(sp, 0x1008u);
  EXPECT_TRUE(prog.global("managed_value")->managed);
  const GlobalInfo* msg = prog.global("message");
  EXPECT_TRUE(msg->constant);
  ASSERT_TRUE(initialize_global(*msg, buf, addr));
  EXPECT_EQ(std::memcmp(buf, "hi\0\0", 4), 0);
}

TEST(Program, InvalidPtxNamesEveryProblem) {
  auto p = load_program_from_ptx(".version 9.0\n.target sm_75\n.entry a()\n{\n frob;\n}\n"
                                 ".entry b()\n{\n mov.u32 %nope, 1;\n}\n",
                                 "bad.ptx");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code(), CUDA_ERROR_INVALID_PTX);
  EXPECT_NE(p.error().message().find("'a'"), std::string::npos) << p.error().message();
  EXPECT_NE(p.error().message().find("'b'"), std::string::npos) << p.error().message();
}

TEST(Program, LoadsFromFatbinWrapperSelectingPtx) {
  using namespace mimic::test;
  std::string old_ptx = std::string(kPtx);
  std::string new_ptx = old_ptx;
  new_ptx.replace(new_ptx.find("sm_75"), 5, "sm_90");
  new_ptx.replace(new_ptx.find(".entry k("), 9, ".entry q(");
  Bytes fb = build_fatbin({{2, 75, 1, 8, fatbin::Compression::None, std::string("\x7f" "ELF", 4), ""},
                           {1, 75, 9, 0, fatbin::Compression::Zstd, old_ptx, ""},
                           {1, 90, 9, 0, fatbin::Compression::Lz4, new_ptx, ""}});
  struct {
    uint32_t magic, version;
    const void* fatbin;
    const void* prelinked;
  } wrapper{fatbin::kWrapperMagic, 1, fb.data(), nullptr};
  auto p86 = load_program(&wrapper, 86);
  ASSERT_TRUE(p86) << p86.error().message();
  EXPECT_TRUE(p86.value()->kernel("k"));
  auto p90 = load_program(&wrapper, 90);
  ASSERT_TRUE(p90);
  EXPECT_TRUE(p90.value()->kernel("q"));
  EXPECT_NE(p90.value()->selected.find("sm_90"), std::string::npos);
}

TEST(Program, SassOnlyFatbinSaysWhatIsMissing) {
  using namespace mimic::test;
  Bytes fb = build_fatbin({{2, 80, 1, 8, fatbin::Compression::None, std::string("\x7f" "ELF", 4), ""}});
  auto p = load_program(fb.data(), 86);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().code(), CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_NE(p.error().message().find("SASS"), std::string::npos) << p.error().message();
  EXPECT_NE(p.error().message().find("sm_80"), std::string::npos) << p.error().message();
}
