#include <gtest/gtest.h>

#include "ptx/parser.h"
#include "ptx/summary.h"

using namespace mimic::ptx;

namespace {

const char* kHeader = ".version 9.0\n.target sm_80\n.address_size 64\n";

ParseResult parse(const std::string& body) { return parse_module(kHeader + body, {"test.ptx"}); }

const Instruction& first_instruction(const Module& m, size_t n = 0) {
  for (const Function* f : m.functions())
    if (f->body)
      for (const Statement& s : f->body->statements)
        if (s.kind == StatementKind::Instruction && n-- == 0)
          return *s.instruction;
  throw std::runtime_error("no such instruction");
}

} // namespace

TEST(Parser, ModuleHeader) {
  auto r = parse_module(".version 8.5\n.target sm_90a, texmode_independent\n.address_size 64\n");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.module->version_major, 8u);
  EXPECT_EQ(r.module->version_minor, 5u);
  ASSERT_EQ(r.module->target.size(), 2u);
  EXPECT_EQ(r.module->target[1], "texmode_independent");
  EXPECT_EQ(r.module->address_size, 64u);
}

TEST(Parser, KernelWithParametersAndDirectives) {
  auto r = parse(".visible .entry k(\n .param .u64 .ptr .global .align 16 k_p0,\n .param .align 4 .b8 k_p1[48]\n)\n"
                 ".maxntid 256, 1, 1\n.minnctapersm 2\n{\n ret;\n}\n");
  ASSERT_TRUE(r.ok()) << r.errors.at(0).format();
  auto fs = r.module->functions();
  ASSERT_EQ(fs.size(), 1u);
  const Function& f = *fs[0];
  EXPECT_TRUE(f.is_entry);
  EXPECT_EQ(f.linkage, Linkage::Visible);
  ASSERT_EQ(f.params.size(), 2u);
  EXPECT_TRUE(f.params[0].ptr);
  EXPECT_EQ(f.params[0].ptr_space, Modifier::Global);
  EXPECT_EQ(f.params[0].ptr_align, 16u);
  EXPECT_EQ(f.params[1].align, 4u);
  ASSERT_EQ(f.params[1].dims.size(), 1u);
  EXPECT_EQ(f.params[1].dims[0], 48);
  EXPECT_EQ(declared_size(f.params[1]), 48u);
  ASSERT_EQ(f.directives.size(), 2u);
  EXPECT_EQ(f.directives[0].name, Modifier::Maxntid);
  EXPECT_EQ(f.directives[0].values.size(), 3u);
}

TEST(Parser, InstructionModifiersAndOperands) {
  auto r = parse(".entry k()\n{\n .reg .f32 %f<4>;\n .reg .b64 %rd<3>;\n"
                 " @!%p1 ld.global.nc.v2.f32 {%f1, %f2}, [%rd1+-8];\n}\n");
  ASSERT_TRUE(r.ok()) << r.errors.at(0).format();
  const Instruction& i = first_instruction(*r.module);
  EXPECT_EQ(i.opcode, Opcode::Ld);
  EXPECT_EQ(i.guard, "%p1");
  EXPECT_TRUE(i.guard_negated);
  ASSERT_EQ(i.num_modifiers, 4);
  EXPECT_EQ(i.modifiers[0], Modifier::Global);
  EXPECT_EQ(i.modifiers[2], Modifier::V2);
  ASSERT_EQ(i.num_operands, 2);
  EXPECT_EQ(i.operands[0].kind, OperandKind::Vector);
  EXPECT_EQ(i.operands[0].count, 2u);
  const Operand& addr = i.operands[1];
  ASSERT_EQ(addr.kind, OperandKind::Address);
  EXPECT_EQ(addr.elems[0].name_view(), "%rd1");
  EXPECT_EQ(addr.elems[0].offset, -8);
}

TEST(Parser, ShapesPairsSinksAndComponents) {
  auto r = parse(".entry k()\n{\n"
                 " mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f5,%f6,%f7,%f8};\n"
                 " setp.lt.s32 %p1|%p2, %r1, %r2;\n"
                 " mbarrier.arrive.shared::cta.b64 _, [%r1];\n"
                 " mov.u32 %r1, %tid.y;\n}\n");
  ASSERT_TRUE(r.ok()) << r.errors.at(0).format();
  const Instruction& mma = first_instruction(*r.module, 0);
  ASSERT_TRUE(is_shape(mma.modifiers[2]));
  Shape s = shape_of(mma.modifiers[2]);
  EXPECT_EQ(s.m, 16u);
  EXPECT_EQ(s.n, 8u);
  EXPECT_EQ(s.k, 16u);
  EXPECT_EQ(first_instruction(*r.module, 1).operands[0].kind, OperandKind::Pair);
  EXPECT_EQ(first_instruction(*r.module, 2).operands[0].kind, OperandKind::Sink);
  const Operand& tid = first_instruction(*r.module, 3).operands[1];
  EXPECT_EQ(tid.name_view(), "%tid");
  EXPECT_EQ(tid.component, Component::Y);
}

TEST(Parser, ConstantsAndFolding) {
  auto r = parse(".entry k()\n{\n mov.u32 %r1, -1;\n mov.u32 %r1, (1 << 4) + 0x10;\n"
                 " mov.f32 %f1, 0f3F800000;\n mov.f64 %fd1, 0d4000000000000000;\n mov.f32 %f1, -1.5;\n"
                 " mov.u64 %rd1, 0xFFFFFFFFFFFFFFFF;\n mov.u32 %r1, 017;\n mov.u32 %r1, 0b101;\n}\n");
  ASSERT_TRUE(r.ok()) << r.errors.at(0).format();
  const Module& m = *r.module;
  EXPECT_EQ(first_instruction(m, 0).operands[1].i, -1);
  EXPECT_EQ(first_instruction(m, 1).operands[1].i, 32);
  EXPECT_EQ(first_instruction(m, 2).operands[1].kind, OperandKind::F32);
  EXPECT_EQ(first_instruction(m, 2).operands[1].u, 0x3F800000u);
  EXPECT_EQ(first_instruction(m, 3).operands[1].kind, OperandKind::F64);
  EXPECT_EQ(first_instruction(m, 4).operands[1].d, -1.5);
  EXPECT_TRUE(first_instruction(m, 5).operands[1].unsigned_literal);
  EXPECT_EQ(first_instruction(m, 5).operands[1].u, ~0ull);
  EXPECT_EQ(first_instruction(m, 6).operands[1].i, 15);
  EXPECT_EQ(first_instruction(m, 7).operands[1].i, 5);
}

TEST(Parser, CallsPrototypesAndBranchTables) {
  auto r = parse(".func (.param .b32 rv) f(.param .b32 a)\n{\n ret;\n}\n"
                 ".entry k()\n{\n"
                 " .reg .b32 %r<4>;\n"
                 " {\n .param .b32 p0;\n .param .b32 r0;\n st.param.b32 [p0], 1;\n"
                 " call.uni (r0), f, (p0);\n }\n"
                 " proto: .callprototype (.param .b32 _) _ (.param .b32 _);\n"
                 " tbl: .branchtargets L1, L2;\n"
                 " brx.idx %r1, tbl;\nL1:\nL2:\n ret;\n}\n");
  ASSERT_TRUE(r.ok()) << r.errors.at(0).format();
  const Function& k = *r.module->functions()[1];
  ASSERT_EQ(k.body->statements[1].kind, StatementKind::Block);
  const Block& inner = *k.body->statements[1].block;
  const Instruction& call = *inner.statements[3].instruction;
  EXPECT_EQ(call.opcode, Opcode::Call);
  ASSERT_EQ(call.num_operands, 3);
  EXPECT_EQ(call.operands[0].kind, OperandKind::List);
  EXPECT_EQ(call.operands[2].kind, OperandKind::List);
  EXPECT_EQ(k.body->statements[2].kind, StatementKind::CallPrototype);
  EXPECT_EQ(k.body->statements[3].kind, StatementKind::BranchTargets);
  EXPECT_EQ(k.body->statements[3].labeled->targets.size(), 2u);
}

TEST(Parser, GlobalsWithInitializers) {
  auto r = parse(".global .align 4 .u32 tbl[2][2] = {{1, 2}, {3, 4}};\n"
                 ".const .align 8 .u64 ptrs[2] = {generic(tbl), tbl+8};\n"
                 ".global .attribute(.managed) .align 4 .f32 m = 0f3F800000;\n"
                 ".extern .shared .align 16 .b8 dyn[];\n");
  ASSERT_TRUE(r.ok()) << r.errors.at(0).format();
  const auto& items = r.module->items;
  ASSERT_EQ(items.size(), 4u);
  const VarDecl& tbl = *items[0].var;
  EXPECT_EQ(tbl.dims.size(), 2u);
  ASSERT_TRUE(tbl.init);
  EXPECT_EQ(tbl.init->kind, OperandKind::InitList);
  const VarDecl& ptrs = *items[1].var;
  EXPECT_EQ(ptrs.init->elems[0].kind, OperandKind::GenericOf);
  EXPECT_EQ(ptrs.init->elems[1].offset, 8);
  EXPECT_EQ(items[2].var->attributes.size(), 1u);
  EXPECT_EQ(items[3].var->linkage, Linkage::Extern);
  EXPECT_EQ(items[3].var->dims[0], -1);
}

TEST(Parser, DebugSectionsAndLoc) {
  auto r = parse(".file 1 \"/tmp/a.cu\", 1700000000, 123\n"
                 ".entry k()\n{\n .loc 1 5 3\n .loc 1 6 1, function_name $L__info_string0, inlined_at 1 5 3\n ret;\n}\n"
                 ".section .debug_info\n{\n$L__info_start:\n.b32 12\n.b8 1, 2\n.b32 .debug_abbrev\n.b64 $L__info_start+4\n}\n");
  ASSERT_TRUE(r.ok()) << r.errors.at(0).format();
  EXPECT_EQ(r.module->items[0].kind, DirectiveKind::File);
  EXPECT_TRUE(r.module->items[0].file->has_timestamp);
  const auto& stmts = r.module->functions()[0]->body->statements;
  EXPECT_EQ(stmts[0].kind, StatementKind::Loc);
  EXPECT_TRUE(stmts[1].loc_directive->has_inlined_at);
  const Section& sec = *r.module->items[2].section;
  EXPECT_EQ(sec.name, ".debug_info");
  EXPECT_EQ(sec.items.size(), 5u);
}

TEST(Parser, ErrorsNameFileLineColumnAndExpectation) {
  auto r = parse(".entry k()\n{\n  mov.u32 %r1 %r2;\n}\n");
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.errors.size(), 1u);
  const Diagnostic& d = r.errors[0];
  EXPECT_EQ(d.line, 6u);
  EXPECT_EQ(d.column, 15u);
  EXPECT_EQ(d.function, "k");
  std::string text = d.format();
  EXPECT_NE(text.find("test.ptx:6:15: error: expected ',' or ';'"), std::string::npos) << text;
  EXPECT_NE(text.find("'%r2'"), std::string::npos) << text;
}

TEST(Parser, FailingFunctionIsReportedByNameAndOthersStillParse) {
  auto r = parse(".entry good1()\n{\n ret;\n}\n"
                 ".entry bad()\n{\n { frobnicate.u32 %r1; }\n}\n"
                 ".entry good2()\n{\n ret;\n}\n");
  ASSERT_FALSE(r.ok());
  ASSERT_TRUE(r.module);
  ASSERT_EQ(r.failed_functions.size(), 1u);
  EXPECT_EQ(r.failed_functions[0].name, "bad");
  EXPECT_NE(r.failed_functions[0].error.message.find("unknown instruction 'frobnicate'"), std::string::npos);
  EXPECT_EQ(r.module->functions().size(), 2u);
  auto s = summarize(r);
  EXPECT_FALSE(s.parsed);
  EXPECT_EQ(s.failed_count(), 1u);
  EXPECT_EQ(s.kernel_count(), 3u);
}

TEST(Parser, RejectsUnknownModifier) {
  auto r = parse(".entry k()\n{\n add.s33 %r1, %r2, %r3;\n}\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors[0].message.find("unknown modifier '.s33' on 'add'"), std::string::npos);
}

TEST(Parser, ModuleLevelErrorGivesNoModule) {
  auto r = parse_module(".version 9.0\n.target sm_80\nmov.u32 %r1, 1;\n");
  EXPECT_FALSE(r.module);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].line, 3u);
}

TEST(Parser, LimitsNesting) {
  std::string deep = ".entry k()\n{\n mov.u32 %r1, ";
  for (int i = 0; i < 5000; ++i)
    deep += "(";
  deep += "1";
  for (int i = 0; i < 5000; ++i)
    deep += ")";
  deep += ";\n}\n";
  auto r = parse(deep);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors[0].message.find("nesting deeper"), std::string::npos);
}

TEST(Parser, ReportsOverflowAndMalformedConstants) {
  auto a = parse(".entry k()\n{\n mov.u64 %rd1, 123456789012345678901234;\n}\n");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.errors[0].message.find("does not fit in 64 bits"), std::string::npos);
  auto b = parse(".entry k()\n{\n mov.f32 %f1, 0f3F80000;\n}\n");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.errors[0].message.find("exactly 8"), std::string::npos);
  auto c = parse(".entry k()\n{\n mov.u32 %r1, 1/0;\n}\n");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.errors[0].message.find("division by zero"), std::string::npos);
}

TEST(Parser, UnclosedBodyIsAnError) {
  auto r = parse(".entry k()\n{\n ret;\n");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.errors[0].message.find("not closed"), std::string::npos);
}

TEST(Parser, VideoLaneSelectorsAndNegatedOperands) {
  auto r = parse(".entry k()\n{\n vadd4.u32.u32.u32.add %r1.b20, %r2.b3210, %r3.b7654, %r4;\n"
                 " vadd2.s32.s32.s32 %r1.h10, %r2.h32, %r3.h1, %r4;\n"
                 " vmad.s32.s32.s32.shr15 %r1, -%r2, %r3, %r4;\n}\n");
  ASSERT_TRUE(r.ok()) << r.errors.at(0).format();
  const Instruction& v4 = first_instruction(*r.module, 0);
  EXPECT_TRUE(is_lane_selector(v4.operands[0].component));
  EXPECT_EQ(component_name(v4.operands[0].component), "b20");
  EXPECT_EQ(component_name(v4.operands[1].component), "b3210");
  EXPECT_EQ(component_name(v4.operands[2].component), "b7654");
  const Instruction& v2 = first_instruction(*r.module, 1);
  EXPECT_EQ(component_name(v2.operands[1].component), "h32");
  EXPECT_EQ(v2.operands[2].component, Component::H1); // one spelling, one value
  const Operand& neg = first_instruction(*r.module, 2).operands[1];
  ASSERT_EQ(neg.kind, OperandKind::Expr);
  EXPECT_EQ(neg.expr->op, ExprOp::Neg);
}

TEST(Parser, LaneSelectorsOnlyInInstructionOperands) {
  // `.b32 label` followed by the next line's `.b32`: not a byte selector.
  auto r = parse(".section .debug_info\n{\n.b32 a\n.b32 b\n}\n");
  ASSERT_TRUE(r.ok()) << r.errors.at(0).format();
}

TEST(Parser, PairsAfterVectorsAndFullOperandExpressions) {
  auto r = parse(".entry k()\n{\n tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}|%p1, [%rd1, {%f5, %f6}];\n"
                 " mov.u32 %r1, (3 > 2) ? 7 : 9;\n mov.u32 %r1, 1 | 6;\n mov.u32 %r1, 1 && 2;\n}\n");
  ASSERT_TRUE(r.ok()) << r.errors.at(0).format();
  const Operand& pair = first_instruction(*r.module, 0).operands[0];
  ASSERT_EQ(pair.kind, OperandKind::Pair);
  EXPECT_EQ(pair.elems[0].kind, OperandKind::Vector);
  EXPECT_EQ(first_instruction(*r.module, 1).operands[1].i, 7);
  EXPECT_EQ(first_instruction(*r.module, 2).operands[1].i, 7); // bitwise or, not a pair
  EXPECT_EQ(first_instruction(*r.module, 3).operands[1].i, 1);
}

TEST(Parser, UnterminatedCommentsAndStringsAndMissingSemicolons) {
  auto a = parse(".entry k()\n{\n ret;\n}\n/* never closed\n.entry k2()\n{\n}\n");
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.errors[0].message.find("unterminated comment"), std::string::npos) << a.errors[0].format();
  EXPECT_EQ(a.errors[0].line, 8u);
  auto b = parse(".pragma \"nounroll;\n");
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.errors[0].message.find("unterminated string"), std::string::npos) << b.errors[0].format();
  auto c = parse(".entry k()\n{\n add.u32 %r1, %r2, %r3\n ret;\n}\n");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.errors[0].message.find("expected ';' at the end of the line"), std::string::npos);
  EXPECT_EQ(c.errors[0].line, 6u); // the line of the add (after the 3-line header), not of the ret
  EXPECT_EQ(c.errors[0].column, 23u);
}

TEST(Parser, UnifiedAddressQualifier) {
  auto r = parse(".entry k()\n{\n ld.global.u32 %r1, [%rd1+8].unified, %rd2;\n ld.u32 %r1, [%rd1];\n}\n");
  ASSERT_TRUE(r.ok()) << r.errors.at(0).format();
  EXPECT_TRUE(first_instruction(*r.module, 0).operands[1].unified);
  EXPECT_EQ(first_instruction(*r.module, 0).num_operands, 3u);
  EXPECT_FALSE(first_instruction(*r.module, 1).operands[1].unified);
}
