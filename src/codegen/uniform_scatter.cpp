// Scatters to one address, stored as their last active lane (see uniform_scatter.h).
#include "codegen/uniform_scatter.h"
#include "support/config.h"

#include <cstdlib>
#include <string_view>

#include <llvm/Analysis/AliasAnalysis.h>
#include <llvm/Analysis/MemoryLocation.h>
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/PatternMatch.h>
#include <llvm/IR/CFG.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

namespace mimic::codegen {

using namespace llvm;

bool uniform_scatter_enabled() {
  return config::switched_on("MIMIC_UNIFORM_SCATTER");
}

namespace {

// `data` when it is a gather from one address (a splat of pointers) under `mask`, the
// scatter's own, used by the scatter alone, with nothing that writes memory between the two:
// the value the scatter stores is then that address's, loaded once where the scatter stores.
IntrinsicInst* uniform_gather_for(Value* data, Value* mask, IntrinsicInst* scatter) {
  auto* gather = dyn_cast<IntrinsicInst>(data);
  if (!gather || gather->getIntrinsicID() != Intrinsic::masked_gather || !gather->hasOneUse() ||
      gather->getArgOperand(1) != mask || !getSplatValue(gather->getArgOperand(0)) ||
      gather->getParent() != scatter->getParent())
    return nullptr;
  for (Instruction* i = gather->getNextNode(); i != scatter; i = i->getNextNode())
    if (i->mayWriteToMemory())
      return nullptr;
  return gather;
}

// The metadata a single store (or load) keeps from the vector access it replaces.
constexpr unsigned kKeptMetadata[] = {LLVMContext::MD_noalias, LLVMContext::MD_alias_scope,
                                      LLVMContext::MD_access_group, LLVMContext::MD_tbaa};

// `data` when it is a load of consecutive elements under `mask` in `at`'s block (the one
// that ends in the branch on the mask), after which nothing there writes memory.
IntrinsicInst* masked_load_under(Value* data, Value* mask, BasicBlock* at) {
  auto* load = dyn_cast<IntrinsicInst>(data);
  if (!load || load->getIntrinsicID() != Intrinsic::masked_load || load->getArgOperand(1) != mask ||
      load->getParent() != at)
    return nullptr;
  for (Instruction* i = load->getNextNode(); i; i = i->getNextNode())
    if (i->mayWriteToMemory())
      return nullptr;
  return load;
}

// The element of `data` in the highest lane set in `bits` (a non-zero mask as an integer,
// `mask` as a vector): where a scatter to one address, lanes stored in order, leaves
// memory. Where `data` is a masked load of consecutive elements under the same mask
// (stencil's halo cell: `if (threadIdx.x == 0) tile[ty][0] = in[i - 1]`), that lane's
// element is loaded alone: a vector load under a mask of one lane, then spilled to the
// stack to pick the lane by a variable index, was most of the halo's cost.
Value* last_set_lane(IRBuilder<>& b, Value* bits, Value* mask, unsigned lanes, Value* data) {
  Value* zeros = b.CreateBinaryIntrinsic(Intrinsic::ctlz, bits, b.getTrue());
  Value* last = b.CreateSub(ConstantInt::get(bits->getType(), lanes - 1), zeros, "scatter.last");
  if (IntrinsicInst* load = masked_load_under(data, mask, b.GetInsertBlock()->getSinglePredecessor())) {
    Type* element = data->getType()->getScalarType();
    Value* at = b.CreateGEP(element, load->getArgOperand(0), b.CreateZExt(last, b.getInt64Ty()), "scatter.lane.address");
    LoadInst* one = b.CreateLoad(element, at, "scatter.lane.loaded");
    one->setAlignment(commonAlignment(load->getParamAlign(0).valueOrOne(), element->getScalarSizeInBits() / 8));
    one->copyMetadata(*load, kKeptMetadata);
    if (MDNode* invariant = load->getMetadata(LLVMContext::MD_invariant_load))
      one->setMetadata(LLVMContext::MD_invariant_load, invariant);
    return one;
  }
  return b.CreateExtractElement(data, last);
}

// Where the target has no scatter (AVX2), the vectoriser stores such lanes one by one: a
// chain of blocks, lane k's testing `extractelement mask, k` and, when set, storing
// `extractelement data, k` to the one address. A chain that starts at `head` (lane 0's
// test ends it), storing every lane in order to one pointer with nothing else in its
// blocks: the block it ends in (where lane N-1's store and skip meet), its first store, the
// mask and the data. Where every lane stores the same value, the vectoriser stores it as a
// scalar: one value from outside the chain, or a load of one address in each lane's block
// (layernorm's `if (lane == 0) warp_sums[warp] = v`, a warp at a time, v read from lane 0's
// slot); then `data` is null and `same` is that value or the first such load.
struct StoreChain {
  BasicBlock* end;
  StoreInst* first;
  Value* mask;
  Value* data;
  SmallVector<BasicBlock*, 32> blocks; // the chain's blocks after `head`, `end` not among them
  Value* same = nullptr;
  bool same_loaded = false; // `same` is lane 0's load, made again where the one store goes
};

// Lane k's store block holds a store of the same value as the lanes before it (`chain.same`,
// set by lane 0): a value from outside the chain, or a load of one address that none of the
// chain's stores can change (they store what it holds: to its own address or to one that
// does not overlap it). Returns the store, or null.
StoreInst* same_value_store(BasicBlock& block, StoreChain& chain, AAResults& aa) {
  Instruction& first = block.front();
  if (auto* store = dyn_cast<StoreInst>(&first); store && block.size() == 2) {
    Value* v = store->getValueOperand();
    auto* defined = dyn_cast<Instruction>(v);
    const bool outside =
        !defined || (defined->getParent() != &block && !llvm::is_contained(chain.blocks, defined->getParent()));
    if (!outside || chain.same_loaded || (chain.same && chain.same != v))
      return nullptr;
    chain.same = v;
    return store;
  }
  auto* load = dyn_cast<LoadInst>(&first);
  auto* store = dyn_cast_or_null<StoreInst>(first.getNextNode());
  if (!load || !store || block.size() != 3 || !load->isSimple() || store->getValueOperand() != load)
    return nullptr;
  if (chain.same) {
    auto* earlier = dyn_cast<LoadInst>(chain.same);
    return chain.same_loaded && earlier->getPointerOperand() == load->getPointerOperand() &&
                   earlier->getType() == load->getType()
               ? store
               : nullptr;
  }
  if (load->getPointerOperand() != store->getPointerOperand() &&
      !aa.isNoAlias(MemoryLocation::get(load), MemoryLocation::get(store)))
    return nullptr;
  chain.same = load;
  chain.same_loaded = true;
  return store;
}

std::optional<StoreChain> store_chain(BasicBlock& head, AAResults& aa) {
  using namespace PatternMatch;
  auto* branch = dyn_cast<BranchInst>(head.getTerminator());
  Value* mask;
  if (!branch || !branch->isConditional() || !match(branch->getCondition(), m_ExtractElt(m_Value(mask), m_Zero())))
    return std::nullopt;
  auto* type = dyn_cast<FixedVectorType>(mask->getType());
  if (!type || type->getNumElements() < 2 || type->getNumElements() > 64)
    return std::nullopt;
  const unsigned lanes = type->getNumElements();
  StoreChain chain{nullptr, nullptr, mask, nullptr, {}};
  Value* pointer = nullptr;
  BasicBlock* at = &head;
  for (unsigned k = 0; k < lanes; ++k) {
    auto* test = cast<BranchInst>(at->getTerminator());
    uint64_t lane;
    Value* of;
    if (!test->isConditional() || !match(test->getCondition(), m_ExtractElt(m_Value(of), m_ConstantInt(lane))) ||
        of != mask || lane != k)
      return std::nullopt;
    BasicBlock* store_block = test->getSuccessor(0);
    BasicBlock* skip = test->getSuccessor(1);
    // The store's block: the data's lane k, the store, the branch to `skip`.
    if (store_block->size() > 3 || store_block->getSinglePredecessor() != at ||
        store_block->getSingleSuccessor() != skip)
      return std::nullopt;
    auto* element = dyn_cast<ExtractElementInst>(&store_block->front());
    StoreInst* store;
    if (element && !chain.same) {
      store = dyn_cast<StoreInst>(element->getNextNode());
      Value* data;
      uint64_t data_lane;
      if (!store || store_block->size() != 3 || store->getValueOperand() != element ||
          !match(element, m_ExtractElt(m_Value(data), m_ConstantInt(data_lane))) || data_lane != k ||
          (chain.data && chain.data != data))
        return std::nullopt;
      chain.data = data;
    } else if (chain.data || !(store = same_value_store(*store_block, chain, aa))) {
      return std::nullopt;
    }
    if (!store->isSimple() || (pointer && pointer != store->getPointerOperand()))
      return std::nullopt;
    pointer = store->getPointerOperand();
    if (!chain.first)
      chain.first = store;
    // `skip` joins the two and, but for the last lane, holds the next lane's test alone.
    if (!skip->phis().empty() || pred_size(skip) != 2)
      return std::nullopt;
    chain.blocks.push_back(store_block);
    if (k + 1 == lanes) {
      chain.end = skip;
      return chain;
    }
    if (skip->size() != 2)
      return std::nullopt;
    chain.blocks.push_back(skip);
    at = skip;
  }
  return std::nullopt;
}

// The chain's stores made as one: the highest set lane's element, if any lane is set.
void join_chain(BasicBlock& head, StoreChain& chain) {
  auto* type = cast<FixedVectorType>(chain.mask->getType());
  const unsigned lanes = type->getNumElements();
  LLVMContext& ctx = head.getContext();
  BasicBlock* store_block = BasicBlock::Create(ctx, "scatter.one", head.getParent(), chain.end);
  Instruction* old = head.getTerminator();
  IRBuilder<> b(old);
  Type* bits_type = b.getIntNTy(lanes);
  Value* bits = b.CreateBitCast(chain.mask, bits_type, "scatter.lanes");
  b.CreateCondBr(b.CreateICmpNE(bits, ConstantInt::get(bits_type, 0), "scatter.any"), store_block, chain.end);
  old->eraseFromParent();
  b.SetInsertPoint(store_block);
  Value* value = chain.same_loaded ? b.Insert(cast<LoadInst>(chain.same)->clone(), "scatter.same.loaded")
                 : chain.same     ? chain.same
                                  : last_set_lane(b, bits, chain.mask, lanes, chain.data);
  StoreInst* store = b.CreateStore(value, chain.first->getPointerOperand());
  store->setAlignment(chain.first->getAlign());
  store->copyMetadata(*chain.first, kKeptMetadata);
  b.CreateBr(chain.end);
  DeleteDeadBlocks(chain.blocks);
}

} // namespace

PreservedAnalyses UniformScatters::run(Function& f, FunctionAnalysisManager& am) {
  if (!uniform_scatter_enabled())
    return PreservedAnalyses::all();
  AAResults& aa = am.getResult<AAManager>(f);
  bool joined = false;
  SmallVector<BasicBlock*, 16> heads;
  for (BasicBlock& bb : f)
    heads.push_back(&bb);
  SmallPtrSet<BasicBlock*, 32> gone;
  for (BasicBlock* head : heads) {
    if (gone.count(head))
      continue;
    if (std::optional<StoreChain> chain = store_chain(*head, aa)) {
      gone.insert(chain->blocks.begin(), chain->blocks.end());
      join_chain(*head, *chain);
      joined = true;
    }
  }
  SmallVector<IntrinsicInst*, 8> scatters;
  for (BasicBlock& bb : f)
    for (Instruction& i : bb)
      if (auto* call = dyn_cast<IntrinsicInst>(&i); call && call->getIntrinsicID() == Intrinsic::masked_scatter)
        if (getSplatValue(call->getArgOperand(1)) && isa<FixedVectorType>(call->getArgOperand(0)->getType()))
          scatters.push_back(call);
  for (IntrinsicInst* scatter : scatters) {
    Value* data = scatter->getArgOperand(0);
    Value* address = getSplatValue(scatter->getArgOperand(1));
    Value* mask = scatter->getArgOperand(2);
    IntrinsicInst* gather = uniform_gather_for(data, mask, scatter);
    const unsigned lanes = cast<FixedVectorType>(data->getType())->getNumElements();
    IRBuilder<> b(scatter);
    Type* bits_type = b.getIntNTy(lanes);
    Value* bits = b.CreateBitCast(mask, bits_type, "scatter.lanes");
    Value* any = b.CreateICmpNE(bits, ConstantInt::get(bits_type, 0), "scatter.any");
    Instruction* then = SplitBlockAndInsertIfThen(any, scatter->getIterator(), false);
    b.SetInsertPoint(then);
    Value* element = nullptr;
    if (gather) { // every active lane loaded the same address: one load of it
      LoadInst* load = b.CreateLoad(data->getType()->getScalarType(), getSplatValue(gather->getArgOperand(0)),
                                    "scatter.loaded");
      load->setAlignment(gather->getParamAlign(0).valueOrOne());
      load->copyMetadata(*gather, kKeptMetadata);
      element = load;
    } else {
      element = last_set_lane(b, bits, mask, lanes, data);
    }
    StoreInst* store = b.CreateStore(element, address);
    store->setAlignment(scatter->getParamAlign(1).valueOrOne());
    store->copyMetadata(*scatter, kKeptMetadata);
    scatter->eraseFromParent();
    if (gather)
      gather->eraseFromParent();
  }
  return scatters.empty() && !joined ? PreservedAnalyses::all() : PreservedAnalyses::none();
}

} // namespace mimic::codegen
