// The library under test, loaded with dlopen as the CUDA runtime loads it: the tests link
// nothing of Mimic. MIMIC_LIBCUDA is the path of the built libcuda.so.1.
#pragma once

#include <cudaTypedefs.h>

#include <dlfcn.h>
#include <gtest/gtest.h>

namespace mimic::test {

inline void* libcuda() {
  static void* handle = dlopen(MIMIC_LIBCUDA, RTLD_NOW | RTLD_LOCAL);
  return handle;
}

// The exported function `name`, or nullptr (with a test failure) when it is missing.
template <typename Fn> Fn exported(const char* name) {
  void* handle = libcuda();
  EXPECT_NE(handle, nullptr) << "dlopen(" << MIMIC_LIBCUDA << "): " << dlerror();
  void* p = handle ? dlsym(handle, name) : nullptr;
  EXPECT_NE(p, nullptr) << name << " is not exported";
  return reinterpret_cast<Fn>(p);
}

// The name of the exported function at `address` ("" when there is none).
inline std::string symbol_at(const void* address) {
  Dl_info info{};
  if (!address || !dladdr(address, &info) || !info.dli_sname) return "";
  return info.dli_sname;
}

} // namespace mimic::test

// CU(cuMemAlloc) is the exported function the CUDA 13 header declares under that name
// (cuMemAlloc_v2), typed by that declaration.
#define MIMIC_CU_SYMBOL(name) #name
#define MIMIC_CU_EXPORT(name) (::mimic::test::exported<decltype(&::name)>(MIMIC_CU_SYMBOL(name)))
#define CU(name) MIMIC_CU_EXPORT(name)
