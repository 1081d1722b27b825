// Vectorisable prefetches (see prefetch_calls.h).
#include "codegen/prefetch_calls.h"
#include "codegen/vector_lanes.h"

#include <cstdlib>
#include <string>

#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/VectorUtils.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

namespace mimic::codegen {

using namespace llvm;

namespace {

constexpr const char* kNames[2] = {"mimic.prefetch.l1", "mimic.prefetch.l2"};
constexpr unsigned kLanes[] = {2, 4, 8, 16, 32, 64};
constexpr unsigned kLineBytes = 64;

// What a function of this family is: its locality and whether it is masked; lanes 0 for the
// scalar one. False for any other function.
bool parse(const Function* f, unsigned& locality, unsigned& lanes, bool& masked) {
  if (!f)
    return false;
  StringRef name = f->getName();
  for (unsigned l2 = 0; l2 < 2; ++l2) {
    if (!name.consume_front(kNames[l2]))
      continue;
    locality = l2 ? 2 : 3;
    lanes = 0;
    masked = false;
    if (name.empty())
      return true;
    // .vN (unmasked) or .mN (masked)
    if (!name.consume_front(".v") && !(masked = name.consume_front(".m")))
      return false;
    return !name.getAsInteger(10, lanes) && lanes > 1;
  }
  return false;
}

void emit_prefetch(IRBuilder<>& b, Value* address, unsigned locality) {
  Value* p = b.CreateIntToPtr(address, b.getPtrTy());
  b.CreateIntrinsic(Intrinsic::prefetch, {b.getPtrTy()}, {p, b.getInt32(0), b.getInt32(locality), b.getInt32(1)});
}

// The byte spacing of a vector of addresses, where it is known.
std::optional<int64_t> byte_stride(Value* addresses, const DataLayout& dl) {
  if (auto* cast = dyn_cast<PtrToIntInst>(addresses)) {
    Value* p = cast->getOperand(0);
    if (getSplatValue(p))
      return 0;
    if (std::optional<Address> a = decompose(p, dl))
      if (std::optional<Lanes> l = lanes_of(a->index))
        return l->stride * a->scale;
    return std::nullopt;
  }
  if (std::optional<Lanes> l = lanes_of(addresses))
    return l->stride;
  return std::nullopt;
}

} // namespace

Function* prefetch_function(Module& m, bool l2) {
  LLVMContext& c = m.getContext();
  FunctionCallee callee =
      m.getOrInsertFunction(kNames[l2], FunctionType::get(Type::getVoidTy(c), {Type::getInt64Ty(c)}, false));
  auto* f = cast<Function>(callee.getCallee());
  // No memory the optimiser tracks (so it does not stand in the vectoriser's way), and
  // kept: it is not known to return, so a call of it is never dead code.
  f->setDoesNotAccessMemory();
  f->setDoesNotThrow();
  return f;
}

void offer_vector_prefetches(Module& m) {
  LLVMContext& c = m.getContext();
  SmallVector<GlobalValue*, 24> declared;
  for (const char* name : kNames) {
    Function* scalar = m.getFunction(name);
    if (!scalar || scalar->use_empty())
      continue;
    std::string variants;
    for (unsigned lanes : kLanes) {
      for (bool masked : {false, true}) {
        const std::string variant = std::string(name) + (masked ? ".m" : ".v") + std::to_string(lanes);
        SmallVector<Type*, 2> params{FixedVectorType::get(Type::getInt64Ty(c), lanes)};
        if (masked)
          params.push_back(FixedVectorType::get(Type::getInt1Ty(c), lanes));
        FunctionCallee callee = m.getOrInsertFunction(variant, FunctionType::get(Type::getVoidTy(c), params, false));
        auto* f = cast<Function>(callee.getCallee());
        f->setDoesNotAccessMemory();
        f->setDoesNotThrow();
        declared.push_back(f);
        if (!variants.empty())
          variants += ',';
        variants += "_ZGV_LLVM_" + std::string(masked ? "M" : "N") + std::to_string(lanes) + "v_" + name + "(" +
                    variant + ")";
      }
    }
    for (User* u : scalar->users())
      if (auto* call = dyn_cast<CallInst>(u); call && call->getCalledFunction() == scalar)
        call->addFnAttr(Attribute::get(c, "vector-function-abi-variant", variants));
  }
  // As LLVM's InjectTLIMappings keeps the vector functions it offers: declared and used.
  if (!declared.empty())
    appendToCompilerUsed(m, declared);
}

void withdraw_vector_prefetches(Module& m) {
  auto ours = [](const Function* f) {
    unsigned locality, lanes;
    bool masked;
    return parse(f, locality, lanes, masked);
  };
  removeFromUsedLists(m, [&](Constant* c) { return ours(dyn_cast<Function>(c->stripPointerCasts())); });
  for (Function& f : make_early_inc_range(m)) {
    if (!f.isDeclaration() || !ours(&f))
      continue;
    f.removeDeadConstantUsers(); // the used list that named it
    if (f.use_empty())
      f.eraseFromParent();
  }
}

PreservedAnalyses ExpandPrefetchCalls::run(Function& f, FunctionAnalysisManager&) {
  struct Found {
    CallInst* call;
    unsigned locality, lanes;
  };
  SmallVector<Found, 8> calls;
  for (BasicBlock& bb : f)
    for (Instruction& i : bb)
      if (auto* call = dyn_cast<CallInst>(&i)) {
        unsigned locality, lanes;
        bool masked;
        if (parse(call->getCalledFunction(), locality, lanes, masked))
          calls.push_back({call, locality, lanes});
      }
  if (calls.empty())
    return PreservedAnalyses::all();
  const DataLayout& dl = f.getDataLayout();
  for (auto [call, locality, lanes] : calls) {
    IRBuilder<> b(call);
    Value* address = call->getArgOperand(0);
    if (!lanes) {
      emit_prefetch(b, address, locality);
      call->eraseFromParent();
      continue;
    }
    // Lanes spaced by at most a line: lane 0, then one lane per line's worth of lanes, and
    // the last, cover every line. Otherwise each lane prefetches its own.
    SmallVector<unsigned, 64> chosen;
    std::optional<int64_t> stride = byte_stride(address, dl);
    if (stride && *stride == 0) {
      chosen.push_back(0);
    } else if (stride && std::llabs(*stride) <= kLineBytes) {
      const unsigned step = unsigned(kLineBytes / std::llabs(*stride));
      for (unsigned l = 0; l < lanes; l += step)
        chosen.push_back(l);
      if (chosen.back() != lanes - 1)
        chosen.push_back(lanes - 1);
    } else {
      for (unsigned l = 0; l < lanes; ++l)
        chosen.push_back(l);
    }
    for (unsigned l : chosen)
      emit_prefetch(b, b.CreateExtractElement(address, b.getInt64(l)), locality);
    call->eraseFromParent();
  }
  return PreservedAnalyses::none();
}

} // namespace mimic::codegen
