// Runs each kernel of mma_forms.ptx two ways on the same random inputs and compares the
// bits: on Mimic's CPU backend (libcuda; the executor's matrix.cpp is the reference) and as
// the AMDGPU lowering's optimised IR for gfx1100, compiled for the host with the wave
// emulated by 32 threads (ds_bpermute through a slot array between two barriers). This
// checks the lowering's arithmetic and lane exchanges, not LLVM's amdgcn code generation.
// MMA_NUMERIC_MUTATE=1 reads every exchange from the wrong lane group: each form must then
// differ (the check can fail).
//   usage: mma_numeric MMA_FORMS_PTX
#include <barrier>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

static thread_local unsigned lane_id;
static std::barrier<> wave(32);
static uint32_t slots[32];
extern "C" unsigned emu_tid() {
  return lane_id;
}
extern "C" unsigned emu_mbcnt_lo(unsigned mask, unsigned acc) {
  return acc + std::popcount(mask & ((1u << lane_id) - 1));
}
extern "C" unsigned emu_mbcnt_hi(unsigned, unsigned acc) {
  return acc;
}
extern "C" unsigned emu_bpermute(unsigned address, unsigned v) {
  slots[lane_id] = v;
  wave.arrive_and_wait();
  static const bool mutate = getenv("MMA_NUMERIC_MUTATE") != nullptr;
  unsigned r = slots[((address >> 2) + (mutate ? 4 : 0)) & 31];
  wave.arrive_and_wait();
  return r;
}

// The kernels of mma_forms.ptx, lowered for gfx1100 (the arguments: the .param words).
extern "C" {
void f16_f32_k8(void*, void*);
void f16_f32_k16(void*, void*);
void bf16_f32_k16(void*, void*);
void bf16_f32_k8(void*, void*);
void f16_f16_k8(void*, void*);
void f16_f16_k16(void*, void*);
void tf32_k4(void*, void*);
void tf32_k8(void*, void*);
void s8_k16(void*, void*);
void u8s8_k32_sat(void*, void*);
void s8_k32(void*, void*);
void s4_k32_sat(void*, void*);
void u4_k64(void*, void*);
void s4u4_k64_sat(void*, void*);
void f64_k4(void*, void*);
}

struct Form {
  const char* name;
  void (*fn)(void*, void*);
  char a, c;
  unsigned na, nb, nc;
};
// Input kinds of a and b, and of c: h f16 pairs, b bf16 pairs, t tf32 (any low bits), f f32,
// i any integer, s near the s32 limits (to saturate), d f64.
static const Form forms[] = {
    {"f16_f32_k8", f16_f32_k8, 'h', 'f', 2, 1, 4},
    {"f16_f32_k16", f16_f32_k16, 'h', 'f', 4, 2, 4},
    {"bf16_f32_k16", bf16_f32_k16, 'b', 'f', 4, 2, 4},
    {"bf16_f32_k8", bf16_f32_k8, 'b', 'f', 2, 1, 4},
    {"f16_f16_k8", f16_f16_k8, 'h', 'h', 2, 1, 2},
    {"f16_f16_k16", f16_f16_k16, 'h', 'h', 4, 2, 2},
    {"tf32_k4", tf32_k4, 't', 'f', 2, 1, 4},
    {"tf32_k8", tf32_k8, 't', 'f', 4, 2, 4},
    {"s8_k16", s8_k16, 'i', 'i', 2, 1, 4},
    {"u8s8_k32_sat", u8s8_k32_sat, 'i', 's', 4, 2, 4},
    {"s8_k32", s8_k32, 'i', 's', 4, 2, 4},
    {"s4_k32_sat", s4_k32_sat, 'i', 's', 2, 1, 4},
    {"u4_k64", u4_k64, 'i', 's', 4, 2, 4},
    {"s4u4_k64_sat", s4u4_k64_sat, 'i', 's', 4, 2, 4},
    {"f64_k4", f64_k4, 'd', 'd', 2, 2, 4},
};

static std::mt19937 rng(42);
static uint32_t half_bits() { // sign, exponent 8..22 (2^-7 .. 2^7), any mantissa
  return (rng() & 0x8000) | ((8 + rng() % 15) << 10) | (rng() & 0x3ff);
}
static uint32_t word(char kind, unsigned j) {
  switch (kind) {
  case 'h':
    return half_bits() | half_bits() << 16;
  case 'b':
    return ((rng() & 0x8000) | ((120 + rng() % 15) << 7) | (rng() & 0x7f)) |
           ((rng() & 0x8000) | ((120 + rng() % 15) << 7) | (rng() & 0x7f)) << 16;
  case 't':
  case 'f':
    return (rng() & 0x80000000u) | ((117 + rng() % 20) << 23) | (rng() & 0x7fffff);
  case 's':
    return rng() % 2 ? 0x7ffff000u + rng() % 4096 : 0x80000000u + rng() % 4096;
  case 'd': {
    if (j % 2 == 0) return rng();
    return (rng() & 0x80000000u) | ((1003 + rng() % 40) << 20) | (rng() & 0xfffff);
  }
  default:
    return rng();
  }
}

#define CHECK(x)                                                                                   \
  do {                                                                                             \
    CUresult r_ = (x);                                                                             \
    if (r_) {                                                                                      \
      printf("%s -> %d\n", #x, int(r_));                                                           \
      return 2;                                                                                    \
    }                                                                                              \
  } while (0)
int main(int argc, char** argv) {
  std::ifstream f(argv[1]);
  std::stringstream ptx;
  ptx << f.rdbuf();
  CHECK(cuInit(0));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  char name[256];
  cuDeviceGetName(name, sizeof name, dev);
  printf("reference device: %s\n", name);
  CUcontext ctx;
  CHECK(cuCtxCreate(&ctx, nullptr, 0, dev));
  CUmodule mod;
  CHECK(cuModuleLoadData(&mod, ptx.str().c_str()));
  const unsigned words = 32 * 48;
  int failures = 0;
  for (const Form& form : forms) {
    unsigned mismatched = 0, compared = 0, nonzero = 0, saturated = 0;
    for (int round = 0; round < 20; ++round) {
      std::vector<uint32_t> in(words, 0), cpu(words, 0), emu(words, 0);
      for (unsigned l = 0; l < 32; ++l) {
        unsigned j = 0;
        for (unsigned w = 0; w < form.na + form.nb; ++w, ++j)
          in[l * 48 + j] = word(form.a, w);
        for (unsigned w = 0; w < form.nc; ++w, ++j)
          in[l * 48 + j] = word(form.c, w);
      }
      CUdeviceptr din, dout;
      CHECK(cuMemAlloc(&din, words * 4));
      CHECK(cuMemAlloc(&dout, words * 4));
      CHECK(cuMemcpyHtoD(din, in.data(), words * 4));
      CHECK(cuMemsetD32(dout, 0, words));
      CUfunction fn;
      CHECK(cuModuleGetFunction(&fn, mod, form.name));
      void* args[] = {&din, &dout};
      CHECK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr));
      CHECK(cuMemcpyDtoH(cpu.data(), dout, words * 4));
      cuMemFree(din);
      cuMemFree(dout);
      uint64_t pin = uint64_t(uintptr_t(in.data())), pout = uint64_t(uintptr_t(emu.data()));
      std::vector<std::thread> lanes;
      for (unsigned l = 0; l < 32; ++l)
        lanes.emplace_back([&, l] {
          lane_id = l;
          form.fn(&pin, &pout);
        });
      for (auto& t : lanes)
        t.join();
      for (unsigned i = 0; i < words; ++i) {
        ++compared;
        nonzero += cpu[i] != 0;
        saturated += cpu[i] == 0x7fffffffu || cpu[i] == 0x80000000u;
        if (cpu[i] != emu[i] && mismatched++ < 3)
          printf("  %s round %d word %u (lane %u): cpu %08x amdgpu %08x\n", form.name, round, i,
                 i / 48, cpu[i], emu[i]);
      }
    }
    printf("%-14s %s (%u words, %u nonzero, %u saturated, %u differ)\n", form.name,
           mismatched ? "DIFFERS" : "bit-identical", compared, nonzero, saturated, mismatched);
    failures += mismatched != 0;
  }
  return failures ? 1 : 0;
}
