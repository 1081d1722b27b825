// compile_code_object as the HIP binding calls it: globals the runtime allocated are bound
// at link time (--defsym), the kernel facts come from the code object's metadata, and what
// cannot be translated fails by kernel. The code objects' structure over the whole test
// corpus is checked by code_objects.sh.
#include <cuda.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <llvm/Object/ELFObjectFile.h>

#include "backends/amdgpu/code_object.h"
#include "codegen/matrix_layout.h"
#include "runtime/program.h"

namespace mimic {
namespace {

const char* kHeader = ".version 8.0\n.target sm_80\n.address_size 64\n";

std::shared_ptr<runtime::Program> program(const std::string& body) {
  auto p = runtime::load_program_from_ptx(kHeader + body, "test.ptx");
  EXPECT_TRUE(p) << (p ? "" : p.error().message());
  return p ? p.value() : nullptr;
}

const char* kCounter = R"(
.global .align 4 .u32 counter;
.global .align 8 .u64 table[2] = {1, 2};
.visible .entry bump(.param .u32 n, .param .u64 out) {
  .shared .align 4 .b8 tile[300];
  .reg .b32 %r<6>;
  .reg .b64 %rd<3>;
  ld.param.u32 %r1, [n];
  ld.param.u64 %rd1, [out];
  atom.global.add.u32 %r2, [counter], %r1;
  ld.global.u64 %rd2, [table+8];
  mov.u32 %r4, %tid.x;
  shl.b32 %r4, %r4, 2;
  mov.u32 %r5, tile;
  add.u32 %r5, %r5, %r4;
  st.shared.u32 [%r5], %r2;
  bar.sync 0;
  xor.b32 %r5, %r5, 4;
  ld.shared.u32 %r3, [%r5];
  st.global.u32 [%rd1], %r3;
  st.global.u64 [%rd1+8], %rd2;
  ret;
}
.visible .entry idle() { ret; }
)";

// Whether the ELF has a dynamic relocation section with entries (work for the loader).
bool has_dynamic_relocations(const std::vector<uint8_t>& elf) {
  llvm::StringRef bytes(reinterpret_cast<const char*>(elf.data()), elf.size());
  auto file = llvm::object::ELF64LEObjectFile::create(llvm::MemoryBufferRef(bytes, "co"));
  if (!file) return llvm::consumeError(file.takeError()), true;
  for (const auto& section : file->sections()) {
    auto name = section.getName();
    if (name && *name == ".rela.dyn" && section.getSize() > 0) return true;
  }
  return false;
}

// The value of dynamic symbol `name` in the ELF, or -1 when it has none.
int64_t symbol_value(const std::vector<uint8_t>& elf, const std::string& name) {
  llvm::StringRef bytes(reinterpret_cast<const char*>(elf.data()), elf.size());
  auto file = llvm::object::ELF64LEObjectFile::create(llvm::MemoryBufferRef(bytes, "co"));
  if (!file) return llvm::consumeError(file.takeError()), -1;
  for (const auto& s : file->getDynamicSymbolIterators()) {
    auto n = s.getName();
    if (n && *n == name) {
      auto v = s.getValue();
      return v ? int64_t(*v) : -1;
    }
  }
  return -1;
}

TEST(AmdgpuCompile, RuntimeGlobalsAreBoundAtLink) {
  auto p = program(kCounter);
  ASSERT_TRUE(p);
  std::map<std::string, void*, std::less<>> globals{
      {"counter", reinterpret_cast<void*>(0x7f0000001000)},
      {"table", reinterpret_cast<void*>(0x7f0000002000)}};
  auto co = amdgpu::compile_code_object(*p, "gfx1100", &globals);
  ASSERT_TRUE(co) << co.error().message();
  EXPECT_EQ(co->target, "gfx1100");
  ASSERT_EQ(co->kernels.size(), 2u);
  EXPECT_EQ(co->kernels[0].name, "bump");
  EXPECT_EQ(co->kernels[1].name, "idle");
  EXPECT_EQ(co->kernels[0].static_lds_bytes, 300u);
  EXPECT_EQ(co->kernels[1].static_lds_bytes, 0u);
  EXPECT_GE(co->kernels[0].kernarg_bytes, 16u); // n at 0, out at 8, hidden arguments after
  EXPECT_EQ(co->kernels[0].max_threads_per_block, 1024u);
  EXPECT_EQ(symbol_value(co->elf, "mimic_global.counter"), 0x7f0000001000);
  EXPECT_EQ(symbol_value(co->elf, "mimic_global.table"), 0x7f0000002000);
  // The addresses are in the code object already (GOT entries), not left to the loader.
  EXPECT_FALSE(has_dynamic_relocations(co->elf));
}

TEST(AmdgpuCompile, WithoutRuntimeGlobalsTheCodeObjectDefinesThem) {
  auto p = program(kCounter);
  ASSERT_TRUE(p);
  auto co = amdgpu::compile_code_object(*p, "gfx1201", nullptr);
  ASSERT_TRUE(co) << co.error().message();
  EXPECT_GT(symbol_value(co->elf, "counter"), 0);
  EXPECT_GT(symbol_value(co->elf, "table"), 0);
}

TEST(AmdgpuCompile, MissingGlobalAddressIsAnError) {
  auto p = program(kCounter);
  ASSERT_TRUE(p);
  std::map<std::string, void*, std::less<>> globals{{"counter", reinterpret_cast<void*>(0x1000)}};
  auto co = amdgpu::compile_code_object(*p, "gfx1030", &globals);
  ASSERT_FALSE(co);
  EXPECT_NE(co.error().message().find("'table'"), std::string::npos) << co.error().message();
}

TEST(AmdgpuCompile, UnsupportedTargetListsTheSupportedOnes) {
  auto p = program(kCounter);
  ASSERT_TRUE(p);
  auto co = amdgpu::compile_code_object(*p, "gfx906", nullptr);
  ASSERT_FALSE(co);
  EXPECT_NE(co.error().message().find("gfx1030"), std::string::npos) << co.error().message();
  EXPECT_EQ(co.error().code(), CUDA_ERROR_NOT_SUPPORTED);
}

TEST(AmdgpuCompile, PrintfWritesToTheDeviceLogTheRuntimeGives) {
  auto p = program(R"(
.extern .func (.param .b32 ret) vprintf(.param .b64 fmt, .param .b64 args);
.global .align 1 .b8 hello[4] = {104, 105, 10, 0};
.visible .entry greet() {
  .reg .b64 %rd<3>;
  mov.u64 %rd1, hello;
  cvta.global.u64 %rd2, %rd1;
  { .param .b64 p0; .param .b64 p1; .param .b32 r;
    st.param.b64 [p0], %rd2;
    st.param.b64 [p1], 0;
    call.uni (r), vprintf, (p0, p1);
  }
  ret;
}
)");
  ASSERT_TRUE(p);
  std::map<std::string, void*, std::less<>> globals{
      {"hello", reinterpret_cast<void*>(0x7f0000003000)}};
  auto without_log = amdgpu::compile_code_object(*p, "gfx1100", &globals);
  ASSERT_FALSE(without_log);
  EXPECT_NE(without_log.error().message().find(amdgpu::kDeviceLogSymbol), std::string::npos);
  globals[amdgpu::kDeviceLogSymbol] = reinterpret_cast<void*>(0x7f0000010000);
  auto co = amdgpu::compile_code_object(*p, "gfx1100", &globals);
  ASSERT_TRUE(co) << co.error().message();
  EXPECT_TRUE(co->uses_device_log);
  EXPECT_EQ(symbol_value(co->elf, amdgpu::kDeviceLogSymbol), 0x7f0000010000);
  auto quiet = amdgpu::compile_code_object(*program(kCounter), "gfx1100", nullptr);
  ASSERT_TRUE(quiet);
  EXPECT_FALSE(quiet->uses_device_log);
}

TEST(AmdgpuCompile, GridSyncNeedsTheRuntimesWorkspace) {
  auto p = program(R"(
.visible .entry waits(.param .u64 out) {
  .reg .b32 %r<3>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %envreg1;
  mov.u32 %r2, %envreg2;
  st.global.u32 [%rd1], %r1;
  st.global.u32 [%rd1+4], %r2;
  ret;
}
)");
  ASSERT_TRUE(p);
  std::map<std::string, void*, std::less<>> globals;
  auto without = amdgpu::compile_code_object(*p, "gfx1201", &globals);
  ASSERT_FALSE(without);
  EXPECT_NE(without.error().message().find(amdgpu::kGridWorkspaceSymbol), std::string::npos);
  globals[amdgpu::kGridWorkspaceSymbol] = reinterpret_cast<void*>(0x7f0000020000);
  auto co = amdgpu::compile_code_object(*p, "gfx1201", &globals);
  ASSERT_TRUE(co) << co.error().message();
  ASSERT_EQ(co->kernels.size(), 1u);
  EXPECT_TRUE(co->kernels[0].grid_sync);
  EXPECT_EQ(symbol_value(co->elf, amdgpu::kGridWorkspaceSymbol), 0x7f0000020000);
}

TEST(AmdgpuCompile, MallocUsesTheRuntimesHeap) {
  auto p = program(R"(
.extern .func (.param .b64 ret) malloc(.param .b64 size);
.visible .entry allocates(.param .u64 out) {
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [out];
  { .param .b64 p0; .param .b64 r;
    st.param.b64 [p0], 24;
    call.uni (r), malloc, (p0);
    ld.param.b64 %rd2, [r];
  }
  st.global.u64 [%rd1], %rd2;
  ret;
}
)");
  ASSERT_TRUE(p);
  std::map<std::string, void*, std::less<>> globals;
  auto without = amdgpu::compile_code_object(*p, "gfx1030", &globals);
  ASSERT_FALSE(without);
  EXPECT_NE(without.error().message().find(amdgpu::kDeviceHeapSymbol), std::string::npos);
  globals[amdgpu::kDeviceHeapSymbol] = reinterpret_cast<void*>(0x7f0000040000);
  auto co = amdgpu::compile_code_object(*p, "gfx1030", &globals);
  ASSERT_TRUE(co) << co.error().message();
  EXPECT_TRUE(co->uses_device_heap);
  EXPECT_FALSE(co->uses_device_log);
  EXPECT_EQ(symbol_value(co->elf, amdgpu::kDeviceHeapSymbol), 0x7f0000040000);
}

TEST(AmdgpuCompile, TheRelocatableObjectIsCachedAndLinkedPerLoad) {
  char folder[] = "/tmp/mimic-amdgpu-cache-XXXXXX";
  ASSERT_NE(mkdtemp(folder), nullptr);
  setenv("MIMIC_CACHE_DIR", folder, 1);
  unsetenv("MIMIC_CACHE");
  auto p = program(kCounter);
  ASSERT_TRUE(p);
  std::map<std::string, void*, std::less<>> globals{
      {"counter", reinterpret_cast<void*>(0x7f0000001000)},
      {"table", reinterpret_cast<void*>(0x7f0000002000)}};
  auto first = amdgpu::compile_code_object(*p, "gfx1100", &globals);
  ASSERT_TRUE(first) << first.error().message();
  std::filesystem::path entries = std::filesystem::path(folder) / "amdgpu";
  size_t count = 0;
  for (const auto& e : std::filesystem::directory_iterator(entries))
    count += e.path().extension() == ".mco";
  EXPECT_EQ(count, 1u);
  // A second load links the cached object to other addresses.
  globals["counter"] = reinterpret_cast<void*>(0x7f0000005000);
  auto second = amdgpu::compile_code_object(*p, "gfx1100", &globals);
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_EQ(symbol_value(second->elf, "mimic_global.counter"), 0x7f0000005000);
  EXPECT_EQ(second->kernels[0].static_lds_bytes, first->kernels[0].static_lds_bytes);
  EXPECT_EQ(second->kernels[0].kernarg_bytes, first->kernels[0].kernarg_bytes);
  // A damaged entry is compiled again.
  for (const auto& e : std::filesystem::directory_iterator(entries))
    std::filesystem::resize_file(e.path(), 100);
  auto third = amdgpu::compile_code_object(*p, "gfx1100", &globals);
  ASSERT_TRUE(third) << third.error().message();
  EXPECT_EQ(third->elf, second->elf);
  unsetenv("MIMIC_CACHE_DIR");
  std::filesystem::remove_all(folder);
}

// For every mma.sync shape and type matrix_layout.h accepts, gpu_mma (codegen/lower_gpu.cpp)
// finds each lane's A[row][k] and B[k][col] at a lane-independent element of a lane that is
// an affine function of l / 4 and l % 4, and that is where the layout (the CPU's reference)
// places it.
TEST(AmdgpuCompile, MmaGathersTheElementsTheLayoutPlaces) {
  using codegen::MatrixOperand;
  using codegen::MatrixType;
  struct Shape {
    unsigned m, k;
    MatrixType type;
  };
  unsigned checked = 0;
  for (Shape shape :
       {Shape{16, 8, MatrixType::F16}, Shape{16, 16, MatrixType::F16},
        Shape{16, 8, MatrixType::BF16}, Shape{16, 16, MatrixType::BF16},
        Shape{16, 4, MatrixType::TF32}, Shape{16, 8, MatrixType::TF32},
        Shape{16, 16, MatrixType::S8}, Shape{16, 32, MatrixType::S8}, Shape{16, 16, MatrixType::U8},
        Shape{16, 32, MatrixType::U8}, Shape{16, 32, MatrixType::S4}, Shape{16, 64, MatrixType::S4},
        Shape{16, 32, MatrixType::U4}, Shape{16, 64, MatrixType::U4},
        Shape{8, 4, MatrixType::F64}}) {
    codegen::MatrixOp op;
    op.kind = codegen::MatrixOp::Mma;
    op.m = uint8_t(shape.m), op.n = 8, op.k = uint8_t(shape.k);
    op.a = op.b = shape.type;
    op.c = op.d = shape.type == MatrixType::F64 ? MatrixType::F64 : MatrixType::F32;
    unsigned outputs = codegen::fragment_elements(op, MatrixOperand::C);
    ASSERT_NE(codegen::fragment_elements(op, MatrixOperand::A), 0u) << shape.m << " " << shape.k;
    ASSERT_NE(codegen::fragment_elements(op, MatrixOperand::B), 0u) << shape.m << " " << shape.k;
    for (unsigned i = 0; i < outputs; ++i)
      for (unsigned k = 0; k < shape.k; ++k)
        for (MatrixOperand which : {MatrixOperand::A, MatrixOperand::B}) {
          codegen::LaneSource s = codegen::mma_operand_source(op, which, i, k);
          ASSERT_TRUE(s.found) << "k " << shape.k << " element " << i << " x " << k;
          for (unsigned lane = 0; lane < 32; ++lane) {
            unsigned row, col, r, c;
            codegen::fragment_position(op, MatrixOperand::C, lane, i, row, col);
            int source = s.per_group * int(lane / 4) + s.per_in_group * int(lane % 4) + s.offset;
            ASSERT_TRUE(source >= 0 && source < 32);
            codegen::fragment_position(op, which, unsigned(source), s.element, r, c);
            if (which == MatrixOperand::A)
              EXPECT_TRUE(r == row && c == k)
                  << "A of lane " << lane << " element " << i << " k " << k;
            else
              EXPECT_TRUE(r == k && c == col)
                  << "B of lane " << lane << " element " << i << " k " << k;
            ++checked;
          }
        }
  }
  EXPECT_GT(checked, 0u);
}

// gpu_wmma_mma's lanes for A[row][k] and B[k][col] (the chunk (row * K + k) / E, at a
// lane-independent place) agree with matrix_layout.h's wmma layout.
TEST(AmdgpuCompile, WmmaGathersTheElementsTheLayoutPlaces) {
  using codegen::MatrixOperand;
  struct Shape {
    unsigned k;
    codegen::MatrixType type;
  };
  for (Shape shape : {Shape{16, codegen::MatrixType::F16}, Shape{16, codegen::MatrixType::BF16},
                      Shape{8, codegen::MatrixType::TF32}}) {
    codegen::MatrixOp op;
    op.kind = codegen::MatrixOp::Wmma;
    op.m = 16, op.n = 16, op.k = uint8_t(shape.k);
    op.a = op.b = shape.type;
    op.c = op.d = codegen::MatrixType::F32;
    unsigned ea = codegen::fragment_elements(op, MatrixOperand::A),
             eb = codegen::fragment_elements(op, MatrixOperand::B),
             ec = codegen::fragment_elements(op, MatrixOperand::C);
    for (unsigned lane = 0; lane < 32; ++lane)
      for (unsigned i = 0; i < ec; ++i) {
        unsigned row, col, r, c;
        codegen::fragment_position(op, MatrixOperand::C, lane, i, row, col);
        for (unsigned k = 0; k < shape.k; ++k) {
          unsigned at = row * shape.k + k;
          codegen::fragment_position(op, MatrixOperand::A, at / ea, at % ea, r, c);
          EXPECT_TRUE(r == row && c == k) << "A of lane " << lane << " element " << i << " k " << k;
          at = k * 16 + col;
          codegen::fragment_position(op, MatrixOperand::B, at / eb, at % eb, r, c);
          EXPECT_TRUE(r == k && c == col) << "B of lane " << lane << " element " << i << " k " << k;
        }
      }
  }
}

TEST(AmdgpuCompile, UntranslatableKernelIsNamedWithItsLine) {
  auto p = program(R"(
.visible .entry fine() { ret; }
.visible .entry warps(.param .u64 out) {
  .reg .b32 %r<3>;
  .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  bar.red.popc.u32 %r2, 1, 32, %p1;
  ret;
}
)");
  ASSERT_TRUE(p);
  auto co = amdgpu::compile_code_object(*p, "gfx1100", nullptr);
  ASSERT_FALSE(co);
  EXPECT_NE(
      co.error().message().find(
          "kernel 'warps': line 10: not supported on amdgpu yet: bar.red with a thread count"),
      std::string::npos)
      << co.error().message();
  EXPECT_EQ(co.error().message().find("'fine'"), std::string::npos) << co.error().message();
}

} // namespace
} // namespace mimic
