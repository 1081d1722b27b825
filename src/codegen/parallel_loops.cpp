#include "codegen/parallel_loops.h"
#include "support/config.h"

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen/block_registers.h"
#include "codegen/block_state.h"
#include "codegen/thread_interchange.h"

namespace mimic::codegen {

using namespace llvm;

MDNode* plain_access_group(Module& m) {
  NamedMDNode* named = m.getOrInsertNamedMetadata("mimic.plain.group");
  if (named->getNumOperands() == 0)
    named->addOperand(MDNode::getDistinct(m.getContext(), {}));
  return named->getOperand(0);
}

bool parallel_loops_enabled() {
  return config::switched_on("MIMIC_PARALLEL_LOOPS");
}

bool parallel_loops_explain() {
  const char* env = std::getenv("MIMIC_PARALLEL_LOOPS");
  return env && std::string_view(env) == "explain";
}

namespace {

struct Verdict {
  std::vector<Instruction*> accesses;
  Instruction* culprit = nullptr;
  const char* why = nullptr;
};

// The executor indexes its arrays by the 32-bit thread index, extended: SCEV cannot tell
// that the extension of {begin,+,1} does not wrap, but a block has under 2^31 threads.
struct WidenThreadIndex : SCEVRewriteVisitor<WidenThreadIndex> {
  const Loop* loop;
  WidenThreadIndex(ScalarEvolution& se, const Loop* l) : SCEVRewriteVisitor(se), loop(l) {}
  const SCEV* widen(const SCEV* op, Type* to, bool sign) {
    auto* rec = dyn_cast<SCEVAddRecExpr>(op);
    if (!rec || rec->getLoop() != loop || !rec->isAffine())
      return nullptr;
    auto ext = [&](const SCEV* v) { return sign ? SE.getSignExtendExpr(v, to) : SE.getZeroExtendExpr(v, to); };
    return SE.getAddRecExpr(ext(rec->getStart()), SE.getSignExtendExpr(rec->getStepRecurrence(SE), to), loop,
                            SCEV::FlagAnyWrap);
  }
  const SCEV* visitZeroExtendExpr(const SCEVZeroExtendExpr* e) {
    if (const SCEV* w = widen(e->getOperand(), e->getType(), false))
      return w;
    return SCEVRewriteVisitor::visitZeroExtendExpr(e);
  }
  const SCEV* visitSignExtendExpr(const SCEVSignExtendExpr* e) {
    if (const SCEV* w = widen(e->getOperand(), e->getType(), true))
      return w;
    return SCEVRewriteVisitor::visitSignExtendExpr(e);
  }
};

// An executor's access whose address moves by at least its size from one thread to the next.
const SCEV* per_thread_pointer(Value* ptr, uint64_t size, Loop& l, ScalarEvolution& se) {
  WidenThreadIndex widen(se, &l);
  auto* rec = dyn_cast<SCEVAddRecExpr>(widen.visit(se.getSCEV(ptr)));
  if (!rec || rec->getLoop() != &l || !rec->isAffine())
    return nullptr;
  auto* step = dyn_cast<SCEVConstant>(rec->getStepRecurrence(se));
  if (!step || step->getAPInt().abs().ult(size))
    return nullptr;
  return rec;
}

const SCEV* per_thread_address(Instruction& i, Loop& l, ScalarEvolution& se) {
  uint64_t size = i.getModule()->getDataLayout().getTypeStoreSize(getLoadStoreType(&i));
  return per_thread_pointer(getLoadStorePointerOperand(&i), size, l, se);
}

// A load of one of the block state's fields past the special registers (ntid, the
// executor's array pointers, sizes): kernel code stores only to the special registers (row
// setup), so such a load is invariant even where the optimiser merged it with another and
// dropped its !invariant.load (scan's shared-memory base in one of its thread loops). A
// function with thread loops is a kernel: its second argument is the block state.
bool reads_block_field(LoadInst& load) {
  Function* f = load.getFunction();
  if (f->arg_size() < 2)
    return false;
  APInt offset(64, 0);
  const Value* root = load.getPointerOperand()->stripAndAccumulateConstantOffsets(f->getDataLayout(), offset, true);
  return root == f->getArg(1) && offset.uge(offsetof(BlockState, block_dim)) && offset.ult(sizeof(BlockState));
}

// Whether `i` is in access group `group` (alone or in a list).
bool in_group(const Instruction* i, const MDNode* group) {
  const MDNode* groups = group ? i->getMetadata(LLVMContext::MD_access_group) : nullptr;
  if (!groups)
    return false;
  if (groups == group)
    return true;
  return llvm::is_contained(groups->operands(), group);
}

Verdict examine(Loop& l, ScalarEvolution& se, const MDNode* plain) {
  Verdict v;
  struct Own {
    Instruction* i;
    const SCEV* address;
    bool store;
  };
  std::vector<Own> own; // the executor's per-thread accesses
  auto fail = [&](Instruction* i, const char* why) {
    v.culprit = i;
    v.why = why;
    return v;
  };
  for (BasicBlock* bb : l.blocks())
    for (Instruction& i : *bb) {
      if (!i.mayReadOrWriteMemory())
        continue;
      if (auto* ii = dyn_cast<IntrinsicInst>(&i); ii && ii->isLifetimeStartOrEnd()) {
        v.accesses.push_back(&i);
        continue;
      }
      auto* load = dyn_cast<LoadInst>(&i);
      auto* store = dyn_cast<StoreInst>(&i);
      if (!load && !store)
        return fail(&i, "a call, fence or atomic");
      if (load ? !load->isSimple() : !store->isSimple())
        return fail(&i, "a volatile or ordered access");
      if (i.getMetadata(kPlainAccessMetadata) || in_group(&i, plain) ||
          (load && (i.getMetadata(LLVMContext::MD_invariant_load) || reads_block_field(*load)))) {
        v.accesses.push_back(&i);
        continue;
      }
      // A register restored from its spill slot on one path and loaded from shared memory
      // on the other (`r = 0; bar.sync; @p ld.shared r`), which SimplifyCFG made one load
      // through a select, dropping both loads' tags: each arm is one of the two.
      if (auto* pick = load ? dyn_cast<SelectInst>(load->getPointerOperand()) : nullptr) {
        const uint64_t size = i.getModule()->getDataLayout().getTypeStoreSize(load->getType());
        bool known = true;
        for (Value* arm : {pick->getTrueValue(), pick->getFalseValue()}) {
          if (in_shared_window(arm))
            continue;
          if (const SCEV* a = per_thread_pointer(arm, size, l, se))
            own.push_back({&i, a, false});
          else
            known = false;
        }
        if (known) {
          v.accesses.push_back(&i);
          continue;
        }
      }
      // The same load where unswitching a thread loop on the select's row-invariant
      // condition (row_unswitch.h) left only the shared-memory arm. An untagged load of
      // shared memory is otherwise the read half of a shared atomic made plain, whose
      // untagged store keeps the loop as it is.
      if (load && in_shared_window(load->getPointerOperand())) {
        v.accesses.push_back(&i);
        continue;
      }
      const SCEV* address = per_thread_address(i, l, se);
      if (!address)
        return fail(&i, "an access that is neither the program's plain one nor a per-thread element");
      own.push_back({&i, address, store != nullptr});
      v.accesses.push_back(&i);
    }
  // Thread t's element next to thread t+1's in the same array: a dependence after all.
  for (const Own& s : own) {
    if (!s.store)
      continue;
    for (const Own& o : own) {
      const SCEV* d = se.getMinusSCEV(o.address, s.address);
      if (auto* c = dyn_cast<SCEVConstant>(d); c && !c->getAPInt().isZero())
        return fail(o.i, "an access a constant distance from a per-thread store");
    }
  }
  return v;
}

// The low bits of a value that steps with the thread (`x & (2^k - 1)`: bitonic sort's
// 2*t - (t & (stride - 1)), a lane's t & 31) are, to SCEV, the extension of a k-bit
// recurrence; the vectoriser then makes the addresses built on them consecutive under the
// run-time condition that the k-bit recurrence does not wrap, which fails as soon as the
// loop runs more than 2^k threads (a 1024-thread row: every bitonic step took the scalar
// loop, with a data-dependent branch per thread). Spelled x - ((x >> k) << k), the value
// is opaque to SCEV and the accesses are gathers and scatters that need no such
// condition; InstCombine folds it back afterwards. Only masks that feed an address and
// keep fewer bits than a block has threads (a wider one may well hold for every thread).
constexpr uint64_t kMaxOpaqueMask = 1023;
// Whether `v` goes, through integer arithmetic and address computation, into the address
// of a load or store.
bool feeds_address(Value* v, unsigned depth = 0) {
  if (depth > 8)
    return false;
  for (User* u : v->users()) {
    auto* i = dyn_cast<Instruction>(u);
    if (!i)
      continue;
    if ((isa<LoadInst>(i) || isa<StoreInst>(i)) && getLoadStorePointerOperand(i) == v)
      return true;
    switch (i->getOpcode()) {
    case Instruction::Add:
    case Instruction::Sub:
    case Instruction::Mul:
    case Instruction::Shl:
    case Instruction::Or:
    case Instruction::Xor:
    case Instruction::ZExt:
    case Instruction::SExt:
    case Instruction::Trunc:
    case Instruction::GetElementPtr:
    case Instruction::IntToPtr:
      if (feeds_address(i, depth + 1))
        return true;
      break;
    default:
      break;
    }
  }
  return false;
}

unsigned hide_thread_masks(Loop& l, ScalarEvolution& se) {
  std::vector<BinaryOperator*> masks;
  for (BasicBlock* bb : l.blocks())
    for (Instruction& i : *bb) {
      auto* op = dyn_cast<BinaryOperator>(&i);
      auto* c = op && op->getOpcode() == Instruction::And ? dyn_cast<ConstantInt>(op->getOperand(1)) : nullptr;
      if (!c || c->isZero() || c->getValue().ugt(kMaxOpaqueMask) || !(c->getValue() + 1).isPowerOf2())
        continue;
      auto* rec = dyn_cast<SCEVAddRecExpr>(se.getSCEV(op->getOperand(0)));
      if (rec && rec->getLoop() == &l && rec->isAffine() && feeds_address(op))
        masks.push_back(op);
    }
  for (BinaryOperator* op : masks) {
    IRBuilder<> b(op);
    Value* x = op->getOperand(0);
    const unsigned k = cast<ConstantInt>(op->getOperand(1))->getValue().countr_one();
    Value* high = b.CreateShl(b.CreateLShr(x, k), k);
    Value* low = b.CreateSub(x, high, op->getName() + ".opaque");
    se.forgetValue(op);
    op->replaceAllUsesWith(low);
    op->eraseFromParent();
  }
  if (!masks.empty())
    se.forgetLoop(&l);
  return unsigned(masks.size());
}

// `id` with `llvm.loop.parallel_accesses !{group}` added.
MDNode* with_parallel_accesses(LLVMContext& ctx, MDNode* id, MDNode* group) {
  std::vector<Metadata*> ops{nullptr};
  if (id)
    for (unsigned k = 1; k < id->getNumOperands(); ++k)
      ops.push_back(id->getOperand(k));
  ops.push_back(MDNode::get(ctx, {MDString::get(ctx, "llvm.loop.parallel_accesses"), group}));
  MDNode* out = MDNode::getDistinct(ctx, ops);
  out->replaceOperandWith(0, out);
  return out;
}

} // namespace

PreservedAnalyses ParallelThreadLoops::run(Function& f, FunctionAnalysisManager& am) {
  if (f.isDeclaration() || !parallel_loops_enabled())
    return PreservedAnalyses::all();
  auto& li = am.getResult<LoopAnalysis>(f);
  auto& se = am.getResult<ScalarEvolutionAnalysis>(f);
  const bool explain = parallel_loops_explain();
  LLVMContext& ctx = f.getContext();
  MDNode* group = nullptr;
  bool changed = false;
  // The plain accesses' group (plain_access_group), as the tagged ones have it.
  const MDNode* plain = nullptr;
  for (Instruction& i : instructions(f))
    if (i.getMetadata(kPlainAccessMetadata))
      if (MDNode* g = i.getMetadata(LLVMContext::MD_access_group); g && g->getNumOperands() == 0) {
        plain = g;
        break;
      }
  for (Loop* l : li.getLoopsInPreorder()) {
    if (!l->isInnermost() || !is_thread_loop(*l))
      continue;
    const unsigned hidden = hide_thread_masks(*l, se);
    changed |= hidden != 0;
    Verdict v = examine(*l, se, plain);
    if (explain) {
      errs() << "mimic: parallel loops: " << f.getName() << " " << l->getHeader()->getName() << ": ";
      if (hidden)
        errs() << hidden << " thread-index mask(s) hidden from SCEV, ";
      if (v.culprit) {
        errs() << "not parallel, " << v.why << ":";
        v.culprit->print(errs());
        errs() << "\n";
      } else {
        errs() << "parallel, " << v.accesses.size() << " accesses\n";
      }
    }
    if (v.culprit)
      continue;
    if (!group)
      group = MDNode::getDistinct(ctx, {});
    for (Instruction* i : v.accesses) {
      // A group is an empty distinct node; an instruction in several has a list of them.
      MDNode* old = i->getMetadata(LLVMContext::MD_access_group);
      MDNode* now = !old                        ? group
                    : old->getNumOperands() == 0 ? MDNode::get(ctx, {old, group})
                                                 : MDNode::concatenate(old, MDNode::get(ctx, {group}));
      i->setMetadata(LLVMContext::MD_access_group, now);
    }
    l->setLoopID(with_parallel_accesses(ctx, l->getLoopID(), group));
  }
  // The CFG stays as it was; SCEV forgot what changed.
  if (!changed)
    return PreservedAnalyses::all();
  PreservedAnalyses kept;
  kept.preserveSet<CFGAnalyses>();
  kept.preserve<LoopAnalysis>();
  kept.preserve<ScalarEvolutionAnalysis>();
  return kept;
}

} // namespace mimic::codegen
