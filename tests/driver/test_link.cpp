// JIT linking (cuLink*): PTX modules, and the PTX inside fatbinaries and host objects,
// linked into an image that cuModuleLoadData and cuLibraryLoadData load as one program;
// the JIT options' log buffers, log sizes and wall time; misuse of link states.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "../unit/fatbin_builder.h"
#include "libcuda_loader.h"

namespace {

// `counter` is defined in one module and used from the other.
const char* kDefines = ".version 8.0\n.target sm_75\n.address_size 64\n"
                       ".visible .global .align 4 .u32 counter = 5;\n"
                       ".visible .entry bump(.param .u64 out)\n{\n"
                       " .reg .u64 %rd<2>;\n .reg .u32 %r<2>;\n"
                       " ld.global.u32 %r1, [counter];\n add.u32 %r1, %r1, 1;\n"
                       " st.global.u32 [counter], %r1;\n ret;\n}\n";
const char* kUses = ".version 8.0\n.target sm_75\n.address_size 64\n"
                    ".extern .global .align 4 .u32 counter;\n"
                    ".visible .entry read(.param .u64 out)\n{\n"
                    " .reg .u64 %rd<2>;\n .reg .u32 %r<2>;\n"
                    " ld.param.u64 %rd1, [out];\n cvta.to.global.u64 %rd1, %rd1;\n"
                    " ld.global.u32 %r1, [counter];\n st.global.u32 [%rd1], %r1;\n ret;\n}\n";
const char* kBroken = ".version 8.0\n.target sm_75\n.address_size 64\n"
                      ".visible .entry broken()\n{\n frobnicate.u32 %r1;\n ret;\n}\n";
const char* kUndefined = ".version 8.0\n.target sm_75\n.address_size 64\n"
                         ".extern .global .align 4 .u32 nowhere;\n"
                         ".visible .entry lonely(.param .u64 out)\n{\n .reg .u32 %r<2>;\n"
                         " ld.global.u32 %r1, [nowhere];\n ret;\n}\n";

class Link : public testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(CU(cuInit)(0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuDevicePrimaryCtxRetain)(&ctx, 0), CUDA_SUCCESS);
    ASSERT_EQ(CU(cuCtxSetCurrent)(ctx), CUDA_SUCCESS);
  }
  void TearDown() override { CU(cuDevicePrimaryCtxRelease)(0); }

  CUresult add_ptx(CUlinkState s, const char* text, const char* name) {
    return CU(cuLinkAddData)(s, CU_JIT_INPUT_PTX, const_cast<char*>(text), strlen(text) + 1, name,
                             0, nullptr, nullptr);
  }

  // Runs `read` of a loaded module and returns what it saw of `counter`.
  uint32_t run_read(CUfunction read) {
    CUdeviceptr out = 0;
    EXPECT_EQ(CU(cuMemAlloc)(&out, 4), CUDA_SUCCESS);
    void* params[] = {&out};
    EXPECT_EQ(CU(cuLaunchKernel)(read, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr),
              CUDA_SUCCESS);
    uint32_t value = 0;
    EXPECT_EQ(CU(cuMemcpyDtoH)(&value, out, 4), CUDA_SUCCESS);
    EXPECT_EQ(CU(cuMemFree)(out), CUDA_SUCCESS);
    return value;
  }

  CUcontext ctx = nullptr;
};

TEST_F(Link, TwoPtxModulesBecomeOneProgram) {
  char info[1024] = "x", error[1024] = "x";
  CUjit_option options[] = {CU_JIT_INFO_LOG_BUFFER,  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_WALL_TIME,        CU_JIT_OPTIMIZATION_LEVEL,
                            CU_JIT_LOG_VERBOSE};
  void* values[] = {info,
                    reinterpret_cast<void*>(uintptr_t(sizeof info)),
                    error,
                    reinterpret_cast<void*>(uintptr_t(sizeof error)),
                    nullptr,
                    reinterpret_cast<void*>(uintptr_t(3)),
                    reinterpret_cast<void*>(uintptr_t(1))};
  CUlinkState link = nullptr;
  ASSERT_EQ(CU(cuLinkCreate)(7, options, values, &link), CUDA_SUCCESS);
  ASSERT_EQ(add_ptx(link, kDefines, "defines.ptx"), CUDA_SUCCESS);
  ASSERT_EQ(add_ptx(link, kUses, "uses.ptx"), CUDA_SUCCESS);
  void* image = nullptr;
  size_t size = 0;
  ASSERT_EQ(CU(cuLinkComplete)(link, &image, &size), CUDA_SUCCESS) << error;
  ASSERT_NE(image, nullptr);
  EXPECT_GT(size, strlen(kDefines) + strlen(kUses));
  // The logs: what was linked, sizes written back, no errors, a wall time.
  std::string info_text = info;
  EXPECT_NE(info_text.find("linked 2 PTX modules (defines.ptx, uses.ptx)"), std::string::npos)
      << info_text;
  EXPECT_NE(info_text.find("kernel 'read'"), std::string::npos) << info_text; // verbose
  EXPECT_EQ(uintptr_t(values[1]), info_text.size() + 1);
  EXPECT_STREQ(error, "");
  EXPECT_EQ(uintptr_t(values[3]), 1u);
  float ms = -1;
  std::memcpy(&ms, &values[4], sizeof ms);
  EXPECT_GE(ms, 0.0f);
  EXPECT_LT(ms, 60000.0f);

  // One module: `read` sees the `counter` that `bump` changes (the code generator links
  // the modules by name, as for -rdc programs).
  CUmodule m = nullptr;
  ASSERT_EQ(CU(cuModuleLoadData)(&m, image), CUDA_SUCCESS);
  CUfunction bump = nullptr, read = nullptr;
  ASSERT_EQ(CU(cuModuleGetFunction)(&bump, m, "bump"), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuModuleGetFunction)(&read, m, "read"), CUDA_SUCCESS);
  CUdeviceptr counter = 0;
  size_t bytes = 0;
  ASSERT_EQ(CU(cuModuleGetGlobal)(&counter, &bytes, m, "counter"), CUDA_SUCCESS);
  EXPECT_EQ(bytes, 4u);
  EXPECT_EQ(run_read(read), 5u);
  CUdeviceptr unused = 0;
  void* params[] = {&unused};
  ASSERT_EQ(CU(cuLaunchKernel)(bump, 1, 1, 1, 1, 1, 1, 0, nullptr, params, nullptr), CUDA_SUCCESS);
  EXPECT_EQ(run_read(read), 6u);
  EXPECT_EQ(CU(cuModuleUnload)(m), CUDA_SUCCESS);

  // A library loads the same image; the image is the link state's until it is destroyed.
  CUlibrary lib = nullptr;
  ASSERT_EQ(CU(cuLibraryLoadData)(&lib, image, nullptr, nullptr, 0, nullptr, nullptr, 0),
            CUDA_SUCCESS);
  CUkernel k = nullptr;
  EXPECT_EQ(CU(cuLibraryGetKernel)(&k, lib, "read"), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuLibraryUnload)(lib), CUDA_SUCCESS);
  // Completing again hands out the same image; nothing more can be added.
  void* again = nullptr;
  EXPECT_EQ(CU(cuLinkComplete)(link, &again, &size), CUDA_SUCCESS);
  EXPECT_EQ(again, image);
  EXPECT_EQ(add_ptx(link, kDefines, "late.ptx"), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuLinkDestroy)(link), CUDA_SUCCESS);
}

// One module through the linker loads and runs with today's code generator.
TEST_F(Link, OneModuleLinksLoadsAndRuns) {
  const char* self_contained = ".version 8.0\n.target sm_75\n.address_size 64\n"
                               ".visible .global .align 4 .u32 counter = 41;\n"
                               ".visible .entry read(.param .u64 out)\n{\n"
                               " .reg .u64 %rd<2>;\n .reg .u32 %r<2>;\n"
                               " ld.param.u64 %rd1, [out];\n cvta.to.global.u64 %rd1, %rd1;\n"
                               " ld.global.u32 %r1, [counter];\n add.u32 %r1, %r1, 1;\n"
                               " st.global.u32 [%rd1], %r1;\n ret;\n}\n";
  CUlinkState link = nullptr;
  ASSERT_EQ(CU(cuLinkCreate)(0, nullptr, nullptr, &link), CUDA_SUCCESS);
  ASSERT_EQ(add_ptx(link, self_contained, "one.ptx"), CUDA_SUCCESS);
  void* image = nullptr;
  size_t size = 0;
  ASSERT_EQ(CU(cuLinkComplete)(link, &image, &size), CUDA_SUCCESS);
  CUmodule m = nullptr;
  ASSERT_EQ(CU(cuModuleLoadData)(&m, image), CUDA_SUCCESS);
  CUfunction read = nullptr;
  ASSERT_EQ(CU(cuModuleGetFunction)(&read, m, "read"), CUDA_SUCCESS);
  EXPECT_EQ(run_read(read), 42u);
  // A damaged copy of the image is refused, not read past its end.
  std::vector<uint8_t> damaged(static_cast<uint8_t*>(image), static_cast<uint8_t*>(image) + size);
  uint64_t too_long = size + 100;
  std::memcpy(damaged.data() + 16, &too_long, 8);
  CUmodule bad = nullptr;
  EXPECT_EQ(CU(cuModuleLoadData)(&bad, damaged.data()), CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(CU(cuModuleUnload)(m), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuLinkDestroy)(link), CUDA_SUCCESS);
}

TEST_F(Link, ParseErrorsNameTheInputAndLine) {
  char error[2048] = "x";
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error, reinterpret_cast<void*>(uintptr_t(sizeof error))};
  CUlinkState link = nullptr;
  ASSERT_EQ(CU(cuLinkCreate)(2, options, values, &link), CUDA_SUCCESS);
  EXPECT_EQ(add_ptx(link, kBroken, "broken.ptx"), CUDA_ERROR_INVALID_PTX);
  std::string text = error;
  EXPECT_NE(text.find("broken.ptx:6"), std::string::npos) << text;
  EXPECT_NE(text.find("frobnicate"), std::string::npos) << text;
  EXPECT_EQ(uintptr_t(values[1]), text.size() + 1);
  // Nothing was added: completing has nothing to link, and says so.
  void* image = nullptr;
  size_t size = 0;
  EXPECT_EQ(CU(cuLinkComplete)(link, &image, &size), CUDA_ERROR_INVALID_VALUE);
  EXPECT_NE(std::string(error).find("nothing to link"), std::string::npos) << error;
  EXPECT_EQ(CU(cuLinkDestroy)(link), CUDA_SUCCESS);
}

TEST_F(Link, UndefinedAndDuplicateSymbols) {
  char error[2048] = "";
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error, reinterpret_cast<void*>(uintptr_t(sizeof error))};
  CUlinkState link = nullptr;
  ASSERT_EQ(CU(cuLinkCreate)(2, options, values, &link), CUDA_SUCCESS);
  ASSERT_EQ(add_ptx(link, kUndefined, "lonely.ptx"), CUDA_SUCCESS);
  void* image = nullptr;
  size_t size = 0;
  EXPECT_EQ(CU(cuLinkComplete)(link, &image, &size), CUDA_ERROR_INVALID_IMAGE);
  EXPECT_NE(std::string(error).find("lonely.ptx: error: undefined reference to 'nowhere'"),
            std::string::npos)
      << error;
  EXPECT_EQ(CU(cuLinkDestroy)(link), CUDA_SUCCESS);

  // `counter` defined twice. (The same text twice counts once: objects carry their PTX in
  // two sections.)
  std::string twin = kDefines;
  twin.replace(twin.find("bump"), 4, "bum2");
  values[1] =
      reinterpret_cast<void*>(uintptr_t(sizeof error)); // the slot said how much was written
  ASSERT_EQ(CU(cuLinkCreate)(2, options, values, &link), CUDA_SUCCESS);
  ASSERT_EQ(add_ptx(link, kDefines, "one.ptx"), CUDA_SUCCESS);
  ASSERT_EQ(add_ptx(link, kDefines, "same.ptx"), CUDA_SUCCESS);
  ASSERT_EQ(add_ptx(link, twin.c_str(), "two.ptx"), CUDA_SUCCESS);
  EXPECT_NE(CU(cuLinkComplete)(link, &image, &size), CUDA_SUCCESS);
  EXPECT_NE(std::string(error).find(
                "two.ptx: error: multiple definition of 'counter', first defined in one.ptx"),
            std::string::npos)
      << error;
  EXPECT_EQ(CU(cuLinkDestroy)(link), CUDA_SUCCESS);
}

TEST_F(Link, FatbinariesObjectsAndFiles) {
  using namespace mimic::test;
  // A fatbin with PTX for sm_75 (the device runs it) and an object carrying a fatbin with
  // the other module in __nv_relfatbin, as -rdc builds do.
  Bytes fatbin =
      build_fatbin({EntrySpec{1, 75, 8, 0, mimic::fatbin::Compression::Lz4, kDefines, ""}});
  Bytes object =
      build_elf({{"__nv_relfatbin", build_fatbin({EntrySpec{1, 75, 8, 0, {}, kUses, ""}})}});
  std::string path = testing::TempDir() + "/mimic_link_object." + std::to_string(getpid()) + ".o";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(object.data()), std::streamsize(object.size()));
  }
  CUlinkState link = nullptr;
  ASSERT_EQ(CU(cuLinkCreate)(0, nullptr, nullptr, &link), CUDA_SUCCESS);
  ASSERT_EQ(CU(cuLinkAddData)(link, CU_JIT_INPUT_FATBINARY, fatbin.data(), fatbin.size(),
                              "defines.fatbin", 0, nullptr, nullptr),
            CUDA_SUCCESS);
  ASSERT_EQ(CU(cuLinkAddFile)(link, CU_JIT_INPUT_OBJECT, path.c_str(), 0, nullptr, nullptr),
            CUDA_SUCCESS);
  void* image = nullptr;
  size_t size = 0;
  ASSERT_EQ(CU(cuLinkComplete)(link, &image, &size), CUDA_SUCCESS);
  CUmodule m = nullptr;
  CUresult loaded = CU(cuModuleLoadData)(&m, image);
  ASSERT_TRUE(loaded == CUDA_SUCCESS || loaded == CUDA_ERROR_NOT_SUPPORTED) << loaded; // as above
  if (loaded == CUDA_SUCCESS) {
    CUfunction read = nullptr;
    ASSERT_EQ(CU(cuModuleGetFunction)(&read, m, "read"), CUDA_SUCCESS);
    EXPECT_EQ(run_read(read), 5u);
    EXPECT_EQ(CU(cuModuleUnload)(m), CUDA_SUCCESS);
  }
  EXPECT_EQ(CU(cuLinkDestroy)(link), CUDA_SUCCESS);
  std::remove(path.c_str());

  // PTX from a file, and inputs Mimic cannot use.
  std::string ptx_path = testing::TempDir() + "/mimic_link." + std::to_string(getpid()) + ".ptx";
  {
    std::ofstream out(ptx_path);
    out << kDefines;
  }
  ASSERT_EQ(CU(cuLinkCreate)(0, nullptr, nullptr, &link), CUDA_SUCCESS);
  EXPECT_EQ(CU(cuLinkAddFile)(link, CU_JIT_INPUT_PTX, ptx_path.c_str(), 0, nullptr, nullptr),
            CUDA_SUCCESS);
  EXPECT_EQ(CU(cuLinkAddFile)(link, CU_JIT_INPUT_PTX, "/nonexistent/x.ptx", 0, nullptr, nullptr),
            CUDA_ERROR_FILE_NOT_FOUND);
  Bytes sass_only = build_fatbin({EntrySpec{2,
                                            75,
                                            8,
                                            0,
                                            {},
                                            "\x7f"
                                            "ELF machine code",
                                            ""}});
  EXPECT_EQ(CU(cuLinkAddData)(link, CU_JIT_INPUT_FATBINARY, sass_only.data(), sass_only.size(),
                              "sass.fatbin", 0, nullptr, nullptr),
            CUDA_ERROR_NO_BINARY_FOR_GPU);
  char junk[] = "not a fatbin at all, just bytes";
  EXPECT_EQ(CU(cuLinkAddData)(link, CU_JIT_INPUT_FATBINARY, junk, sizeof junk, "junk", 0, nullptr,
                              nullptr),
            CUDA_ERROR_INVALID_IMAGE);
  EXPECT_EQ(CU(cuLinkAddData)(link, CU_JIT_INPUT_CUBIN, junk, sizeof junk, "x.cubin", 0, nullptr,
                              nullptr),
            CUDA_ERROR_NO_BINARY_FOR_GPU);
  EXPECT_EQ(
      CU(cuLinkAddData)(link, CU_JIT_INPUT_NVVM, junk, sizeof junk, "x.nvvm", 0, nullptr, nullptr),
      CUDA_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(CU(cuLinkComplete)(link, &image, &size), CUDA_SUCCESS); // the good input still links
  EXPECT_EQ(CU(cuLinkDestroy)(link), CUDA_SUCCESS);
  std::remove(ptx_path.c_str());
}

TEST_F(Link, Misuse) {
  CUlinkState link = nullptr;
  CUjit_option bad_level[] = {CU_JIT_OPTIMIZATION_LEVEL};
  void* level[] = {reinterpret_cast<void*>(uintptr_t(9))};
  EXPECT_EQ(CU(cuLinkCreate)(1, bad_level, level, &link), CUDA_ERROR_INVALID_VALUE);
  CUjit_option unknown[] = {CUjit_option(999)};
  void* nothing[] = {nullptr};
  EXPECT_EQ(CU(cuLinkCreate)(1, unknown, nothing, &link), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuLinkCreate)(1, nullptr, nullptr, &link), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuLinkCreate)(0, nullptr, nullptr, nullptr), CUDA_ERROR_INVALID_VALUE);

  ASSERT_EQ(CU(cuLinkCreate)(0, nullptr, nullptr, &link), CUDA_SUCCESS);
  void* image = nullptr;
  size_t size = 0;
  EXPECT_EQ(CU(cuLinkAddData)(link, CU_JIT_INPUT_PTX, nullptr, 10, "x", 0, nullptr, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuLinkAddData)(link, CUjitInputType(42), const_cast<char*>(kDefines), 10, "x", 0,
                              nullptr, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuLinkAddFile)(link, CU_JIT_INPUT_PTX, nullptr, 0, nullptr, nullptr),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuLinkComplete)(link, nullptr, &size), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuLinkComplete)(link, &image, nullptr), CUDA_ERROR_INVALID_VALUE);
  ASSERT_EQ(CU(cuLinkDestroy)(link), CUDA_SUCCESS);
  // Destroyed, foreign and garbage states.
  CUstream stream = nullptr;
  ASSERT_EQ(CU(cuStreamCreate)(&stream, 0), CUDA_SUCCESS);
  uint64_t garbage[4] = {1, 2, 3, 4};
  for (void* bad :
       {static_cast<void*>(link), static_cast<void*>(stream), static_cast<void*>(garbage),
        reinterpret_cast<void*>(uintptr_t(0xdeadbeef000))}) {
    auto s = static_cast<CUlinkState>(bad);
    EXPECT_EQ(CU(cuLinkDestroy)(s), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(add_ptx(s, kDefines, "x"), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(CU(cuLinkAddFile)(s, CU_JIT_INPUT_PTX, "x.ptx", 0, nullptr, nullptr),
              CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(CU(cuLinkComplete)(s, &image, &size), CUDA_ERROR_INVALID_HANDLE);
  }
  EXPECT_EQ(CU(cuLinkDestroy)(nullptr), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuStreamDestroy)(stream), CUDA_SUCCESS);
}

TEST_F(Link, LibraryLoadOptionsAreChecked) {
  CUlibraryOption preserved[] = {CU_LIBRARY_BINARY_IS_PRESERVED};
  void* one[] = {reinterpret_cast<void*>(uintptr_t(1))};
  CUlibrary lib = nullptr;
  ASSERT_EQ(CU(cuLibraryLoadData)(&lib, kDefines, nullptr, nullptr, 0, preserved, one, 1),
            CUDA_SUCCESS);
  EXPECT_EQ(CU(cuLibraryUnload)(lib), CUDA_SUCCESS);
  CUlibraryOption unknown[] = {CUlibraryOption(77)};
  EXPECT_EQ(CU(cuLibraryLoadData)(&lib, kDefines, nullptr, nullptr, 0, unknown, one, 1),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(CU(cuLibraryLoadData)(&lib, kDefines, nullptr, nullptr, 0, nullptr, nullptr, 1),
            CUDA_ERROR_INVALID_VALUE);
  CUjit_option level[] = {CU_JIT_OPTIMIZATION_LEVEL};
  void* nine[] = {reinterpret_cast<void*>(uintptr_t(9))};
  EXPECT_EQ(CU(cuLibraryLoadData)(&lib, kDefines, level, nine, 1, nullptr, nullptr, 0),
            CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(
      CU(cuLibraryLoadFromFile)(&lib, "/nonexistent.ptx", level, nine, 1, nullptr, nullptr, 0),
      CUDA_ERROR_INVALID_VALUE);
}

TEST_F(Link, ModuleLoadDataExFillsTheErrorLog) {
  char error[2048] = "x", info[256] = "x";
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void* values[] = {error, reinterpret_cast<void*>(uintptr_t(sizeof error)), info,
                    reinterpret_cast<void*>(uintptr_t(sizeof info))};
  CUmodule m = nullptr;
  EXPECT_EQ(CU(cuModuleLoadDataEx)(&m, kBroken, 4, options, values), CUDA_ERROR_INVALID_PTX);
  EXPECT_NE(std::string(error).find(":6:"), std::string::npos) << error;
  EXPECT_EQ(uintptr_t(values[1]), strlen(error) + 1);
  // A tiny buffer gets the start of the message, terminated.
  char small[8];
  void* small_values[] = {small, reinterpret_cast<void*>(uintptr_t(sizeof small)), info,
                          reinterpret_cast<void*>(uintptr_t(sizeof info))};
  EXPECT_EQ(CU(cuModuleLoadDataEx)(&m, kBroken, 4, options, small_values), CUDA_ERROR_INVALID_PTX);
  EXPECT_EQ(strlen(small), 7u);
  EXPECT_EQ(uintptr_t(small_values[1]), 8u);
  ASSERT_EQ(CU(cuModuleLoadDataEx)(&m, kDefines, 4, options, values), CUDA_SUCCESS);
  EXPECT_STREQ(error, "");
  EXPECT_EQ(CU(cuModuleUnload)(m), CUDA_SUCCESS);
}

} // namespace
