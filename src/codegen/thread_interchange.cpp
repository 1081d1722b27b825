#include "codegen/thread_interchange.h"
#include "support/config.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>

#include <llvm/ADT/SetVector.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/LoopSimplify.h>
#include <llvm/Transforms/Utils/LoopUtils.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

namespace mimic::codegen {

using namespace llvm;

namespace {

constexpr const char* kThreadLoopProperty = "mimic.thread.loop";
// A thread loop runs the threads of one row of a block: at most 1024.
constexpr uint64_t kRowThreads = 1024;
// Stack for the per-thread arrays of one function, all its interchanges together (kernels
// may run on an application's thread, whose stack it chose). The arrays of each thread loop
// live only while it runs (lifetime markers), so that loops after one another share them.
constexpr uint64_t kStackBudget = 128 * 1024;
// The most instructions computed again for one value (a thread's index into a tile ...).
constexpr unsigned kChainBudget = 24;
constexpr unsigned kMostInterchanges = 16;
// Accesses whose address jumps by a page or more from one round to the next (a grid-stride
// loop: each round reads a run of the row's threads, a grid's width away from the last)
// defeat the hardware prefetcher, which follows runs within a page; each round then waits
// for its run. Such runs are prefetched kPrefetchRounds rounds ahead, line by line (at most
// kMostPrefetched accesses per loop, runs of at most kPrefetchSpan bytes), into the L2
// cache: prefetches into L1 hold the core's few line-fill buffers and stall the loop
// (reduce: 2.0x OpenMP's samples with them, 1.3-1.6x into L2).
constexpr uint64_t kPrefetchRounds = 4;
constexpr uint64_t kPrefetchJump = 4096;
constexpr uint64_t kPrefetchSpan = 16384;
constexpr unsigned kMostPrefetched = 4;
// Where a thread is, per thread of the row: before the loop (or never in it), in it, past it.
constexpr uint8_t kInside = 1, kPast = 2;

bool match_one(Value* v) {
  auto* c = dyn_cast<ConstantInt>(v);
  return c && c->isOne();
}

Value* mapped(ValueToValueMapTy& map, Value* v) {
  auto it = map.find(v);
  return it == map.end() ? v : static_cast<Value*>(it->second);
}

// A chain of instructions of `loop` without memory access or side effect that computes `v`
// from values outside the loop and `allowed` ones.
bool pure_chain(Value* v, const Loop& loop, const SmallPtrSetImpl<Value*>& allowed, unsigned& budget) {
  auto* i = dyn_cast<Instruction>(v);
  if (!i || !loop.contains(i) || allowed.count(v))
    return true;
  if (isa<PHINode>(i) || i->mayReadOrWriteMemory() || !isSafeToSpeculativelyExecute(i) || budget == 0)
    return false;
  --budget;
  for (Value* op : i->operands())
    if (!pure_chain(op, loop, allowed, budget))
      return false;
  return true;
}

// The chain of `v` (pure_chain) built again at `b` with the values `map` names replaced.
Value* clone_chain(Value* v, const Loop& loop, ValueToValueMapTy& map, IRBuilder<>& b) {
  if (auto it = map.find(v); it != map.end())
    return it->second;
  auto* i = dyn_cast<Instruction>(v);
  if (!i || !loop.contains(i))
    return v;
  Instruction* copy = i->clone();
  for (Use& op : copy->operands())
    op.set(clone_chain(op.get(), loop, map, b));
  b.Insert(copy, i->getName());
  map[i] = copy;
  return copy;
}

// What stepping a header φ of the inner loop does from one iteration to the next.
enum class Carry { Uniform, Affine, Array };

struct Plan {
  Loop* outer = nullptr; // the thread loop
  Loop* inner = nullptr;
  PHINode* iv = nullptr; // the thread index
  Value* first = nullptr;
  BasicBlock* entry = nullptr; // the thread loop's preheader
  BasicBlock* latch = nullptr;
  BasicBlock* exit = nullptr;
  Instruction* next = nullptr;
  ICmpInst* cond = nullptr;
  BasicBlock* preheader = nullptr; // the inner loop's
  BasicBlock* head = nullptr;
  BasicBlock* inner_latch = nullptr;
  BasicBlock* inner_exit = nullptr;
  SmallPtrSet<BasicBlock*, 32> before, after, body; // A, C and the inner loop's blocks
  SmallVector<BasicBlock*, 16> after_order, body_order;
  // Loads from an address the same in every thread, in a loop that writes no memory, that
  // every thread inside the loop makes in every iteration: loaded once per round.
  SmallVector<LoadInst*, 8> hoisted;
  SetVector<Instruction*> into_body, into_after; // values of A-only blocks used there
  SmallPtrSet<Value*, 16> recomputed;            // of those, ones computed again
  DenseMap<PHINode*, Carry> carry;
  DenseMap<PHINode*, Value*> step; // Affine: p' = p + step
  // Affine φs stepped by a chain of adds (`c += blockDim` twice in a loop unrolled by
  // two): the values the chain adds, whose sum transform() makes the step.
  DenseMap<PHINode*, SmallVector<Value*, 2>> step_terms;
  // Accesses of the loop whose address is computed from the thread index, values of A and
  // Affine φ-nodes alone (nothing loaded in the loop): their address in a later round is
  // known in this one. The bool says whether the access writes.
  SmallVector<std::pair<Value*, bool>, kMostPrefetched> ahead;
  // A loop left at its latch only (latch_exit): whether a thread stays is a value, and
  // each iteration ends at the latch. Of the values leaving it, updates of Array φs (a
  // rotated loop summing into a register) are stored where a staying thread stores them,
  // and C reads them from that array: each such exit φ's header φ. Every other value
  // leaving (a count carried once per round) is stored to an array of its own in every
  // iteration; C reads what the last one stored.
  DenseMap<PHINode*, PHINode*> exit_carry;
  bool latch_exit = false;
  // Whether the vectoriser will leave a round's thread loop scalar (stays_scalar): such
  // rounds get full rounds, vectorised ones may be counted.
  bool scalar_rounds = false;
  // Counted rounds, for a loop left at its latch only that keeps a thread while an Affine
  // integer φ k (or its update) compares below a bound the same in every thread: `for (c =
  // tid; c < cols; c += blockDim)`. Thread t is inside in round r > 0 iff it entered and
  // the latch's test held in round r - 1, which is `start + r·step < bound` (the update;
  // the φ itself: one step less), computed again from start and the round's offset: no
  // state to store, no blend. The latch's test alone stands for all those before it while
  // the values it compares do not wrap around; by induction over the rounds, no value any
  // thread's test computes wraps when both the largest start plus the step and the starts'
  // spread plus the bound plus the step fit in k's type, which choose_rounds checks at run
  // time (signed tests: in the order of biased values, the sign bit flipped).
  struct Counted {
    PHINode* phi = nullptr;
    CmpInst::Predicate stay = CmpInst::ICMP_ULT; // thread stays while `x stay bound`: ult, ule, slt, sle
    Value* bound = nullptr;
    bool tests_update = false; // x is k's update, not k
    // The thread loop's header enters the loop iff `start stay bound` and start is known
    // in every thread: the test of round 0 is the guard's, and needs no state at all.
    bool guarded = false;
    // Guarded loops whose start SCEV knows over the row (closed_starts): the first thread's
    // start, from which choose_rounds computes the row's smallest and largest before the
    // thread loop instead of reducing them thread by thread.
    Value* lowest = nullptr;
    Value* trips = nullptr; // the row's threads after its first, where the start rises by `rise`
    uint64_t rise = 0;
  } counted;
  uint64_t stack_bytes = 0;
};

bool stays_scalar(ArrayRef<BasicBlock*> blocks);

// The values the same in every thread that `update` adds to `phi`, when it is a chain of
// integer adds inside `inner` that starts at `phi` and adds one such value at each link
// (`phi + blockDim`, or `(phi + blockDim) + blockDim` in a loop unrolled by two, whose
// first sum also indexes the second access); empty when it is anything else.
SmallVector<Value*, 2> add_chain_terms(PHINode* phi, Value* update, const Loop& outer, const Loop& inner) {
  constexpr unsigned kMostLinks = 8;
  SmallVector<Value*, 2> terms;
  for (Value* v = update; v != phi;) {
    auto* add = dyn_cast<BinaryOperator>(v);
    if (!add || add->getOpcode() != Instruction::Add || !inner.contains(add) || terms.size() == kMostLinks)
      return {};
    Value* a = add->getOperand(0);
    Value* b = add->getOperand(1);
    if (outer.isLoopInvariant(b)) {
      terms.push_back(b);
      v = a;
    } else if (outer.isLoopInvariant(a)) {
      terms.push_back(a);
      v = b;
    } else {
      return {};
    }
  }
  return terms;
}

// Whether counted rounds get a full-round copy (make_rounds): where the loop's guard is its
// test (Plan::Counted::guarded), unless it runs up to a constant no larger than a row (a
// block's table in shared memory: a round or two), where the copy would only cost code and
// registers elsewhere in the kernel (histogram's bins: its main loop then reloaded a
// pointer from the stack in every iteration, 534 -> 620-635 ms at 4x the LLC).
bool gets_full_rounds(bool guarded, Value* bound) {
  auto* constant = dyn_cast<ConstantInt>(bound);
  return guarded && !(constant && constant->getValue().ule(kRowThreads)) && full_rounds_enabled();
}

// Whether `x enters r` and `x stay bound` are the same test: the same bound, or constant
// bounds one apart where one test is strict (nvcc guards `c < 1024` as `c > 1023`).
bool same_test(CmpInst::Predicate enters, Value* r, CmpInst::Predicate stay, Value* bound) {
  if (r == bound)
    return enters == stay;
  auto* a = dyn_cast<ConstantInt>(r);
  auto* b = dyn_cast<ConstantInt>(bound);
  if (!a || !b || a->getType() != b->getType())
    return false;
  // Both as strict tests: x <= C is x < C + 1 where C + 1 does not wrap.
  auto strict = [](CmpInst::Predicate p, const APInt& c) -> std::optional<std::pair<CmpInst::Predicate, APInt>> {
    if (p == CmpInst::ICMP_ULE)
      return c.isMaxValue() ? std::nullopt : std::optional(std::pair(CmpInst::ICMP_ULT, c + 1));
    if (p == CmpInst::ICMP_SLE)
      return c.isMaxSignedValue() ? std::nullopt : std::optional(std::pair(CmpInst::ICMP_SLT, c + 1));
    return std::pair(p, c);
  };
  auto x = strict(enters, a->getValue()), y = strict(stay, b->getValue());
  return x && y && x->first == y->first && x->second == y->second;
}

// Plan::Counted for `p`, a loop left at its latch only, where it applies.
void find_counted(Plan& p) {
  auto* br = cast<BranchInst>(p.inner_latch->getTerminator());
  auto* cmp = dyn_cast<ICmpInst>(br->getCondition());
  if (!cmp)
    return;
  CmpInst::Predicate stay = br->getSuccessor(0) == p.head ? cmp->getPredicate() : cmp->getInversePredicate();
  Value* x = cmp->getOperand(0);
  Value* bound = cmp->getOperand(1);
  if (!p.outer->isLoopInvariant(bound)) {
    std::swap(x, bound);
    stay = CmpInst::getSwappedPredicate(stay);
  }
  if (!p.outer->isLoopInvariant(bound) ||
      !is_contained({CmpInst::ICMP_ULT, CmpInst::ICMP_ULE, CmpInst::ICMP_SLT, CmpInst::ICMP_SLE}, stay))
    return;
  for (auto [phi, step] : p.step) {
    Value* update = phi->getIncomingValueForBlock(p.inner_latch);
    auto* type = dyn_cast<IntegerType>(phi->getType());
    if (!type || (x != phi && x != update))
      continue;
    Value* start = phi->getIncomingValueForBlock(p.preheader);
    bool guarded = false;
    BasicBlock* guard = p.preheader->getSinglePredecessor();
    auto* branch = guard == p.outer->getHeader() ? dyn_cast<BranchInst>(guard->getTerminator()) : nullptr;
    auto* test = branch && branch->isConditional() ? dyn_cast<ICmpInst>(branch->getCondition()) : nullptr;
    auto* defined = dyn_cast<Instruction>(start);
    if (x == update && test && (!defined || !p.outer->contains(defined) || p.recomputed.count(defined))) {
      CmpInst::Predicate enters =
          branch->getSuccessor(0) == p.preheader ? test->getPredicate() : test->getInversePredicate();
      Value* l = test->getOperand(0);
      Value* r = test->getOperand(1);
      if (r == start) {
        std::swap(l, r);
        enters = CmpInst::getSwappedPredicate(enters);
      }
      guarded = branch->getSuccessor(0) != branch->getSuccessor(1) && l == start &&
                same_test(enters, r, stay, bound);
    }
    // A 64-bit index costs its test twice the vector instructions of a 32-bit one, as many
    // as the state it would replace (reduce's grid-stride rounds ran 7% slower counted than
    // in state mode, out of cache), so it is counted only where the rounds get a full copy:
    // most rounds of a grid-stride loop then test nothing at all (reduce at 4x the LLC:
    // 139-153 ms in state mode, 110-113 counted with full rounds).
    if (type->getBitWidth() > 32 && !gets_full_rounds(guarded, bound))
      continue;
    p.counted = {phi, stay, bound, x == update, guarded};
    return;
  }
}

class Interchanger {
public:
  Interchanger(Function& f, const TargetLibraryInfo& tli) : f_(f), tli_(tli) {}

  // One interchange somewhere in the function; false when there is none to make.
  bool run_once(bool& canonicalised);

  uint64_t stack_used = 0;

private:
  // nullptr when the interchange can be made, or why not.
  const char* analyse(Loop* outer, Loop* inner, DominatorTree& dt, ScalarEvolution& se, Plan& plan);
  void transform(Plan& plan);
  void closed_starts(Plan& plan, ScalarEvolution& se);
  using SlotFn = function_ref<Value*(Value*, Value*, IRBuilder<>&)>;
  using IndexFn = function_ref<Value*(IRBuilder<>&, Value*)>;
  Value* prefetch_address(Plan& p, IRBuilder<>& b, Value* pointer, Value* t, uint64_t rounds, bool in_round,
                          const DenseMap<PHINode*, PHINode*>& offset, SlotFn slot, IndexFn index);
  struct Prefetches {
    SmallVector<Value*, 4> wanted; // per access of Plan::ahead: prefetch it (i1)
    Value* last = nullptr;         // the row's last thread
  };
  Prefetches prefetch_decide(Plan& p, IRBuilder<>& b, SlotFn slot, IndexFn index);
  void prefetch_lines(Plan& p, IRBuilder<>& b, const Prefetches& decided, const DenseMap<PHINode*, PHINode*>& offset,
                      SlotFn slot, IndexFn index);
  struct Emit;
  struct Rounds {
    BasicBlock* entry;
    BranchInst* back; // of the loop over the row's threads in a round
  };
  enum class Mode { State, Counted, Fallback }; // Fallback: State beside Counted
  Rounds make_rounds(Emit& e, Mode mode);
  BasicBlock* choose_rounds(Plan& p, BasicBlock* header, BasicBlock* step, BasicBlock* state_rounds,
                            BasicBlock* counted_rounds, BasicBlock* after, Instruction* lowest_start,
                            Instruction* highest_start);
  Value* array_slot(Type* element, Value* index, IRBuilder<>& b, Value* array);
  AllocaInst* array(Type* element, const Twine& name);

  Function& f_;
  const TargetLibraryInfo& tli_;
};

AllocaInst* Interchanger::array(Type* element, const Twine& name) {
  BasicBlock& entry = f_.getEntryBlock();
  IRBuilder<> b(&entry, entry.getFirstInsertionPt());
  return b.CreateAlloca(ArrayType::get(element, kRowThreads), nullptr, name);
}

Value* Interchanger::array_slot(Type* element, Value* index, IRBuilder<>& b, Value* array) {
  return b.CreateInBoundsGEP(element, array, index);
}

bool Interchanger::run_once(bool& canonicalised) {
  DominatorTree dt(f_);
  LoopInfo li(dt);
  AssumptionCache ac(f_);
  ScalarEvolution se(f_, const_cast<TargetLibraryInfo&>(tli_), ac, dt, li);
  for (Loop* outer : li.getLoopsInPreorder()) {
    if (!is_thread_loop(*outer))
      continue;
    for (Loop* inner : outer->getSubLoops()) {
      if (!inner->getSubLoops().empty())
        continue;
      // The inner loop in the shape the transformation takes: a preheader, one latch,
      // exit blocks only it enters, values used after it through φ-nodes in them.
      canonicalised |= simplifyLoop(inner, &dt, &li, &se, &ac, nullptr, false);
      canonicalised |= simplifyLoop(outer, &dt, &li, &se, &ac, nullptr, false);
      canonicalised |= formLCSSARecursively(*outer, dt, &li, &se);
      Plan plan;
      if (const char* why = analyse(outer, inner, dt, se, plan)) {
        if (interchange_explain())
          errs() << "mimic: interchange in " << f_.getName() << ", loop at " << inner->getHeader()->getName()
                 << ": not made: " << why << "\n";
        continue;
      }
      if (plan.counted.guarded)
        closed_starts(plan, se);
      if (interchange_explain())
        errs() << "mimic: interchange in " << f_.getName() << ", loop at " << inner->getHeader()->getName() << ": made"
               << (!plan.counted.phi ? "" : plan.counted.guarded ? ", counted from its guard" : ", counted")
               << (plan.counted.lowest ? ", the row's starts from its first" : "") << "\n";
      transform(plan);
      return true;
    }
  }
  return false;
}

// The last thread of the row: the thread loop stops once t + 1 reaches its bound.
Value* last_thread(const Plan& p, IRBuilder<>& b, const Twine& name) {
  Value* bound = p.cond->getOperand(0) == p.next ? p.cond->getOperand(1) : p.cond->getOperand(0);
  return b.CreateSub(bound, ConstantInt::get(bound->getType(), 1), name);
}

// Plan::Counted's lowest start and its rise over the row, where the start is a function of
// the thread SCEV knows: invariant in the thread loop, or an add recurrence rising by a
// constant (layernorm's `c = tid`, where choose_rounds otherwise reduced every thread's
// start: three such reductions a row, a tenth of its samples in cache). The row's starts
// are then the first thread's (its chain computed again before the thread loop) and those
// after it, a step apart, up to the last thread's; choose_rounds checks at run time that
// they do not wrap around (SCEV cannot tell that `t mod 256` does not).
void Interchanger::closed_starts(Plan& p, ScalarEvolution& se) {
  Plan::Counted& c = p.counted;
  Value* start = c.phi->getIncomingValueForBlock(p.preheader);
  auto* defined = dyn_cast<Instruction>(start);
  uint64_t rise = 0;
  if (defined && p.outer->contains(defined)) {
    if (!p.recomputed.count(defined) || !se.isSCEVable(start->getType()))
      return;
    auto* ar = dyn_cast<SCEVAddRecExpr>(se.getSCEV(start));
    auto* step = ar && ar->getLoop() == p.outer && ar->isAffine() ? dyn_cast<SCEVConstant>(ar->getStepRecurrence(se))
                                                                   : nullptr;
    if (!step || !step->getAPInt().isStrictlyPositive() || step->getAPInt().getActiveBits() > 32)
      return;
    rise = step->getAPInt().getZExtValue();
  }

  IRBuilder<> b(p.entry->getTerminator());
  if (rise) {
    ValueToValueMapTy first;
    first[p.iv] = p.first;
    c.lowest = clone_chain(start, *p.outer, first, b);
    c.trips = b.CreateSub(last_thread(p, b, "ix.last"), p.first, "ix.trips");
    c.rise = rise;
  } else {
    c.lowest = start;
  }
}

const char* Interchanger::analyse(Loop* outer, Loop* inner, DominatorTree& dt, ScalarEvolution& se, Plan& p) {
  p.outer = outer;
  p.inner = inner;
  // The thread loop: `t` from `first` by one, one latch that alone leaves it.
  BasicBlock* header = outer->getHeader();
  BasicBlock* preheader = outer->getLoopPreheader();
  p.entry = preheader;
  p.latch = outer->getLoopLatch();
  p.exit = outer->getExitBlock();
  if (!preheader || !p.latch || !p.exit || outer->getExitingBlock() != p.latch)
    return "thread loop: no preheader, latch or single exit";
  for (PHINode& phi : header->phis()) {
    if (p.iv)
      return "thread loop: a value carried from thread to thread";
    p.iv = &phi;
  }
  if (!p.iv)
    return "thread loop: no index";
  p.first = p.iv->getIncomingValueForBlock(preheader);
  auto* next = dyn_cast<BinaryOperator>(p.iv->getIncomingValueForBlock(p.latch));
  if (!next || next->getOpcode() != Instruction::Add || next->getOperand(0) != p.iv ||
      !match_one(next->getOperand(1)))
    return "thread loop: the index does not step by one";
  p.next = next;
  auto* back = dyn_cast<BranchInst>(p.latch->getTerminator());
  if (!back || !back->isConditional())
    return "thread loop: the latch is not a conditional branch";
  p.cond = dyn_cast<ICmpInst>(back->getCondition());
  if (!p.cond)
    return "thread loop: the latch does not compare";
  for (Value* op : p.cond->operands())
    if (op != next && !outer->isLoopInvariant(op))
      return "thread loop: the bound varies";

  // The inner loop.
  p.preheader = inner->getLoopPreheader();
  p.head = inner->getHeader();
  p.inner_latch = inner->getLoopLatch();
  p.inner_exit = inner->getUniqueExitBlock();
  if (!p.preheader || !p.inner_latch || !p.inner_exit || !outer->contains(p.inner_exit))
    return "inner loop: no preheader, latch or single exit";
  for (BasicBlock* pred : predecessors(p.inner_exit))
    if (!inner->contains(pred))
      return "inner loop: its exit is entered from outside it";
  bool memory = false, unit_stride = false, writes = false;
  for (BasicBlock* bb : inner->blocks()) {
    p.body.insert(bb);
    for (Instruction& i : *bb) {
      writes |= i.mayWriteToMemory();
      if (auto* call = dyn_cast<CallBase>(&i)) {
        if (!isa<IntrinsicInst>(call) || isa<MemIntrinsic>(call))
          return "inner loop: a call";
        continue;
      }
      if (isa<AllocaInst>(i) || isa<FenceInst>(i) || isa<AtomicCmpXchgInst>(i))
        return "inner loop: an alloca, fence or compare-and-swap";
      Value* pointer = nullptr;
      Type* accessed = nullptr;
      if (auto* load = dyn_cast<LoadInst>(&i)) {
        if (load->isVolatile() || load->isAtomic())
          return "inner loop: a volatile or atomic load";
        pointer = load->getPointerOperand();
        accessed = load->getType();
      } else if (auto* store = dyn_cast<StoreInst>(&i)) {
        if (store->isVolatile() || store->isAtomic())
          return "inner loop: a volatile or atomic store";
        pointer = store->getPointerOperand();
        accessed = store->getValueOperand()->getType();
      } else if (isa<AtomicRMWInst>(i)) {
        memory = true;
      }
      if (!pointer)
        continue;
      memory = true;
      // An access that walks memory element by element in the inner loop: LLVM vectorises
      // that loop as it is, better than the threads side by side.
      if (auto* rec = dyn_cast<SCEVAddRecExpr>(se.getSCEV(pointer)); rec && rec->getLoop() == inner)
        if (auto* stride = dyn_cast<SCEVConstant>(rec->getStepRecurrence(se))) {
          uint64_t size = f_.getDataLayout().getTypeStoreSize(accessed);
          if (stride->getAPInt().abs() == size)
            unit_stride = true;
        }
    }
  }
  if (!memory || unit_stride)
    return "inner loop: no memory access, or one LLVM vectorises in the loop itself";

  // A: what threads run from the head of the thread loop until they enter the inner loop;
  // C: what they run after it.
  auto reach = [&](BasicBlock* from, SmallPtrSetImpl<BasicBlock*>& set, SmallVectorImpl<BasicBlock*>* order) {
    SmallVector<BasicBlock*, 32> work{from};
    set.insert(from);
    while (!work.empty()) {
      BasicBlock* bb = work.pop_back_val();
      if (order)
        order->push_back(bb);
      for (BasicBlock* s : successors(bb))
        if (s != header && s != p.head && outer->contains(s) && set.insert(s).second)
          work.push_back(s);
    }
  };
  reach(header, p.before, nullptr);
  reach(p.inner_exit, p.after, &p.after_order);
  if (!p.before.count(p.preheader) || p.after.count(p.preheader) || !p.after.count(p.latch))
    return "the loop is not entered once per pass through the thread loop";
  for (BasicBlock* bb : p.after)
    for (BasicBlock* s : successors(bb))
      if (s == p.head)
        return "the code after the loop re-enters it";
  for (BasicBlock& bb : f_)
    if (p.body.count(&bb))
      p.body_order.push_back(&bb);
  auto before_only = [&](Instruction* i) {
    return outer->contains(i) && p.before.count(i->getParent()) && !p.after.count(i->getParent()) &&
           !p.body.count(i->getParent());
  };

  // What crosses: values of A-only blocks used in the loop or in C; the loop's values
  // reach C only through the exit's φ-nodes (LCSSA).
  bool ok = true;
  auto use = [&](Value* v, BasicBlock* where, bool at_exit_phi) {
    auto* def = dyn_cast<Instruction>(v);
    if (!def || def == p.iv || !outer->contains(def))
      return;
    if (before_only(def)) {
      (p.body.count(where) ? p.into_body : p.into_after).insert(def);
      return;
    }
    if (p.body.count(def->getParent()) && !p.body.count(where) && !at_exit_phi)
      ok = false;
  };
  auto scan = [&](BasicBlock* bb) {
    for (Instruction& i : *bb) {
      if (auto* phi = dyn_cast<PHINode>(&i)) {
        for (unsigned k = 0; k < phi->getNumIncomingValues(); ++k) {
          BasicBlock* from = phi->getIncomingBlock(k);
          // A value leaving the loop is stored where the thread leaves it (in the loop).
          if (bb == p.inner_exit)
            use(phi->getIncomingValue(k), from, true);
          else if (p.body.count(from) || (p.after.count(from) && p.after.count(bb)))
            use(phi->getIncomingValue(k), bb, false);
        }
        continue;
      }
      for (Value* op : i.operands())
        use(op, bb, false);
    }
  };
  for (BasicBlock* bb : p.body_order)
    scan(bb);
  for (BasicBlock* bb : p.after_order)
    scan(bb);
  if (!ok)
    return "a value of the loop used after it but not through its exit";
  // The thread loop's own exit values must be computable after the interchange.
  for (PHINode& phi : p.exit->phis()) {
    auto* v = dyn_cast<Instruction>(phi.getIncomingValueForBlock(p.latch));
    if (v && v != p.iv && v != p.next && outer->contains(v))
      return "a value of the thread loop used after it";
  }

  // The inner loop's header φ-nodes.
  SmallVector<PHINode*, 8> phis;
  for (PHINode& phi : p.head->phis())
    phis.push_back(&phi);
  SmallPtrSet<Value*, 8> uniform;
  for (PHINode* phi : phis)
    if (outer->isLoopInvariant(phi->getIncomingValueForBlock(p.preheader)))
      uniform.insert(phi);
  for (bool changed = true; changed;) {
    changed = false;
    for (PHINode* phi : phis) {
      if (!uniform.count(phi))
        continue;
      unsigned budget = kChainBudget;
      if (!pure_chain(phi->getIncomingValueForBlock(p.inner_latch), *outer, uniform, budget)) {
        uniform.erase(phi);
        changed = true;
      }
    }
  }
  if (!writes) {
    SmallVector<BasicBlock*, 4> exiting;
    inner->getExitingBlocks(exiting);
    for (BasicBlock* bb : p.body_order) {
      bool every_iteration = dt.dominates(bb, p.inner_latch);
      for (BasicBlock* e : exiting)
        every_iteration &= dt.dominates(bb, e);
      if (!every_iteration)
        continue;
      for (Instruction& i : *bb)
        if (auto* load = dyn_cast<LoadInst>(&i)) {
          unsigned budget = kChainBudget;
          if (pure_chain(load->getPointerOperand(), *outer, uniform, budget))
            p.hoisted.push_back(load);
        }
    }
  }
  for (PHINode* phi : phis) {
    Value* init = phi->getIncomingValueForBlock(p.preheader);
    Value* update = phi->getIncomingValueForBlock(p.inner_latch);
    if (uniform.count(phi)) {
      p.carry[phi] = Carry::Uniform;
      continue;
    }
    Value* step = nullptr;
    SmallVector<Value*, 2> terms = add_chain_terms(phi, update, *outer, *inner);
    if (terms.size() == 1) {
      step = terms[0];
    } else if (!terms.empty()) {
      p.step_terms[phi] = terms; // summed where the rounds start (transform)
    } else if (auto* gep = dyn_cast<GetElementPtrInst>(update);
               gep && gep->getPointerOperand() == phi && gep->getNumIndices() == 1 &&
               outer->isLoopInvariant(gep->getOperand(1))) {
      step = gep->getOperand(1);
    }
    if (step || !terms.empty()) {
      p.carry[phi] = Carry::Affine;
      p.step[phi] = step;
      if (auto* i = dyn_cast<Instruction>(init); i && before_only(i))
        p.into_body.insert(i);
    } else {
      p.carry[phi] = Carry::Array;
    }
  }

  // Addresses that can be computed rounds ahead.
  {
    SmallPtrSet<Value*, 16> known{p.iv};
    SmallPtrSet<Value*, 4> affine;
    for (Instruction* i : p.into_body)
      known.insert(i);
    for (PHINode* phi : phis)
      if (p.carry[phi] == Carry::Affine) {
        known.insert(phi);
        affine.insert(phi);
      }
    // Whether `v`'s chain (pure, see above) reads an Affine φ: otherwise the address is the
    // same in every round.
    std::function<bool(Value*)> moves = [&](Value* v) {
      if (affine.count(v))
        return true;
      auto* i = dyn_cast<Instruction>(v);
      if (!i || !inner->contains(i) || isa<PHINode>(i))
        return false;
      return any_of(i->operands(), [&](Value* op) { return moves(op); });
    };
    for (BasicBlock* bb : p.body_order)
      for (Instruction& i : *bb) {
        Value* pointer = nullptr;
        if (auto* load = dyn_cast<LoadInst>(&i))
          pointer = load->getPointerOperand();
        else if (auto* store = dyn_cast<StoreInst>(&i))
          pointer = store->getPointerOperand();
        unsigned budget = kChainBudget;
        if (!pointer || p.ahead.size() == kMostPrefetched || any_of(p.ahead, [&](auto& a) { return a.first == pointer; }) ||
            !pure_chain(pointer, *outer, known, budget) || !moves(pointer))
          continue;
        p.ahead.push_back({pointer, isa<StoreInst>(i)});
      }
  }

  {
    SmallVector<BasicBlock*, 2> exiting;
    inner->getExitingBlocks(exiting);
    auto* latch_branch = dyn_cast<BranchInst>(p.inner_latch->getTerminator());
    p.latch_exit = exiting.size() == 1 && exiting[0] == p.inner_latch && latch_branch &&
                   latch_branch->isConditional();
    for (PHINode& e : p.inner_exit->phis()) {
      if (!p.latch_exit)
        break;
      Value* leaving = e.getIncomingValueForBlock(p.inner_latch);
      PHINode* carried = nullptr;
      for (PHINode* phi : phis)
        if (p.carry[phi] == Carry::Array && phi->getIncomingValueForBlock(p.inner_latch) == leaving)
          carried = phi;
      if (carried)
        p.exit_carry[&e] = carried;
    }
  }

  // Values of A computed again from the thread index rather than kept per thread.
  SmallPtrSet<Value*, 1> iv{p.iv};
  for (SetVector<Instruction*>* set : {&p.into_body, &p.into_after})
    for (Instruction* i : *set) {
      unsigned budget = kChainBudget;
      if (pure_chain(i, *outer, iv, budget))
        p.recomputed.insert(i);
    }
  const DataLayout& layout = f_.getDataLayout();
  auto bytes = [&](Type* t) { return kRowThreads * layout.getTypeAllocSize(t).getFixedValue(); };
  p.stack_bytes = kRowThreads;
  SmallPtrSet<Instruction*, 16> kept;
  for (SetVector<Instruction*>* set : {&p.into_body, &p.into_after})
    for (Instruction* i : *set)
      if (!p.recomputed.count(i) && kept.insert(i).second)
        p.stack_bytes += bytes(i->getType());
  for (PHINode* phi : phis)
    if (p.carry[phi] == Carry::Array)
      p.stack_bytes += bytes(phi->getType());
  for (PHINode& phi : p.inner_exit->phis())
    if (!p.exit_carry.count(&phi))
      p.stack_bytes += bytes(phi.getType());
  if (stack_used + p.stack_bytes > kStackBudget)
    return "the per-thread arrays would take too much stack";
  // Rounds that stay scalar test the state with a branch, which full rounds take away.
  p.scalar_rounds = stays_scalar(p.body_order);
  if (p.latch_exit && counted_rounds_enabled() && !p.scalar_rounds)
    find_counted(p);
  return nullptr;
}

// Access `pointer`'s address for thread `t`, `rounds` rounds after the first (in_round:
// after the round whose offsets `offset` holds).
Value* Interchanger::prefetch_address(Plan& p, IRBuilder<>& b, Value* pointer, Value* t, uint64_t rounds, bool in_round,
                                      const DenseMap<PHINode*, PHINode*>& offset, SlotFn slot, IndexFn index) {
  ValueToValueMapTy m;
  m[p.iv] = t;
  Value* at = index(b, t);
  for (Instruction* v : p.into_body)
    if (!p.recomputed.count(v))
      m[v] = b.CreateLoad(v->getType(), slot(v, at, b), v->getName() + ".pf");
  for (Instruction* v : p.into_body)
    if (p.recomputed.count(v))
      m[v] = clone_chain(v, *p.outer, m, b);
  for (auto [phi, step] : p.step) {
    Value* start = mapped(m, phi->getIncomingValueForBlock(p.preheader));
    Value* by = b.CreateMul(step, ConstantInt::get(step->getType(), rounds));
    if (in_round)
      by = b.CreateAdd(offset.lookup(phi), by);
    auto* update = cast<Instruction>(phi->getIncomingValueForBlock(p.inner_latch));
    if (auto* gep = dyn_cast<GetElementPtrInst>(update))
      m[phi] = b.CreateGEP(gep->getSourceElementType(), start, by);
    else
      m[phi] = b.CreateAdd(start, by);
  }
  return clone_chain(pointer, *p.outer, m, b);
}

// Prefetching p.ahead's accesses rounds ahead, in two parts (each leaves `b` at the end of
// what it adds). `decide`, before the rounds: for each access, whether it moves by a page
// or more per round while the row's threads touch a run of it shorter than kPrefetchSpan
// (first thread to last; threads not in the loop only make the span wrong, and a prefetch
// of any address is harmless). `lines`, at the start of each round: where so, prefetch the
// run the threads will touch kPrefetchRounds rounds later, line by line.
Interchanger::Prefetches Interchanger::prefetch_decide(Plan& p, IRBuilder<>& b, SlotFn slot, IndexFn index) {
  const DenseMap<PHINode*, PHINode*> offset; // before the rounds: none
  Prefetches decided;
  if (!prefetch_enabled() || p.ahead.empty())
    return decided;
  Type* i64 = b.getInt64Ty();
  Value* last = decided.last = last_thread(p, b, "pf.last");
  SmallVector<Value*, 4>& wanted = decided.wanted;
  for (auto [pointer, writes] : p.ahead) {
    auto address = [&](Value* t, uint64_t rounds) {
      return b.CreatePtrToInt(prefetch_address(p, b, pointer, t, rounds, false, offset, slot, index), i64);
    };
    Value* jump = b.CreateSub(address(p.first, 1), address(p.first, 0));
    Value* span = b.CreateSub(address(last, 0), address(p.first, 0));
    Value* far = b.CreateICmpUGE(b.CreateAdd(jump, b.getInt64(kPrefetchJump - 1)), b.getInt64(2 * kPrefetchJump - 1));
    // Frozen: a thread not in the loop has no values in its slots, and a branch must not
    // depend on an undefined value.
    wanted.push_back(b.CreateFreeze(b.CreateAnd(far, b.CreateICmpULT(span, b.getInt64(kPrefetchSpan))), "pf.wanted"));
  }
  return decided;
}

void Interchanger::prefetch_lines(Plan& p, IRBuilder<>& b, const Prefetches& decided,
                                  const DenseMap<PHINode*, PHINode*>& offset, SlotFn slot, IndexFn index) {
  LLVMContext& ctx = f_.getContext();
  Type* i64 = b.getInt64Ty();
  ArrayRef<Value*> wanted = decided.wanted;
  for (size_t k = 0; k < wanted.size(); ++k) {
    auto [pointer, writes] = p.ahead[k];
    BasicBlock* where = BasicBlock::Create(ctx, "pf.where", &f_);
    BasicBlock* lines = BasicBlock::Create(ctx, "pf.lines", &f_);
    BasicBlock* done = BasicBlock::Create(ctx, "pf.done", &f_);
    b.CreateCondBr(wanted[k], where, done);
    b.SetInsertPoint(where);
    Value* from = prefetch_address(p, b, pointer, p.first, kPrefetchRounds, true, offset, slot, index);
    Value* to = prefetch_address(p, b, pointer, decided.last, kPrefetchRounds, true, offset, slot, index);
    // At most kPrefetchSpan bytes, whatever the addresses do from round to round.
    Value* span = b.CreateBinaryIntrinsic(
        Intrinsic::umin, b.CreateFreeze(b.CreateSub(b.CreatePtrToInt(to, i64), b.CreatePtrToInt(from, i64))),
        b.getInt64(kPrefetchSpan), nullptr, "pf.span");
    b.CreateBr(lines);
    b.SetInsertPoint(lines);
    PHINode* at = b.CreatePHI(i64, 2, "pf.at");
    at->addIncoming(b.getInt64(0), where);
    // Into L2: prefetches into L1 hold the core's few line-fill buffers and stall the loop.
    b.CreateIntrinsic(Intrinsic::prefetch, {b.getPtrTy()},
                      {b.CreateGEP(b.getInt8Ty(), from, at), b.getInt32(writes ? 1 : 0), b.getInt32(2), b.getInt32(1)});
    Value* at_next = b.CreateAdd(at, b.getInt64(64));
    at->addIncoming(at_next, lines);
    b.CreateCondBr(b.CreateICmpULE(at_next, span), lines, done);
    b.SetInsertPoint(done);
  }
}

// Whether the vectoriser will leave a round's thread loop scalar, so that the state test of
// each thread is a branch: the loop (`blocks`) writes memory at an address computed from
// what it loaded (a histogram's `bins[byte]++`, whose lanes may collide), or calls a
// function. A vectorised round tests the state with a mask, nearly free on AVX-512: a
// full-round copy of it made layernorm 4% slower (its four rounds' code twice over).
bool stays_scalar(ArrayRef<BasicBlock*> blocks) {
  SmallPtrSet<const BasicBlock*, 32> in(blocks.begin(), blocks.end());
  SmallPtrSet<const Value*, 32> clean; // values already found not to depend on a load
  // Whether `v`, computed in the loop, depends on a load made in it.
  std::function<bool(const Value*, unsigned)> loaded = [&](const Value* v, unsigned depth) {
    auto* i = dyn_cast<Instruction>(v);
    if (!i || !in.count(i->getParent()) || depth > 12 || isa<PHINode>(i) || clean.count(i))
      return false;
    if (isa<LoadInst>(i))
      return true;
    for (const Value* op : i->operands())
      if (loaded(op, depth + 1))
        return true;
    clean.insert(i);
    return false;
  };
  for (BasicBlock* bb : blocks)
    for (Instruction& i : *bb) {
      if (auto* call = dyn_cast<CallInst>(&i); call && !isa<IntrinsicInst>(call))
        return true;
      const Value* address = isa<StoreInst>(i)         ? cast<StoreInst>(i).getPointerOperand()
                             : isa<AtomicRMWInst>(i)     ? cast<AtomicRMWInst>(i).getPointerOperand()
                             : isa<AtomicCmpXchgInst>(i) ? cast<AtomicCmpXchgInst>(i).getPointerOperand()
                                                         : nullptr;
      if (address && loaded(address, 0))
        return true;
    }
  return false;
}

// A round in which every thread of the row is inside the loop (rounds after the first of a
// loop every thread goes through as often: `for (c = tid; c < cols; c += blockDim)` with
// cols a multiple of blockDim, most rounds of a grid-stride loop) needs no thread's state:
// a copy of the round's thread loop (`blocks`, entered at blocks[0], left from its last
// block to `exit`) in which `where` is kInside, chosen at `entry` by `all_in`. Its threads
// run their iteration unconditionally, so the vectoriser makes it without masks for the
// state. The values of the round that are used after it come from either copy; `counted`
// (the threads the round went through) is `known` in the copy, counted by an earlier round.
// Counted rounds have no state load (`where` null) nor count (`counted` null): the copy's
// test of the latch's result goes. `vm` maps the round's values to the copy's.
void add_full_round(ArrayRef<BasicBlock*> blocks, LoadInst* where, BasicBlock* entry, BasicBlock* exit,
                    Value* all_in, Value* counted, Value* known, ValueToValueMapTy& vm) {
  Function& f = *entry->getParent();
  SmallVector<BasicBlock*, 24> copies;
  SmallPtrSet<BasicBlock*, 32> inside;
  for (BasicBlock* bb : blocks) {
    BasicBlock* copy = CloneBasicBlock(bb, vm, ".full", &f);
    vm[bb] = copy;
    copies.push_back(copy);
    inside.insert(bb);
    inside.insert(copy);
  }
  remapInstructionsInBlocks(copies, vm);
  // The copy's back edge is a loop of its own, with llvm.loop metadata of its own, and not
  // interleaved: without the masks, the vectoriser's cost model interleaved n-body's round
  // four times, which spilled most of its vectors (15% slower than the masked round).
  LLVMContext& ctx = f.getContext();
  BasicBlock* latch = cast<BasicBlock>(vm[blocks.back()]);
  {
    MDNode* loop_id = latch->getTerminator()->getMetadata(LLVMContext::MD_loop);
    SmallVector<Metadata*, 4> ops{nullptr};
    for (unsigned k = 1; loop_id && k < loop_id->getNumOperands(); ++k) {
      auto* option = dyn_cast<MDNode>(loop_id->getOperand(k));
      auto* key = option && option->getNumOperands() ? dyn_cast<MDString>(option->getOperand(0)) : nullptr;
      if (!key || key->getString() != "llvm.loop.interleave.count")
        ops.push_back(loop_id->getOperand(k));
    }
    ops.push_back(MDNode::get(ctx, {MDString::get(ctx, "llvm.loop.interleave.count"),
                                    ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(ctx), 1))}));
    MDNode* fresh = MDNode::getDistinct(ctx, ops);
    fresh->replaceOperandWith(0, fresh);
    latch->getTerminator()->setMetadata(LLVMContext::MD_loop, fresh);
  }
  // Values of the round used after it: from the copy that ran.
  BasicBlock* last = blocks.back();
  auto* last_copy = cast<BasicBlock>(vm[last]);
  IRBuilder<> pb(exit, exit->begin());
  for (BasicBlock* bb : blocks)
    for (Instruction& i : *bb) {
      SmallVector<Use*, 4> outside;
      for (Use& u : i.uses())
        if (!inside.count(cast<Instruction>(u.getUser())->getParent()))
          outside.push_back(&u);
      if (outside.empty())
        continue;
      PHINode* phi = pb.CreatePHI(i.getType(), 2, i.getName() + ".round");
      phi->addIncoming(&i, last);
      phi->addIncoming(vm[&i], last_copy);
      for (Use* u : outside)
        u->set(phi);
    }
  // The copy runs when a round has counted the row's threads: it need not count them.
  if (counted) {
    auto* counted_copy = cast<Instruction>(vm[counted]);
    counted_copy->replaceAllUsesWith(known);
    RecursivelyDeleteTriviallyDeadInstructions(counted_copy); // and the copy's counter
  }
  // Every thread inside: the copy's test of the state goes.
  auto* first_copy = cast<BasicBlock>(vm[blocks.front()]);
  if (where) {
    auto* where_copy = cast<LoadInst>(vm[where]);
    where_copy->replaceAllUsesWith(ConstantInt::get(where->getType(), kInside));
    where_copy->eraseFromParent();
  }
  auto* test = cast<BranchInst>(first_copy->getTerminator());
  BasicBlock* run = test->getSuccessor(0);
  BasicBlock* skip = test->getSuccessor(1);
  skip->removePredecessor(first_copy);
  Value* condition = test->getCondition();
  BranchInst::Create(run, test->getIterator());
  test->eraseFromParent();
  RecursivelyDeleteTriviallyDeadInstructions(condition);
  // The round starts in the copy when every thread stayed inside.
  auto* enter = cast<BranchInst>(entry->getTerminator());
  BranchInst::Create(first_copy, blocks.front(), all_in, enter->getIterator());
  enter->eraseFromParent();
}

// Asks LLVM to leave the loop `back_edge` closes as it is: not vectorised, not unrolled.
void stay_scalar(Instruction* back_edge) {
  LLVMContext& ctx = back_edge->getContext();
  Metadata* no_vectors = MDNode::get(ctx, {MDString::get(ctx, "llvm.loop.vectorize.enable"),
                                           ConstantAsMetadata::get(ConstantInt::getFalse(ctx))});
  Metadata* no_unrolling = MDNode::get(ctx, MDString::get(ctx, "llvm.loop.unroll.disable"));
  MDNode* id = MDNode::getDistinct(ctx, {nullptr, no_vectors, no_unrolling});
  id->replaceOperandWith(0, id);
  back_edge->setMetadata(LLVMContext::MD_loop, id);
}

// What the parts of an interchange share (transform): the per-thread arrays, the thread
// index of the row, and how a new loop over the row's threads is closed.
struct Interchanger::Emit {
  Plan& p;
  AllocaInst* state;
  SmallVector<PHINode*, 8> head_phis;
  SlotFn slot;
  IndexFn index;
  function_ref<std::pair<Instruction*, BranchInst*>(IRBuilder<>&, PHINode*, BasicBlock*, BasicBlock*)> next_thread_of;
  BasicBlock* after; // part 3: C for the threads past the loop
  // Counted rounds of a guarded loop: the smallest and largest start of the row's threads
  // (biased as choose_rounds biases them), which choose_rounds computes after the rounds
  // are made; until then, placeholders it replaces.
  Instruction* lowest_start = nullptr;
  Instruction* highest_start = nullptr;
};

// Part 2 of an interchange: rounds of one iteration of every thread inside the loop, from
// the returned block on to e.after. In state mode each thread's state byte says whether it
// is inside, and is stored back after its iteration; in counted mode (Plan::Counted) the
// state byte only says whether the thread entered, and whether it is still inside is the
// latch's test of the round before, computed again from its start and the round's offset.
Interchanger::Rounds Interchanger::make_rounds(Emit& e, Mode mode) {
  Plan& p = e.p;
  const bool counted = mode == Mode::Counted;
  const Plan::Counted& c = p.counted;
  LLVMContext& ctx = f_.getContext();
  Type* i8 = Type::getInt8Ty(ctx);
  Type* index_type = p.iv->getType();
  auto state_at = [&](Value* at, IRBuilder<>& b) { return array_slot(i8, at, b, e.state); };
  auto block = [&](const char* name) { return BasicBlock::Create(ctx, name, &f_); };
  BasicBlock* rounds = block("ix.rounds");
  BasicBlock* round = block("ix.round");
  BasicBlock* threads = block("ix.threads");
  BasicBlock* resume = block("ix.resume");
  BasicBlock* iterated = block("ix.iterated");
  BasicBlock* next_thread = block("ix.next_thread");
  BasicBlock* round_end = block("ix.round_end");
  BasicBlock* after = e.after;
  ValueToValueMapTy m2;
  SmallVector<BasicBlock*, 16> copies2;
  DenseMap<BasicBlock*, BasicBlock*> original2;
  for (BasicBlock* bb : p.body_order) {
    BasicBlock* copy = CloneBasicBlock(bb, m2, ".ix", &f_);
    m2[bb] = copy;
    original2[copy] = bb;
    copies2.push_back(copy);
  }
  ArrayRef<PHINode*> head_phis = e.head_phis;
  // A load made once per round must be one some thread makes: rounds start only while a
  // thread is inside the loop (counted first when there are such loads; in counted mode,
  // transform enters only when a thread entered).
  BasicBlock* first_round = rounds;
  IRBuilder<> b(rounds);
  // The fallback runs too seldom to be worth its prefetching code, which is much of the
  // compile time of a grid-stride loop's rounds.
  Prefetches prefetch = mode == Mode::Fallback ? Prefetches() : prefetch_decide(p, b, e.slot, e.index);
  if (counted || p.hoisted.empty()) {
    b.CreateBr(round);
  } else {
    BasicBlock* count = block("ix.count");
    BasicBlock* counted_block = block("ix.counted");
    b.CreateBr(count);
    b.SetInsertPoint(count);
    PHINode* t = b.CreatePHI(index_type, 2, "t");
    PHINode* n = b.CreatePHI(b.getInt32Ty(), 2, "entered");
    Value* where = b.CreateLoad(i8, state_at(e.index(b, t), b), "where");
    Value* n_next = b.CreateAdd(n, b.CreateZExt(b.CreateICmpEQ(where, b.getInt8(kInside)), b.getInt32Ty()));
    t->addIncoming(p.first, rounds);
    e.next_thread_of(b, t, count, counted_block);
    n->addIncoming(b.getInt32(0), rounds);
    n->addIncoming(n_next, count);
    b.SetInsertPoint(counted_block);
    b.CreateCondBr(b.CreateICmpNE(n_next, b.getInt32(0)), round, after);
    first_round = counted_block;
  }
  b.SetInsertPoint(round);
  DenseMap<PHINode*, PHINode*> per_round, offset;
  for (PHINode* phi : head_phis) {
    if (p.carry[phi] == Carry::Uniform)
      per_round[phi] = b.CreatePHI(phi->getType(), 2, phi->getName() + ".round");
    else if (p.carry[phi] == Carry::Affine)
      offset[phi] = b.CreatePHI(p.step[phi]->getType(), 2, phi->getName() + ".offset");
  }
  // Counted mode, unless the loop's guard is its own test: whether this is the first round
  // (every thread that entered is inside).
  PHINode* first = counted && !c.guarded ? b.CreatePHI(b.getInt1Ty(), 2, "first") : nullptr;
  // Full rounds (add_full_round), for rounds that stay scalar: whether every thread of the
  // row was inside the loop after the last round (not known before the first), and the
  // row's thread count once a round has counted it (0 before).
  const bool full = !counted && full_rounds_enabled() && p.scalar_rounds;
  PHINode* all_in = full ? b.CreatePHI(b.getInt1Ty(), 2, "all.in") : nullptr;
  PHINode* row_threads = full ? b.CreatePHI(b.getInt32Ty(), 2, "row.threads") : nullptr;
  SmallVector<std::pair<LoadInst*, Value*>, 8> once;
  {
    ValueToValueMapTy mh;
    for (auto [phi, v] : per_round)
      mh[phi] = v;
    for (LoadInst* load : p.hoisted) {
      Value* address = clone_chain(load->getPointerOperand(), *p.outer, mh, b);
      auto* copy = cast<LoadInst>(load->clone());
      copy->setOperand(copy->getPointerOperandIndex(), address);
      b.Insert(copy, load->getName() + ".round");
      once.push_back({load, copy});
    }
  }
  prefetch_lines(p, b, prefetch, offset, e.slot, e.index);
  // Full counted rounds (guarded loops): in round r thread t is inside iff start(t) +
  // offset(r) passes the latch's test (the guard's in round 0); with no value wrapping
  // around (choose_rounds), every thread is iff the largest start is, and some thread
  // will be in round r + 1 iff the smallest start + offset(r) + step passes.
  const bool counted_full = counted && gets_full_rounds(c.guarded, c.bound);
  Value* counted_all_in = nullptr;
  Value* counted_any_next = nullptr;
  if (counted_full) {
    Type* type = c.phi->getType();
    const unsigned bits = type->getIntegerBitWidth();
    Constant* bias = ConstantInt::get(type, CmpInst::isSigned(c.stay) ? APInt::getSignMask(bits) : APInt(bits, 0));
    Instruction* at = &*f_.getEntryBlock().getFirstInsertionPt();
    e.lowest_start = new FreezeInst(PoisonValue::get(type), "ix.lowest.start", at->getIterator());
    e.highest_start = new FreezeInst(PoisonValue::get(type), "ix.highest.start", at->getIterator());
    Value* round_offset = offset[c.phi];
    counted_all_in = b.CreateICmp(c.stay, b.CreateAdd(b.CreateXor(e.highest_start, bias), round_offset), c.bound,
                                  "ix.all.in");
    Value* lowest_next = b.CreateAdd(b.CreateAdd(b.CreateXor(e.lowest_start, bias), round_offset), p.step[c.phi]);
    counted_any_next = b.CreateICmp(c.stay, lowest_next, c.bound, "ix.any.next");
  }
  BasicBlock* round_tail = b.GetInsertBlock();
  b.CreateBr(threads);
  b.SetInsertPoint(threads);
  PHINode* t2 = b.CreatePHI(index_type, 2, "t");
  // State mode: how many threads stay inside after this round; counted mode: whether any.
  PHINode* inside = counted ? b.CreatePHI(b.getInt1Ty(), 2, "any.inside") : b.CreatePHI(b.getInt32Ty(), 2, "inside");
  PHINode* visited = full ? b.CreatePHI(b.getInt32Ty(), 2, "visited") : nullptr;
  Value* at2 = e.index(b, t2);
  m2[p.iv] = t2;
  // A value of A for thread t2: computed again, or loaded from its array.
  auto from_before = [&](Value* v) -> Value* {
    auto* i = dyn_cast<Instruction>(v);
    if (!i || !p.into_body.count(i) || m2.count(i))
      return mapped(m2, v);
    Value* got = p.recomputed.count(i)
                     ? clone_chain(i, *p.outer, m2, b)
                     : static_cast<Value*>(b.CreateLoad(i->getType(), e.slot(i, at2, b), i->getName()));
    m2[i] = got;
    return got;
  };
  LoadInst* where2 = nullptr;
  Value* test = nullptr;
  if (!counted || !c.guarded) {
    where2 = b.CreateLoad(i8, state_at(at2, b), "where");
    test = b.CreateICmpEQ(where2, b.getInt8(kInside));
  }
  if (counted) {
    // The latch's test of the round before: start + offset is the value it tested (the φ's
    // update), or start + offset - step (the φ itself).
    Value* x = b.CreateAdd(from_before(c.phi->getIncomingValueForBlock(p.preheader)), offset[c.phi], "ix.x");
    if (!c.tests_update)
      x = b.CreateSub(x, p.step[c.phi]);
    Value* stays = b.CreateICmp(c.stay, x, c.bound, "ix.stayed");
    // A thread that did not enter has no start in its slot: the test is not looked at.
    test = c.guarded ? stays : b.CreateSelect(test, b.CreateSelect(first, b.getTrue(), stays), b.getFalse(), "ix.in");
  }
  b.CreateCondBr(test, resume, next_thread);
  b.SetInsertPoint(resume);
  for (Instruction* v : p.into_body)
    from_before(v);
  for (PHINode* phi : head_phis) {
    Value* v = nullptr;
    switch (p.carry[phi]) {
    case Carry::Uniform:
      v = per_round[phi];
      break;
    case Carry::Affine: {
      Value* start = mapped(m2, phi->getIncomingValueForBlock(p.preheader));
      auto* update = cast<Instruction>(phi->getIncomingValueForBlock(p.inner_latch));
      if (auto* gep = dyn_cast<GetElementPtrInst>(update))
        v = b.CreateGEP(gep->getSourceElementType(), start, offset[phi], phi->getName());
      else
        v = b.CreateAdd(start, offset[phi], phi->getName());
      break;
    }
    case Carry::Array:
      v = b.CreateLoad(phi->getType(), e.slot(phi, at2, b), phi->getName());
      break;
    }
    cast<PHINode>(m2[phi])->eraseFromParent();
    m2[phi] = v;
  }
  b.CreateBr(cast<BasicBlock>(m2[p.head]));
  remapInstructionsInBlocks(copies2, m2);
  for (auto [load, copy] : once) {
    auto* in_body = cast<Instruction>(m2[load]);
    in_body->replaceAllUsesWith(copy);
    in_body->eraseFromParent();
  }
  // The back edge ends the thread's iteration; leaving the loop ends its part here.
  auto* head2 = cast<BasicBlock>(m2[p.head]);
  auto* latch2 = cast<BasicBlock>(m2[p.inner_latch]);
  SmallVector<BasicBlock*, 4> leaves;
  // Left at the latch only: both ways end the iteration (its updates stored for staying
  // and leaving threads alike, one store each), and whether the thread stays is a value.
  Value* stays = nullptr;
  if (p.latch_exit) {
    auto* br = cast<BranchInst>(latch2->getTerminator());
    IRBuilder<> lb(br);
    stays = br->getSuccessor(0) == head2 ? br->getCondition() : lb.CreateNot(br->getCondition(), "stays");
    lb.CreateBr(iterated);
    br->eraseFromParent();
  }
  for (BasicBlock* copy : p.latch_exit ? ArrayRef<BasicBlock*>() : ArrayRef<BasicBlock*>(copies2)) {
    Instruction* term = copy->getTerminator();
    BasicBlock* leave = nullptr;
    for (unsigned k = 0; k < term->getNumSuccessors(); ++k) {
      BasicBlock* s = term->getSuccessor(k);
      if (s == head2 && copy == latch2) {
        term->setSuccessor(k, iterated);
      } else if (s == p.inner_exit) {
        if (!leave) {
          leave = BasicBlock::Create(ctx, "ix.leave", &f_);
          IRBuilder<> lb(leave);
          for (PHINode& phi : p.inner_exit->phis())
            lb.CreateStore(mapped(m2, phi.getIncomingValueForBlock(original2[copy])), e.slot(&phi, at2, lb));
          lb.CreateBr(next_thread);
          leaves.push_back(leave);
        }
        term->setSuccessor(k, leave);
      }
    }
  }
  b.SetInsertPoint(iterated);
  for (PHINode* phi : head_phis)
    if (p.carry[phi] == Carry::Array)
      b.CreateStore(mapped(m2, phi->getIncomingValueForBlock(p.inner_latch)), e.slot(phi, at2, b));
  if (p.latch_exit)
    for (PHINode& phi : p.inner_exit->phis())
      if (!p.exit_carry.count(&phi))
        b.CreateStore(mapped(m2, phi.getIncomingValueForBlock(p.inner_latch)), e.slot(&phi, at2, b));
  Value* iterated_state =
      counted ? nullptr : stays ? b.CreateSelect(stays, b.getInt8(kInside), b.getInt8(kPast)) : b.getInt8(kInside);
  b.CreateBr(next_thread);
  b.SetInsertPoint(next_thread);
  Value* inside_next = nullptr;
  if (counted) {
    PHINode* still = b.CreatePHI(b.getInt1Ty(), 2, "still");
    still->addIncoming(b.getFalse(), threads);
    still->addIncoming(stays, iterated);
    inside_next = b.CreateOr(inside, still, "any.inside.next");
  } else {
    // Every thread's state byte is stored back, changed or not: stored only where a thread
    // leaves, it becomes a masked vector store, which cannot forward to the next round's
    // load of the same bytes; that load then waits until the store has left the store
    // buffer, behind the round's stores of the program's own results (layernorm's last
    // loop, 10% of its samples on that load). A plain store of the same width forwards.
    PHINode* state_next = b.CreatePHI(i8, unsigned(2 + leaves.size()), "where.next");
    state_next->addIncoming(where2, threads);
    state_next->addIncoming(iterated_state, iterated);
    for (BasicBlock* leave : leaves)
      state_next->addIncoming(b.getInt8(kPast), leave);
    b.CreateStore(state_next, state_at(at2, b));
    Value* still = b.CreateICmpEQ(state_next, b.getInt8(kInside), "still");
    inside_next = b.CreateAdd(inside, b.CreateZExt(still, b.getInt32Ty()), "inside.next");
  }
  Value* visited_next = nullptr;
  if (full) {
    visited_next = b.CreateAdd(visited, b.getInt32(1), "visited.next");
    visited->addIncoming(b.getInt32(0), round_tail);
    visited->addIncoming(visited_next, next_thread);
  }
  t2->addIncoming(p.first, round_tail);
  BranchInst* back = e.next_thread_of(b, t2, threads, round_end).second;
  inside->addIncoming(Constant::getNullValue(inside->getType()), round_tail);
  inside->addIncoming(inside_next, next_thread);
  // Values the same in every thread step once per round.
  b.SetInsertPoint(round_end);
  ValueToValueMapTy mr;
  for (auto [phi, v] : per_round)
    mr[phi] = v;
  for (PHINode* phi : head_phis) {
    if (p.carry[phi] == Carry::Uniform) {
      Value* v = clone_chain(phi->getIncomingValueForBlock(p.inner_latch), *p.outer, mr, b);
      per_round[phi]->addIncoming(phi->getIncomingValueForBlock(p.preheader), first_round);
      per_round[phi]->addIncoming(v, round_end);
    } else if (p.carry[phi] == Carry::Affine) {
      PHINode* o = offset[phi];
      o->addIncoming(Constant::getNullValue(o->getType()), first_round);
      o->addIncoming(b.CreateAdd(o, p.step[phi], phi->getName() + ".offset.next"), round_end);
    }
  }
  if (first) {
    first->addIncoming(b.getTrue(), first_round);
    first->addIncoming(b.getFalse(), round_end);
  }
  if (full) {
    all_in->addIncoming(b.getFalse(), first_round);
    all_in->addIncoming(b.CreateICmpEQ(inside_next, visited_next, "all.in.next"), round_end);
    row_threads->addIncoming(b.getInt32(0), first_round);
    row_threads->addIncoming(visited_next, round_end);
  }
  b.CreateCondBr(counted ? inside_next : b.CreateICmpNE(inside_next, b.getInt32(0)), round, after);
  if (full || counted_full) {
    SmallVector<BasicBlock*, 24> loop_blocks{threads, resume};
    loop_blocks.append(copies2.begin(), copies2.end());
    loop_blocks.push_back(iterated);
    loop_blocks.append(leaves.begin(), leaves.end());
    loop_blocks.push_back(next_thread);
    ValueToValueMapTy vm;
    if (full) {
      add_full_round(loop_blocks, where2, round_tail, round_end, all_in, visited_next, row_threads, vm);
      return {rounds, back};
    }
    // Every thread of the row is inside this round: the copy runs the iteration without
    // the test, and whether any thread stays for the next one is the smallest start's.
    add_full_round(loop_blocks, nullptr, round_tail, round_end, counted_all_in, nullptr, nullptr, vm);
    auto* copy_next = cast<Instruction>(vm[inside_next]);
    auto* copy_inside = cast<PHINode>(vm[inside]);
    for (PHINode& phi : round_end->phis())
      for (unsigned k = 0; k < phi.getNumIncomingValues(); ++k)
        if (phi.getIncomingValue(k) == copy_next)
          phi.setIncomingValue(k, counted_any_next);
    copy_inside->replaceAllUsesWith(PoisonValue::get(copy_inside->getType()));
    copy_inside->eraseFromParent();
    RecursivelyDeleteTriviallyDeadInstructions(copy_next);
  }
  return {rounds, back};
}

void Interchanger::transform(Plan& p) {
  LLVMContext& ctx = f_.getContext();
  Type* i8 = Type::getInt8Ty(ctx);
  Type* i64 = Type::getInt64Ty(ctx);
  stack_used += p.stack_bytes;
  // Steps that are chains of adds: their sum, once, before the thread loop.
  for (auto& [phi, terms] : p.step_terms) {
    IRBuilder<> b(p.entry->getTerminator());
    Value* sum = terms[0];
    for (size_t k = 1; k < terms.size(); ++k)
      sum = b.CreateAdd(sum, terms[k], phi->getName() + ".step");
    p.step[phi] = sum;
  }
  BasicBlock* header = p.outer->getHeader();
  auto* back = cast<BranchInst>(p.latch->getTerminator());
  const bool stay_first = back->getSuccessor(0) == header;
  auto index = [&](IRBuilder<>& b, Value* t) { return b.CreateZExt(b.CreateNUWSub(t, p.first), i64, "row.thread"); };
  AllocaInst* state = array(i8, "ix.state");
  SmallVector<AllocaInst*, 16> arrays{state};
  DenseMap<Value*, AllocaInst*> slots;
  auto slot = [&](Value* v, Value* at, IRBuilder<>& b) {
    AllocaInst*& a = slots[v];
    if (!a)
      arrays.push_back(a = array(v->getType(), v->getName() + ".ix"));
    return array_slot(v->getType(), at, b, a);
  };
  auto state_at = [&](Value* at, IRBuilder<>& b) { return array_slot(i8, at, b, state); };
  // The end of a new loop over the row's threads with index `t`: t + 1, the thread loop's
  // own test of it, and the branch back to `again` or on to `out`.
  // The loops made here go over the same threads as the one they come from.
  const bool one_warp = asks_one_warp_per_iteration(back);
  auto next_thread_of = [&](IRBuilder<>& b, PHINode* t, BasicBlock* again, BasicBlock* out) {
    Instruction* t_next = p.next->clone();
    t_next->replaceUsesOfWith(p.iv, t);
    b.Insert(t_next, "t.next");
    Instruction* c = p.cond->clone();
    c->replaceUsesOfWith(p.next, t_next);
    b.Insert(c);
    BranchInst* br = stay_first ? b.CreateCondBr(c, again, out) : b.CreateCondBr(c, out, again);
    // A thread loop like the one it comes from: vectorised, its position tests settled
    // per row (row_guards.h; add_tile_offsets' `base + k < n` in each round) and unswitched.
    mark_thread_loop(br);
    if (one_warp)
      one_warp_per_iteration(br);
    t->addIncoming(t_next, b.GetInsertBlock());
    return std::pair{t_next, br};
  };

  // The latch's code belongs to C; a new latch steps t, so that a thread entering the
  // inner loop can go straight to the next thread.
  BasicBlock* step = BasicBlock::Create(ctx, "thread.step", &f_);
  IRBuilder<> b(step);
  Instruction* next = p.next->clone();
  b.Insert(next, "t.next");
  Instruction* cond = p.cond->clone();
  cond->replaceUsesOfWith(p.next, next);
  b.Insert(cond);
  auto* step_branch = cast<BranchInst>(back->clone());
  step_branch->setCondition(cond);
  b.Insert(step_branch);
  back->eraseFromParent();
  BranchInst::Create(step, p.latch);
  p.iv->setIncomingBlock(unsigned(p.iv->getBasicBlockIndex(p.latch)), step);
  p.iv->setIncomingValueForBlock(step, next);
  for (PHINode& phi : p.exit->phis()) {
    int k = phi.getBasicBlockIndex(p.latch);
    phi.setIncomingBlock(unsigned(k), step);
    if (phi.getIncomingValue(unsigned(k)) == p.next)
      phi.setIncomingValue(unsigned(k), next);
  }

  // Part 2: rounds of one iteration of every thread inside the loop; in counted mode, with
  // the state-mode rounds kept for rows where counting could go wrong (choose, below).
  BasicBlock* after = BasicBlock::Create(ctx, "ix.after", &f_);
  Emit e{p, state, {}, slot, index, next_thread_of, after};
  for (PHINode& phi : p.head->phis())
    e.head_phis.push_back(&phi);
  const bool counted = p.counted.phi != nullptr;
  Rounds state_rounds = make_rounds(e, counted ? Mode::Fallback : Mode::State);
  BasicBlock* rounds = state_rounds.entry;
  BasicBlock* counted_rounds = counted ? make_rounds(e, Mode::Counted).entry : nullptr;
  // Beside counted rounds the state-mode ones run only in rows whose values come near
  // wrapping around: scalar and without prefetching, they cost the compile little
  // (layernorm's compile took 0.32 s with them vectorised and prefetching, 0.26 s
  // without counted rounds).
  if (counted)
    stay_scalar(state_rounds.back);

  // Part 3: C for the threads past the loop (the state byte of a thread that entered it
  // says kPast after state-mode rounds, kInside after counted ones).
  ValueToValueMapTy m3;
  SmallVector<BasicBlock*, 16> copies3;
  SmallPtrSet<BasicBlock*, 16> copied3;
  for (BasicBlock* bb : p.after_order) {
    BasicBlock* copy = CloneBasicBlock(bb, m3, ".after", &f_);
    m3[bb] = copy;
    copies3.push_back(copy);
    copied3.insert(copy);
  }
  auto block = [&](const char* name) { return BasicBlock::Create(ctx, name, &f_); };
  BasicBlock* threads3 = block("ix.after.threads");
  BasicBlock* resume3 = block("ix.after.resume");
  BasicBlock* step3 = block("ix.after.step");
  m3[step] = step3;
  b.SetInsertPoint(after);
  b.CreateBr(threads3);
  b.SetInsertPoint(threads3);
  PHINode* t3 = b.CreatePHI(p.iv->getType(), 2, "t");
  Value* at3 = index(b, t3);
  Value* where3 = b.CreateLoad(i8, state_at(at3, b), "where");
  b.CreateCondBr(b.CreateICmpNE(where3, b.getInt8(0)), resume3, step3);
  b.SetInsertPoint(resume3);
  m3[p.iv] = t3;
  for (Instruction* v : p.into_after)
    m3[v] = p.recomputed.count(v) ? clone_chain(v, *p.outer, m3, b)
                                  : static_cast<Value*>(b.CreateLoad(v->getType(), slot(v, at3, b), v->getName()));
  for (PHINode& phi : p.inner_exit->phis()) {
    PHINode* carried = p.exit_carry.lookup(&phi);
    Value* v = b.CreateLoad(phi.getType(), slot(carried ? carried : &phi, at3, b), phi.getName());
    cast<PHINode>(m3[&phi])->eraseFromParent();
    m3[&phi] = v;
  }
  b.CreateBr(cast<BasicBlock>(m3[p.inner_exit]));
  remapInstructionsInBlocks(copies3, m3);
  for (BasicBlock* copy : copies3)
    for (PHINode& phi : make_early_inc_range(copy->phis()))
      for (unsigned k = phi.getNumIncomingValues(); k-- > 0;)
        if (!copied3.count(phi.getIncomingBlock(k)))
          phi.removeIncomingValue(k, false);
  b.SetInsertPoint(step3);
  t3->addIncoming(p.first, after);
  auto [next3, back3] = next_thread_of(b, t3, threads3, p.exit);
  for (PHINode& phi : p.exit->phis()) {
    int k = phi.getBasicBlockIndex(step);
    Value* v = phi.getIncomingValue(unsigned(k));
    phi.setIncomingValue(unsigned(k), v == next ? next3 : v == p.iv ? t3 : v);
    phi.setIncomingBlock(unsigned(k), step3);
  }

  // Part 1: the thread loop itself runs A; a thread reaching the inner loop stops there.
  // The state byte and the values a thread takes into the loop are stored where the two
  // paths meet, in `step`, whichever it took: a vectorised thread loop then stores them
  // whole, where stores on the entering path alone were masked (and the state byte, which
  // has no masked store, eight tested byte stores). A thread that did not enter leaves
  // poison in its slots, which nothing reads (its state byte is 0).
  b.SetInsertPoint(&*header->getFirstInsertionPt());
  Value* at1 = index(b, p.iv);
  Instruction* enter = p.preheader->getTerminator();
  BasicBlock* entering = p.preheader;
  b.SetInsertPoint(enter);
  b.CreateBr(step);
  enter->eraseFromParent();
  b.SetInsertPoint(step->getTerminator());
  auto merged = [&](Value* v, Value* otherwise) {
    PHINode* phi = PHINode::Create(v->getType(), 2, v->getName() + ".in", step->begin());
    phi->addIncoming(v, entering);
    phi->addIncoming(otherwise, p.latch);
    return phi;
  };
  SmallPtrSet<Instruction*, 16> stored;
  for (SetVector<Instruction*>* set : {&p.into_body, &p.into_after})
    for (Instruction* v : *set)
      if (!p.recomputed.count(v) && stored.insert(v).second)
        b.CreateStore(merged(v, PoisonValue::get(v->getType())), slot(v, at1, b));
  for (PHINode* phi : e.head_phis)
    if (p.carry[phi] == Carry::Array) {
      Value* v = phi->getIncomingValueForBlock(p.preheader);
      b.CreateStore(merged(v, PoisonValue::get(v->getType())), slot(phi, at1, b));
    }
  b.CreateStore(merged(b.getInt8(kInside), b.getInt8(0)), state_at(at1, b));
  BasicBlock* part2 =
      counted ? choose_rounds(p, header, step, rounds, counted_rounds, after, e.lowest_start, e.highest_start) : rounds;
  for (unsigned k = 0; k < step_branch->getNumSuccessors(); ++k)
    if (step_branch->getSuccessor(k) == p.exit)
      step_branch->setSuccessor(k, part2);
  IRBuilder<> start(p.entry->getTerminator());
  IRBuilder<> end(p.exit, p.exit->getFirstInsertionPt());
  for (AllocaInst* a : arrays) {
    start.CreateLifetimeStart(a);
    end.CreateLifetimeEnd(a);
  }
  removeUnreachableBlocks(f_);
}

// Counted mode: as part 1 runs, the smallest and largest start of the threads the counted
// test looks at (those that entered; every thread when the loop's guard is its test) and
// whether any entered. Counting is exact while no value the test computes wraps around
// (Plan::Counted): the largest start plus the step, and the starts' spread plus the bound
// plus the step, do not overflow. Where they would, the state-mode rounds run. Returns the
// block that chooses, entered after part 1.
BasicBlock* Interchanger::choose_rounds(Plan& p, BasicBlock* header, BasicBlock* step, BasicBlock* state_rounds,
                                        BasicBlock* counted_rounds, BasicBlock* after, Instruction* lowest_start,
                                        Instruction* highest_start) {
  const Plan::Counted& c = p.counted;
  LLVMContext& ctx = f_.getContext();
  auto* type = cast<IntegerType>(c.phi->getType());
  const unsigned bits = type->getBitWidth();
  // Signed tests compare as unsigned ones once the sign bit is flipped on both sides.
  Constant* bias = ConstantInt::get(type, CmpInst::isSigned(c.stay) ? APInt::getSignMask(bits) : APInt(bits, 0));
  Value* start = c.phi->getIncomingValueForBlock(p.preheader);
  // Each thread's part, unconditional in the thread loop (reductions the vectoriser knows):
  // where the guard is the test, at the guard; otherwise in `step`, where the thread loop's
  // paths meet, with what a thread that entered brought.
  Type* i1 = Type::getInt1Ty(ctx);
  Value *enters = nullptr, *low = nullptr, *high = nullptr;
  IRBuilder<> b(header->getTerminator());
  Value *any, *lo, *hi;
  Value* wraps = ConstantInt::getFalse(ctx);
  if (c.lowest) {
    // Known before the thread loop (closed_starts): the first thread's start is the
    // lowest and the last thread's the highest, unless the starts wrap around on the way
    // (biased), which sends the row to the state-mode rounds; otherwise some thread enters
    // iff the lowest start passes the guard's test.
    IRBuilder<> before(p.entry->getTerminator());
    lo = hi = before.CreateXor(c.lowest, bias, "ix.lo");
    if (c.trips) {
      auto* wide = IntegerType::get(ctx, std::max(bits, c.trips->getType()->getIntegerBitWidth()));
      auto checked = [&](Intrinsic::ID op, Value* x, Value* y) {
        Value* r = before.CreateBinaryIntrinsic(op, x, y);
        wraps = before.CreateOr(wraps, before.CreateExtractValue(r, 1));
        return before.CreateExtractValue(r, 0);
      };
      Value* rise = checked(Intrinsic::umul_with_overflow, before.CreateZExt(c.trips, wide),
                            ConstantInt::get(wide, c.rise));
      Value* last = checked(Intrinsic::uadd_with_overflow, before.CreateZExt(lo, wide), rise);
      if (wide->getBitWidth() > bits)
        wraps = before.CreateOr(wraps, before.CreateICmpNE(before.CreateLShr(last, bits), ConstantInt::get(wide, 0)));
      hi = before.CreateTrunc(last, type, "ix.hi");
    }
    any = before.CreateOr(before.CreateICmp(c.stay, c.lowest, c.bound), wraps, "ix.any");
  } else if (c.guarded) {
    enters = b.CreateICmp(c.stay, start, c.bound);
    low = high = b.CreateXor(start, bias, "ix.start");
  } else {
    IRBuilder<> at_entry(p.preheader->getTerminator());
    Value* biased = at_entry.CreateXor(start, bias, "ix.start");
    PHINode* entered = PHINode::Create(i1, 2, "ix.entered", step->begin());
    entered->addIncoming(ConstantInt::getFalse(ctx), p.latch);
    entered->addIncoming(ConstantInt::getTrue(ctx), p.preheader);
    PHINode* brought = PHINode::Create(type, 2, "ix.start", step->begin());
    brought->addIncoming(PoisonValue::get(type), p.latch);
    brought->addIncoming(biased, p.preheader);
    b.SetInsertPoint(step->getTerminator());
    enters = entered;
    low = b.CreateSelect(entered, brought, Constant::getAllOnesValue(type));
    high = b.CreateSelect(entered, brought, Constant::getNullValue(type));
  }
  auto reduce = [&](Constant* init, const Twine& name, function_ref<Value*(Value*)> combine) {
    PHINode* acc = PHINode::Create(init->getType(), 2, name, header->begin());
    Value* next = combine(acc);
    acc->addIncoming(init, p.entry);
    acc->addIncoming(next, step);
    return next;
  };
  if (!c.lowest) {
    any = reduce(ConstantInt::getFalse(ctx), "ix.any", [&](Value* acc) { return b.CreateOr(acc, enters); });
    lo = reduce(Constant::getAllOnesValue(type), "ix.lo",
                [&](Value* acc) { return b.CreateBinaryIntrinsic(Intrinsic::umin, acc, low); });
    hi = reduce(Constant::getNullValue(type), "ix.hi",
                [&](Value* acc) { return b.CreateBinaryIntrinsic(Intrinsic::umax, acc, high); });
  }
  BasicBlock* choose = BasicBlock::Create(ctx, "ix.choose", &f_);
  BasicBlock* check = BasicBlock::Create(ctx, "ix.check", &f_);
  IRBuilder<> cb(choose);
  cb.CreateCondBr(any, check, after);
  cb.SetInsertPoint(check);
  Value* overflow = wraps;
  auto add = [&](Value* x, Value* y) {
    Value* sum = cb.CreateBinaryIntrinsic(Intrinsic::uadd_with_overflow, x, y);
    overflow = cb.CreateOr(overflow, cb.CreateExtractValue(sum, 1));
    return cb.CreateExtractValue(sum, 0);
  };
  if (lowest_start) {
    lowest_start->replaceAllUsesWith(lo);
    lowest_start->eraseFromParent();
    highest_start->replaceAllUsesWith(hi);
    highest_start->eraseFromParent();
  }
  Value* by = p.step[c.phi];
  add(hi, by);
  add(add(cb.CreateSub(hi, lo, "ix.spread"), cb.CreateXor(c.bound, bias)), by);
  cb.CreateCondBr(overflow, state_rounds, counted_rounds);
  return choose;
}


} // namespace

// Thread loops are also marked for vectorisation (as `#pragma clang loop vectorize(enable)`
// would): the vectoriser's legality checks still apply, but it no longer weighs the run-time
// checks it needs (the 32-bit shared-memory offsets not wrapping) against a trip count it
// cannot see, which made it ask for 32 or 40 threads in a row before entering the vector
// loop; a row of a 16x16 block (sgemm's tile loads) then ran the scalar loop.
void mark_thread_loop(Instruction* back_edge) {
  LLVMContext& ctx = back_edge->getContext();
  Metadata* property = MDNode::get(ctx, MDString::get(ctx, kThreadLoopProperty));
  Metadata* enable = MDNode::get(ctx, {MDString::get(ctx, "llvm.loop.vectorize.enable"),
                                       ConstantAsMetadata::get(ConstantInt::getTrue(ctx))});
  MDNode* id = MDNode::getDistinct(ctx, {nullptr, property, enable});
  id->replaceOperandWith(0, id);
  back_edge->setMetadata(LLVMContext::MD_loop, id);
}

constexpr const char* kInterleave = "llvm.loop.interleave.count";
constexpr const char* kWidth = "llvm.loop.vectorize.width";

void one_warp_per_iteration(Instruction* back_edge) {
  LLVMContext& ctx = back_edge->getContext();
  SmallVector<Metadata*, 4> options{nullptr};
  auto named = [](Metadata* option, const char* name) {
    auto* node = dyn_cast<MDNode>(option);
    auto* key = node && node->getNumOperands() ? dyn_cast<MDString>(node->getOperand(0)) : nullptr;
    return key && key->getString() == name;
  };
  if (MDNode* id = back_edge->getMetadata(LLVMContext::MD_loop))
    for (unsigned k = 1; k < id->getNumOperands(); ++k)
      if (!named(id->getOperand(k), kInterleave) && !named(id->getOperand(k), kWidth))
        options.push_back(id->getOperand(k));
  auto option = [&](const char* name, unsigned value) {
    Metadata* v = ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(ctx), value));
    options.push_back(MDNode::get(ctx, {MDString::get(ctx, name), v}));
  };
  option(kInterleave, 1);
  option(kWidth, 32);
  MDNode* id = MDNode::getDistinct(ctx, options);
  id->replaceOperandWith(0, id);
  back_edge->setMetadata(LLVMContext::MD_loop, id);
}

bool asks_one_warp_per_iteration(const Instruction* back_edge) {
  MDNode* id = back_edge->getMetadata(LLVMContext::MD_loop);
  auto value = [&](const char* name) -> uint64_t {
    MDNode* option = id ? findOptionMDForLoopID(id, name) : nullptr;
    auto* v = option && option->getNumOperands() == 2 ? mdconst::dyn_extract<ConstantInt>(option->getOperand(1))
                                                       : nullptr;
    return v ? v->getZExtValue() : 0;
  };
  return value(kInterleave) == 1 && value(kWidth) == 32;
}

bool is_thread_loop(const Loop& loop) {
  MDNode* id = loop.getLoopID();
  return id && findOptionMDForLoopID(id, kThreadLoopProperty);
}

bool interchange_explain() {
  const char* env = std::getenv("MIMIC_INTERCHANGE");
  return env && std::string_view(env) == "explain";
}

bool prefetch_enabled() {
  return config::switched_on("MIMIC_PREFETCH");
}

bool full_rounds_enabled() {
  return config::switched_on("MIMIC_FULL_ROUNDS");
}

bool counted_rounds_enabled() {
  return config::switched_on("MIMIC_COUNTED_ROUNDS");
}

bool interchange_enabled() {
  return config::switched_on("MIMIC_INTERCHANGE");
}

PreservedAnalyses InterchangeThreadLoops::run(Function& f, FunctionAnalysisManager& am) {
  if (f.isDeclaration() || !interchange_enabled())
    return PreservedAnalyses::all();
  {
    LoopInfo& li = am.getResult<LoopAnalysis>(f);
    bool nested = false;
    for (Loop* loop : li.getLoopsInPreorder())
      nested |= is_thread_loop(*loop) && !loop->getSubLoops().empty();
    if (!nested)
      return PreservedAnalyses::all();
  }
  // A copy to go back to should the result not verify: a kernel compiled without the
  // interchange is slower, not wrong.
  ValueToValueMapTy copied;
  Function* backup = CloneFunction(&f, copied);
  Interchanger interchanger(f, am.getResult<TargetLibraryAnalysis>(f));
  bool canonicalised = false;
  unsigned made = 0;
  while (made < kMostInterchanges && interchanger.run_once(canonicalised))
    ++made;
  std::string problem;
  raw_string_ostream os(problem);
  if ((made || canonicalised) && verifyFunction(f, &os)) {
    errs() << "mimic: the thread-loop interchange made invalid code for " << f.getName()
           << "; compiling it without (please report this):\n" << problem;
    for (BasicBlock& bb : f)
      bb.dropAllReferences();
    while (!f.empty())
      f.begin()->eraseFromParent();
    f.splice(f.end(), backup);
    for (unsigned i = 0; i < f.arg_size(); ++i)
      backup->getArg(i)->replaceAllUsesWith(f.getArg(i));
    backup->eraseFromParent();
    return PreservedAnalyses::none();
  }
  backup->eraseFromParent();
  return made || canonicalised ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

} // namespace mimic::codegen
