// Matrix instructions: mma.sync (PTX's fragment layouts), wmma (Mimic's own fragment
// layout, which only wmma.load/store/mma see), ldmatrix, stmatrix and movmatrix. A lane's
// result depends on the other lanes' operands: each lane publishes its operand registers in
// BlockState::fragments and an op word in `exchange`, stops at a WarpMatrix split point, and
// the executor computes every lane's result exactly (backends/cpu/matrix.cpp) before the
// lanes resume.
#include "codegen/lower_impl.h"
#include "codegen/matrix_layout.h"

#include <regex>

namespace mimic::codegen {

using namespace llvm;
using ptx::Modifier;
using ptx::Opcode;

namespace {

MatrixType matrix_type(Modifier m) {
  switch (m) {
  case Modifier::F16:
    return MatrixType::F16;
  case Modifier::Bf16:
    return MatrixType::BF16;
  case Modifier::Tf32:
    return MatrixType::TF32;
  case Modifier::F32:
    return MatrixType::F32;
  case Modifier::F64:
    return MatrixType::F64;
  case Modifier::S8:
    return MatrixType::S8;
  case Modifier::U8:
    return MatrixType::U8;
  case Modifier::S32:
    return MatrixType::S32;
  case Modifier::S4:
    return MatrixType::S4;
  case Modifier::U4:
    return MatrixType::U4;
  default:
    return MatrixType::None;
  }
}

} // namespace

void FunctionLowering::lower_matrix(const ptx::Instruction& ins) {
  Type* i32 = b_.getInt32Ty();
  Type* i64 = b_.getInt64Ty();
  Type* ptr = b_.getPtrTy();
  MatrixOp op;
  // Shape .mMnNkK (ldmatrix: .m8n8 and .x1/.x2/.x4), element types in order.
  std::vector<MatrixType> types;
  for (Modifier m : ins.mods()) {
    std::string text = ptx::modifier_text(m);
    std::smatch match;
    static const std::regex shape("m([0-9]+)n([0-9]+)(k([0-9]+))?");
    if (std::regex_match(text, match, shape)) {
      op.m = uint8_t(std::stoi(match[1]));
      op.n = uint8_t(std::stoi(match[2]));
      op.k = match[4].matched ? uint8_t(std::stoi(match[4])) : 0;
    } else if (MatrixType t = matrix_type(m); t != MatrixType::None) {
      types.push_back(t);
    }
  }
  op.satfinite = ins.has(Modifier::Satfinite);
  // Register lists as 32-bit words (an f64 register is two).
  auto words_of = [&](const ptx::Operand& list) {
    std::vector<std::pair<const ptx::Operand*, Type*>> regs;
    if (list.kind != ptx::OperandKind::Vector)
      unsupported(ins, "matrix operands are register lists");
    for (const ptx::Operand& e : list.children()) {
      Register* r = e.kind == ptx::OperandKind::Name ? reg(e.name_view()) : nullptr;
      regs.push_back({&e, r ? r->type : i32});
    }
    return regs;
  };
  auto count_words = [&](const std::vector<std::pair<const ptx::Operand*, Type*>>& regs) {
    unsigned n = 0;
    for (auto& [e, t] : regs)
      n += t->getPrimitiveSizeInBits() == 64 ? 2 : 1;
    return n;
  };
  auto fragment_slot = [&](unsigned word) {
    Value* base = block_field(offsetof(BlockState, fragments), ptr);
    Value* index = b_.CreateAdd(b_.CreateMul(b_.CreateZExt(thread_index(), i64), b_.getInt64(kFragmentWords)),
                                b_.getInt64(word));
    return b_.CreateGEP(i32, base, index);
  };
  auto publish_words = [&](const std::vector<std::pair<const ptx::Operand*, Type*>>& regs, unsigned first) {
    unsigned w = first;
    for (auto& [e, t] : regs) {
      bool wide = t->getPrimitiveSizeInBits() == 64;
      Value* v = value(ins, *e, wide ? i64 : i32, false);
      if (wide) {
        b_.CreateStore(v, fragment_slot(w));
        w += 2;
      } else {
        b_.CreateStore(v, fragment_slot(w++));
      }
    }
  };
  auto read_words = [&](const std::vector<std::pair<const ptx::Operand*, Type*>>& regs) {
    unsigned w = 0;
    for (auto& [e, t] : regs) {
      bool wide = t->getPrimitiveSizeInBits() == 64;
      Value* v = b_.CreateLoad(wide ? i64 : i32, fragment_slot(w));
      w += wide ? 2 : 1;
      store(ins, *e, v, false);
    }
  };
  auto stop_for_warp = [&]() {
    Value* exchange = block_field(offsetof(BlockState, exchange), ptr);
    b_.CreateStore(b_.getInt64(op.encode()), b_.CreateGEP(i64, exchange, thread_index()));
    publish_wait(b_.getInt32(0xffffffffu));
    split(SplitKind::WarpMatrix);
  };

  // ldmatrix / stmatrix: .m8n8.x{1,2,4}{.trans}.b16; each lane publishes the address of
  // the row it names (operand `address_operand`) in fragment words 0-1.
  auto row_matrices = [&](MatrixOp::Kind kind, const char* name, size_t address_operand) {
    if (op.m != 8 || op.n != 8 || !ins.has(Modifier::B16))
      unsupported(ins, std::string("only ") + name + " .m8n8 .b16 is supported");
    op.kind = kind;
    op.m = ins.has(Modifier::X4) ? 4 : ins.has(Modifier::X2) ? 2 : 1;
    op.transpose = ins.has(Modifier::Trans);
    bool shared = ins.has(Modifier::Shared) || ins.has(Modifier::SharedCta);
    Value* row = address(ins, ins.operands[address_operand], shared ? Modifier::Shared : Modifier::None);
    b_.CreateStore(b_.CreatePtrToInt(row, i64), fragment_slot(0));
  };

  if (gpu()) { // lanes exchange fragments with ds_bpermute (lower_gpu.cpp)
    if (ins.opcode == Opcode::Ldmatrix || ins.opcode == Opcode::Stmatrix || ins.opcode == Opcode::Movmatrix)
      return gpu_matrix_move(ins);
  }
  if (ins.opcode == Opcode::Ldmatrix) {
    // ldmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}{.shared}.b16 d, [addr]
    auto dst = words_of(ins.operands[0]);
    row_matrices(MatrixOp::Ldmatrix, "ldmatrix", 1);
    stop_for_warp();
    read_words(dst);
    return;
  }

  if (ins.opcode == Opcode::Stmatrix) {
    // stmatrix.sync.aligned.m8n8.x{1,2,4}{.trans}{.shared}.b16 [addr], r: ldmatrix's inverse
    auto src = words_of(ins.operands[1]);
    row_matrices(MatrixOp::Stmatrix, "stmatrix", 0);
    if (count_words(src) != op.m)
      unsupported(ins, "stmatrix .x" + std::to_string(op.m) + " takes " + std::to_string(op.m) + " registers");
    publish_words(src, 2);
    stop_for_warp();
    return;
  }

  if (ins.opcode == Opcode::Movmatrix) {
    // movmatrix.sync.aligned.m8n8.trans.b16 d, a: the 8x8 matrix the warp holds, transposed
    if (op.m != 8 || op.n != 8 || !ins.has(Modifier::Trans) || ins.num_operands != 2)
      unsupported(ins, "movmatrix is .m8n8.trans.b16 d, a");
    op.kind = MatrixOp::Movmatrix;
    b_.CreateStore(value(ins, ins.operands[1], i32, false), fragment_slot(0));
    stop_for_warp();
    store(ins, ins.operands[0], b_.CreateLoad(i32, fragment_slot(0)), false);
    return;
  }

  if (ins.opcode == Opcode::Mma) {
    // mma.sync.aligned.shape.alayout.blayout{.satfinite}.dtype.atype.btype.ctype d, a, b, c
    if (ins.num_operands != 4 || types.size() != 4)
      unsupported(ins, "this form of mma is not supported yet");
    if (!ins.has(Modifier::Row) || !ins.has(Modifier::Col))
      unsupported(ins, "mma is supported in the .row.col form");
    op.kind = MatrixOp::Mma;
    op.d = types[0];
    op.a = types[1];
    op.b = types[2];
    op.c = types[3];
  } else { // wmma
    bool is_mma = false, is_load = false;
    for (Modifier m : ins.mods()) {
      std::string text = ptx::modifier_text(m);
      is_mma |= text == "mma";
      is_load |= text == "load";
    }
    op.kind = MatrixOp::Wmma;
    if (!is_mma) {
      // wmma.load.{a,b,c}.sync.aligned.layout.shape{.space}.type r, [p]{, stride}
      // wmma.store.d.sync.aligned.layout.shape{.space}.type [p], r{, stride}
      if (types.size() != 1)
        unsupported(ins, "wmma.load/store take one element type");
      uint32_t matrix = ins.has(Modifier::A) ? 0 : ins.has(Modifier::B) ? 1 : 2;
      (matrix == 0 ? op.a : matrix == 1 ? op.b : op.c) = types[0];
      bool column_major = ins.has(Modifier::Col);
      unsigned rows = matrix == 0 ? op.m : matrix == 1 ? op.k : op.m;
      unsigned cols = matrix == 0 ? op.k : op.n;
      const ptx::Operand& regs_op = is_load ? ins.operands[0] : ins.operands[1];
      const ptx::Operand& addr_op = is_load ? ins.operands[1] : ins.operands[0];
      Modifier space = ins.has(Modifier::Shared) ? Modifier::Shared : Modifier::None;
      Value* memory = address(ins, addr_op, space);
      Value* stride = ins.num_operands >= 3 ? value(ins, ins.operands[2], i32, false)
                                            : b_.getInt32(column_major ? rows : cols);
      auto regs = words_of(regs_op);
      if (gpu())
        return gpu_wmma_memory(ins, op, matrix, column_major, memory, stride, is_load, regs_op);
      IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
      AllocaInst* words = entry.CreateAlloca(ArrayType::get(i32, kFragmentWords));
      Value* lane = b_.CreateAnd(thread_index(), b_.getInt32(31));
      if (is_load) {
        Function* f = lowering_.helper("mimic_wmma_load", b_.getVoidTy(), {ptr, ptr, i32, i64, i32, i32, i32});
        b_.CreateCall(f, {words, memory, lane, b_.getInt64(op.encode()), b_.getInt32(matrix),
                          b_.getInt32(column_major), stride});
        unsigned w = 0;
        for (auto& [e, t] : regs) {
          bool wide = t->getPrimitiveSizeInBits() == 64;
          store(ins, *e, b_.CreateLoad(wide ? i64 : i32, b_.CreateConstGEP2_32(words->getAllocatedType(), words, 0, w)),
                false);
          w += wide ? 2 : 1;
        }
      } else {
        unsigned w = 0;
        for (auto& [e, t] : regs) {
          bool wide = t->getPrimitiveSizeInBits() == 64;
          b_.CreateStore(value(ins, *e, wide ? i64 : i32, false),
                         b_.CreateConstGEP2_32(words->getAllocatedType(), words, 0, w));
          w += wide ? 2 : 1;
        }
        Function* f = lowering_.helper("mimic_wmma_store", b_.getVoidTy(), {ptr, ptr, i32, i64, i32, i32, i32});
        b_.CreateCall(f, {memory, words, lane, b_.getInt64(op.encode()), b_.getInt32(2), b_.getInt32(column_major),
                          stride});
      }
      return;
    }
    // wmma.mma.sync.aligned.alayout.blayout.shape.dtype.ctype (f16 inputs), or
    // .dtype.atype.btype.ctype
    if (ins.num_operands != 4)
      unsupported(ins, "wmma.mma needs d, a, b and c");
    if (types.size() == 2) {
      op.d = types[0];
      op.c = types[1];
      op.a = op.b = MatrixType::F16;
    } else if (types.size() == 4) {
      op.d = types[0];
      op.a = types[1];
      op.b = types[2];
      op.c = types[3];
    } else {
      unsupported(ins, "this form of wmma.mma is not supported yet");
    }
    for (Modifier m : ins.mods()) {
      std::string text = ptx::modifier_text(m);
      if (text == "xor" || text == "and" || text == "popc" || text == "b1")
        unsupported(ins, "single-bit wmma is not supported yet");
    }
  }
  auto d = words_of(ins.operands[0]);
  auto a = words_of(ins.operands[1]);
  auto b = words_of(ins.operands[2]);
  auto c = words_of(ins.operands[3]);
  op.a_words = uint8_t(count_words(a));
  op.b_words = uint8_t(count_words(b));
  op.c_words = uint8_t(count_words(c));
  if (op.a_words + op.b_words + op.c_words > kFragmentWords || count_words(d) > kFragmentWords)
    unsupported(ins, "matrix operands larger than Mimic's fragment buffer");
  if (op.m == 0 || op.n == 0 || op.k == 0)
    unsupported(ins, "matrix instruction without a shape");
  for (MatrixOperand which : {MatrixOperand::A, MatrixOperand::B, MatrixOperand::C}) {
    unsigned elements = fragment_elements(op, which);
    unsigned words = which == MatrixOperand::A ? op.a_words : which == MatrixOperand::B ? op.b_words : op.c_words;
    if (elements == 0 || elements * matrix_type_bits(operand_type(op, which)) > words * 32)
      unsupported(ins, "this shape and type of matrix instruction is not supported yet");
  }
  if (gpu()) return op.kind == MatrixOp::Mma ? gpu_mma(ins, op) : gpu_wmma_mma(ins, op);
  publish_words(a, 0);
  publish_words(b, op.a_words);
  publish_words(c, op.a_words + op.b_words);
  stop_for_warp();
  read_words(d);
}

} // namespace mimic::codegen
