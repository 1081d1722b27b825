// The CPU backend's JIT cache: a second compile of the same program loads the stored
// machine code and runs it; a damaged entry is detected and replaced; the key follows the
// PTX and the options that change the code.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>

#include "backends/cpu/code_cache.h"
#include "backends/cpu/jit.h"

namespace {

const char* kPtx = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry twice(.param .u64 out, .param .u32 n) {
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .reg .pred %p;
  ld.param.u64 %rd1, [out];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %tid.x;
  setp.ge.u32 %p, %r2, %r1;
  @%p ret;
  mul.wide.u32 %rd2, %r2, 4;
  add.u64 %rd3, %rd1, %rd2;
  shl.b32 %r3, %r2, 1;
  st.global.u32 [%rd3], %r3;
  ret;
}
)";

class CodeCache : public ::testing::Test {
protected:
  std::filesystem::path dir;
  void SetUp() override {
    char tmpl[] = "/tmp/mimic-cache-test-XXXXXX";
    dir = mkdtemp(tmpl);
    setenv("MIMIC_CACHE_DIR", dir.c_str(), 1);
    // The optimised code at the first launch, so that an entry is there when it returns
    // (QuickCodeFirstThenTheCache sets the tiers on).
    setenv("MIMIC_QUICK_TIER", "0", 1);
    // A program of one kernel compiled whole, into one entry (per-block-shape code would
    // compile it at its first launch, into an entry for the program and one for the kernel).
    setenv("MIMIC_BLOCK_SHAPE", "0", 1);
  }
  void TearDown() override {
    unsetenv("MIMIC_CACHE_DIR");
    unsetenv("MIMIC_QUICK_TIER");
    unsetenv("MIMIC_BLOCK_SHAPE");
    std::filesystem::remove_all(dir);
  }
  // Runs `kernel` of `compiled` (out[t] = factor * t) over one block of `threads` threads;
  // true when every output is right.
  static bool run(mimic::runtime::CompiledProgram& compiled, size_t kernel = 0, uint32_t factor = 2,
                  uint32_t threads = 64) {
    std::vector<uint32_t> out(threads, 7);
    struct {
      uint32_t* out;
      uint32_t n;
    } args{out.data(), threads};
    mimic::runtime::LaunchShape shape;
    shape.block[0] = threads;
    if (mimic::cpu::launch_on_cpu(compiled, kernel, shape, &args) != CUDA_SUCCESS)
      return false;
    for (uint32_t i = 0; i < threads; ++i)
      if (out[i] != factor * i)
        return false;
    return true;
  }
  // Compiles `ptx` and runs its first kernel (kPtx: out[t] = 2t).
  bool compile_and_run(const std::string& ptx) {
    auto program = mimic::runtime::load_program_from_ptx(ptx, "cache test");
    if (!program)
      return false;
    auto compiled = mimic::cpu::compile_for_cpu(*program.value(), {});
    return compiled && run(*compiled.value());
  }
  std::vector<std::filesystem::path> entries() {
    std::vector<std::filesystem::path> out;
    for (const auto& e : std::filesystem::directory_iterator(dir / "cpu"))
      out.push_back(e.path());
    return out;
  }
};

TEST_F(CodeCache, SecondCompileLoadsTheStoredCode) {
  ASSERT_TRUE(compile_and_run(kPtx));
  auto first = entries();
  ASSERT_EQ(first.size(), 1u);
  auto written = std::filesystem::last_write_time(first[0]);
  ASSERT_TRUE(compile_and_run(kPtx));
  auto second = entries();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(std::filesystem::last_write_time(second[0]), written); // read, not rewritten
  auto summary = mimic::cpu::cache_summary();
  EXPECT_EQ(summary.entries, 1u);
  EXPECT_GT(summary.bytes, 0u);
  EXPECT_EQ(mimic::cpu::cache_clear(), 1u);
  EXPECT_EQ(mimic::cpu::cache_summary().entries, 0u);
}

TEST_F(CodeCache, DamagedOrTruncatedEntriesAreReplaced) {
  ASSERT_TRUE(compile_and_run(kPtx));
  auto path = entries().at(0);
  auto size = std::filesystem::file_size(path);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(size / 2));
    f.write("garbage!", 8);
  }
  ASSERT_TRUE(compile_and_run(kPtx));
  EXPECT_EQ(std::filesystem::file_size(path), size); // rewritten whole
  std::filesystem::resize_file(path, 40);
  ASSERT_TRUE(compile_and_run(kPtx));
  EXPECT_EQ(std::filesystem::file_size(path), size);
  { std::ofstream(path, std::ios::binary | std::ios::trunc) << "not an entry"; }
  ASSERT_TRUE(compile_and_run(kPtx));
  EXPECT_EQ(std::filesystem::file_size(path), size);
}

TEST_F(CodeCache, KeyFollowsPtxAndOptions) {
  auto a = mimic::runtime::load_program_from_ptx(kPtx, "a");
  std::string other = std::string(kPtx) + "\n// a comment changes the text\n";
  auto b = mimic::runtime::load_program_from_ptx(other, "b");
  ASSERT_TRUE(a && b);
  std::string ka = mimic::cpu::cache_key(*a.value(), false);
  EXPECT_EQ(ka.size(), 64u);
  EXPECT_EQ(ka, mimic::cpu::cache_key(*a.value(), false));
  EXPECT_NE(ka, mimic::cpu::cache_key(*b.value(), false));
  EXPECT_NE(ka, mimic::cpu::cache_key(*a.value(), true));
}

// A program of several kernels: lowered at load, each kernel compiled at its first launch
// into an entry of its own; a later compile of the program starts from the stored facts.
TEST_F(CodeCache, KernelsOfAProgramCompileAtTheirFirstLaunch) {
  std::string two = std::string(kPtx) + R"(
.visible .entry thrice(.param .u64 out, .param .u32 n) {
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  mov.u32 %r2, %tid.x;
  mul.wide.u32 %rd2, %r2, 4;
  add.u64 %rd3, %rd1, %rd2;
  mul.lo.u32 %r3, %r2, 3;
  st.global.u32 [%rd3], %r3;
  ret;
}
)";
  auto program = mimic::runtime::load_program_from_ptx(two, "two kernels");
  ASSERT_TRUE(program);
  {
    auto compiled = mimic::cpu::compile_for_cpu(*program.value(), {});
    ASSERT_TRUE(compiled);
    EXPECT_EQ(entries().size(), 1u); // the program's facts; no kernel compiled yet
    ASSERT_TRUE(run(*compiled.value(), 1, 3));
    EXPECT_EQ(entries().size(), 2u); // and `thrice`
    ASSERT_TRUE(run(*compiled.value(), 1, 3));
    EXPECT_EQ(entries().size(), 2u);
  }
  {
    auto compiled = mimic::cpu::compile_for_cpu(*program.value(), {});
    ASSERT_TRUE(compiled);
    ASSERT_TRUE(run(*compiled.value(), 1, 3)); // from its entry
    ASSERT_TRUE(run(*compiled.value(), 0, 2)); // lowered and compiled now
    EXPECT_EQ(entries().size(), 3u);
  }
  // Compiled whole (mimic cache warm), the program's entry holds both kernels' code.
  auto whole = mimic::cpu::compile_for_cpu(*program.value(), {}, mimic::cpu::CompileMode::Eager);
  ASSERT_TRUE(whole);
  ASSERT_TRUE(run(*whole.value(), 0, 2));
  ASSERT_TRUE(run(*whole.value(), 1, 3));
  auto again = mimic::cpu::compile_for_cpu(*program.value(), {});
  ASSERT_TRUE(again);
  ASSERT_TRUE(run(*again.value(), 0, 2));
  EXPECT_EQ(entries().size(), 3u);
}

// With code tiers (backends/cpu/tiers.h) the first launch runs quick code and stores
// nothing; the background compiler stores the optimised code, the program swaps it in, and
// a later compile of the program starts from it. MIMIC_QUICK_TIER=only stores nothing.
TEST_F(CodeCache, QuickCodeFirstThenTheCache) {
  setenv("MIMIC_QUICK_TIER", "1", 1);
  auto program = mimic::runtime::load_program_from_ptx(kPtx, "tiers");
  ASSERT_TRUE(program);
  {
    auto compiled = mimic::cpu::compile_for_cpu(*program.value(), {});
    ASSERT_TRUE(compiled);
    ASSERT_TRUE(run(*compiled.value()));
    // The program's facts at once; the kernel's optimised code when the background has it.
    const auto start = std::chrono::steady_clock::now();
    while (entries().size() < 2 && std::chrono::steady_clock::now() - start < std::chrono::seconds(60))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(entries().size(), 2u);
    ASSERT_TRUE(run(*compiled.value()));
  }
  auto again = mimic::cpu::compile_for_cpu(*program.value(), {});
  ASSERT_TRUE(again);
  ASSERT_TRUE(run(*again.value()));
  EXPECT_EQ(entries().size(), 2u);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  setenv("MIMIC_QUICK_TIER", "only", 1);
  auto quick = mimic::cpu::compile_for_cpu(*program.value(), {});
  ASSERT_TRUE(quick);
  ASSERT_TRUE(run(*quick.value()));
  EXPECT_FALSE(std::filesystem::exists(dir / "cpu"));
}

// Per-block-shape code (codegen/block_shape.h): the first launch's shape gets an entry of
// its own, another shape the entry for any shape; a later compile of the program finds
// both and compiles nothing.
TEST_F(CodeCache, EachBlockShapeVariantHasAnEntry) {
  setenv("MIMIC_BLOCK_SHAPE", "1", 1);
  auto program = mimic::runtime::load_program_from_ptx(kPtx, "shapes");
  ASSERT_TRUE(program);
  {
    auto compiled = mimic::cpu::compile_for_cpu(*program.value(), {});
    ASSERT_TRUE(compiled);
    ASSERT_TRUE(run(*compiled.value(), 0, 2, 64));
    EXPECT_EQ(entries().size(), 2u); // the program's facts, the kernel for blocks of 64
    ASSERT_TRUE(run(*compiled.value(), 0, 2, 64));
    EXPECT_EQ(entries().size(), 2u);
    ASSERT_TRUE(run(*compiled.value(), 0, 2, 96));
    EXPECT_EQ(entries().size(), 3u); // and the kernel for any shape
    ASSERT_TRUE(run(*compiled.value(), 0, 2, 40));
    ASSERT_TRUE(run(*compiled.value(), 0, 2, 64));
    EXPECT_EQ(entries().size(), 3u);
  }
  auto written = entries();
  auto again = mimic::cpu::compile_for_cpu(*program.value(), {});
  ASSERT_TRUE(again);
  ASSERT_TRUE(run(*again.value(), 0, 2, 64));
  ASSERT_TRUE(run(*again.value(), 0, 2, 128));
  EXPECT_EQ(entries().size(), 3u);
  for (const auto& path : written)
    EXPECT_TRUE(std::filesystem::exists(path));
}

TEST_F(CodeCache, OffMeansNoFiles) {
  setenv("MIMIC_CACHE", "0", 1);
  EXPECT_TRUE(mimic::cpu::cache_directory().empty());
  ASSERT_TRUE(compile_and_run(kPtx));
  unsetenv("MIMIC_CACHE");
  EXPECT_FALSE(std::filesystem::exists(dir / "cpu"));
}

} // namespace
