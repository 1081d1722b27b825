// Code of a row's edge threads, moved after the thread loop (see edge_threads.h).
#include "codegen/edge_threads.h"
#include "codegen/thread_interchange.h"
#include "support/config.h"

#include <llvm/Analysis/AliasAnalysis.h>
#include <llvm/Analysis/InstructionSimplify.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/LoopIterator.h>
#include <llvm/Analysis/MemoryLocation.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/Analysis/ScopedNoAliasAA.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/PatternMatch.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ScalarEvolutionExpander.h>

#include <cstdlib>
#include <map>
#include <string_view>

namespace mimic::codegen {

using namespace llvm;
using namespace llvm::PatternMatch;

bool edge_threads_enabled() {
  return config::switched_on("MIMIC_EDGE_THREADS");
}

bool edge_threads_explain() {
  const char* env = std::getenv("MIMIC_EDGE_THREADS");
  return env && std::string_view(env) == "explain";
}

namespace {

// A thread loop runs the threads of one row, at most 1024: a value stepping by one with it
// in 12 bits or more takes each of its values once.
constexpr unsigned kMinWidth = 12;
// How deep the values a moved block uses are traced back through the iteration's arithmetic.
constexpr unsigned kMaxDepth = 24;

// The iteration (a SCEV, counted from 0) that `cond` coming out as `taken` implies, if it
// implies one: an equality of a value stepping by one with the iteration and one that does
// not (under `and` when taken, the `or` of inequalities when not).
const SCEV* implied_iteration(Value* cond, bool taken, Loop& loop, ScalarEvolution& se, unsigned depth = 0) {
  if (depth > 6)
    return nullptr;
  Value *a, *b;
  if (match(cond, m_Freeze(m_Value(a))))
    return implied_iteration(a, taken, loop, se, depth + 1);
  if (match(cond, m_Not(m_Value(a))))
    return implied_iteration(a, !taken, loop, se, depth + 1);
  if (taken ? match(cond, m_LogicalAnd(m_Value(a), m_Value(b))) : match(cond, m_LogicalOr(m_Value(a), m_Value(b)))) {
    if (const SCEV* k = implied_iteration(a, taken, loop, se, depth + 1))
      return k;
    return implied_iteration(b, taken, loop, se, depth + 1);
  }
  CmpPredicate pred;
  if (!match(cond, m_ICmp(pred, m_Value(a), m_Value(b))) ||
      pred != (taken ? ICmpInst::ICMP_EQ : ICmpInst::ICMP_NE) || !a->getType()->isIntegerTy() ||
      a->getType()->getIntegerBitWidth() < kMinWidth)
    return nullptr;
  auto* rec = dyn_cast<SCEVAddRecExpr>(se.getMinusSCEV(se.getSCEV(a), se.getSCEV(b)));
  if (!rec || rec->getLoop() != &loop || !rec->isAffine())
    return nullptr;
  auto* step = dyn_cast<SCEVConstant>(rec->getStepRecurrence(se));
  if (!step || !step->getAPInt().abs().isOne())
    return nullptr;
  // start + k * step == 0
  return step->getAPInt().isOne() ? se.getNegativeSCEV(rec->getStart()) : rec->getStart();
}

// Memory an invariant load reads is not written while the kernel runs.
bool invariant(const Instruction* i) {
  return isa<LoadInst>(i) && i->hasMetadata(LLVMContext::MD_invariant_load);
}

// `rec` at iteration `k` of its loop.
const SCEV* at_iteration(const SCEVAddRecExpr* rec, const SCEV* k, ScalarEvolution& se) {
  return rec->evaluateAtIteration(se.getTruncateOrZeroExtend(k, rec->getStepRecurrence(se)->getType()), se);
}

// Code that only one iteration of the loop runs: `entry` and the blocks it dominates, entered
// from `test` and going on to `join`.
struct Edge {
  BranchInst* test;
  bool taken; // the code is on the test's true side
  BasicBlock* entry;
  BasicBlock* join;
  SmallVector<BasicBlock*, 4> blocks;
  const SCEV* iteration;
  bool checked; // the iteration is known to be one the loop runs
};

class EdgeFinder {
public:
  EdgeFinder(Loop& loop, bool parallel, const SCEV* last, ScalarEvolution& se, DominatorTree& dt, AAResults& aa,
             SCEVExpander& expander)
      : loop_(loop), parallel_(parallel), last_(last), se_(se), dt_(dt), aa_(aa), expander_(expander) {}

  // The blocks' code can run after the loop for iteration k_: every value it uses from the
  // iteration can be computed again there.
  bool computable(Value* v, const SmallPtrSetImpl<BasicBlock*>& region, unsigned depth = 0) {
    auto* i = dyn_cast<Instruction>(v);
    if (!i || !loop_.contains(i) || region.count(i->getParent()))
      return true;
    if (depth > kMaxDepth)
      return false;
    // Each value once per test: the iteration's arithmetic shares its operands (unrolled
    // addresses), and walking it as a tree would take time exponential in its depth.
    if (auto it = known_.find(i); it != known_.end())
      return it->second;
    bool ok;
    if (auto* rec = se_.isSCEVable(i->getType()) ? dyn_cast<SCEVAddRecExpr>(se_.getSCEV(i)) : nullptr;
        rec && rec->getLoop() == &loop_ && rec->isAffine())
      ok = expander_.isSafeToExpand(at_iteration(rec, k_, se_));
    else
      ok = !isa<PHINode>(i) && !i->isTerminator() && (isSafeToSpeculativelyExecute(i) || invariant(i)) &&
           all_of(i->operands(), [&](Value* op) { return computable(op, region, depth + 1); });
    known_[i] = ok;
    return ok;
  }

  // What keeps `test`'s `taken` side from moving out, or nullptr (and `edge` filled).
  const char* examine(BranchInst* test, bool taken, const SmallPtrSetImpl<BasicBlock*>& moved, Edge& edge) {
    BasicBlock* entry = test->getSuccessor(taken ? 0 : 1);
    if (entry == test->getSuccessor(taken ? 1 : 0) || !loop_.contains(entry) || entry == loop_.getHeader() ||
        entry->getSinglePredecessor() != test->getParent() || isa<PHINode>(entry->front()))
      return "not a block of its own";
    const SCEV* k = implied_iteration(test->getCondition(), taken, loop_, se_);
    if (!k)
      return "not one thread's";
    // The test is made in every iteration: the code after the loop makes it alone, not the
    // tests on the way to it (an interchange's `if (state[t] == OUT)`, `if (x < cols)`
    // around a halo load).
    if (!every_iteration(test->getParent(), moved))
      return "a test not made in every iteration";
    // Known to be one of the loop's iterations, known not to be, or checked after the loop.
    k = se_.getTruncateOrZeroExtend(k, last_->getType());
    if (se_.isKnownPredicate(ICmpInst::ICMP_UGT, k, last_))
      return "a thread the loop does not run";
    edge = Edge{test, taken, entry, nullptr, {}, k, se_.isKnownPredicate(ICmpInst::ICMP_ULE, k, last_)};
    if (!edge.checked && !(expander_.isSafeToExpand(k) && expander_.isSafeToExpand(last_)))
      return "a thread it cannot compute";
    k_ = k;
    known_.clear();
    SmallPtrSet<BasicBlock*, 8> region;
    for (BasicBlock* bb : loop_.blocks())
      if (dt_.dominates(entry, bb))
        region.insert(bb);
    if (region.count(loop_.getLoopLatch()))
      return "it holds the latch";
    for (BasicBlock* bb : region)
      for (BasicBlock* next : successors(bb))
        if (!region.count(next)) {
          if (!loop_.contains(next) || (edge.join && edge.join != next))
            return "more than one way out";
          edge.join = next;
        }
    if (!edge.join)
      return "no way out";
    for (PHINode& phi : edge.join->phis())
      for (BasicBlock* from : phi.blocks())
        if (region.count(from))
          return "a value merged where it goes on";
    SmallVector<Instruction*, 8> accesses;
    for (BasicBlock* bb : region)
      for (Instruction& i : *bb) {
        for (User* u : i.users())
          if (!region.count(cast<Instruction>(u)->getParent()))
            return "a value used after it";
        if (i.mayReadOrWriteMemory()) {
          auto* load = dyn_cast<LoadInst>(&i);
          auto* store = dyn_cast<StoreInst>(&i);
          if (!(load && load->isSimple()) && !(store && store->isSimple()))
            return "an access that is not a plain load or store";
          accesses.push_back(&i);
        } else if (i.mayHaveSideEffects()) {
          return "a side effect";
        }
        for (Value* op : i.operands())
          if (!isa<BasicBlock>(op) && !computable(op, region))
            return "a value of the iteration it cannot compute again";
      }
    if (!computable(test->getCondition(), region))
      return "a test it cannot compute again";
    // In a loop not known to be parallel (it reads a uniform value's slot: `if (lane == 0)
    // total = v`), the loop's other accesses, in any iteration, must be kept apart from the
    // code's by their alias scopes (the executor's arrays, the program's memory), which
    // hold whatever the iteration, or be invariant loads.
    if (!parallel_) {
      ScopedNoAliasAAResult scopes;
      SimpleAAQueryInfo query(aa_);
      for (BasicBlock* bb : loop_.blocks())
        if (!region.count(bb) && !moved.count(bb))
          for (Instruction& i : *bb) {
            if (!i.mayReadOrWriteMemory() || invariant(&i))
              continue;
            if (!isa<LoadInst>(i) && !isa<StoreInst>(i))
              return "a call or fence in a loop not known to be parallel";
            for (Instruction* own : accesses)
              if ((i.mayWriteToMemory() || own->mayWriteToMemory()) && !invariant(own) &&
                  scopes.alias(MemoryLocation::get(&i), MemoryLocation::get(own), query, nullptr) !=
                      AliasResult::NoAlias)
                return "an access in a loop not known to be parallel that its scopes do not keep apart";
          }
    }
    // What the iteration does after the code: none of it may touch what the code touches.
    SmallVector<BasicBlock*, 8> work{edge.join};
    SmallPtrSet<BasicBlock*, 8> after;
    while (!work.empty()) {
      BasicBlock* bb = work.pop_back_val();
      if (bb == loop_.getHeader() || !loop_.contains(bb) || moved.count(bb) || !after.insert(bb).second)
        continue;
      for (Instruction& i : *bb) {
        if (!i.mayReadOrWriteMemory())
          continue;
        if (!isa<LoadInst>(i) && !isa<StoreInst>(i))
          return "a call or fence after it";
        for (Instruction* own : accesses) {
          if ((!i.mayWriteToMemory() && !own->mayWriteToMemory()) || invariant(&i) || invariant(own))
            continue;
          if (!apart(&i, own, k) &&
              aa_.alias(MemoryLocation::get(&i), MemoryLocation::get(own)) != AliasResult::NoAlias)
            return "an access after it that may touch what it does";
        }
      }
      append_range(work, successors(bb));
    }
    edge.blocks.assign(region.begin(), region.end());
    return nullptr;
  }

private:
  // Whether every iteration goes through `bb`: no path from the header to the latch avoids
  // it, taking only the known side of branches whose condition folds to a constant (the
  // copies row_guards.h makes settle theirs as `false && x`, which nothing has folded yet)
  // and not into code already moved (thread 0's halo load, from which LLVM's jump
  // threading goes straight to the latch, past thread 31's test).
  bool every_iteration(BasicBlock* bb, const SmallPtrSetImpl<BasicBlock*>& moved) {
    BasicBlock* header = loop_.getHeader();
    BasicBlock* latch = loop_.getLoopLatch();
    SmallVector<BasicBlock*, 8> work{header};
    SmallPtrSet<BasicBlock*, 16> seen{header};
    while (!work.empty() && bb != header) {
      BasicBlock* at = work.pop_back_val();
      if (at == latch)
        return false;
      SmallVector<BasicBlock*, 2> next(successors(at));
      if (auto* br = dyn_cast<BranchInst>(at->getTerminator()); br && br->isConditional())
        if (auto* c = dyn_cast<ConstantInt>(fold(br->getCondition())))
          next = {br->getSuccessor(c->isZero() ? 1 : 0)};
      for (BasicBlock* n : next)
        if (n != bb && n != header && loop_.contains(n) && !moved.count(n) && seen.insert(n).second)
          work.push_back(n);
    }
    return true;
  }

  // `v` with the constants among what it is made of folded in, as far as that goes.
  Value* fold(Value* v, unsigned depth = 0) {
    auto* i = dyn_cast<Instruction>(v);
    if (!i || depth > 4)
      return v;
    const SimplifyQuery query(i->getDataLayout());
    if (auto* op = dyn_cast<BinaryOperator>(i))
      if (Value* s = simplifyBinOp(op->getOpcode(), fold(op->getOperand(0), depth + 1),
                                   fold(op->getOperand(1), depth + 1), query))
        return s;
    if (auto* cmp = dyn_cast<ICmpInst>(i))
      if (Value* s = simplifyICmpInst(cmp->getCmpPredicate(), fold(cmp->getOperand(0), depth + 1),
                                      fold(cmp->getOperand(1), depth + 1), query))
        return s;
    if (auto* f = dyn_cast<FreezeInst>(i))
      if (auto* c = dyn_cast<ConstantInt>(fold(f->getOperand(0), depth + 1)))
        return c;
    return v;
  }

  // Whether loads or stores `a` and `b` touch different bytes in iteration `k`: their
  // addresses there differ by at least the lower one's size over the range SCEV knows for
  // the values they share (stencil's tile[ty][0] and tile[0][tx] for thread 0: 136 * ty
  // - 4 bytes apart, ty in [1, 8], where alias analysis sees two indices it cannot tell).
  bool apart(Instruction* a, Instruction* b, const SCEV* k) {
    auto at = [&](Instruction* i) -> const SCEV* {
      const SCEV* s = se_.getSCEV(const_cast<Value*>(getLoadStorePointerOperand(i)));
      if (auto* rec = dyn_cast<SCEVAddRecExpr>(s); rec && rec->getLoop() == &loop_ && rec->isAffine())
        return at_iteration(rec, k, se_);
      return se_.isLoopInvariant(s, &loop_) ? s : nullptr;
    };
    const SCEV* pa = at(a);
    const SCEV* pb = at(b);
    if (!pa || !pb)
      return false;
    const SCEV* d = se_.getMinusSCEV(pa, pb);
    if (isa<SCEVCouldNotCompute>(d))
      return false;
    const DataLayout& layout = a->getDataLayout();
    auto size = [&](Instruction* i) { return layout.getTypeStoreSize(getLoadStoreType(i)).getFixedValue(); };
    const ConstantRange r = se_.getSignedRange(d);
    const unsigned w = r.getBitWidth();
    return r.getSignedMin().sge(APInt(w, size(b))) || r.getSignedMax().sle(-APInt(w, size(a)));
  }

  Loop& loop_;
  bool parallel_;    // llvm.loop.parallel_accesses
  const SCEV* last_; // the loop's backedge-taken count
  ScalarEvolution& se_;
  DominatorTree& dt_;
  AAResults& aa_;
  SCEVExpander& expander_;
  const SCEV* k_ = nullptr; // the iteration examine's test implies
  DenseMap<Value*, bool> known_; // what computable found for it
};

// The iteration's values computed again, for iteration `k`, before `at`.
class Recompute {
public:
  Recompute(Loop& loop, const SCEV* k, ScalarEvolution& se, SCEVExpander& expander)
      : loop_(loop), k_(k), se_(se), expander_(expander) {}

  Value* get(Value* v, Instruction* at) {
    auto* i = dyn_cast<Instruction>(v);
    if (!i || !loop_.contains(i))
      return v;
    if (auto it = done_.find(v); it != done_.end())
      return it->second;
    Value* out = nullptr;
    if (se_.isSCEVable(i->getType()))
      if (auto* rec = dyn_cast<SCEVAddRecExpr>(se_.getSCEV(i)); rec && rec->getLoop() == &loop_ && rec->isAffine())
        out = expander_.expandCodeFor(at_iteration(rec, k_, se_), i->getType(), at->getIterator());
    if (!out) {
      Instruction* copy = i->clone();
      copy->setName(i->getName() + ".edge");
      for (Use& op : copy->operands())
        if (!isa<BasicBlock>(op.get()))
          op.set(get(op.get(), at));
      copy->insertBefore(at->getIterator());
      out = copy;
    }
    done_[v] = out;
    return out;
  }

private:
  Loop& loop_;
  const SCEV* k_;
  ScalarEvolution& se_;
  SCEVExpander& expander_;
  std::map<Value*, Value*> done_;
};

// Runs `edge`'s blocks for its iteration at the end of `at`, which goes on to `next`; where
// that iteration is not known to be one the loop ran (`last`: its backedge-taken count),
// only if it is.
void emit_after(const Edge& edge, BasicBlock* at, BasicBlock* next, Recompute& values, SCEVExpander& expander,
                const SCEV* last, DominatorTree& dt) {
  Instruction* end = at->getTerminator();
  if (!edge.checked) {
    Value* k = expander.expandCodeFor(edge.iteration, edge.iteration->getType(), end->getIterator());
    Value* n = expander.expandCodeFor(last, last->getType(), end->getIterator());
    BasicBlock* one = BasicBlock::Create(at->getContext(), "edge_threads.one", at->getParent(), next);
    BranchInst::Create(next, one);
    auto* runs = new ICmpInst(end->getIterator(), ICmpInst::ICMP_ULE, k, n, "edge_threads.runs");
    BranchInst::Create(one, next, runs, end->getIterator());
    end->eraseFromParent();
    dt.addNewBlock(one, at); // where the expander may reuse what it made (`next` stays at's)
    at = one;
    end = one->getTerminator();
  }
  Value* cond = values.get(edge.test->getCondition(), end);
  ValueToValueMapTy map;
  map[edge.join] = next;
  for (BasicBlock* bb : edge.blocks)
    for (Instruction& i : *bb)
      for (Value* op : i.operands())
        if (auto* def = dyn_cast<Instruction>(op); def && !is_contained(edge.blocks, def->getParent()))
          map[op] = values.get(op, end);
  SmallVector<BasicBlock*, 4> copies;
  for (BasicBlock* bb : edge.blocks) {
    BasicBlock* copy = CloneBasicBlock(bb, map, ".edge", at->getParent());
    map[bb] = copy;
    copies.push_back(copy);
  }
  remapInstructionsInBlocks(copies, map);
  auto* entry = cast<BasicBlock>(&*map[edge.entry]);
  BranchInst::Create(edge.taken ? entry : next, edge.taken ? next : entry, cond, end->getIterator());
  end->eraseFromParent();
}

} // namespace

PreservedAnalyses ExtractEdgeThreads::run(Function& f, FunctionAnalysisManager& am) {
  if (f.isDeclaration() || !edge_threads_enabled())
    return PreservedAnalyses::all();
  auto& li = am.getResult<LoopAnalysis>(f);
  auto& se = am.getResult<ScalarEvolutionAnalysis>(f);
  auto& dt = am.getResult<DominatorTreeAnalysis>(f);
  auto& aa = am.getResult<AAManager>(f);
  const bool explain = edge_threads_explain();
  struct Found {
    Loop* loop;
    const SCEV* last;
    SmallVector<Edge, 2> edges; // in the loop's order
  };
  std::vector<Found> found;
  SCEVExpander expander(se, "edge");
  for (Loop* l : li.getLoopsInPreorder()) {
    if (!l->isInnermost() || !is_thread_loop(*l) || !l->getLoopPreheader() || !l->getLoopLatch() ||
        l->getExitingBlock() != l->getLoopLatch() || !l->getExitBlock())
      continue;
    const SCEV* last = se.getBackedgeTakenCount(l);
    if (isa<SCEVCouldNotCompute>(last) || !last->getType()->isIntegerTy())
      continue;
    EdgeFinder finder(*l, l->isAnnotatedParallel(), last, se, dt, aa, expander);
    LoopBlocksRPO order(l);
    order.perform(&li);
    SmallVector<BasicBlock*, 16> blocks(order.begin(), order.end());
    SmallPtrSet<BasicBlock*, 8> moved;
    Found here{l, last, {}};
    // From the loop's end back, until nothing more moves: moving one thread's code can put
    // another's test on every path (the code it moved skipped it).
    std::map<BasicBlock*, const char*> stays;
    for (bool more = true; more;) {
      more = false;
      for (BasicBlock* bb : reverse(blocks)) {
        auto* test = dyn_cast<BranchInst>(bb->getTerminator());
        if (moved.count(bb) || !test || !test->isConditional() || bb == l->getLoopLatch() ||
            moved.count(test->getSuccessor(0)) || moved.count(test->getSuccessor(1)))
          continue;
        for (bool taken : {true, false}) {
          Edge edge;
          const char* why = finder.examine(test, taken, moved, edge);
          if (why) {
            if (std::string_view(why) != "not a block of its own" && std::string_view(why) != "not one thread's")
              stays[test->getSuccessor(taken ? 0 : 1)] = why;
            continue;
          }
          if (explain)
            errs() << "mimic: edge threads: " << f.getName() << " " << edge.entry->getName() << " ("
                   << edge.blocks.size() << " block(s)) runs after loop " << l->getHeader()->getName()
                   << " for its iteration " << *edge.iteration << (edge.checked ? "" : ", if the loop runs it")
                   << "\n";
          stays.erase(edge.entry);
          moved.insert(edge.blocks.begin(), edge.blocks.end());
          here.edges.push_back(std::move(edge));
          more = true;
          break;
        }
      }
    }
    if (explain)
      for (const auto& [entry, why] : stays)
        if (!moved.count(entry))
          errs() << "mimic: edge threads: " << f.getName() << " " << entry->getName() << " stays: " << why << "\n";
    // In program order (a thread's two pieces run after the loop as they would have).
    DenseMap<BasicBlock*, unsigned> position;
    for (unsigned n = 0; n < blocks.size(); ++n)
      position[blocks[n]] = n;
    llvm::stable_sort(here.edges, [&](const Edge& a, const Edge& b) {
      return position[a.test->getParent()] < position[b.test->getParent()];
    });
    if (!here.edges.empty())
      found.push_back(std::move(here));
  }
  if (found.empty())
    return PreservedAnalyses::all();
  SmallVector<BasicBlock*, 8> dead;
  for (Found& loop : found) {
    Loop& l = *loop.loop;
    BasicBlock* after = SplitEdge(l.getLoopLatch(), l.getExitBlock(), &dt, &li);
    after->setName("edge_threads");
    // After the loop in program order: a thread's two moved pieces run as they would have.
    BasicBlock* at = after;
    for (const Edge& edge : loop.edges) {
      BasicBlock* next = SplitBlock(at, at->getTerminator(), &dt, &li, nullptr, "edge_threads.next");
      Recompute values(l, edge.iteration, se, expander);
      emit_after(edge, at, next, values, expander, loop.last, dt);
      at = next;
    }
    SmallPtrSet<BasicBlock*, 8> moved;
    for (const Edge& edge : loop.edges)
      moved.insert(edge.blocks.begin(), edge.blocks.end());
    // A loop left with nothing to do (the one thread's store was all it did) is not entered.
    bool idle = after->phis().empty(); // the preheader can go straight to it
    for (BasicBlock* bb : l.blocks())
      if (!moved.count(bb))
        for (Instruction& i : *bb)
          idle &= !i.mayHaveSideEffects() &&
                  all_of(i.users(), [&](User* u) { return l.contains(cast<Instruction>(u)->getParent()); });
    if (idle) {
      if (explain)
        errs() << "mimic: edge threads: " << f.getName() << " loop " << l.getHeader()->getName()
               << " is left with nothing to do: not entered\n";
      l.getLoopPreheader()->getTerminator()->replaceSuccessorWith(l.getHeader(), after);
      append_range(dead, l.blocks());
      continue;
    }
    // In the loop, the test's other side only: the moved blocks are left unreachable.
    for (const Edge& edge : loop.edges) {
      BranchInst::Create(edge.test->getSuccessor(edge.taken ? 1 : 0), edge.test->getIterator());
      edge.test->eraseFromParent();
    }
    append_range(dead, moved);
  }
  expander.clear();
  DeleteDeadBlocks(dead);
  return PreservedAnalyses::none();
}

} // namespace mimic::codegen
