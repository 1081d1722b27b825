// Conditional stores to shared memory of values the thread loaded, made selects (see
// shared_store_select.h).
#include "codegen/shared_store_select.h"

#include <llvm/Analysis/AliasAnalysis.h>
#include <llvm/Analysis/MemoryLocation.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include "codegen/block_registers.h"
#include "codegen/parallel_loops.h"
#include "support/config.h"

namespace mimic::codegen {

using namespace llvm;

bool shared_store_select_enabled() {
  return config::switched_on("MIMIC_SHARED_STORE_SELECT");
}

namespace {

// Blocks of more instructions than this are not run unconditionally.
constexpr unsigned kMaxInstructions = 16;

struct Candidate {
  BasicBlock* block = nullptr; // the conditional block
  BranchInst* branch = nullptr; // its predecessor's branch to it or past it
  SmallVector<std::pair<StoreInst*, LoadInst*>, 4> stores; // each store and its address's load
};

// The load in `pred` of what `store` overwrites, with nothing after it in `pred` that may
// write there; null if there is none.
LoadInst* loaded_before(StoreInst& store, BasicBlock& pred, AAResults& aa) {
  const MemoryLocation at = MemoryLocation::get(&store);
  for (Instruction& i : reverse(pred)) {
    if (auto* load = dyn_cast<LoadInst>(&i); load && load->isSimple() &&
        load->getType() == store.getValueOperand()->getType() &&
        (load->getPointerOperand() == store.getPointerOperand() || aa.isMustAlias(MemoryLocation::get(load), at)))
      return load;
    if (i.mayWriteToMemory() && isModSet(aa.getModRefInfo(&i, at)))
      return nullptr;
  }
  return nullptr;
}

std::optional<Candidate> candidate(BasicBlock& bb, AAResults& aa) {
  BasicBlock* pred = bb.getSinglePredecessor();
  auto* branch = pred ? dyn_cast<BranchInst>(pred->getTerminator()) : nullptr;
  auto* exit = dyn_cast<BranchInst>(bb.getTerminator());
  if (!branch || !branch->isConditional() || !exit || exit->isConditional())
    return std::nullopt;
  BasicBlock* join = exit->getSuccessor(0);
  if (join == &bb || pred == &bb || (branch->getSuccessor(0) != join && branch->getSuccessor(1) != join))
    return std::nullopt;
  Candidate c{&bb, branch, {}};
  SmallPtrSet<Value*, 8> loaded; // what the block's stores may store: values loaded from their addresses
  unsigned count = 0;
  for (Instruction& i : bb) {
    if (&i == exit)
      continue;
    if (++count > kMaxInstructions)
      return std::nullopt;
    if (auto* store = dyn_cast<StoreInst>(&i)) {
      if (!store->isSimple() || !store->getMetadata(kPlainAccessMetadata) || !in_shared_window(store->getPointerOperand()))
        return std::nullopt;
      const MemoryLocation at = MemoryLocation::get(store);
      for (auto& [earlier, unused] : c.stores)
        if (!aa.isNoAlias(MemoryLocation::get(earlier), at))
          return std::nullopt;
      LoadInst* load = loaded_before(*store, *pred, aa);
      if (!load)
        return std::nullopt;
      c.stores.push_back({store, load});
      loaded.insert(load);
      continue;
    }
    if (i.mayReadOrWriteMemory() || !isSafeToSpeculativelyExecute(&i))
      return std::nullopt;
  }
  // Only values moved between the loaded places (a compare-exchange): where threads would
  // store their own values to one place (`if (v > s_max) s_max = v`, racing but common), a
  // thread that does not would store the old value back over another's, which a GPU never
  // does; in a swap such threads race on data they both move, whatever the backend.
  for (auto& [store, unused] : c.stores)
    if (!loaded.contains(store->getValueOperand()))
      return std::nullopt;
  if (c.stores.empty())
    return std::nullopt;
  return c;
}

void make_unconditional(Candidate& c) {
  BasicBlock* pred = c.branch->getParent();
  BasicBlock* join = c.block->getTerminator()->getSuccessor(0);
  const bool taken_when_true = c.branch->getSuccessor(0) == c.block;
  Value* cond = c.branch->getCondition();
  IRBuilder<> b(c.branch);
  auto pick = [&](Value* in_block, Value* past, const Twine& name) {
    return taken_when_true ? b.CreateSelect(cond, in_block, past, name) : b.CreateSelect(cond, past, in_block, name);
  };
  size_t next = 0;
  for (Instruction& i : make_early_inc_range(*c.block)) {
    if (i.isTerminator())
      break;
    i.moveBefore(c.branch->getIterator());
    if (next < c.stores.size() && &i == c.stores[next].first) {
      auto [store, load] = c.stores[next++];
      b.SetInsertPoint(store);
      store->setOperand(0, pick(store->getValueOperand(), load, "stored.or.kept"));
      b.SetInsertPoint(c.branch);
    }
  }
  for (PHINode& phi : join->phis()) {
    Value* in_block = phi.getIncomingValueForBlock(c.block);
    Value* past = phi.getIncomingValueForBlock(pred);
    if (in_block != past)
      phi.setIncomingValueForBlock(pred, pick(in_block, past, phi.getName() + ".picked"));
  }
  BranchInst::Create(join, c.branch->getIterator());
  c.branch->eraseFromParent();
  DeleteDeadBlock(c.block);
}

} // namespace

PreservedAnalyses SelectSharedStores::run(Function& f, FunctionAnalysisManager& am) {
  if (!shared_store_select_enabled() || f.arg_size() < 2)
    return PreservedAnalyses::all();
  AAResults& aa = am.getResult<AAManager>(f);
  SmallVector<Candidate, 16> found;
  for (BasicBlock& bb : f)
    if (auto c = candidate(bb, aa))
      found.push_back(std::move(*c));
  // Independent of one another: a candidate's block ends in a plain branch and its
  // predecessor in a conditional one, so neither is another candidate's, and the blocks
  // they join only change their φ-nodes' edges from the two.
  for (Candidate& c : found)
    make_unconditional(c);
  return found.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
}

} // namespace mimic::codegen
