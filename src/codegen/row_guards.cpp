// A thread loop's position tests, made once for the whole row (see row_guards.h).
#include "codegen/row_guards.h"
#include "codegen/block_registers.h"
#include "codegen/thread_interchange.h"
#include "support/config.h"

#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/Analysis/DomTreeUpdater.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/PatternMatch.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/ScalarEvolutionExpander.h>

#include <cstdlib>
#include <string_view>

namespace mimic::codegen {

using namespace llvm;

namespace {

// The start of a MIMIC_ROW_GUARDS=explain line about `loop`.
raw_ostream& explain(const Loop& loop) {
  return errs() << "mimic: row guards in " << loop.getHeader()->getParent()->getName() << ", loop at "
                << loop.getHeader()->getName() << ": ";
}

// A value that steps by a constant (up or down, modulo its width) from each iteration of the
// loop to the next: an add recurrence (`4 * threadIdx.x + k` steps by 4), a row-invariant
// value plus one, or one extended to a wider type, so long as it does not wrap around in
// the row (`wraps`: the values that must not, each checked before the loop).
struct Stepping {
  bool up;
  SmallVector<std::pair<const SCEV*, bool>, 2> wraps; // and whether signed
};

std::optional<Stepping> stepping(const SCEV* s, Loop& loop, ScalarEvolution& se, unsigned depth = 0) {
  if (depth > 4)
    return std::nullopt;
  if (auto* rec = dyn_cast<SCEVAddRecExpr>(s)) {
    auto* step = rec->getLoop() == &loop && rec->isAffine() ? dyn_cast<SCEVConstant>(rec->getStepRecurrence(se)) : nullptr;
    // At most 1024 threads a row: with steps up to 2^16 the values span less than 2^26, so
    // a value that wraps around comes out below (above) where it started.
    if (!step || step->getAPInt().isZero() || step->getAPInt().abs().ugt(1u << 16))
      return std::nullopt;
    return Stepping{step->getAPInt().isStrictlyPositive(), {}};
  }
  if (auto* add = dyn_cast<SCEVAddExpr>(s)) {
    std::optional<Stepping> inner;
    for (const SCEV* op : add->operands()) {
      if (se.isLoopInvariant(op, &loop))
        continue;
      if (inner)
        return std::nullopt; // two stepping terms
      inner = stepping(op, loop, se, depth + 1);
      if (!inner)
        return std::nullopt;
    }
    return inner;
  }
  if (auto* ext = dyn_cast<SCEVIntegralCastExpr>(s)) {
    const bool zext = isa<SCEVZeroExtendExpr>(ext), sext = isa<SCEVSignExtendExpr>(ext);
    if (!zext && !sext)
      return std::nullopt;
    std::optional<Stepping> inner = stepping(ext->getOperand(), loop, se, depth + 1);
    if (inner)
      inner->wraps.push_back({ext->getOperand(), sext});
    return inner;
  }
  return std::nullopt;
}

// `s` at iteration `count` of the loop, for a value `stepping` accepted.
const SCEV* at_iteration(const SCEV* s, const SCEV* count, Loop& loop, ScalarEvolution& se) {
  if (auto* rec = dyn_cast<SCEVAddRecExpr>(s))
    return rec->evaluateAtIteration(se.getTruncateOrZeroExtend(count, rec->getType()), se);
  if (auto* add = dyn_cast<SCEVAddExpr>(s)) {
    SmallVector<const SCEV*, 4> ops;
    for (const SCEV* op : add->operands())
      ops.push_back(se.isLoopInvariant(op, &loop) ? op : at_iteration(op, count, loop, se));
    return se.getAddExpr(ops);
  }
  auto* ext = cast<SCEVIntegralCastExpr>(s);
  const SCEV* inner = at_iteration(ext->getOperand(), count, loop, se);
  return isa<SCEVZeroExtendExpr>(ext) ? se.getZeroExtendExpr(inner, ext->getType())
                                      : se.getSignExtendExpr(inner, ext->getType());
}

// Whether `s` is a position in the grid (it reads a block index), not only in the block.
bool in_grid(const SCEV* s) {
  return SCEVExprContains(s, [](const SCEV* e) {
    auto* u = dyn_cast<SCEVUnknown>(e);
    std::optional<SpecialRegister> r = u ? block_register_read(u->getValue()) : std::nullopt;
    return r == SpecialRegister::CtaidX || r == SpecialRegister::CtaidY || r == SpecialRegister::CtaidZ;
  });
}

// A test `icmp pred (stepping value), (row-invariant)` with an order predicate.
struct Test {
  CmpPredicate predicate; // with the stepping value on the left
  const SCEV* value;
  Stepping steps;
  const SCEV* bound;
};

std::optional<Test> position_test(Value* v, Loop& loop, ScalarEvolution& se) {
  auto* compare = dyn_cast<ICmpInst>(v);
  if (!compare || !loop.contains(compare) ||
      !compare->getOperand(0)->getType()->isIntegerTy())
    return std::nullopt;
  const unsigned bits = compare->getOperand(0)->getType()->getIntegerBitWidth();
  if (bits != 32 && bits != 64)
    return std::nullopt;
  const SCEV* left = se.getSCEV(compare->getOperand(0));
  const SCEV* right = se.getSCEV(compare->getOperand(1));
  CmpPredicate predicate = compare->getCmpPredicate();
  if (se.isLoopInvariant(left, &loop)) {
    std::swap(left, right);
    predicate = ICmpInst::getSwappedCmpPredicate(predicate);
  }
  if (!se.isLoopInvariant(right, &loop))
    return std::nullopt;
  // An equality with a position in the grid (`x == 0`, x = blockIdx.x * 32 + threadIdx.x)
  // holds in one row of the grid or none; one with a position in the block
  // (`threadIdx.x == 31`) holds in every row, and the test would settle none.
  if (compare->isEquality() && !in_grid(left)) {
    if (row_guards_explain())
      explain(loop) << "`" << *compare << "` compares a position in the block for equality: left in the loop\n";
    return std::nullopt;
  }
  std::optional<Stepping> steps = stepping(left, loop, se);
  if (!steps)
    return std::nullopt;
  steps->wraps.push_back({left, ICmpInst::isSigned(predicate)});
  return Test{predicate, left, std::move(*steps), right};
}

// The leaves of `cond` joined by `and` (`join_and`) or by `or`, its select forms included.
void leaves_of(Value* cond, bool join_and, SmallVectorImpl<Value*>& leaves, unsigned depth = 0) {
  using namespace PatternMatch;
  Value *a, *b;
  if (depth < 4 && (join_and ? match(cond, m_LogicalAnd(m_Value(a), m_Value(b)))
                             : match(cond, m_LogicalOr(m_Value(a), m_Value(b))))) {
    leaves_of(a, join_and, leaves, depth + 1);
    leaves_of(b, join_and, leaves, depth + 1);
  } else {
    leaves.push_back(cond);
  }
}

// What a lone test usually says in a row, with the stepping value going up: below a bound,
// true (`i < n`); above a bound that is a constant, true for a position in the grid (`x >
// 0`), false for one in the block, whose every row starts at the block's first positions
// (nvcc's guard of `for (c = threadIdx.x; c < 1024; c += blockDim.x)`, `c > 1023`, fails
// in every thread of a smaller block); above a bound that is not constant, false (`if (i
// >= n) return`); different, true (`x != 0`: one thread of the grid differs).
bool usually_holds(const Test& t) {
  if (ICmpInst::isEquality(t.predicate))
    return t.predicate == ICmpInst::ICMP_NE;
  const CmpPredicate p = t.steps.up ? t.predicate : CmpPredicate(ICmpInst::getSwappedPredicate(t.predicate));
  const bool above = ICmpInst::isGT(p) || ICmpInst::isGE(p);
  return !above || (isa<SCEVConstant>(t.bound) && in_grid(t.value));
}

// A branch whose condition joins tests (with `and` where they hold in the usual row, `or`
// where they fail) and, maybe, other conditions (`rest`).
struct Guarded {
  BranchInst* branch;
  bool holds;
  SmallVector<Value*, 4> tests, rest;
  bool in_block = true; // every test is of a position in the block (none reads a block index)
};

// Makes `g`'s branch go on its tests alone, where a row's `all` settles them, and on the
// rest after: for `and`, `bb: br (all || tests), rest, false-side; rest: br rest...`.
void rewrite(Guarded& g, Value* all, Value* not_all, Loop& loop, LoopInfo& li, DominatorTree& dt) {
  BranchInst* branch = g.branch;
  BasicBlock* bb = branch->getParent();
  IRBuilder<> b(branch);
  auto join = [&](ArrayRef<Value*> values) {
    Value* v = values[0];
    for (Value* w : values.drop_front())
      v = g.holds ? b.CreateLogicalAnd(v, w) : b.CreateLogicalOr(v, w);
    return v;
  };
  Value* tests = join(g.tests);
  // The `and` of tests that usually fail branches on `!row.all.in`: made before the loop
  // for tests of positions in the block, so that LLVM's unswitching, which looks for
  // invariant operands of the `and`, copies the loop for the rows that all pass them
  // (`c > 1023`, a block-stride loop's guard, in add_tile_offsets: the copy loads the
  // block's offset once, not under a test per lane). For positions in the grid it is made
  // in the loop, where it is not invariant and the loop stays whole: with those loops
  // copied too, stencil ran at half speed in cache (16 MiB, one worker: 736-756 ->
  // 1490-1503 us a launch), not yet understood.
  if (!g.holds && !g.in_block) not_all = b.CreateNot(all, "row.not.all.in");
  Value* guarded = g.holds ? b.CreateOr(all, tests, "row.guarded") : b.CreateAnd(not_all, tests, "row.guarded");
  if (g.rest.empty()) {
    branch->setCondition(guarded);
    return;
  }
  Value* rest = join(g.rest);
  // `and`: the tests failing decide (false side); `or`: the tests passing decide (true side).
  BasicBlock* decided = branch->getSuccessor(g.holds ? 1 : 0);
  BasicBlock* other = branch->getSuccessor(g.holds ? 0 : 1);
  BasicBlock* next = BasicBlock::Create(bb->getContext(), bb->getName() + ".row.rest", bb->getParent(), other);
  BranchInst::Create(branch->getSuccessor(0), branch->getSuccessor(1), rest, next);
  for (PHINode& phi : decided->phis())
    phi.addIncoming(phi.getIncomingValueForBlock(bb), next);
  for (PHINode& phi : other->phis())
    phi.setIncomingBlock(unsigned(phi.getBasicBlockIndex(bb)), next);
  branch->setCondition(guarded);
  branch->setSuccessor(g.holds ? 0 : 1, next);
  loop.addBasicBlockToLoop(next, li);
  DomTreeUpdater dtu(dt, DomTreeUpdater::UpdateStrategy::Eager);
  dtu.applyUpdates({{DominatorTree::Insert, bb, next},
                    {DominatorTree::Insert, next, decided},
                    {DominatorTree::Insert, next, other},
                    {DominatorTree::Delete, bb, other}});
}

// The thread loop `loop`'s tests, made once before it; whether anything changed.
bool guard_loop(Loop& loop, ScalarEvolution& se, LoopInfo& li, DominatorTree& dt) {
  using namespace PatternMatch;
  BasicBlock* preheader = loop.getLoopPreheader();
  const SCEV* taken = se.getBackedgeTakenCount(&loop);
  if (!preheader || isa<SCEVCouldNotCompute>(taken)) {
    if (row_guards_explain())
      explain(loop) << (preheader ? "its trip count is not known" : "no preheader") << "\n";
    return false;
  }
  SmallVector<Guarded, 8> branches;
  SmallVector<Test, 8> tests;
  for (BasicBlock* bb : loop.blocks()) {
    auto* branch = dyn_cast<BranchInst>(bb->getTerminator());
    if (!branch || !branch->isConditional() || loop.isLoopExiting(bb) ||
        branch->getSuccessor(0) == branch->getSuccessor(1))
      continue;
    Value* cond = branch->getCondition();
    bool holds;
    if (match(cond, m_LogicalAnd(m_Value(), m_Value())))
      holds = true;
    else if (match(cond, m_LogicalOr(m_Value(), m_Value())))
      holds = false;
    else if (std::optional<Test> t = position_test(cond, loop, se))
      holds = usually_holds(*t);
    else
      continue;
    Guarded g{branch, holds, {}, {}};
    SmallVector<Value*, 8> leaves;
    leaves_of(cond, holds, leaves);
    SmallVector<Test, 4> of_branch;
    for (Value* leaf : leaves) {
      std::optional<Test> t = position_test(leaf, loop, se);
      if (t && !holds)
        t->predicate = ICmpInst::getInverseCmpPredicate(t->predicate);
      // An equality that has to hold in the whole row holds in rows of one thread only: it
      // goes with the rest (`threadIdx.x == 0` joined with `x > 0`).
      if (t && t->predicate == ICmpInst::ICMP_EQ)
        t.reset();
      if (t) {
        g.tests.push_back(leaf);
        g.in_block = g.in_block && !in_grid(t->value);
        of_branch.push_back(*t);
      } else {
        g.rest.push_back(leaf);
      }
    }
    if (g.tests.empty())
      continue;
    branches.push_back(std::move(g));
    tests.append(of_branch.begin(), of_branch.end());
  }
  if (branches.empty())
    return false;
  // The tests at the row's first and last thread, and that no value wraps around between
  // them.
  SCEVExpander expander(se, "row.guard");
  Instruction* at = preheader->getTerminator();
  const SCEV* zero = se.getZero(taken->getType());
  for (const Test& t : tests) {
    for (const SCEV* s : {at_iteration(t.value, zero, loop, se), at_iteration(t.value, taken, loop, se), t.bound})
      if (!expander.isSafeToExpandAt(s, at))
        return false; // nothing expanded yet: the checks come before any change
  }
  IRBuilder<> b(at);
  Value* all = b.getTrue();
  auto expand = [&](const SCEV* s) { return expander.expandCodeFor(s, s->getType(), at); };
  for (const Test& t : tests) {
    Value* bound = expand(t.bound);
    Value* first = expand(at_iteration(t.value, zero, loop, se));
    Value* last = expand(at_iteration(t.value, taken, loop, se));
    b.SetInsertPoint(at);
    if (t.predicate == ICmpInst::ICMP_NE) {
      // The value goes through [first, last] (or [last, first]) without wrapping around
      // (checked below): no thread of the row meets a bound outside it.
      Value* low = t.steps.up ? first : last;
      Value* high = t.steps.up ? last : first;
      all = b.CreateAnd(all, b.CreateOr(b.CreateICmpULT(bound, low), b.CreateICmpUGT(bound, high)));
    } else {
      all = b.CreateAnd(all, b.CreateICmp(t.predicate, first, bound));
      all = b.CreateAnd(all, b.CreateICmp(t.predicate, last, bound));
    }
    for (auto [value, is_signed] : t.steps.wraps) {
      Value* low = expand(at_iteration(value, t.steps.up ? zero : taken, loop, se));
      Value* high = expand(at_iteration(value, t.steps.up ? taken : zero, loop, se));
      b.SetInsertPoint(at);
      all = b.CreateAnd(all, b.CreateICmp(is_signed ? ICmpInst::ICMP_SLE : ICmpInst::ICMP_ULE, low, high));
    }
  }
  if (row_guards_explain()) {
    explain(loop) << tests.size() << (tests.size() == 1 ? " test" : " tests") << " made for the row's ends:";
    for (const Test& t : tests)
      errs() << " " << ICmpInst::getPredicateName(t.predicate);
    errs() << "\n";
  }
  // Frozen here, so that unswitching branches on this value and settles every use of it in
  // the copies it makes; its negation too, for the branches of rewrite() that use it here.
  b.SetInsertPoint(at);
  all = b.CreateFreeze(all, "row.all.in");
  Value* not_all = any_of(branches, [](const Guarded& g) { return !g.holds && g.in_block; })
                       ? b.CreateNot(all, "row.not.all.in")
                       : nullptr;
  expander.clear();
  for (Guarded& g : branches)
    rewrite(g, all, not_all, loop, li, dt);
  se.forgetLoop(&loop);
  return true;
}

} // namespace

bool row_guards_enabled() {
  return config::switched_on("MIMIC_ROW_GUARDS");
}

bool row_guards_explain() {
  const char* env = std::getenv("MIMIC_ROW_GUARDS");
  return env && std::string_view(env) == "explain";
}

PreservedAnalyses HoistRowGuards::run(Function& f, FunctionAnalysisManager& am) {
  if (!row_guards_enabled())
    return PreservedAnalyses::all();
  LoopInfo& li = am.getResult<LoopAnalysis>(f);
  ScalarEvolution& se = am.getResult<ScalarEvolutionAnalysis>(f);
  DominatorTree& dt = am.getResult<DominatorTreeAnalysis>(f);
  bool changed = false;
  for (Loop* loop : li.getLoopsInPreorder())
    if (loop->isInnermost() && is_thread_loop(*loop))
      changed |= guard_loop(*loop, se, li, dt);
  if (!changed)
    return PreservedAnalyses::all();
  PreservedAnalyses kept;
  kept.preserve<DominatorTreeAnalysis>();
  kept.preserve<LoopAnalysis>();
  return kept;
}

} // namespace mimic::codegen
