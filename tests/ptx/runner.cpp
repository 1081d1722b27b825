// Runs the tests/ptx suite through the CUDA driver API and compares each kernel's outputs
// with the expected data of its .cases file. It uses only the driver API (loaded with
// dlopen), so the same binary runs on Mimic's libcuda.so.1 and on NVIDIA's.
//
//   ptx_runner [--lib PATH] [--record DIR] [--only SUBSTRING] FILE.cases...
//
// A .cases file sits next to the .ptx module of the same name:
//   kernel NAME in TYPE... out TYPE... [tol ulp N | tol abs X | tol rel X]
//   case HEX... : HEX...
// Each case is one thread: the kernel reads its inputs from 8-byte slots in[case][k] and
// writes its outputs to out[case][k] (raw bits in the low bytes). Float outputs compare bit
// for bit, except that an expected NaN accepts any NaN and `tol` allows the ISA's error
// bound of an .approx instruction (rel: relative to the expected value, absolute below 1). --record
// writes the .cases files again into DIR with the outputs this driver produced
// (tests/ptx/refresh_from_gpu.sh uses it on an NVIDIA GPU).
#include <cuda.h>

#include <dlfcn.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Kernel {
  std::string name;
  std::vector<std::string> in, out;
  std::string tol_kind; // "", "ulp", "abs"
  double tol = 0;
  std::vector<std::vector<uint64_t>> inputs, outputs;
  std::vector<std::string> header_lines; // comments before the kernel line, kept by --record
};

struct Api {
  decltype(&cuInit) init;
  decltype(&cuDeviceGet) device_get;
  decltype(&cuDevicePrimaryCtxRetain) primary_retain;
  decltype(&cuCtxSetCurrent) set_current;
  decltype(&cuModuleLoadData) load;
  decltype(&cuModuleUnload) unload;
  decltype(&cuModuleGetFunction) get_function;
  decltype(&cuMemAlloc) alloc;
  decltype(&cuMemFree) free;
  decltype(&cuMemcpyHtoD) htod;
  decltype(&cuMemcpyDtoH) dtoh;
  decltype(&cuMemsetD8) memset8;
  decltype(&cuLaunchKernel) launch;
  decltype(&cuCtxSynchronize) sync;
  decltype(&cuGetErrorString) error_string;
};

template <typename T> bool bind(void* lib, T& fn, const char* name) {
  fn = reinterpret_cast<T>(dlsym(lib, name));
  if (!fn) std::fprintf(stderr, "ptx_runner: %s is not exported\n", name);
  return fn != nullptr;
}

unsigned type_bits(const std::string& t) {
  if (t == "pred") return 1;
  if (t == "f16" || t == "bf16") return 16;
  if (t == "f16x2" || t == "bf16x2") return 32;
  size_t digits = t.find_first_of("0123456789");
  if (digits == std::string::npos) return 0;
  return unsigned(std::stoul(t.substr(digits)));
}

bool is_float(const std::string& t) {
  return t == "f16" || t == "bf16" || t == "f32" || t == "f64" || t == "tf32";
}

double to_double(const std::string& t, uint64_t bits) {
  if (t == "f64") {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  if (t == "f32" || t == "tf32") {
    uint32_t b = uint32_t(bits);
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  if (t == "bf16") {
    uint32_t b = uint32_t(bits & 0xffff) << 16;
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  // f16
  unsigned sign = (bits >> 15) & 1, e = (bits >> 10) & 31, m = bits & 1023;
  double v = e == 0    ? std::ldexp(double(m), -24)
             : e == 31 ? (m ? NAN : INFINITY)
                       : std::ldexp(double(m | 1024), int(e) - 25);
  return sign ? -v : v;
}

// Position of a float on the line of representable values (for ulp distances).
int64_t ordinal(const std::string& t, uint64_t bits) {
  unsigned w = type_bits(t);
  uint64_t sign = uint64_t(1) << (w - 1);
  uint64_t mag = bits & (sign - 1);
  return (bits & sign) ? -int64_t(mag) : int64_t(mag);
}

bool matches(const Kernel& k, const std::string& t, uint64_t expected, uint64_t actual) {
  unsigned w = type_bits(t);
  uint64_t mask = w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
  expected &= mask;
  actual &= mask;
  if (expected == actual) return true;
  if (!is_float(t)) return false;
  double e = to_double(t, expected), a = to_double(t, actual);
  if (std::isnan(e)) return std::isnan(a);
  if (k.tol_kind == "ulp")
    return !std::isnan(a) &&
           std::llabs(ordinal(t, expected) - ordinal(t, actual)) <= int64_t(k.tol);
  if (k.tol_kind == "abs") return !std::isnan(a) && (e == a || std::fabs(e - a) <= k.tol);
  if (k.tol_kind == "rel") // relative to the expected value, absolute below 1
    return !std::isnan(a) && (e == a || std::fabs(e - a) <= k.tol * std::max(1.0, std::fabs(e)));
  return false;
}

std::string hex(uint64_t v, const std::string& t) {
  unsigned digits = std::max(1u, (type_bits(t) + 3) / 4);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%0*" PRIx64, int(digits), v);
  return buf;
}

bool parse_cases(const std::string& path, std::vector<Kernel>& kernels,
                 std::vector<std::string>& trailer) {
  std::ifstream f(path);
  if (!f) {
    std::fprintf(stderr, "ptx_runner: cannot read %s\n", path.c_str());
    return false;
  }
  std::string line;
  std::vector<std::string> pending;
  unsigned lineno = 0;
  while (std::getline(f, line)) {
    ++lineno;
    std::istringstream in(line);
    std::string word;
    if (!(in >> word) || word[0] == '#') {
      pending.push_back(line);
      continue;
    }
    if (word == "kernel") {
      Kernel k;
      k.header_lines = std::move(pending);
      pending.clear();
      in >> k.name;
      std::vector<std::string>* list = nullptr;
      while (in >> word) {
        if (word == "in")
          list = &k.in;
        else if (word == "out")
          list = &k.out;
        else if (word == "tol") {
          in >> k.tol_kind >> k.tol;
          list = nullptr;
        } else if (list)
          list->push_back(word);
      }
      kernels.push_back(std::move(k));
      continue;
    }
    if (word != "case" || kernels.empty()) {
      std::fprintf(stderr, "%s:%u: expected 'kernel' or 'case'\n", path.c_str(), lineno);
      return false;
    }
    Kernel& k = kernels.back();
    std::vector<uint64_t> ins, outs;
    bool after = false;
    while (in >> word) {
      if (word == ":") {
        after = true;
        continue;
      }
      (after ? outs : ins).push_back(std::stoull(word, nullptr, 16));
    }
    if (ins.size() != k.in.size() || outs.size() != k.out.size()) {
      std::fprintf(
          stderr, "%s:%u: case of kernel %s has %zu inputs and %zu outputs, expected %zu and %zu\n",
          path.c_str(), lineno, k.name.c_str(), ins.size(), outs.size(), k.in.size(), k.out.size());
      return false;
    }
    k.inputs.push_back(ins);
    k.outputs.push_back(outs);
  }
  trailer = std::move(pending);
  return true;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

} // namespace

int main(int argc, char** argv) {
  std::string lib_path =
#ifdef MIMIC_LIBCUDA
      MIMIC_LIBCUDA;
#else
      "libcuda.so.1";
#endif
  std::string record_dir, only;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--lib" && i + 1 < argc)
      lib_path = argv[++i];
    else if (a == "--record" && i + 1 < argc)
      record_dir = argv[++i];
    else if (a == "--only" && i + 1 < argc)
      only = argv[++i];
    else
      files.push_back(a);
  }
  void* lib = dlopen(lib_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "ptx_runner: dlopen(%s): %s\n", lib_path.c_str(), dlerror());
    return 2;
  }
  Api api{};
  bool ok = bind(lib, api.init, "cuInit") && bind(lib, api.device_get, "cuDeviceGet") &&
            bind(lib, api.primary_retain, "cuDevicePrimaryCtxRetain") &&
            bind(lib, api.set_current, "cuCtxSetCurrent") &&
            bind(lib, api.load, "cuModuleLoadData") && bind(lib, api.unload, "cuModuleUnload") &&
            bind(lib, api.get_function, "cuModuleGetFunction") &&
            bind(lib, api.alloc, "cuMemAlloc_v2") && bind(lib, api.free, "cuMemFree_v2") &&
            bind(lib, api.htod, "cuMemcpyHtoD_v2") && bind(lib, api.dtoh, "cuMemcpyDtoH_v2") &&
            bind(lib, api.memset8, "cuMemsetD8_v2") && bind(lib, api.launch, "cuLaunchKernel") &&
            bind(lib, api.sync, "cuCtxSynchronize") &&
            bind(lib, api.error_string, "cuGetErrorString");
  if (!ok) return 2;
  auto check = [&](CUresult r, const char* what) {
    if (r == CUDA_SUCCESS) return true;
    const char* s = nullptr;
    api.error_string(r, &s);
    std::fprintf(stderr, "ptx_runner: %s failed: %d %s\n", what, int(r), s ? s : "");
    return false;
  };
  CUdevice dev;
  CUcontext ctx;
  if (!check(api.init(0), "cuInit") || !check(api.device_get(&dev, 0), "cuDeviceGet") ||
      !check(api.primary_retain(&ctx, dev), "cuDevicePrimaryCtxRetain") ||
      !check(api.set_current(ctx), "cuCtxSetCurrent"))
    return 2;

  size_t total_kernels = 0, total_cases = 0, failed_cases = 0, failed_kernels = 0,
         broken_modules = 0;
  for (const std::string& cases_path : files) {
    std::vector<Kernel> kernels;
    std::vector<std::string> trailer;
    if (!parse_cases(cases_path, kernels, trailer)) {
      ++broken_modules;
      continue;
    }
    std::string ptx_path = cases_path.substr(0, cases_path.rfind(".cases")) + ".ptx";
    std::string ptx = read_file(ptx_path);
    CUmodule mod;
    if (!check(api.load(&mod, ptx.c_str()), ("cuModuleLoadData(" + ptx_path + ")").c_str())) {
      ++broken_modules;
      continue;
    }
    std::string recorded;
    for (Kernel& k : kernels) {
      if (!only.empty() && k.name.find(only) == std::string::npos) continue;
      ++total_kernels;
      size_t n = k.inputs.size(), nin = k.in.size(), nout = k.out.size();
      CUfunction fn;
      if (!check(api.get_function(&fn, mod, k.name.c_str()),
                 ("cuModuleGetFunction(" + k.name + ")").c_str())) {
        ++failed_kernels;
        failed_cases += n;
        continue;
      }
      std::vector<uint64_t> in(n * nin), out(n * nout);
      for (size_t c = 0; c < n; ++c)
        for (size_t i = 0; i < nin; ++i)
          in[c * nin + i] = k.inputs[c][i];
      CUdeviceptr din = 0, dout = 0;
      size_t in_bytes = std::max<size_t>(8, in.size() * 8),
             out_bytes = std::max<size_t>(8, out.size() * 8);
      bool run = check(api.alloc(&din, in_bytes), "cuMemAlloc") &&
                 check(api.alloc(&dout, out_bytes), "cuMemAlloc") &&
                 check(api.htod(din, in.data(), in.size() * 8), "cuMemcpyHtoD") &&
                 check(api.memset8(dout, 0, out_bytes), "cuMemsetD8");
      if (run) {
        unsigned count = unsigned(n);
        void* args[] = {&din, &dout, &count};
        unsigned block = 64, grid = unsigned((n + block - 1) / block);
        run = check(api.launch(fn, grid, 1, 1, block, 1, 1, 0, nullptr, args, nullptr),
                    ("launch " + k.name).c_str()) &&
              check(api.sync(), ("synchronize " + k.name).c_str()) &&
              check(api.dtoh(out.data(), dout, out.size() * 8), "cuMemcpyDtoH");
      }
      if (din) api.free(din);
      if (dout) api.free(dout);
      total_cases += n;
      if (!run) {
        ++failed_kernels;
        failed_cases += n;
        continue;
      }
      size_t bad = 0;
      for (size_t c = 0; c < n; ++c) {
        for (size_t o = 0; o < nout; ++o) {
          if (matches(k, k.out[o], k.outputs[c][o], out[c * nout + o])) continue;
          if (++bad <= 8) {
            std::string ins;
            for (size_t i = 0; i < nin; ++i)
              ins += (i ? " " : "") + hex(k.inputs[c][i], k.in[i]);
            std::printf("FAIL %s case %zu (%s) output %zu: expected %s, got %s\n", k.name.c_str(),
                        c, ins.c_str(), o, hex(k.outputs[c][o], k.out[o]).c_str(),
                        hex(out[c * nout + o], k.out[o]).c_str());
          }
          break;
        }
      }
      bad = 0;
      for (size_t c = 0; c < n; ++c)
        for (size_t o = 0; o < nout; ++o)
          if (!matches(k, k.out[o], k.outputs[c][o], out[c * nout + o])) {
            ++bad;
            break;
          }
      failed_cases += bad;
      if (bad) ++failed_kernels;
      if (!record_dir.empty()) {
        for (const std::string& h : k.header_lines)
          recorded += h + "\n";
        recorded += "kernel " + k.name + " in";
        for (auto& t : k.in)
          recorded += " " + t;
        recorded += " out";
        for (auto& t : k.out)
          recorded += " " + t;
        if (!k.tol_kind.empty()) {
          char buf[64];
          std::snprintf(buf, sizeof buf, " tol %s %.17g", k.tol_kind.c_str(), k.tol);
          recorded += buf;
        }
        recorded += "\n";
        for (size_t c = 0; c < n; ++c) {
          recorded += "case";
          for (size_t i = 0; i < nin; ++i)
            recorded += " " + hex(k.inputs[c][i], k.in[i]);
          recorded += " :";
          for (size_t o = 0; o < nout; ++o) {
            unsigned w = type_bits(k.out[o]);
            uint64_t mask = w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
            recorded += " " + hex(out[c * nout + o] & mask, k.out[o]);
          }
          recorded += "\n";
        }
      }
    }
    api.unload(mod);
    if (!record_dir.empty()) {
      for (const std::string& t : trailer)
        recorded += t + "\n";
      std::string name = cases_path.substr(cases_path.rfind('/') + 1);
      std::ofstream(record_dir + "/" + name) << recorded;
    }
  }
  std::printf(
      "ptx suite: %zu kernels, %zu cases, %zu failed cases in %zu kernels, %zu modules not run\n",
      total_kernels, total_cases, failed_cases, failed_kernels, broken_modules);
  return (failed_cases || broken_modules) && record_dir.empty() ? 1 : 0;
}
