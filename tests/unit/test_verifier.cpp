#include <gtest/gtest.h>

#include "ptx/parser.h"
#include "ptx/summary.h"
#include "ptx/verifier.h"

using namespace mimic::ptx;

namespace {

std::vector<Diagnostic> verify(const std::string& body) {
  auto r = parse_module(".version 9.0\n.target sm_80\n.address_size 64\n" + body, {"v.ptx"});
  EXPECT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0].format());
  if (!r.module)
    return {};
  return verify_module(*r.module);
}

bool mentions(const std::vector<Diagnostic>& ds, const std::string& text) {
  for (const auto& d : ds)
    if (d.message.find(text) != std::string::npos)
      return true;
  return false;
}

} // namespace

TEST(Verifier, AcceptsWellFormedKernel) {
  auto ds = verify(".global .align 4 .u32 g[4];\n"
                   ".func (.param .b32 r) f(.param .b32 a)\n{\n ret;\n}\n"
                   ".visible .entry k(.param .u64 p)\n{\n .reg .pred %p<2>;\n .reg .b32 %r<5>;\n .reg .b64 %rd<3>;\n"
                   " ld.param.u64 %rd1, [p];\n mov.u32 %r1, %tid.x;\n mov.u32 %r2, %envreg3;\n"
                   " mov.u64 %rd2, g;\n setp.eq.u32 %p1, %r1, WARP_SZ;\n @%p1 bra L1;\n"
                   " {\n .reg .b32 t;\n .param .b32 a0;\n .param .b32 r0;\n st.param.b32 [a0], t;\n"
                   " call.uni (r0), f, (a0);\n }\nL1:\n ret;\n}\n");
  for (const auto& d : ds)
    ADD_FAILURE() << d.format();
}

TEST(Verifier, ReportsUndeclaredRegistersOutsideRanges) {
  auto ds = verify(".entry k()\n{\n .reg .b32 %r<3>;\n mov.u32 %r3, 1;\n mov.u32 %x, %r2;\n}\n");
  EXPECT_TRUE(mentions(ds, "'%r3' is not declared"));
  EXPECT_TRUE(mentions(ds, "'%x' is not declared"));
  ASSERT_FALSE(ds.empty());
  EXPECT_EQ(ds[0].function, "k");
  EXPECT_EQ(ds[0].line, 7u);
}

TEST(Verifier, ScopesEndWithTheirBlock) {
  auto ds = verify(".entry k()\n{\n {\n .reg .b32 inner;\n mov.u32 inner, 1;\n }\n mov.u32 inner, 2;\n}\n");
  EXPECT_EQ(ds.size(), 1u);
  EXPECT_TRUE(mentions(ds, "'inner' is not declared"));
}

TEST(Verifier, GuardsMustBePredicates) {
  auto ds = verify(".entry k()\n{\n .reg .b32 %r<2>;\n @%r1 ret;\n @%q ret;\n}\n");
  EXPECT_TRUE(mentions(ds, "is a .b32 register, not a .pred"));
  EXPECT_TRUE(mentions(ds, "guard predicate '%q' is not declared"));
}

TEST(Verifier, BranchTargetsAndDuplicates) {
  auto ds = verify(".entry k()\n{\n .reg .b32 %r<2>;\n .reg .b32 %r<4>;\n bra nowhere;\nL:\nL:\n"
                   " t: .branchtargets L, M;\n ret;\n}\n");
  EXPECT_TRUE(mentions(ds, "branch target 'nowhere'"));
  EXPECT_TRUE(mentions(ds, "label 'L' is defined twice"));
  EXPECT_TRUE(mentions(ds, "'M' in the target list"));
  EXPECT_TRUE(mentions(ds, "declared twice in one block"));
}

TEST(Verifier, OperandCountsAndTypes) {
  auto ds = verify(".entry k()\n{\n .reg .b32 %r<4>;\n add.s32 %r1, %r2;\n add %r1, %r2, %r3;\n}\n");
  EXPECT_TRUE(mentions(ds, "'add' takes 3 operands, not 2"));
  EXPECT_TRUE(mentions(ds, "'add' needs a type"));
}

TEST(Verifier, ModuleNeedsVersionAndTarget) {
  auto r = parse_module(".address_size 64\n");
  ASSERT_TRUE(r.ok());
  auto ds = verify_module(*r.module);
  EXPECT_TRUE(mentions(ds, "no .version"));
  EXPECT_TRUE(mentions(ds, "no .target"));
}

TEST(Verifier, SummaryCountsFunctionsWithFindingsAsFailed) {
  auto r = parse_module(".version 9.0\n.target sm_80\n.entry ok()\n{\n ret;\n}\n.entry bad()\n{\n mov.u32 %nope, 1;\n}\n");
  ASSERT_TRUE(r.ok());
  auto s = summarize(r);
  EXPECT_FALSE(s.parsed);
  EXPECT_EQ(s.failed_count(), 1u);
  EXPECT_NE(s.functions[1].error.find("%nope"), std::string::npos);
  EXPECT_TRUE(summarize(r, false).parsed);
}

TEST(Verifier, KnowsSpecialRegisters) {
  EXPECT_TRUE(is_special_register("%laneid"));
  EXPECT_TRUE(is_special_register("%envreg31"));
  EXPECT_FALSE(is_special_register("%envreg32"));
  EXPECT_TRUE(is_special_register("%pm3_64"));
  EXPECT_FALSE(is_special_register("%r1"));
}
