// What each kernel gets: sizes, deterministic inputs, and how its outputs are compared.
// Memory-bound kernels take `working_set` bytes in all (several times the last-level
// cache by default); the compute-bound ones (sgemm, nbody) have fixed sizes of the kind
// real programs use, since their cost grows faster than their data.
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "harness.h"

namespace bench {
namespace {

uint64_t mix(uint64_t x) { // splitmix64: a counter-based generator, the same on every run
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

float uniform(uint64_t seed, size_t i, float lo, float hi) {
  return lo + (hi - lo) * float(mix(seed * 0x100000000ull + i) >> 40) * (1.0f / 16777216.0f);
}

Buffer input(const char* name, size_t bytes) {
  Buffer b;
  b.name = name;
  b.role = Role::Input;
  b.bytes = bytes;
  b.host.resize(bytes);
  return b;
}

Buffer floats(const char* name, size_t count, uint64_t seed, float lo, float hi) {
  Buffer b = input(name, count * sizeof(float));
  auto* f = reinterpret_cast<float*>(b.host.data());
  for (size_t i = 0; i < count; ++i)
    f[i] = uniform(seed, i, lo, hi);
  return b;
}

Buffer uints(const char* name, size_t count, uint64_t seed, uint32_t mask) {
  Buffer b = input(name, count * sizeof(uint32_t));
  auto* u = reinterpret_cast<uint32_t*>(b.host.data());
  for (size_t i = 0; i < count; ++i)
    u[i] = uint32_t(mix(seed * 0x100000000ull + i)) & mask;
  return b;
}

Buffer output(const char* name, size_t bytes, Compare compare, double tolerance = 0) {
  Buffer b;
  b.name = name;
  b.role = Role::Output;
  b.bytes = bytes;
  b.compare = compare;
  b.tolerance = tolerance;
  return b;
}

Buffer scratch(const char* name, size_t bytes) {
  Buffer b;
  b.name = name;
  b.role = Role::Scratch;
  b.bytes = bytes;
  return b;
}

// The side of a square float matrix, a multiple of 32, such that `matrices` of them fill `bytes`.
uint64_t square_side(size_t bytes, size_t matrices) {
  auto side = uint64_t(std::sqrt(double(bytes) / double(matrices * sizeof(float))));
  return std::max<uint64_t>(64, side / 32 * 32);
}

uint64_t pick(const Sizes& sizes, uint64_t tiny, uint64_t quick, uint64_t full) {
  switch (sizes.scale) {
  case Sizes::Scale::tiny:
    return tiny;
  case Sizes::Scale::quick:
    return quick;
  case Sizes::Scale::full:
    return full;
  }
  return full;
}

} // namespace

Problem make_problem(Kernel kernel, const Sizes& sizes) {
  const size_t w = sizes.working_set;
  Problem p;
  p.kernel = kernel;
  Params& q = p.params;
  auto& b = p.buffers;
  switch (kernel) {
  case Kernel::triad:
    q.n = w / (3 * sizeof(float));
    q.alpha = 3.0f;
    b.push_back(output("a", q.n * sizeof(float), Compare::Float, 1e-6));
    b.push_back(floats("b", q.n, 1, -1, 1));
    b.push_back(floats("c", q.n, 2, -1, 1));
    break;
  case Kernel::saxpy: {
    q.n = w / (2 * sizeof(float));
    q.alpha = 2.0f;
    b.push_back(floats("x", q.n, 3, -1, 1));
    Buffer y = floats("y", q.n, 4, -1, 1);
    y.role = Role::InOut;
    y.compare = Compare::Float;
    y.tolerance = 1e-6;
    b.push_back(std::move(y));
    break;
  }
  case Kernel::reduce:
    q.n = w / sizeof(float);
    b.push_back(floats("x", q.n, 5, 0, 1));
    b.push_back(output("sum", sizeof(float), Compare::Float, 1e-3));
    b.push_back(scratch("partials", 1024 * sizeof(float)));
    break;
  case Kernel::scan:
    q.n = w / (2 * sizeof(uint32_t)) - 7; // not a whole number of tiles
    b.push_back(uints("in", q.n, 6, 0xff));
    b.push_back(output("out", q.n * sizeof(uint32_t), Compare::Exact));
    b.push_back(scratch("tile sums", ((q.n + 1023) / 1024 + 1) * sizeof(uint32_t)));
    break;
  case Kernel::histogram: {
    q.n = w - 3; // a tail of bytes after the last whole word
    // A bell-shaped distribution (the sum of four 6-bit numbers): some bins are hot.
    Buffer bytes = input("bytes", q.n);
    for (size_t i = 0; i < q.n; ++i) {
      uint64_t r = mix(7 * 0x100000000ull + i);
      bytes.host[i] = uint8_t((r & 63) + ((r >> 6) & 63) + ((r >> 12) & 63) + ((r >> 18) & 63));
    }
    b.push_back(std::move(bytes));
    b.push_back(output("bins", 256 * sizeof(uint32_t), Compare::Exact));
    break;
  }
  case Kernel::transpose:
    q.rows = square_side(w, 2);
    q.cols = q.rows + 32; // not square
    q.rows -= 32;
    b.push_back(floats("in", q.rows * q.cols, 8, -1, 1));
    b.push_back(output("out", q.rows * q.cols * sizeof(float), Compare::Exact));
    break;
  case Kernel::sgemm:
    q.n = pick(sizes, 64, 256, 2048);
    b.push_back(floats("a", q.n * q.n, 9, -1, 1));
    b.push_back(floats("b", q.n * q.n, 10, -1, 1));
    b.push_back(output("c", q.n * q.n * sizeof(float), Compare::Float, 1e-4));
    break;
  case Kernel::stencil:
    q.rows = q.cols = square_side(w, 2);
    q.alpha = 0.5f;
    q.beta = 0.125f;
    b.push_back(floats("in", q.rows * q.cols, 11, 0, 1));
    b.push_back(output("out", q.rows * q.cols * sizeof(float), Compare::Float, 1e-5));
    break;
  case Kernel::nbody: {
    q.n = pick(sizes, 256, 2048, 32768);
    q.alpha = 0.01f; // softening squared
    Buffer pos = input("positions", q.n * 4 * sizeof(float));
    auto* f = reinterpret_cast<float*>(pos.host.data());
    for (size_t i = 0; i < q.n; ++i) {
      f[4 * i + 0] = uniform(12, 4 * i + 0, -1, 1);
      f[4 * i + 1] = uniform(12, 4 * i + 1, -1, 1);
      f[4 * i + 2] = uniform(12, 4 * i + 2, -1, 1);
      f[4 * i + 3] = uniform(12, 4 * i + 3, 0.5f, 1);
    }
    b.push_back(std::move(pos));
    b.push_back(output("accelerations", q.n * 4 * sizeof(float), Compare::Float, 1e-3));
    break;
  }
  case Kernel::softmax:
    q.cols = 1024;
    q.rows = w / (2 * sizeof(float) * q.cols);
    b.push_back(floats("in", q.rows * q.cols, 13, -8, 8));
    b.push_back(output("out", q.rows * q.cols * sizeof(float), Compare::Float, 1e-4));
    break;
  case Kernel::layernorm:
    q.cols = 1024;
    q.rows = w / (2 * sizeof(float) * q.cols);
    q.alpha = 1e-5f;
    b.push_back(floats("x", q.rows * q.cols, 14, -2, 3));
    b.push_back(floats("gamma", q.cols, 15, 0.5f, 1.5f));
    b.push_back(floats("beta", q.cols, 16, -0.5f, 0.5f));
    b.push_back(output("y", q.rows * q.cols * sizeof(float), Compare::Float, 1e-4));
    break;
  case Kernel::bitonic:
    q.n = std::max<size_t>(1, w / (2 * sizeof(uint32_t) * 2048)) * 2048;
    b.push_back(uints("in", q.n, 17, 0xffffffffu));
    b.push_back(output("out", q.n * sizeof(uint32_t), Compare::Exact));
    break;
  case Kernel::blackscholes:
    q.n = w / (5 * sizeof(float));
    q.alpha = 0.02f; // riskless rate
    q.beta = 0.30f;  // volatility
    b.push_back(floats("spot", q.n, 18, 5, 30));
    b.push_back(floats("strike", q.n, 19, 1, 100));
    b.push_back(floats("years", q.n, 20, 0.25f, 10));
    b.push_back(output("call", q.n * sizeof(float), Compare::Float, 1e-4));
    b.push_back(output("put", q.n * sizeof(float), Compare::Float, 1e-4));
    break;
  }
  return p;
}

std::string compare_buffer(const Problem& problem, size_t index,
                           const std::vector<unsigned char>& got,
                           const std::vector<unsigned char>& want) {
  const Buffer& b = problem.buffers[index];
  if (got.size() != want.size())
    return b.name + ": " + std::to_string(got.size()) + " bytes, expected " +
           std::to_string(want.size());
  if (b.compare == Compare::Exact) {
    if (std::memcmp(got.data(), want.data(), got.size()) == 0) return {};
    size_t words = got.size() / 4, first = words, count = 0;
    const auto* g = reinterpret_cast<const uint32_t*>(got.data());
    const auto* r = reinterpret_cast<const uint32_t*>(want.data());
    for (size_t i = 0; i < words; ++i)
      if (g[i] != r[i]) {
        first = std::min(first, i);
        ++count;
      }
    if (first == words) return b.name + ": the last bytes differ";
    return b.name + ": " + std::to_string(count) + " of " + std::to_string(words) +
           " words differ, first at [" + std::to_string(first) + "]: " + std::to_string(g[first]) +
           ", expected " + std::to_string(r[first]);
  }
  const auto* g = reinterpret_cast<const float*>(got.data());
  const auto* r = reinterpret_cast<const float*>(want.data());
  const size_t count = got.size() / sizeof(float);
  double squares = 0;
  for (size_t i = 0; i < count; ++i)
    squares += double(r[i]) * r[i];
  const double rms = std::sqrt(squares / double(count ? count : 1));
  size_t bad = 0, first = count;
  for (size_t i = 0; i < count; ++i)
    if (!(std::fabs(double(g[i]) - r[i]) <= b.tolerance * (std::fabs(double(r[i])) + rms))) {
      first = std::min(first, i);
      ++bad;
    }
  if (bad == 0) return {};
  char text[160];
  snprintf(
      text, sizeof text,
      ": %zu of %zu values differ by more than %g relative, first at [%zu]: %.9g, expected %.9g",
      bad, count, b.tolerance, first, double(g[first]), double(r[first]));
  return b.name + text;
}

} // namespace bench
