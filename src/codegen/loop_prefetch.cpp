// Prefetches of the next trip's loads in loops with barriers (see loop_prefetch.h).
#include "codegen/loop_prefetch.h"
#include "codegen/lower_impl.h"
#include "codegen/prefetch_calls.h"
#include "support/config.h"

#include <map>

namespace mimic::codegen {

using namespace llvm;
using ptx::Opcode;
using ptx::OperandKind;

bool loop_prefetch_enabled() {
  return config::switched_on("MIMIC_LOOP_PREFETCH");
}

namespace {

constexpr unsigned kDepth = 12;
constexpr size_t kMaxFactors = 2;
// A constant distance under a page is the hardware prefetcher's.
constexpr int64_t kFarDistance = 4096;

bool names_register(const ptx::Operand& op) {
  return op.kind == OperandKind::Name && op.component == ptx::Component::None;
}

// The registers an instruction writes: its first operand's names, for the opcodes whose
// first operand is a destination (a store's is its address; a barrier's is its id, except
// bar.red's). Calls write their results.
template <typename F> void each_written(const ptx::Instruction& ins, F&& f) {
  switch (ins.opcode) {
  case Opcode::Bar:
  case Opcode::Barrier:
    if (!ins.has(ptx::Modifier::Red))
      return;
    break;
  case Opcode::St:
  case Opcode::Red:
  case Opcode::Bra:
  case Opcode::Prefetch:
  case Opcode::Prefetchu:
  case Opcode::Ret:
  case Opcode::Exit:
    return;
  default:
    break;
  }
  if (ins.num_operands == 0)
    return;
  auto walk = [&](auto& self, const ptx::Operand& op) -> void {
    if (op.kind == OperandKind::Name)
      f(op.name_view());
    else if (op.kind == OperandKind::Vector || op.kind == OperandKind::Pair)
      for (const ptx::Operand& e : op.children())
        self(self, e);
  };
  walk(walk, ins.operands[0]);
}

} // namespace

// The loops of the kernel's body that hold a barrier: a branch back to a label before it
// closes [label, branch]. For each load from global memory inside one (the innermost),
// its address register is followed through the loop's single definitions to a linear
// function of one induction register (`add r, r, C` the loop's only write of r): mov,
// add, sub, integer cvt and cvta, shl by a literal, mul and mad with a literal or a
// register the loop does not write. What goes through anything else gets no prefetch.
void FunctionLowering::plan_loop_prefetches(const ptx::Block& body) {
  loop_prefetches_.clear();
  if (gpu() || !is_kernel_ || !loop_prefetch_enabled())
    return;
  const auto& st = body.statements;
  std::map<std::string_view, size_t> labels;
  for (size_t k = 0; k < st.size(); ++k)
    if (st[k].kind == ptx::StatementKind::Label)
      labels[st[k].text_view()] = k;
  struct Loop {
    size_t first, last;
    std::map<std::string_view, std::vector<size_t>> defs; // where the loop writes each register
  };
  std::vector<Loop> loops;
  for (size_t k = 0; k < st.size(); ++k) {
    if (st[k].kind != ptx::StatementKind::Instruction || st[k].instruction->opcode != Opcode::Bra)
      continue;
    const ptx::Instruction& bra = *st[k].instruction;
    if (bra.num_operands != 1 || !names_register(bra.operands[0]))
      continue;
    auto label = labels.find(bra.operands[0].name_view());
    if (label == labels.end() || label->second >= k)
      continue;
    bool barrier = false;
    for (size_t j = label->second; j <= k && !barrier; ++j)
      barrier = st[j].kind == ptx::StatementKind::Instruction &&
                (st[j].instruction->opcode == Opcode::Bar || st[j].instruction->opcode == Opcode::Barrier);
    if (barrier)
      loops.push_back({label->second, k, {}});
  }
  if (loops.empty())
    return;
  for (Loop& l : loops)
    for (size_t j = l.first; j <= l.last; ++j)
      if (st[j].kind == ptx::StatementKind::Instruction)
        each_written(*st[j].instruction, [&](std::string_view n) { l.defs[n].push_back(j); });

  for (size_t k = 0; k < st.size(); ++k) {
    if (st[k].kind != ptx::StatementKind::Instruction)
      continue;
    const ptx::Instruction& load = *st[k].instruction;
    if (load.opcode != Opcode::Ld || !load.has(ptx::Modifier::Global) || load.num_operands < 2 ||
        load.operands[1].kind != OperandKind::Address || load.operands[1].count != 1 ||
        !names_register(load.operands[1].elems[0]))
      continue;
    const Loop* loop = nullptr; // the innermost
    for (const Loop& l : loops)
      if (l.first <= k && k <= l.last && (!loop || l.last - l.first < loop->last - loop->first))
        loop = &l;
    if (!loop)
      continue;
    const auto& defs = loop->defs;
    auto invariant = [&](const ptx::Operand& op) {
      return op.kind == OperandKind::Int || (names_register(op) && !defs.count(op.name_view()));
    };
    // The induction register's step, where `name` is one.
    auto step_of = [&](std::string_view name) -> std::optional<int64_t> {
      auto d = defs.find(name);
      if (d == defs.end() || d->second.size() != 1)
        return std::nullopt;
      const ptx::Instruction& add = *st[d->second[0]].instruction;
      if (add.opcode != Opcode::Add || !add.guard.empty() || add.num_operands != 3)
        return std::nullopt;
      const ptx::Operand& a = add.operands[1];
      const ptx::Operand& b = add.operands[2];
      if (names_register(a) && a.name_view() == name && b.kind == OperandKind::Int)
        return b.i;
      if (names_register(b) && b.name_view() == name && a.kind == OperandKind::Int)
        return a.i;
      return std::nullopt;
    };
    std::string_view induction;
    bool failed = false;
    // The coefficient of the induction register in `op`'s value at statement `at`.
    auto coefficient = [&](auto& self, const ptx::Operand& op, size_t at, unsigned depth) -> LoopPrefetch::Sum {
      if (failed || depth > kDepth || op.kind == OperandKind::Int || invariant(op))
        return {};
      if (op.kind == OperandKind::Name && op.component != ptx::Component::None) // %tid.x and friends
        return {};
      if (!names_register(op)) {
        failed = true;
        return {};
      }
      std::string_view name = op.name_view();
      if (step_of(name)) {
        if (!induction.empty() && induction != name)
          failed = true;
        induction = name;
        return {{1, {}}};
      }
      auto d = defs.find(name);
      if (d == defs.end() || d->second.size() != 1 || d->second[0] >= at) {
        failed = true;
        return {};
      }
      const size_t j = d->second[0];
      const ptx::Instruction& def = *st[j].instruction;
      if (!def.guard.empty()) {
        failed = true;
        return {};
      }
      auto operand = [&](size_t o) { return self(self, def.operands[o], j, depth + 1); };
      auto scaled = [&](LoopPrefetch::Sum s, const ptx::Operand& by) {
        for (LoopPrefetch::Term& t : s) {
          if (by.kind == OperandKind::Int)
            failed |= __builtin_mul_overflow(t.factor, by.i, &t.factor);
          else if (t.registers.size() < kMaxFactors)
            t.registers.push_back(by.name_view());
          else
            failed = true;
        }
        return s;
      };
      // a * b where one side is invariant (a literal or a register the loop does not write).
      auto product = [&](const ptx::Operand& a, const ptx::Operand& b) -> LoopPrefetch::Sum {
        if (invariant(a))
          return scaled(self(self, b, j, depth + 1), a);
        if (invariant(b))
          return scaled(self(self, a, j, depth + 1), b);
        failed = true;
        return {};
      };
      switch (def.opcode) {
      case Opcode::Mov:
      case Opcode::Cvt:
      case Opcode::Cvta:
        if (def.num_operands != 2)
          break;
        if (def.opcode == Opcode::Cvt) // integer to integer only
          for (ptx::Modifier m : def.mods())
            if (m == ptx::Modifier::F32 || m == ptx::Modifier::F64 || m == ptx::Modifier::F16 || m == ptx::Modifier::Bf16)
              failed = true;
        return operand(1);
      case Opcode::Add:
      case Opcode::Sub: {
        if (def.num_operands != 3 || def.has(ptx::Modifier::Cc))
          break;
        LoopPrefetch::Sum a = operand(1), b = operand(2);
        for (LoopPrefetch::Term& t : b) {
          if (def.opcode == Opcode::Sub)
            failed |= __builtin_sub_overflow(int64_t(0), t.factor, &t.factor);
          a.push_back(t);
        }
        return a;
      }
      case Opcode::Shl:
        if (def.num_operands != 3 || def.operands[2].kind != OperandKind::Int || def.operands[2].i < 0 ||
            def.operands[2].i > 32)
          break;
        {
          LoopPrefetch::Sum s = operand(1);
          for (LoopPrefetch::Term& t : s)
            failed |= __builtin_mul_overflow(t.factor, int64_t(1) << def.operands[2].i, &t.factor);
          return s;
        }
      case Opcode::Mul:
        if (def.num_operands != 3 || def.has(ptx::Modifier::Hi) || def.has(ptx::Modifier::F32) || def.has(ptx::Modifier::F64))
          break;
        return product(def.operands[1], def.operands[2]);
      case Opcode::Mad: {
        if (def.num_operands != 4 || def.has(ptx::Modifier::Hi) || def.has(ptx::Modifier::Cc) ||
            def.has(ptx::Modifier::F32) || def.has(ptx::Modifier::F64))
          break;
        LoopPrefetch::Sum s = product(def.operands[1], def.operands[2]);
        for (const LoopPrefetch::Term& t : operand(3))
          s.push_back(t);
        return s;
      }
      default:
        break;
      }
      failed = true;
      return {};
    };
    LoopPrefetch::Sum sum = coefficient(coefficient, load.operands[1].elems[0], k, 0);
    std::optional<int64_t> step = induction.empty() ? std::nullopt : step_of(induction);
    if (failed || sum.empty() || !step)
      continue;
    // The distance to the next trip's address: step * the coefficient, in bytes.
    int64_t constant = 0;
    bool variable = false;
    for (LoopPrefetch::Term& t : sum) {
      failed |= __builtin_mul_overflow(t.factor, *step, &t.factor);
      if (t.registers.empty())
        failed |= __builtin_add_overflow(constant, t.factor, &constant);
      else
        variable = true;
    }
    if (failed)
      continue;
    if (!variable && (constant > -kFarDistance && constant < kFarDistance))
      continue;
    loop_prefetches_[&load] = std::move(sum);
  }
}

// Before a load the plan chose: a prefetch into L2 of the address the next trip will load.
void FunctionLowering::prefetch_next_trip(const ptx::Instruction& ins, Value* address) {
  auto plan = loop_prefetches_.find(&ins);
  if (plan == loop_prefetches_.end())
    return;
  Type* i64 = b_.getInt64Ty();
  Value* distance = b_.getInt64(0);
  for (const LoopPrefetch::Term& t : plan->second) {
    Value* term = b_.getInt64(uint64_t(t.factor));
    for (std::string_view name : t.registers) {
      Register* r = reg(name);
      if (!r || !r->type->isIntegerTy())
        return;
      Value* v = b_.CreateLoad(r->type, r->storage);
      term = b_.CreateMul(term, b_.CreateZExtOrTrunc(v, i64));
    }
    distance = b_.CreateAdd(distance, term);
  }
  Value* at = b_.CreateAdd(b_.CreatePtrToInt(address, i64), distance, "next.trip");
  b_.CreateCall(prefetch_function(*fn_->getParent(), true), {at});
}

} // namespace mimic::codegen
