// Texture and surface instructions on texture and surface OBJECTS (handles in registers or
// parameters): tex (also .level and .grad: objects have one mip level, so both read level
// 0), tld4, suld.b, sust.b, sust.p, txq and suq. Each gathers its coordinates into a small
// array and calls a helper of codegen/texture_abi.h, which reads the descriptor the handle
// points to; a helper that refuses (not a descriptor, a .trap access outside the surface)
// makes the thread trap. On AMD GPUs the same calls reach the helpers' GPU definitions, which
// the backend links into the module. Texture references (.texref/.surfref globals), samplers,
// cube maps, multisample textures, texel offsets and depth compares are refused by name.
#include "codegen/lower_impl.h"
#include "codegen/texture_abi.h"

namespace mimic::codegen {

using namespace llvm;
using ptx::Modifier;
using ptx::Opcode;

namespace {

struct Geometry {
  uint32_t dims = 0;    // spatial coordinates
  bool layered = false; // the first coordinate is the layer
  uint32_t operands = 0; // elements of the coordinate vector PTX writes
};

Geometry geometry_of(const ptx::Instruction& ins) {
  if (ins.has(Modifier::K1d))
    return {1, false, 1};
  if (ins.has(Modifier::K2d))
    return {2, false, 2};
  if (ins.has(Modifier::K3d))
    return {3, false, 4};
  if (ins.has(Modifier::A1d))
    return {1, true, 2};
  if (ins.has(Modifier::A2d))
    return {2, true, 4};
  return {};
}

} // namespace

Value* FunctionLowering::texture_handle(const ptx::Instruction& ins, const ptx::Operand& op) {
  if (op.kind != ptx::OperandKind::Name || op.component != ptx::Component::None)
    unsupported(ins, "the texture or surface operand must be a register or a parameter");
  std::string_view name = op.name_view();
  if (Register* r = reg(name))
    return convert(b_.CreateLoad(r->type, r->storage), b_.getInt64Ty(), false);
  if (kernel_params_.count(name) || func_params_.count(name) || param_storage(name))
    return b_.CreateLoad(b_.getInt64Ty(), symbol_address(name));
  unsupported(ins, "'" + std::string(name) +
                       "' is a texture or surface reference (.texref/.surfref): only texture and surface objects "
                       "are supported");
}

// The helper said no: the thread traps (the launch fails with CUDA_ERROR_LAUNCH_FAILED). On
// the CPU the helper has said why; on a GPU a device log record says it (kGpuTrap).
void FunctionLowering::trap_unless_ok(Value* status, Value* handle, uint32_t instruction) {
  BasicBlock* trapped = BasicBlock::Create(ctx(), "texture_trap", fn_);
  BasicBlock* ok = BasicBlock::Create(ctx(), "texture_ok", fn_);
  b_.CreateCondBr(b_.CreateICmpNE(status, b_.getInt32(kTexOk)), trapped, ok);
  b_.SetInsertPoint(trapped);
  if (gpu()) {
    Type* i32 = b_.getInt32Ty();
    Function* report =
        lowering_.gpu_log_function(kGpuTrap, b_.getVoidTy(), {i32, i32, b_.getInt64Ty(), i32});
    uint32_t line = lowering_.current ? lowering_.current->loc.line : 0;
    b_.CreateCall(report, {status, b_.getInt32(instruction),
                           b_.CreatePtrToInt(handle, b_.getInt64Ty()), b_.getInt32(line)});
  }
  stop_thread(kThreadTrapped);
  b_.SetInsertPoint(ok);
}

namespace {

// The elements of a coordinate (or data) operand: {a, b, ...} or a lone register.
std::vector<const ptx::Operand*> elements(const ptx::Operand& op) {
  std::vector<const ptx::Operand*> out;
  if (op.kind == ptx::OperandKind::Vector)
    for (const ptx::Operand& e : op.children())
      out.push_back(&e);
  else
    out.push_back(&op);
  return out;
}

} // namespace

void FunctionLowering::lower_texture(const ptx::Instruction& ins) {
  bool gather = ins.opcode == Opcode::Tld4;
  const char* what = gather ? "tld4" : "tex";
  if (ins.has(Modifier::Cube) || ins.has(Modifier::Acube))
    unsupported(ins, "cube map textures are not supported (the driver cannot create cube map arrays)");
  if (ins.has(Modifier::K2dms) || ins.has(Modifier::A2dms))
    unsupported(ins, "multisample textures are not supported");
  Geometry g = geometry_of(ins);
  if (!g.dims)
    unsupported(ins, std::string(what) + " needs a geometry (.1d, .2d, .3d, .a1d, .a2d)");
  if (gather && (g.dims != 2))
    unsupported(ins, "tld4 reads 2D textures only");
  Modifier dtype = instruction_type(ins, 0), ctype = instruction_type(ins, 1);
  if (dtype != Modifier::F32 && dtype != Modifier::S32 && dtype != Modifier::U32 && dtype != Modifier::F16 &&
      dtype != Modifier::F16x2)
    unsupported(ins, std::string(what) + " returns .f32, .s32, .u32, .f16 or .f16x2");
  if (ctype != Modifier::F32 && ctype != Modifier::S32)
    unsupported(ins, std::string(what) + " takes .f32 or .s32 coordinates");
  if (gather && ctype != Modifier::F32)
    unsupported(ins, "tld4 takes .f32 coordinates");
  size_t extra = ins.has(Modifier::Level) ? 1 : ins.has(Modifier::Grad) ? 2 : 0;
  if (ins.num_operands < 2 || ins.operands[1].kind != ptx::OperandKind::Address)
    unsupported(ins, std::string(what) + " needs a destination and [texture, coordinates]");
  if (ins.num_operands > 2 + extra)
    unsupported(ins, "texel offsets and depth compare values are not supported");
  const ptx::Operand& source = ins.operands[1];
  if (source.count == 3)
    unsupported(ins, "separate samplers (independent texturing mode) are not supported: use texture objects");
  if (source.count != 2)
    unsupported(ins, std::string(what) + " needs [texture, coordinates]");
  Value* handle = b_.CreateIntToPtr(texture_handle(ins, source.elems[0]), b_.getPtrTy());
  std::vector<const ptx::Operand*> c = elements(source.elems[1]);
  if (c.size() < g.operands)
    unsupported(ins, "the coordinate vector has " + std::to_string(c.size()) + " elements, the geometry needs " +
                         std::to_string(g.operands));

  IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  Type* i32 = b_.getInt32Ty();
  AllocaInst* coords = entry.CreateAlloca(ArrayType::get(i32, 3), nullptr, "tex_coords");
  AllocaInst* out = entry.CreateAlloca(ArrayType::get(i32, 4), nullptr, "tex_out");
  Value* layer = b_.getInt32(0);
  size_t first = 0;
  if (g.layered) {
    layer = value(ins, *c[0], i32, false);
    first = 1;
  }
  Type* coordinate = ctype == Modifier::F32 ? b_.getFloatTy() : i32;
  for (uint32_t k = 0; k < 3; ++k) {
    Value* v = k < g.dims ? convert(value(ins, *c[first + k], coordinate, false), i32, false) : b_.getInt32(0);
    b_.CreateStore(v, b_.CreateConstGEP1_32(i32, coords, k));
  }
  uint32_t op = g.dims | (g.layered ? kTexLayered : 0) | (ctype == Modifier::S32 ? kTexIntegerCoords : 0);
  if (gather) {
    uint32_t component = ins.has(Modifier::R) ? 0 : ins.has(Modifier::G) ? 1 : ins.has(Modifier::B) ? 2
                         : ins.has(Modifier::A) ? 3 : 4;
    if (component == 4)
      unsupported(ins, "tld4 needs a component (.r, .g, .b, .a)");
    op |= kTexGather | component << kTexGatherShift;
  }
  Function* f = lowering_.helper("mimic_tex_fetch", i32, {b_.getPtrTy(), i32, b_.getPtrTy(), i32, b_.getPtrTy()});
  auto instruction = gather ? TextureInstruction::Tld4 : TextureInstruction::Tex;
  trap_unless_ok(b_.CreateCall(f, {handle, b_.getInt32(op), coords, layer, out}), handle,
                 uint32_t(instruction));

  // Destinations: {a, b, c, d} or {...}|p (p: the texels are resident, always true here).
  const ptx::Operand* dest = &ins.operands[0];
  if (dest->kind == ptx::OperandKind::Pair) {
    store(ins, dest->elems[1], b_.getTrue(), false);
    dest = &dest->elems[0];
  }
  std::vector<const ptx::Operand*> d = elements(*dest);
  auto word = [&](unsigned i) { return b_.CreateLoad(i32, b_.CreateConstGEP1_32(i32, out, i)); };
  auto as_half_bits = [&](Value* w) {
    return b_.CreateBitCast(b_.CreateFPTrunc(b_.CreateBitCast(w, b_.getFloatTy()), b_.getHalfTy()), b_.getInt16Ty());
  };
  for (unsigned i = 0; i < d.size() && i < 4; ++i) {
    Value* v = nullptr;
    if (dtype == Modifier::F32) {
      v = b_.CreateBitCast(word(i), b_.getFloatTy());
    } else if (dtype == Modifier::F16) {
      v = as_half_bits(word(i));
    } else if (dtype == Modifier::F16x2) {
      if (i >= 2)
        break;
      Value* lo = b_.CreateZExt(as_half_bits(word(2 * i)), i32);
      Value* hi = b_.CreateZExt(as_half_bits(word(2 * i + 1)), i32);
      v = b_.CreateOr(lo, b_.CreateShl(hi, 16));
    } else {
      v = word(i);
    }
    store(ins, *d[i], v, false);
  }
}

void FunctionLowering::lower_surface(const ptx::Instruction& ins) {
  bool load = ins.opcode == Opcode::Suld;
  const char* what = load ? "suld" : "sust";
  bool formatted = ins.has(Modifier::P);
  if (formatted && load)
    unsupported(ins, "suld.p does not exist in PTX: use suld.b");
  if (!formatted && !ins.has(Modifier::B))
    unsupported(ins, std::string(what) + " needs .b or .p");
  Geometry g = geometry_of(ins);
  if (!g.dims)
    unsupported(ins, std::string(what) + " needs a geometry (.1d, .2d, .3d, .a1d, .a2d)");
  Modifier t = instruction_type(ins, 0);
  unsigned size = t == Modifier::B8 ? 1 : t == Modifier::B16 ? 2 : t == Modifier::B32 ? 4 : t == Modifier::B64 ? 8 : 0;
  if (!size)
    unsupported(ins, std::string(what) + " moves .b8, .b16, .b32 or .b64 data");
  if (formatted && size != 4)
    unsupported(ins, "sust.p stores .b32 data");
  unsigned lanes = ins.has(Modifier::V2) ? 2 : ins.has(Modifier::V4) ? 4 : 1;
  SurfaceMode mode = ins.has(Modifier::Clamp) ? SurfaceMode::Clamp
                     : ins.has(Modifier::Zero) ? SurfaceMode::Zero
                                               : SurfaceMode::Trap;
  const ptx::Operand& at = ins.operands[load ? 1 : 0];
  const ptx::Operand& data = ins.operands[load ? 0 : 1];
  if (ins.num_operands != 2 || at.kind != ptx::OperandKind::Address || at.count != 2)
    unsupported(ins, std::string(what) + " needs [surface, coordinates] and data");
  Value* handle = b_.CreateIntToPtr(texture_handle(ins, at.elems[0]), b_.getPtrTy());
  std::vector<const ptx::Operand*> c = elements(at.elems[1]);
  std::vector<const ptx::Operand*> d = elements(data);
  if (c.size() < g.operands)
    unsupported(ins, "the coordinate vector has " + std::to_string(c.size()) + " elements, the geometry needs " +
                         std::to_string(g.operands));
  if (d.size() != lanes)
    unsupported(ins, "the data operand needs " + std::to_string(lanes) + " elements");

  IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  Type* i32 = b_.getInt32Ty();
  Type* element = b_.getIntNTy(size * 8);
  AllocaInst* coords = entry.CreateAlloca(ArrayType::get(i32, 3), nullptr, "surf_coords");
  AllocaInst* buffer = entry.CreateAlloca(ArrayType::get(element, 4), nullptr, "surf_data");
  Value* layer = g.layered ? value(ins, *c[0], i32, false) : b_.getInt32(0);
  size_t first = g.layered ? 1 : 0;
  for (uint32_t k = 0; k < 3; ++k)
    b_.CreateStore(k < g.dims ? value(ins, *c[first + k], i32, true) : b_.getInt32(0),
                   b_.CreateConstGEP1_32(i32, coords, k));
  if (!load)
    for (unsigned i = 0; i < lanes; ++i)
      b_.CreateStore(value(ins, *d[i], element, false), b_.CreateConstGEP1_32(element, buffer, i));
  uint32_t op = g.dims | (g.layered ? kTexLayered : 0) | uint32_t(mode) << kSurfModeShift |
                (load ? 0 : kSurfStore) | (formatted ? kSurfFormatted : 0);
  Function* f =
      lowering_.helper("mimic_surface_access", i32, {b_.getPtrTy(), i32, b_.getPtrTy(), i32, i32, b_.getPtrTy()});
  trap_unless_ok(
      b_.CreateCall(f, {handle, b_.getInt32(op), coords, layer, b_.getInt32(size * lanes), buffer}),
      handle, uint32_t(load ? TextureInstruction::Suld : TextureInstruction::Sust));
  if (load)
    for (unsigned i = 0; i < lanes; ++i)
      store(ins, *d[i], b_.CreateLoad(element, b_.CreateConstGEP1_32(element, buffer, i)), false);
}

void FunctionLowering::lower_texture_query(const ptx::Instruction& ins) {
  bool surface = ins.opcode == Opcode::Suq;
  const char* what = surface ? "suq" : "txq";
  if (ins.has(Modifier::Level))
    unsupported(ins, "txq.level is not supported (texture objects have one mip level)");
  struct Known {
    Modifier m;
    TextureQuery q;
    bool texture_only;
  };
  static const Known known[] = {
      {Modifier::Width, TextureQuery::Width, false},
      {Modifier::Height, TextureQuery::Height, false},
      {Modifier::Depth, TextureQuery::Depth, false},
      {Modifier::ChannelDataType, TextureQuery::ChannelDataType, false},
      {Modifier::ChannelOrder, TextureQuery::ChannelOrder, false},
      {Modifier::NormalizedCoords, TextureQuery::NormalizedCoords, true},
      {Modifier::FilterMode, TextureQuery::FilterMode, true},
      {Modifier::AddrMode0, TextureQuery::AddrMode0, true},
      {Modifier::AddrMode1, TextureQuery::AddrMode1, true},
      {Modifier::AddrMode2, TextureQuery::AddrMode2, true},
      {Modifier::NumMipmapLevels, TextureQuery::NumMipmapLevels, true},
  };
  const Known* query = nullptr;
  for (const Known& k : known)
    if (ins.has(k.m) && (!surface || !k.texture_only))
      query = &k;
  if (!query)
    unsupported(ins, std::string(what) + ": this query is not supported");
  if (ins.num_operands != 2 || ins.operands[1].kind != ptx::OperandKind::Address || ins.operands[1].count != 1)
    unsupported(ins, std::string(what) + " needs a destination and [handle]");
  Value* handle = b_.CreateIntToPtr(texture_handle(ins, ins.operands[1].elems[0]), b_.getPtrTy());
  IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  AllocaInst* out = entry.CreateAlloca(b_.getInt64Ty(), nullptr, "query");
  Type* i32 = b_.getInt32Ty();
  Function* f = lowering_.helper("mimic_texture_query", i32, {b_.getPtrTy(), i32, i32, b_.getPtrTy()});
  trap_unless_ok(
      b_.CreateCall(f, {handle, b_.getInt32(surface), b_.getInt32(uint32_t(query->q)), out}),
      handle, uint32_t(surface ? TextureInstruction::Suq : TextureInstruction::Txq));
  store(ins, ins.operands[0], b_.CreateLoad(b_.getInt64Ty(), out), false);
}

} // namespace mimic::codegen
