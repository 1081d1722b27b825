#include <gtest/gtest.h>

#include "ptx/compare.h"
#include "ptx/parser.h"
#include "ptx/printer.h"

using namespace mimic::ptx;

namespace {

// Parse, print, parse again: the trees must match and printing must be stable.
void expect_round_trip(const std::string& text) {
  auto first = parse_module(text, {"first"});
  ASSERT_TRUE(first.ok()) << first.errors.at(0).format();
  std::string printed = print_module(*first.module);
  auto second = parse_module(printed, {"printed"});
  ASSERT_TRUE(second.ok()) << second.errors.at(0).format() << "\n" << printed;
  auto diff = first_difference(*first.module, *second.module);
  EXPECT_FALSE(diff) << *diff << "\n" << printed;
  EXPECT_EQ(print_module(*second.module), printed);
}

} // namespace

TEST(Printer, RoundTripsKernelsAndDeclarations) {
  expect_round_trip(R"(.version 9.0
.target sm_80
.address_size 64
.global .align 4 .u32 tbl[2][2] = {{1, 2}, {3, 4}};
.const .align 8 .u64 ptrs[2] = {generic(tbl), tbl+8};
.global .align 8 .f64 d = 1.25;
.extern .func (.param .b32 r) ext(.param .b64 p);
.visible .entry k(.param .u64 .ptr .global .align 16 p0, .param .align 4 .b8 p1[48])
.maxntid 128, 1, 1
{
  .reg .pred %p<3>;
  .reg .b32 %r<10>, %extra;
  .reg .f32 %f<4>;
  .reg .b64 %rd<4>;
  .shared .align 16 .b8 smem[1024];
  .local .align 8 .b8 depot[16];
  ld.param.u64 %rd1, [p0];
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1|%p2, %r1, 0xFFFFFFFF;
  @!%p1 bra $L__BB0_2;
  ld.global.nc.L1::no_allocate.v2.f32 {%f1, %f2}, [%rd1+-16];
  mov.f32 %f3, 0fBF800000;
  fma.rn.ftz.f32 %f3, %f1, %f2, %f3;
  st.shared.f32 [smem+4], %f3;
  shfl.sync.bfly.b32 %r2|%p2, %r1, 16, 31, -1;
  vadd.s32.s32.s32.sat %r3, %r1.b0, %r2.h1, %r4;
  mov.u64 %rd2, 18446744073709551615;
  mov.u32 %r5, 7U;
$L__BB0_2:
  bar.sync 0;
  ret;
}
)");
}

TEST(Printer, RoundTripsCallsDebugInfoAndPragmas) {
  expect_round_trip(R"(.version 9.0
.target sm_90a
.address_size 64
.file 1 "/tmp/x.cu", 1700000000, 42
.pragma "nounroll";
.func (.param .b32 rv) f(.param .b32 a) .noreturn
{
  .pragma "nounroll";
  .loc 1 3 1, function_name $L__info_string0, inlined_at 1 9 2
  trap;
}
.entry k()
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  {
    .param .b32 p0;
    .param .b32 r0;
    st.param.b32 [p0+0], 1;
    call.uni (r0), f, (p0);
    call (r0), %rd1, (p0), proto;
  }
  proto: .callprototype (.param .b32 _) _ (.param .b32 _);
  tbl: .branchtargets L1, L2;
  brx.idx %r1, tbl;
L1:
L2:
  exit;
}
.section .debug_abbrev
{
.b8 1, 17
}
.section .debug_info
{
$L__info_start:
.b32 .debug_abbrev
.b64 $L__info_start+4
}
)");
}

TEST(Printer, CanonicalFloatAndIntegerSpellings) {
  auto r = parse_module(".version 9.0\n.target sm_80\n.entry k()\n{\n mov.f32 %f1, 2.0;\n mov.u32 %r1, 0x10;\n}\n");
  ASSERT_TRUE(r.ok());
  std::string out = print_module(*r.module);
  EXPECT_NE(out.find("mov.f32 %f1, 2.0;"), std::string::npos) << out;
  EXPECT_NE(out.find("mov.u32 %r1, 16;"), std::string::npos) << out;
}

TEST(Printer, RoundTripsVideoSelectorsTexPairsAndSectionDifferences) {
  expect_round_trip(R"(.version 9.0
.target sm_80
.entry k()
{
 vadd4.u32.u32.u32 %r1.b210, %r2.b0000, %r3.b4567, %r4;
 vmad.s32.s32.s32 %r1, %r2, %r3, -%r4;
 tld4.r.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}|%p1, [%rd1, {%f5, %f6}];
$L1:
 ret;
$L2:
}
.section .debug_str
{
$s0:
.b8 97, 0
$s1:
.b8 98, 0
}
.section .debug_info
{
.b32 $s1-$s0
.b32 .debug_str+2
}
)");
}

TEST(Printer, NegatedRegisterAndSectionDifferencePrintAsPtxasReadsThem) {
  auto r = parse_module(".version 9.0\n.target sm_80\n.entry k()\n{\n vmad.s32.s32.s32 %r1, -%r2, %r3, %r4;\n}\n"
                        ".section .debug_info\n{\n$a:\n.b32 $b-$a\n$b:\n}\n");
  ASSERT_TRUE(r.ok()) << r.errors.at(0).format();
  std::string out = print_module(*r.module);
  EXPECT_NE(out.find("%r1, -%r2, %r3"), std::string::npos) << out; // ptxas rejects (-%r2)
  EXPECT_NE(out.find(".b32 $b - $a\n"), std::string::npos) << out; // and parentheses in data
}
