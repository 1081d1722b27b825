// Warp chains: a straight run of shuffles and the arithmetic between them (a warp
// reduction: v += shfl.down(v, 16); v += shfl.down(v, 8); ...) evaluated once per warp,
// on arrays of the warp's 32 lanes, instead of a split point and a thread loop per
// shuffle.
//
// Each thread publishes the registers the chain reads into slots of its own (spill slots
// after the registers' ones, one per register), stops once at a warp operation (the
// chain's member mask), and on resume reads the registers the chain wrote back from the
// same slots. Before a call's thread loop resumes at the chain's point, the kernel's
// entry runs the chain for each group of lanes released together (warp_mask, whose lowest
// lane comes first in every call; the loop steps from group to group, not lane by lane): the group's slots are read as a vector, the arithmetic
// is the shared lowering of each instruction in a loop over the 32 lanes, a shuffle is a
// permutation of the lane array with constant indices, and the results go back to the
// group's slots. A source lane past the block or out of the shuffle's range gives the
// lane its own value, as the per-thread lowering does (lower_sync.cpp).
#include "codegen/lower_impl.h"
#include "support/config.h"
#include "codegen/spill_remat.h"

#include <llvm/IR/Intrinsics.h>

namespace mimic::codegen {

using namespace llvm;
using ptx::Opcode;
using ptx::OperandKind;

namespace {

// Every register-like name an operand mentions (addresses' bases, vector and pair elements).
template <typename F> void each_name(const ptx::Operand& op, F&& f) {
  switch (op.kind) {
  case OperandKind::Name:
    f(op.name_view());
    break;
  case OperandKind::Vector:
  case OperandKind::Pair:
  case OperandKind::Address:
    for (const ptx::Operand& e : op.children())
      each_name(e, f);
    break;
  default:
    break;
  }
}

// Instructions a chain may hold besides shuffles: register arithmetic that cannot trap
// (no integer division), touches no memory and no state beyond its operands (no carry).
bool chain_arithmetic(const ptx::Instruction& ins) {
  switch (ins.opcode) {
  case Opcode::Add:
  case Opcode::Sub:
  case Opcode::Mad:
    return !ins.has(ptx::Modifier::Cc);
  case Opcode::Div:
    return ins.has(ptx::Modifier::F32) || ins.has(ptx::Modifier::F64);
  case Opcode::Mov:
  case Opcode::Mul:
  case Opcode::Fma:
  case Opcode::Min:
  case Opcode::Max:
  case Opcode::Neg:
  case Opcode::Abs:
  case Opcode::And:
  case Opcode::Or:
  case Opcode::Xor:
  case Opcode::Not:
  case Opcode::Cnot:
  case Opcode::Shl:
  case Opcode::Shr:
  case Opcode::Selp:
  case Opcode::Setp:
  case Opcode::Set:
  case Opcode::Cvt:
  case Opcode::Rcp:
  case Opcode::Sqrt:
  case Opcode::Rsqrt:
  case Opcode::Ex2:
  case Opcode::Lg2:
  case Opcode::Copysign:
  case Opcode::Bfe:
  case Opcode::Bfi:
  case Opcode::Prmt:
  case Opcode::Popc:
  case Opcode::Clz:
  case Opcode::Brev:
  case Opcode::Testp:
    return true;
  default:
    return false;
  }
}

} // namespace

bool warp_chains_enabled() {
  return config::switched_on("MIMIC_WARP_CHAINS");
}

bool lane0_chains_enabled() {
  return config::switched_on("MIMIC_LANE0_CHAINS");
}

// Registers written once, by an unguarded `mov r, imm` (nvcc's shuffle distances, clamp
// values and member masks) or `mov r, %tid.x`, predicates written once by a test of
// `%tid.x & 31` against 0 (nvcc's `lane == 0`), and how often each name appears in the
// kernel.
void FunctionLowering::plan_warp_chains(const ptx::Block& body) {
  std::map<std::string_view, unsigned> defs;
  std::map<std::string_view, int64_t> values;
  std::set<std::string_view> tid_x;
  std::map<std::string_view, std::string_view> low_bits;           // r = t & 31
  std::map<std::string_view, std::pair<std::string_view, bool>> tests; // p = (r != 0) or (r == 0)
  auto plain = [](const ptx::Operand& op) { return op.is_name() && op.component == ptx::Component::None; };
  ptx::any_instruction(body, [&](const ptx::Instruction& ins) {
    if (!ins.guard.empty())
      ++appearances_[ins.guard];
    for (size_t i = 0; i < ins.num_operands; ++i) {
      each_name(ins.operands[i], [&](std::string_view n) {
        ++appearances_[n];
        if (i == 0 || ins.opcode == Opcode::Call)
          ++defs[n];
      });
    }
    if (ins.opcode == Opcode::Mov && ins.guard.empty() && ins.num_operands == 2 && ins.operands[0].is_name() &&
        ins.operands[1].kind == OperandKind::Int)
      values[ins.operands[0].name_view()] = ins.operands[1].i;
    if (ins.opcode == Opcode::Mov && ins.guard.empty() && ins.num_operands == 2 && ins.operands[0].is_name() &&
        ins.operands[0].component == ptx::Component::None && ins.operands[1].is_name() &&
        ins.operands[1].name_view() == "%tid" && ins.operands[1].component == ptx::Component::X)
      tid_x.insert(ins.operands[0].name_view());
    if (ins.opcode == Opcode::And && ins.guard.empty() && ins.num_operands == 3 && ins.has(ptx::Modifier::B32) &&
        plain(ins.operands[0]) && plain(ins.operands[1]) && ins.operands[2].kind == OperandKind::Int &&
        ins.operands[2].i == 31)
      low_bits[ins.operands[0].name_view()] = ins.operands[1].name_view();
    const bool eq = ins.has(ptx::Modifier::Eq), ne = ins.has(ptx::Modifier::Ne);
    if (ins.opcode == Opcode::Setp && ins.guard.empty() && ins.num_operands == 3 && (eq || ne) &&
        (ins.has(ptx::Modifier::S32) || ins.has(ptx::Modifier::U32) || ins.has(ptx::Modifier::B32)) &&
        plain(ins.operands[0]) && plain(ins.operands[1]) && ins.operands[2].kind == OperandKind::Int &&
        ins.operands[2].i == 0)
      tests[ins.operands[0].name_view()] = {ins.operands[1].name_view(), ne};
    return false;
  });
  for (auto [name, v] : values)
    if (defs[name] == 1)
      constant_regs_[name] = v;
  for (std::string_view name : tid_x)
    if (defs[name] == 1)
      tid_x_regs_.insert(name);
  // Whether register t holds %tid.x where the one instruction that writes r reads it
  // (`and r, t, 31`, or `setp r, t, 0`): t is written once, by `mov t, %tid.x`; or nvcc
  // reuses t after its last use as the thread index (layernorm's last loop counts in it):
  // in the kernel's top-level statements the mov comes first (no label before it), t's
  // other writes all come after that instruction, and no branch at or after them goes
  // back to a label at or before it.
  const auto& top = body.statements;
  auto holds_tid_x = [&](std::string_view r, std::string_view t) {
    if (tid_x_regs_.count(t))
      return true;
    if (!tid_x.count(t))
      return false;
    std::map<std::string_view, size_t> labels;
    size_t mov = top.size(), at = top.size(), later = top.size(), writes = 0;
    for (size_t k = 0; k < top.size(); ++k) {
      if (top[k].kind == ptx::StatementKind::Label)
        labels[top[k].text_view()] = k;
      if (top[k].kind != ptx::StatementKind::Instruction)
        continue;
      const ptx::Instruction& ins = *top[k].instruction;
      if (ins.num_operands == 0)
        continue;
      bool writes_t = false;
      each_name(ins.operands[0], [&](std::string_view n) { writes_t |= n == t; });
      bool writes_r = false;
      each_name(ins.operands[0], [&](std::string_view n) { writes_r |= n == r; });
      if (writes_r)
        at = k;
      if (!writes_t)
        continue;
      ++writes;
      if (mov == top.size() && ins.opcode == Opcode::Mov && ins.num_operands == 2 && ins.operands[1].is_name() &&
          ins.operands[1].name_view() == "%tid" && ins.operands[1].component == ptx::Component::X)
        mov = k;
      else if (later == top.size())
        later = k;
    }
    if (writes != defs[t] || mov >= at || later <= at)
      return false;
    for (auto [name, k] : labels)
      if (k < mov)
        return false;
    for (size_t k = later; k < top.size(); ++k) {
      if (top[k].kind != ptx::StatementKind::Instruction)
        continue;
      const ptx::Instruction& ins = *top[k].instruction;
      if (ins.opcode == Opcode::Brx)
        return false;
      if (ins.opcode != Opcode::Bra)
        continue;
      auto target = ins.num_operands == 1 && ins.operands[0].is_name() ? labels.find(ins.operands[0].name_view())
                                                                         : labels.end();
      if (target == labels.end() || target->second <= at)
        return false;
    }
    return true;
  };
  // A test of %tid.x itself against 0 counts too: thread 0 is a lane 0, so `tid != 0`
  // holds for every other lane and `tid == 0` for a lane 0 alone.
  for (auto [p, test] : tests) {
    auto lane = low_bits.find(test.first);
    if (defs[p] == 1 && (lane != low_bits.end() ? defs[lane->first] == 1 && holds_tid_x(lane->first, lane->second)
                                                : holds_tid_x(p, test.first)))
      lane_tests_[p] = test.second;
  }
}

// An integer register (not a predicate) that plan_warp_chains found constant.
std::optional<int64_t> FunctionLowering::constant_register(std::string_view name) {
  if (auto it = constant_regs_.find(name); it != constant_regs_.end())
    if (Register* r = reg(name); r && r->type->isIntegerTy() && !r->type->isIntegerTy(1))
      return it->second;
  return std::nullopt;
}

std::optional<int64_t> FunctionLowering::chain_constant(const ptx::Operand& op) {
  if (op.kind == OperandKind::Int)
    return op.i;
  if (op.is_name() && op.component == ptx::Component::None)
    return constant_register(op.name_view());
  return std::nullopt;
}

// Whether an operand is a plain register (or `_`, or a literal) a chain can hold.
bool FunctionLowering::chain_operand(const ptx::Operand& op) {
  switch (op.kind) {
  case OperandKind::Name:
    return op.component == ptx::Component::None && reg(op.name_view());
  case OperandKind::Int:
  case OperandKind::F32:
  case OperandKind::F64:
  case OperandKind::Sink:
    return true;
  case OperandKind::Vector:
  case OperandKind::Pair:
    for (const ptx::Operand& e : op.children())
      if (!chain_operand(e))
        return false;
    return true;
  default:
    return false;
  }
}

// The member mask of a shuffle a chain can hold (b, c and the mask constants, a 32-bit
// register shuffled into 32-bit registers), or nothing.
std::optional<uint32_t> FunctionLowering::chain_shuffle(const ptx::Instruction& ins) {
  if (ins.opcode != Opcode::Shfl || !ins.guard.empty() || ins.num_operands < 4 || ins.num_operands > 5)
    return std::nullopt;
  const ptx::Operand& a = ins.operands[1];
  if (!a.is_name() || a.component != ptx::Component::None || chain_constant(a))
    return std::nullopt;
  Register* ra = reg(a.name_view());
  if (!ra || ra->type->getPrimitiveSizeInBits() != 32)
    return std::nullopt;
  const ptx::Operand& d = ins.operands[0];
  const ptx::Operand* dv = d.kind == OperandKind::Pair ? &d.elems[0] : &d;
  if (!dv->is_name() || dv->component != ptx::Component::None || !chain_operand(d))
    return std::nullopt;
  if (reg(dv->name_view())->type->getPrimitiveSizeInBits() != 32)
    return std::nullopt;
  if (!chain_constant(ins.operands[2]) || !chain_constant(ins.operands[3]))
    return std::nullopt;
  if (ins.num_operands == 4)
    return 0xffffffffu;
  std::optional<int64_t> mask = chain_constant(ins.operands[4]);
  if (!mask)
    return std::nullopt;
  return uint32_t(*mask);
}

// Statements [i, i + n) of `block` form a chain: at least two shuffles with the same
// member mask from statement i on, the arithmetic between them, and the arithmetic right
// after the last one that uses what the chain wrote. 0 when there is none at i.
size_t FunctionLowering::warp_chain_length(const ptx::Block& block, size_t i) {
  if (gpu() || !is_kernel_ || !inline_stack_.empty() || !warp_chains_enabled())
    return 0;
  const auto& st = block.statements;
  if (st[i].kind != ptx::StatementKind::Instruction)
    return 0;
  std::optional<uint32_t> mask = chain_shuffle(*st[i].instruction);
  if (!mask)
    return 0;
  auto usable = [&](const ptx::Instruction& ins) {
    if (!ins.guard.empty() || !chain_arithmetic(ins))
      return false;
    for (const ptx::Operand& op : ins.ops())
      if (!chain_operand(op))
        return false;
    return true;
  };
  size_t shuffles = 0, last = i;
  std::set<std::string_view> written;
  size_t j = i;
  for (; j < st.size(); ++j) {
    const ptx::Statement& s = st[j];
    if (s.kind == ptx::StatementKind::Loc || s.kind == ptx::StatementKind::Pragma)
      continue;
    if (s.kind != ptx::StatementKind::Instruction)
      break;
    const ptx::Instruction& ins = *s.instruction;
    if (std::optional<uint32_t> m = chain_shuffle(ins)) {
      if (*m != *mask)
        break;
      ++shuffles;
      last = j;
    } else if (!usable(ins)) {
      break;
    }
    each_name(ins.operands[0], [&](std::string_view n) { written.insert(n); });
  }
  if (shuffles < 2)
    return 0;
  // The tail: arithmetic after the last shuffle that reads what the chain wrote.
  size_t end = last + 1;
  for (size_t k = end; k < j; ++k) {
    const ptx::Statement& s = st[k];
    if (s.kind != ptx::StatementKind::Instruction)
      continue;
    bool reads = false;
    for (size_t o = 1; o < s.instruction->num_operands; ++o)
      each_name(s.instruction->operands[o], [&](std::string_view n) { reads |= written.count(n) != 0; });
    if (!reads)
      break;
    end = k + 1;
  }
  return end - i;
}

void FunctionLowering::lower_warp_chain(const ptx::Block& block, size_t first, size_t count) {
  Type* i1 = b_.getInt1Ty();
  Type* i8 = b_.getInt8Ty();
  Type* i32 = b_.getInt32Ty();
  Type* i64 = b_.getInt64Ty();
  Type* ptr = b_.getPtrTy();
  std::vector<const ptx::Instruction*> chain;
  for (size_t k = first; k < first + count; ++k)
    if (block.statements[k].kind == ptx::StatementKind::Instruction)
      chain.push_back(block.statements[k].instruction);
  const uint32_t mask = *chain_shuffle(*chain.front());

  // Arithmetic that reads nothing the chain computes (scan's `lane = tid & 31` and its
  // tests, between the shuffles) is also the thread's own: it runs before the thread
  // publishes as well, and a register only such instructions write is not read back from
  // the chain's slot, so that it stays a value of the thread index (spill_remat.h computes
  // it again after a split; loaded from the slot it was opaque, and scan's tests on `lane`
  // after the next barrier became per-lane branches: 1 MiB, one worker, 948 -> 1248 us
  // when the chain took such values as inputs instead). An instruction runs ahead when
  // nothing the chain computed before it is among what it reads, and neither it nor anything
  // before it reads what it writes (a published input must keep its value).
  std::set<std::string_view> thread_own;
  {
    std::set<std::string_view> computed, read_before, written_by_chain;
    for (const ptx::Instruction* ins : chain) {
      bool own = ins->opcode != Opcode::Shfl;
      for (size_t o = 1; own && o < ins->num_operands; ++o)
        each_name(ins->operands[o], [&](std::string_view n) { own &= !computed.count(n); });
      // What it reads itself counts as read before (`add r, r, 5` would publish r changed).
      for (size_t o = 1; o < ins->num_operands; ++o)
        each_name(ins->operands[o], [&](std::string_view n) { read_before.insert(n); });
      if (own)
        each_name(ins->operands[0], [&](std::string_view n) { own &= !read_before.count(n); });
      if (own) {
        lowering_.current = ins;
        lower_instruction(*ins);
        each_name(ins->operands[0], [&](std::string_view n) { thread_own.insert(n); });
      } else {
        each_name(ins->operands[0], [&](std::string_view n) { computed.insert(n), written_by_chain.insert(n); });
      }
    }
    for (std::string_view n : written_by_chain)
      thread_own.erase(n);
  }

  // What the chain reads before writing (inputs), writes, and what of that the kernel
  // reads elsewhere (outputs). Constant registers are folded, not published.
  std::vector<std::string_view> inputs, outputs;
  std::set<std::string_view> written, input_set;
  std::map<std::string_view, unsigned> inside;
  for (const ptx::Instruction* ins : chain) {
    for (size_t o = 0; o < ins->num_operands; ++o)
      each_name(ins->operands[o], [&](std::string_view n) {
        ++inside[n];
        if (o > 0 && !written.count(n) && !constant_register(n) && input_set.insert(n).second)
          inputs.push_back(n);
      });
    each_name(ins->operands[0], [&](std::string_view n) { written.insert(n); });
  }
  for (std::string_view n : written)
    if ((appearances_[n] > inside[n] || input_set.count(n)) && !thread_own.count(n))
      outputs.push_back(n);

  // Outputs that only lane 0 of a warp reads after the chain (block sums' `if (lane == 0)
  // warp_sums[warp] = v`): every other appearance of the register is in this block after
  // the chain, in an instruction guarded by a lane test to run for lane 0 alone or reached
  // only by falling through a branch that lanes other than 0 take (no label in between).
  // For a whole warp the chain writes back lane 0's value of these alone, where %tid.x & 31
  // is the lane (ntid.x a multiple of 32), and LLVM drops the other lanes' shuffles and
  // adds, about half a reduction's work.
  std::set<std::string_view> lane0_outputs;
  if (lane0_chains_enabled()) {
    // Whether a guard holds only for lanes other than 0 (true) or only for lane 0 (false).
    auto lane_guard = [&](const ptx::Instruction& ins) -> std::optional<bool> {
      auto it = ins.guard.empty() ? lane_tests_.end() : lane_tests_.find(ins.guard);
      if (it == lane_tests_.end())
        return std::nullopt;
      return it->second != ins.guard_negated;
    };
    std::map<std::string_view, unsigned> lane0_appearances;
    bool lane0 = false; // the statements since the last label run for lane 0 alone
    for (size_t k = first + count; k < block.statements.size(); ++k) {
      const ptx::Statement& st = block.statements[k];
      if (st.kind == ptx::StatementKind::Label) {
        lane0 = false;
        continue;
      }
      if (st.kind != ptx::StatementKind::Instruction)
        continue;
      const ptx::Instruction& ins = *st.instruction;
      std::optional<bool> others = lane_guard(ins);
      if (lane0 || (ins.opcode != Opcode::Bra && others == false)) {
        if (!ins.guard.empty())
          ++lane0_appearances[ins.guard];
        for (size_t o = 0; o < ins.num_operands; ++o)
          each_name(ins.operands[o], [&](std::string_view n) { ++lane0_appearances[n]; });
      }
      if (ins.opcode == Opcode::Bra && ins.guard.empty())
        lane0 = false; // what follows is reached through a label only
      else if (ins.opcode == Opcode::Bra && others == true)
        lane0 = true;
    }
    for (std::string_view n : outputs)
      if (!input_set.count(n) && lane0_appearances[n] == appearances_[n] - inside[n])
        lane0_outputs.insert(n);
  }

  // Inputs that are bit copies of other inputs (`mov.b32 %r17, %f75` right before a float
  // reduction: the chain shuffles %r17 and adds %f75): published once, the copy's lane
  // array being the original's read as its own type.
  std::map<std::string_view, std::string_view> copy_of;
  for (std::string_view n : inputs) {
    // The last write of n before the chain, in straight-line code, with nothing writing
    // either register after it.
    Register* rn = reg(n);
    if (!rn || rn->type->isIntegerTy(1) || written.count(n))
      continue;
    for (size_t k = first; k-- > 0;) {
      const ptx::Statement& s = block.statements[k];
      if (s.kind == ptx::StatementKind::Loc || s.kind == ptx::StatementKind::Pragma)
        continue;
      if (s.kind != ptx::StatementKind::Instruction)
        break;
      const ptx::Instruction& ins = *s.instruction;
      bool writes_n = false;
      each_name(ins.operands[0], [&](std::string_view w) { writes_n |= w == n; });
      if (!writes_n) {
        // Anything that writes an input the copy may come from ends the search.
        bool writes_input = ins.opcode == Opcode::Call;
        each_name(ins.operands[0], [&](std::string_view w) { writes_input |= input_set.count(w) != 0; });
        if (writes_input)
          break;
        continue;
      }
      const ptx::Operand& from = ins.operands[1];
      if (ins.opcode == Opcode::Mov && ins.guard.empty() && ins.num_operands == 2 && ins.operands[0].is_name() &&
          ins.operands[0].component == ptx::Component::None && from.is_name() &&
          from.component == ptx::Component::None && from.name_view() != n && input_set.count(from.name_view()) &&
          !written.count(from.name_view())) {
        Register* rm = reg(from.name_view());
        if (rm && !rm->type->isIntegerTy(1) &&
            rm->type->getPrimitiveSizeInBits() == rn->type->getPrimitiveSizeInBits())
          copy_of[n] = from.name_view();
      }
      break;
    }
  }
  std::erase_if(inputs, [&](std::string_view n) { return copy_of.count(n) != 0; });
  // Inputs that hold %tid.x (scan's `lane = tid & 31` inside the chain) are not published:
  // the chain computes each lane's from its thread index.
  std::vector<std::string_view> tid_inputs;
  for (std::string_view n : inputs)
    if (Register* r = reg(n); tid_x_regs_.count(n) && r && r->type->isIntegerTy(32))
      tid_inputs.push_back(n);
  std::erase_if(inputs, [&](std::string_view n) { return is_contained(tid_inputs, n); });

  // A slot per published register: chains take the first spill slots (insert_spills
  // numbers the registers' slots after them).
  std::map<std::string_view, unsigned> slot;
  for (std::string_view n : inputs)
    slot.try_emplace(n, chain_slots_++);
  for (std::string_view n : outputs)
    slot.try_emplace(n, chain_slots_++);
  auto stored_type = [&](Register* r) { return r->type->isIntegerTy(1) ? i8 : r->type; };
  auto tag_slot = [&](Instruction* i, unsigned s) {
    i->setMetadata(kSlotMetadata, MDNode::get(ctx(), {ConstantAsMetadata::get(b_.getInt32(s))}));
    return i;
  };
  // The threads: publish, stop, read back.
  {
    Value* t = thread_index();
    for (std::string_view n : inputs) {
      Register* r = reg(n);
      Value* v = b_.CreateLoad(r->type, r->storage);
      if (r->type->isIntegerTy(1))
        v = b_.CreateZExt(v, i8);
      tag_slot(b_.CreateStore(v, spill_slot(b_, slot[n], stored_type(r), t)), slot[n]);
    }
    publish_wait(b_.getInt32(mask));
  }
  const unsigned point = split(SplitKind::Warp);
  {
    Value* t = thread_index();
    for (std::string_view n : outputs) {
      Register* r = reg(n);
      Value* v = tag_slot(b_.CreateLoad(stored_type(r), spill_slot(b_, slot[n], stored_type(r), t)), slot[n]);
      if (r->type->isIntegerTy(1))
        v = b_.CreateTrunc(v, i1);
      b_.CreateStore(v, r->storage);
    }
  }

  // The kernel's entry, resuming at `point`: each group's first lane computes the group.
  IRBuilderBase::InsertPoint thread_code = b_.saveIP();
  BasicBlock* dispatch = chain_dispatch_->getParent();
  BasicBlock* head = BasicBlock::Create(ctx(), "warp_chain" + std::to_string(point), fn_);
  BasicBlock* body = BasicBlock::Create(ctx(), "warp_chain_groups" + std::to_string(point), fn_);
  BasicBlock* compute = BasicBlock::Create(ctx(), "warp_chain_compute" + std::to_string(point), fn_);
  BasicBlock* next = BasicBlock::Create(ctx(), "warp_chain_next" + std::to_string(point), fn_);
  chain_dispatch_->addCase(b_.getInt32(point), head);
  b_.SetInsertPoint(head);
  PHINode* t = b_.CreatePHI(i32, 2, "group_t");
  t->addIncoming(fn_->getArg(2), dispatch);
  b_.CreateCondBr(b_.CreateICmpULT(t, fn_->getArg(3)), body, enter_);
  b_.SetInsertPoint(body);
  Value* groups = block_field(offsetof(BlockState, warp_mask), ptr);
  Value* group = b_.CreateLoad(i32, b_.CreateGEP(i32, groups, t));
  Value* lane = b_.CreateAnd(t, 31);
  Value* leader = b_.CreateBinaryIntrinsic(Intrinsic::cttz, group, b_.getFalse());
  b_.CreateCondBr(b_.CreateICmpEQ(lane, leader), compute, next);
  // The next thread that may lead a group: the first lane above this one outside its
  // group (each lane is in one group), else the next warp's first lane.
  b_.SetInsertPoint(next);
  Value* above = b_.CreateAnd(b_.CreateNot(group), b_.CreateShl(b_.getInt32(0xfffffffeu), lane));
  Value* skip = b_.CreateBinaryIntrinsic(Intrinsic::cttz, above, b_.getFalse()); // 32 when none
  Value* t_next = b_.CreateAdd(b_.CreateSub(t, lane), skip);
  t->addIncoming(t_next, next);
  b_.CreateBr(head);

  b_.SetInsertPoint(compute);
  Value* base = b_.CreateSub(t, lane);
  Value* present_in_block = b_.CreateSub(block_field(offsetof(BlockState, nthreads), i32), base); // lanes in the block
  auto* lanes_ty = FixedVectorType::get(i1, 32);
  Value* group_lanes = b_.CreateBitCast(group, lanes_ty);
  // A lane array per register the chain touches (not the folded constants).
  std::map<std::string_view, AllocaInst*> arrays;
  IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  auto array = [&](std::string_view n) {
    for (auto it = copy_of.find(n); it != copy_of.end(); it = copy_of.find(n))
      n = it->second;
    auto [it, fresh] = arrays.try_emplace(n, nullptr);
    if (fresh) {
      it->second = entry.CreateAlloca(ArrayType::get(stored_type(reg(n)), 32), nullptr, std::string(n) + ".lanes");
      it->second->setAlignment(Align(64));
    }
    return it->second;
  };
  // Arithmetic between shuffles: the shared lowering of each instruction, in a loop over
  // the lanes, reading and writing the registers' lane arrays.
  auto arithmetic = [&](const std::vector<const ptx::Instruction*>& run) {
    BasicBlock* pre = b_.GetInsertBlock();
    BasicBlock* loop = BasicBlock::Create(ctx(), "warp_chain_arith", fn_);
    BasicBlock* after = BasicBlock::Create(ctx(), "warp_chain_arith_end", fn_);
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    PHINode* l = b_.CreatePHI(i32, 2, "l");
    l->addIncoming(b_.getInt32(0), pre);
    Value* l64 = b_.CreateZExt(l, i64);
    std::set<std::string_view> current; // registers this iteration has in their allocas
    for (const ptx::Instruction* ins : run) {
      for (size_t o = 1; o < ins->num_operands; ++o)
        each_name(ins->operands[o], [&](std::string_view n) {
          if (current.count(n))
            return;
          Register* r = reg(n);
          if (std::optional<int64_t> c = constant_register(n)) {
            b_.CreateStore(ConstantInt::get(r->type, uint64_t(*c)), r->storage);
          } else {
            Value* v = b_.CreateLoad(stored_type(r), b_.CreateGEP(stored_type(r), array(n), l64));
            b_.CreateStore(r->type->isIntegerTy(1) ? b_.CreateTrunc(v, i1) : v, r->storage);
          }
          current.insert(n);
        });
      lowering_.current = ins;
      lower_instruction(*ins);
      each_name(ins->operands[0], [&](std::string_view n) { current.insert(n); });
    }
    for (const ptx::Instruction* ins : run)
      each_name(ins->operands[0], [&](std::string_view n) {
        Register* r = reg(n);
        Value* v = b_.CreateLoad(r->type, r->storage);
        b_.CreateStore(r->type->isIntegerTy(1) ? b_.CreateZExt(v, i8) : v,
                       b_.CreateGEP(stored_type(r), array(n), l64));
      });
    Value* l_next = b_.CreateAdd(l, b_.getInt32(1));
    l->addIncoming(l_next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpULT(l_next, b_.getInt32(32)), loop, after);
    b_.SetInsertPoint(after);
  };
  // `present`: the lanes in the block from the group's base on.
  auto shuffle = [&](const ptx::Instruction& ins, Value* present) {
    uint32_t mode = ins.has(ptx::Modifier::Up) ? 0 : ins.has(ptx::Modifier::Down) ? 1 : ins.has(ptx::Modifier::Bfly) ? 2 : 3;
    int32_t bv = int32_t(*chain_constant(ins.operands[2])), cv = int32_t(*chain_constant(ins.operands[3]));
    SmallVector<int, 32> from;
    SmallVector<Constant*, 32> source, in_range;
    for (int32_t lane_l = 0; lane_l < 32; ++lane_l) {
      // The per-thread lowering's rule (lower_sync.cpp), folded: every operand is a constant.
      ShuffleSource src = shuffle_source(b_, mode, b_.getInt32(uint32_t(lane_l)), b_.getInt32(uint32_t(bv) & 31),
                                         b_.getInt32(uint32_t(cv)));
      int32_t j = int32_t(cast<ConstantInt>(src.lane)->getSExtValue());
      bool ok = cast<ConstantInt>(src.in_range)->isOne();
      from.push_back(ok ? (j & 31) : lane_l);
      source.push_back(b_.getInt32(uint32_t(ok ? j : 0)));
      in_range.push_back(b_.getInt1(ok));
    }
    auto* words = FixedVectorType::get(i32, 32);
    Value* own = b_.CreateAlignedLoad(words, array(ins.operands[1].name_view()), Align(64));
    Value* other = b_.CreateShuffleVector(own, from);
    Value* inside_block = b_.CreateICmpULT(ConstantVector::get(source), b_.CreateVectorSplat(32, present));
    Value* take = b_.CreateAnd(ConstantVector::get(in_range), inside_block);
    const ptx::Operand& d = ins.operands[0];
    const ptx::Operand* dv = d.kind == OperandKind::Pair ? &d.elems[0] : &d;
    b_.CreateAlignedStore(b_.CreateSelect(take, other, own), array(dv->name_view()), Align(64));
    if (d.kind == OperandKind::Pair && d.elems[1].is_name())
      b_.CreateAlignedStore(b_.CreateZExt(ConstantVector::get(in_range), FixedVectorType::get(i8, 32)),
                            array(d.elems[1].name_view()), Align(64));
  };
  // %tid.x of each lane: its linear index modulo ntid.x, which for a row a whole number of
  // warps long is the group's first plus the lane.
  auto tid_x_lanes = [&]() -> Value* {
    auto* words = FixedVectorType::get(i32, 32);
    SmallVector<Constant*, 32> iota;
    for (uint32_t l = 0; l < 32; ++l)
      iota.push_back(b_.getInt32(l));
    Value* lanes = ConstantVector::get(iota);
    Value* width = block_field(offsetof(BlockState, block_dim), i32);
    BasicBlock* pre = b_.GetInsertBlock();
    BasicBlock* any = BasicBlock::Create(ctx(), "warp_chain_tid_any", fn_);
    BasicBlock* done = BasicBlock::Create(ctx(), "warp_chain_tid", fn_);
    Value* fast = b_.CreateAdd(b_.CreateVectorSplat(32, b_.CreateURem(base, width)), lanes);
    b_.CreateCondBr(b_.CreateICmpEQ(b_.CreateAnd(width, 31), b_.getInt32(0)), done, any);
    b_.SetInsertPoint(any);
    Value* slow = b_.CreateURem(b_.CreateAdd(b_.CreateVectorSplat(32, base), lanes), b_.CreateVectorSplat(32, width));
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    PHINode* v = b_.CreatePHI(words, 2, "tid.x.lanes");
    v->addIncoming(fast, pre);
    v->addIncoming(slow, any);
    return v;
  };
  auto emit = [&](Value* present, Value* members, bool whole) {
    for (std::string_view n : tid_inputs)
      b_.CreateAlignedStore(tid_x_lanes(), array(n), Align(64));
    for (std::string_view n : inputs) {
      Type* e = stored_type(reg(n));
      auto* vt = FixedVectorType::get(e, 32);
      Value* v = b_.CreateMaskedLoad(vt, spill_slot(b_, slot[n], e, base), Align(e->getPrimitiveSizeInBits() / 8),
                                     members, Constant::getNullValue(vt));
      b_.CreateAlignedStore(v, array(n), Align(64));
    }
    std::vector<const ptx::Instruction*> run;
    for (const ptx::Instruction* ins : chain) {
      if (ins->opcode == Opcode::Shfl) {
        if (!run.empty())
          arithmetic(run);
        run.clear();
        shuffle(*ins, present);
      } else {
        run.push_back(ins);
      }
    }
    if (!run.empty())
      arithmetic(run);
    std::vector<std::pair<std::string_view, Value*>> others; // lanes 1-31 of lane-0 outputs
    for (std::string_view n : outputs) {
      Type* e = stored_type(reg(n));
      Value* v = b_.CreateAlignedLoad(FixedVectorType::get(e, 32), array(n), Align(64));
      if (whole && lane0_outputs.count(n)) {
        b_.CreateStore(b_.CreateExtractElement(v, uint64_t(0)), spill_slot(b_, slot[n], e, base));
        others.emplace_back(n, v);
        continue;
      }
      b_.CreateMaskedStore(v, spill_slot(b_, slot[n], e, base), Align(e->getPrimitiveSizeInBits() / 8), members);
    }
    if (others.empty()) {
      b_.CreateBr(next);
      return;
    }
    // Where rows are not whole warps, `%tid.x & 31` is not the lane: every lane's value.
    // For a known block shape this folds away.
    BasicBlock* every = BasicBlock::Create(ctx(), "warp_chain_every_lane" + std::to_string(point), fn_);
    Value* width = block_field(offsetof(BlockState, block_dim), i32);
    b_.CreateCondBr(b_.CreateICmpNE(b_.CreateAnd(width, 31), b_.getInt32(0)), every, next);
    b_.SetInsertPoint(every);
    for (auto [n, v] : others) {
      Type* e = stored_type(reg(n));
      b_.CreateAlignedStore(v, spill_slot(b_, slot[n], e, base), Align(e->getPrimitiveSizeInBits() / 8));
    }
    b_.CreateBr(next);
  };
  // The chain is made twice: for a whole warp, all 32 lanes present and released together
  // (the usual case), where every shuffle's lane choice is a constant and the slots are
  // read and written whole; and for any group. For a whole warp, the lanes' tests of
  // being in the block and in the group were most of a chain's work (layernorm's two
  // block sums: 1 MiB, one worker, 597-617 -> 447-456 us a launch; scan 615-639 -> 478).
  BasicBlock* whole = BasicBlock::Create(ctx(), "warp_chain_whole" + std::to_string(point), fn_);
  BasicBlock* part = BasicBlock::Create(ctx(), "warp_chain_part" + std::to_string(point), fn_);
  b_.CreateCondBr(b_.CreateAnd(b_.CreateICmpUGE(present_in_block, b_.getInt32(32)),
                               b_.CreateICmpEQ(group, b_.getInt32(0xffffffffu))),
                  whole, part);
  b_.SetInsertPoint(whole);
  emit(b_.getInt32(32), Constant::getAllOnesValue(lanes_ty), true);
  b_.SetInsertPoint(part);
  emit(present_in_block, group_lanes, false);
  b_.restoreIP(thread_code);
}

} // namespace mimic::codegen
