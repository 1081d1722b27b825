// Code of a row's edge threads, moved after the thread loop (see edge_threads.h).
#include "codegen/edge_threads.h"
#include "codegen/thread_interchange.h"
#include "support/config.h"

#include <llvm/Analysis/AliasAnalysis.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/LoopIterator.h>
#include <llvm/Analysis/MemoryLocation.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
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

// A row has at most 1024 threads; a loop that runs more is not a thread loop's row.
constexpr uint64_t kMaxIterations = 1024;
// How deep the values a moved block uses are traced back through the iteration's arithmetic.
constexpr unsigned kMaxDepth = 24;

// The iteration (0 or `last`) that `cond` coming out as `taken` implies, if it implies one:
// an equality of a value stepping with the iteration and one that does not, holding at that
// iteration only (under `and` when taken, the `or` of inequalities when not).
std::optional<uint64_t> implied_iteration(Value* cond, bool taken, Loop& loop, ScalarEvolution& se, uint64_t last,
                                          unsigned depth = 0) {
  if (depth > 6)
    return std::nullopt;
  Value *a, *b;
  if (match(cond, m_Freeze(m_Value(a))))
    return implied_iteration(a, taken, loop, se, last, depth + 1);
  if (match(cond, m_Not(m_Value(a))))
    return implied_iteration(a, !taken, loop, se, last, depth + 1);
  if (taken ? match(cond, m_LogicalAnd(m_Value(a), m_Value(b))) : match(cond, m_LogicalOr(m_Value(a), m_Value(b)))) {
    if (auto k = implied_iteration(a, taken, loop, se, last, depth + 1))
      return k;
    return implied_iteration(b, taken, loop, se, last, depth + 1);
  }
  CmpPredicate pred;
  if (!match(cond, m_ICmp(pred, m_Value(a), m_Value(b))) ||
      pred != (taken ? ICmpInst::ICMP_EQ : ICmpInst::ICMP_NE) || !se.isSCEVable(a->getType()))
    return std::nullopt;
  auto* rec = dyn_cast<SCEVAddRecExpr>(se.getMinusSCEV(se.getSCEV(a), se.getSCEV(b)));
  if (!rec || rec->getLoop() != &loop || !rec->isAffine())
    return std::nullopt;
  auto* start = dyn_cast<SCEVConstant>(rec->getStart());
  auto* step = dyn_cast<SCEVConstant>(rec->getStepRecurrence(se));
  if (!start || !step || step->getAPInt().isZero())
    return std::nullopt;
  // The difference takes a distinct value at each iteration when |step| * last stays below
  // half its range: zero at most once.
  const unsigned width = start->getAPInt().getBitWidth();
  if (width < 2 || (width <= 64 && (last >> (width - 1)) != 0))
    return std::nullopt;
  bool overflow = false;
  const APInt span = step->getAPInt().abs().umul_ov(APInt(width, last), overflow);
  if (overflow || span.isNegative())
    return std::nullopt;
  for (uint64_t k : {uint64_t(0), last})
    if ((start->getAPInt() + step->getAPInt() * APInt(width, k)).isZero())
      return k;
  return std::nullopt;
}

// Code that only one iteration of the loop runs: `entry` and the blocks it dominates, entered
// from `test` and going on to `join`.
struct Edge {
  BranchInst* test;
  bool taken; // the code is on the test's true side
  BasicBlock* entry;
  BasicBlock* join;
  SmallVector<BasicBlock*, 4> blocks;
  uint64_t iteration;
};

class EdgeFinder {
public:
  EdgeFinder(Loop& loop, uint64_t last, ScalarEvolution& se, DominatorTree& dt, AAResults& aa)
      : loop_(loop), last_(last), se_(se), dt_(dt), aa_(aa) {}

  // The blocks' code can run after the loop for `k`: every value it uses from the
  // iteration can be computed again there.
  bool computable(Value* v, const SmallPtrSetImpl<BasicBlock*>& region, unsigned depth = 0) {
    auto* i = dyn_cast<Instruction>(v);
    if (!i || !loop_.contains(i) || region.count(i->getParent()))
      return true;
    if (depth > kMaxDepth)
      return false;
    if (se_.isSCEVable(i->getType()))
      if (auto* rec = dyn_cast<SCEVAddRecExpr>(se_.getSCEV(i)); rec && rec->getLoop() == &loop_ && rec->isAffine())
        return true;
    if (isa<PHINode>(i) || i->isTerminator() ||
        !(isSafeToSpeculativelyExecute(i) || (isa<LoadInst>(i) && i->hasMetadata(LLVMContext::MD_invariant_load))))
      return false;
    return all_of(i->operands(), [&](Value* op) { return computable(op, region, depth + 1); });
  }

  // What keeps `test`'s `taken` side from moving out, or nullptr (and `edge` filled).
  const char* examine(BranchInst* test, bool taken, const SmallPtrSetImpl<BasicBlock*>& moved, Edge& edge) {
    BasicBlock* entry = test->getSuccessor(taken ? 0 : 1);
    if (entry == test->getSuccessor(taken ? 1 : 0) || !loop_.contains(entry) || entry == loop_.getHeader() ||
        entry->getSinglePredecessor() != test->getParent() || isa<PHINode>(entry->front()))
      return "not a block of its own";
    auto k = implied_iteration(test->getCondition(), taken, loop_, se_, last_);
    if (!k)
      return "not one edge thread's";
    edge = Edge{test, taken, entry, nullptr, {}, *k};
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
          // Memory an invariant load reads is not written while the kernel runs.
          auto invariant = [](Instruction* x) { return isa<LoadInst>(x) && x->hasMetadata(LLVMContext::MD_invariant_load); };
          if ((!i.mayWriteToMemory() && !own->mayWriteToMemory()) || invariant(&i) || invariant(own))
            continue;
          if (!apart(&i, own, edge.iteration) &&
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
  // Whether loads or stores `a` and `b` touch different bytes in iteration `k`: their
  // addresses there differ by at least the lower one's size over the range SCEV knows for
  // the values they share (stencil's tile[ty][0] and tile[0][tx] for thread 0: 136 * ty
  // - 4 bytes apart, ty in [1, 8], where alias analysis sees two indices it cannot tell).
  bool apart(Instruction* a, Instruction* b, uint64_t k) {
    auto at = [&](Instruction* i) -> const SCEV* {
      const SCEV* s = se_.getSCEV(const_cast<Value*>(getLoadStorePointerOperand(i)));
      if (auto* rec = dyn_cast<SCEVAddRecExpr>(s); rec && rec->getLoop() == &loop_ && rec->isAffine())
        return rec->evaluateAtIteration(se_.getConstant(rec->getStepRecurrence(se_)->getType(), k), se_);
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
  uint64_t last_;
  ScalarEvolution& se_;
  DominatorTree& dt_;
  AAResults& aa_;
};

// The iteration's values computed again, for one iteration, before `at`.
class Recompute {
public:
  Recompute(Loop& loop, uint64_t k, ScalarEvolution& se, SCEVExpander& expander)
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
        out = expander_.expandCodeFor(rec->evaluateAtIteration(se_.getConstant(rec->getStepRecurrence(se_)->getType(), k_), se_),
                                      i->getType(), at->getIterator());
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
  uint64_t k_;
  ScalarEvolution& se_;
  SCEVExpander& expander_;
  std::map<Value*, Value*> done_;
};

// Runs `edge`'s blocks for its iteration at the end of `at`, which goes on to `next`.
void emit_after(const Edge& edge, BasicBlock* at, BasicBlock* next, Recompute& values) {
  Instruction* end = at->getTerminator();
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
    SmallVector<Edge, 2> edges; // last in the loop's order first
  };
  std::vector<Found> found;
  for (Loop* l : li.getLoopsInPreorder()) {
    if (!l->isInnermost() || !is_thread_loop(*l) || !l->isAnnotatedParallel() || !l->getLoopPreheader() ||
        !l->getLoopLatch() || l->getExitingBlock() != l->getLoopLatch() || !l->getExitBlock())
      continue;
    auto* trips = dyn_cast<SCEVConstant>(se.getBackedgeTakenCount(l));
    if (!trips || trips->getAPInt().uge(kMaxIterations) || trips->getAPInt().isZero())
      continue;
    EdgeFinder finder(*l, trips->getAPInt().getZExtValue(), se, dt, aa);
    LoopBlocksRPO order(l);
    order.perform(&li);
    SmallVector<BasicBlock*, 16> blocks(order.begin(), order.end());
    SmallPtrSet<BasicBlock*, 8> moved;
    Found here{l, {}};
    for (BasicBlock* bb : reverse(blocks)) {
      auto* test = dyn_cast<BranchInst>(bb->getTerminator());
      if (moved.count(bb) || !test || !test->isConditional() || bb == l->getLoopLatch())
        continue;
      for (bool taken : {true, false}) {
        Edge edge;
        const char* why = finder.examine(test, taken, moved, edge);
        if (explain && why && std::string_view(why) != "not a block of its own" &&
            std::string_view(why) != "not one edge thread's")
          errs() << "mimic: edge threads: " << f.getName() << " " << test->getSuccessor(taken ? 0 : 1)->getName()
                 << " stays: " << why << "\n";
        if (why)
          continue;
        if (explain)
          errs() << "mimic: edge threads: " << f.getName() << " " << edge.entry->getName() << " ("
                 << edge.blocks.size() << " block(s)) runs after loop " << l->getHeader()->getName()
                 << " for its iteration " << edge.iteration << "\n";
        moved.insert(edge.blocks.begin(), edge.blocks.end());
        here.edges.push_back(std::move(edge));
        break;
      }
    }
    if (!here.edges.empty())
      found.push_back(std::move(here));
  }
  if (found.empty())
    return PreservedAnalyses::all();
  SCEVExpander expander(se, "edge");
  for (Found& loop : found) {
    BasicBlock* at = SplitEdge(loop.loop->getLoopLatch(), loop.loop->getExitBlock(), &dt, &li);
    at->setName("edge_threads");
    // After the loop in program order: a thread's two moved pieces run as they would have.
    std::map<uint64_t, Recompute> values;
    for (const Edge& edge : reverse(loop.edges)) {
      BasicBlock* next = SplitBlock(at, at->getTerminator(), &dt, &li, nullptr, "edge_threads.next");
      auto it = values.try_emplace(edge.iteration, *loop.loop, edge.iteration, se, expander).first;
      emit_after(edge, at, next, it->second);
      at = next;
    }
    // In the loop, the test's other side only: the moved blocks are left unreachable.
    for (const Edge& edge : loop.edges) {
      BranchInst::Create(edge.test->getSuccessor(edge.taken ? 1 : 0), edge.test->getIterator());
      edge.test->eraseFromParent();
    }
  }
  expander.clear();
  SmallVector<BasicBlock*, 8> dead;
  for (Found& loop : found)
    for (const Edge& edge : loop.edges)
      append_range(dead, edge.blocks);
  DeleteDeadBlocks(dead);
  return PreservedAnalyses::none();
}

} // namespace mimic::codegen
