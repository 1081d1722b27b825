// The OpenMP platform: each kernel as native C++ would write it, parallel loops over
// elements, rows or tiles with `omp simd` where the inner loop is regular. Built with
// -O3 -march=native -fopenmp; buffers are plain host allocations.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "bench.h"

namespace bench {
namespace {

template <typename T> T* as(void* p) {
  return static_cast<T*>(p);
}

void triad(void* const* b, const Params& p) {
  float* __restrict a = as<float>(b[0]);
  const float* __restrict bb = as<float>(b[1]);
  const float* __restrict c = as<float>(b[2]);
  const float s = p.alpha;
  const size_t n = p.n;
#pragma omp parallel for simd schedule(static)
  for (size_t i = 0; i < n; ++i)
    a[i] = bb[i] + s * c[i];
}

void saxpy(void* const* b, const Params& p) {
  const float* __restrict x = as<float>(b[0]);
  float* __restrict y = as<float>(b[1]);
  const float a = p.alpha;
  const size_t n = p.n;
#pragma omp parallel for simd schedule(static)
  for (size_t i = 0; i < n; ++i)
    y[i] = a * x[i] + y[i];
}

// Chunks of 4096 summed in float (vectorised), the chunk sums combined per thread and
// then across threads: the blocked shape of the GPU's reduction.
void reduce(void* const* b, const Params& p) {
  const float* x = as<float>(b[0]);
  constexpr size_t kChunk = 4096;
  const size_t n = p.n;
  float sum = 0;
#pragma omp parallel for reduction(+ : sum) schedule(static)
  for (size_t start = 0; start < n; start += kChunk) {
    size_t end = std::min(n, start + kChunk);
    float chunk = 0;
#pragma omp simd reduction(+ : chunk)
    for (size_t i = start; i < end; ++i)
      chunk += x[i];
    sum += chunk;
  }
  *as<float>(b[1]) = sum;
}

// Each thread sums its contiguous part, one thread scans the part sums, each thread
// scans its part again from its offset.
void scan(void* const* b, const Params& p) {
  const uint32_t* __restrict in = as<uint32_t>(b[0]);
  uint32_t* __restrict out = as<uint32_t>(b[1]);
  const size_t n = p.n;
  const int threads = omp_get_max_threads();
  uint32_t part_offsets[1024];
  if (threads >= 1024) throw std::runtime_error("openmp: scan supports up to 1023 threads");
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), count = omp_get_num_threads();
    const size_t begin = n * t / count, end = n * (t + 1) / count;
    uint32_t sum = 0;
#pragma omp simd reduction(+ : sum)
    for (size_t i = begin; i < end; ++i)
      sum += in[i];
    part_offsets[t + 1] = sum;
#pragma omp barrier
#pragma omp single
    {
      part_offsets[0] = 0;
      for (int k = 1; k <= count; ++k)
        part_offsets[k] += part_offsets[k - 1];
    }
    uint32_t running = part_offsets[t];
    for (size_t i = begin; i < end; ++i) {
      out[i] = running;
      running += in[i];
    }
  }
}

// Private 256-bin histograms per thread, merged by the array reduction.
void histogram(void* const* b, const Params& p) {
  const unsigned char* bytes = as<unsigned char>(b[0]);
  uint32_t bins[256] = {};
  const size_t n = p.n;
#pragma omp parallel for reduction(+ : bins[ : 256]) schedule(static)
  for (size_t i = 0; i < n; ++i)
    ++bins[bytes[i]];
  std::memcpy(b[1], bins, sizeof bins);
}

// 32x32 tiles, parallel over tiles.
void transpose(void* const* b, const Params& p) {
  const float* __restrict in = as<float>(b[0]);
  float* __restrict out = as<float>(b[1]);
  const size_t rows = p.rows, cols = p.cols;
  constexpr size_t kTile = 32;
#pragma omp parallel for collapse(2) schedule(static)
  for (size_t r0 = 0; r0 < rows; r0 += kTile)
    for (size_t c0 = 0; c0 < cols; c0 += kTile) {
      const size_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
      for (size_t c = c0; c < c1; ++c)
#pragma omp simd
        for (size_t r = r0; r < r1; ++r)
          out[c * rows + r] = in[r * cols + c];
    }
}

// Cache-blocked i-k-j loops: rows in parallel, the j loop vectorised, blocks of k and j
// sized so the slice of B in use stays in cache.
void sgemm(void* const* b, const Params& p) {
  const float* __restrict a = as<float>(b[0]);
  const float* __restrict bm = as<float>(b[1]);
  float* __restrict c = as<float>(b[2]);
  const size_t n = p.n;
  constexpr size_t kRows = 16, kDepth = 256, kCols = 512;
#pragma omp parallel for schedule(static)
  for (size_t i0 = 0; i0 < n; i0 += kRows) {
    const size_t i1 = std::min(n, i0 + kRows);
    for (size_t i = i0; i < i1; ++i)
      std::fill(c + i * n, c + (i + 1) * n, 0.0f);
    for (size_t j0 = 0; j0 < n; j0 += kCols) {
      const size_t j1 = std::min(n, j0 + kCols);
      for (size_t k0 = 0; k0 < n; k0 += kDepth) {
        const size_t k1 = std::min(n, k0 + kDepth);
        for (size_t i = i0; i < i1; ++i) {
          float* __restrict crow = c + i * n;
          for (size_t k = k0; k < k1; ++k) {
            const float aik = a[i * n + k];
            const float* __restrict brow = bm + k * n;
#pragma omp simd
            for (size_t j = j0; j < j1; ++j)
              crow[j] += aik * brow[j];
          }
        }
      }
    }
  }
}

void stencil(void* const* b, const Params& p) {
  const float* __restrict in = as<float>(b[0]);
  float* __restrict out = as<float>(b[1]);
  const size_t rows = p.rows, cols = p.cols;
  const float centre = p.alpha, neighbour = p.beta;
#pragma omp parallel for schedule(static)
  for (size_t y = 0; y < rows; ++y) {
    const float* row = in + y * cols;
    float* o = out + y * cols;
    if (y == 0 || y + 1 == rows) {
      std::memcpy(o, row, cols * sizeof(float));
      continue;
    }
    o[0] = row[0];
    o[cols - 1] = row[cols - 1];
#pragma omp simd
    for (size_t x = 1; x < cols - 1; ++x)
      o[x] =
          centre * row[x] + neighbour * (row[x - 1] + row[x + 1] + row[x - cols] + row[x + cols]);
  }
}

struct Body {
  float x, y, z, m;
};

void nbody(void* const* b, const Params& p) {
  const Body* __restrict pos = as<Body>(b[0]);
  Body* __restrict accel = as<Body>(b[1]);
  const size_t n = p.n;
  const float softening2 = p.alpha;
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) {
    const Body me = pos[i];
    float ax = 0, ay = 0, az = 0;
#pragma omp simd reduction(+ : ax, ay, az)
    for (size_t j = 0; j < n; ++j) {
      const float rx = pos[j].x - me.x, ry = pos[j].y - me.y, rz = pos[j].z - me.z;
      const float dist2 = rx * rx + ry * ry + rz * rz + softening2;
      const float inv = 1.0f / std::sqrt(dist2);
      const float s = pos[j].m * inv * inv * inv;
      ax += rx * s;
      ay += ry * s;
      az += rz * s;
    }
    accel[i] = {ax, ay, az, 0};
  }
}

void softmax(void* const* b, const Params& p) {
  const float* in = as<float>(b[0]);
  float* out = as<float>(b[1]);
  const size_t rows = p.rows, cols = p.cols;
#pragma omp parallel for schedule(static)
  for (size_t r = 0; r < rows; ++r) {
    const float* __restrict x = in + r * cols;
    float* __restrict y = out + r * cols;
    float m = -INFINITY;
#pragma omp simd reduction(max : m)
    for (size_t c = 0; c < cols; ++c)
      m = std::fmax(m, x[c]);
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (size_t c = 0; c < cols; ++c) {
      y[c] = std::exp(x[c] - m);
      sum += y[c];
    }
    const float inv = 1.0f / sum;
#pragma omp simd
    for (size_t c = 0; c < cols; ++c)
      y[c] *= inv;
  }
}

void layernorm(void* const* b, const Params& p) {
  const float* in = as<float>(b[0]);
  const float* __restrict gamma = as<float>(b[1]);
  const float* __restrict beta = as<float>(b[2]);
  float* out = as<float>(b[3]);
  const size_t rows = p.rows, cols = p.cols;
  const float eps = p.alpha;
#pragma omp parallel for schedule(static)
  for (size_t r = 0; r < rows; ++r) {
    const float* __restrict x = in + r * cols;
    float* __restrict y = out + r * cols;
    float sum = 0;
#pragma omp simd reduction(+ : sum)
    for (size_t c = 0; c < cols; ++c)
      sum += x[c];
    const float mean = sum / float(cols);
    float squares = 0;
#pragma omp simd reduction(+ : squares)
    for (size_t c = 0; c < cols; ++c)
      squares += (x[c] - mean) * (x[c] - mean);
    const float inv_std = 1.0f / std::sqrt(squares / float(cols) + eps);
#pragma omp simd
    for (size_t c = 0; c < cols; ++c)
      y[c] = (x[c] - mean) * inv_std * gamma[c] + beta[c];
  }
}

// The same network as the GPU, 2048-key segments; each step's compare-exchanges walk
// the pairs (i, i + stride) block by block, so the inner loop is contiguous.
void bitonic(void* const* b, const Params& p) {
  const uint32_t* in = as<uint32_t>(b[0]);
  uint32_t* out = as<uint32_t>(b[1]);
  constexpr uint32_t kSegment = 2048;
  const size_t segments = p.n / kSegment;
#pragma omp parallel for schedule(static)
  for (size_t s = 0; s < segments; ++s) {
    uint32_t* __restrict keys = out + s * kSegment;
    std::memcpy(keys, in + s * kSegment, kSegment * sizeof(uint32_t));
    for (uint32_t size = 2; size <= kSegment; size *= 2)
      for (uint32_t stride = size / 2; stride > 0; stride /= 2)
        for (uint32_t base = 0; base < kSegment; base += 2 * stride) {
          const bool ascending = (base & size) == 0;
#pragma omp simd
          for (uint32_t i = base; i < base + stride; ++i) {
            const uint32_t lo = keys[i], hi = keys[i + stride];
            const bool swap = (lo > hi) == ascending;
            keys[i] = swap ? hi : lo;
            keys[i + stride] = swap ? lo : hi;
          }
        }
  }
}

float normal_cdf(float d) {
  return 0.5f * std::erfc(-d * 0.70710678118654752f);
}

void blackscholes(void* const* b, const Params& p) {
  const float* __restrict spot = as<float>(b[0]);
  const float* __restrict strike = as<float>(b[1]);
  const float* __restrict years = as<float>(b[2]);
  float* __restrict call = as<float>(b[3]);
  float* __restrict put = as<float>(b[4]);
  const float rate = p.alpha, vol = p.beta;
  const size_t n = p.n;
  // No `simd`: erfc has no vector form here, and the loop would not vectorise.
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; ++i) {
    const float s = spot[i], x = strike[i], t = years[i];
    const float sqrt_t = std::sqrt(t);
    const float d1 = (std::log(s / x) + (rate + 0.5f * vol * vol) * t) / (vol * sqrt_t);
    const float d2 = d1 - vol * sqrt_t;
    const float discount = std::exp(-rate * t);
    const float cnd1 = normal_cdf(d1), cnd2 = normal_cdf(d2);
    call[i] = s * cnd1 - x * discount * cnd2;
    put[i] = x * discount * (1.0f - cnd2) - s * (1.0f - cnd1);
  }
}

using Implementation = void (*)(void* const*, const Params&);
constexpr Implementation kImplementations[] = {
#define BENCH_KERNEL(name, summary) name,
#include "kernels.def"
};
static_assert(sizeof kImplementations / sizeof kImplementations[0] == kKernelCount);

class OpenMpPlatform final : public Platform {
public:
  explicit OpenMpPlatform(unsigned threads) {
    omp_set_dynamic(0);
    omp_set_num_threads(int(threads));
  }
  ~OpenMpPlatform() override { unload(); }

  void load(const Problem& problem) override {
    for (const Buffer& b : problem.buffers) {
      void* d = std::aligned_alloc(64, (b.bytes + 63) / 64 * 64);
      if (!d) throw std::runtime_error("openmp: out of memory allocating " + b.name);
      buffers_.push_back(d);
      if (!b.host.empty())
        std::memcpy(d, b.host.data(), b.bytes);
      else
        std::memset(d, 0, b.bytes);
    }
  }

  void run(const Problem& problem) override {
    kImplementations[size_t(problem.kernel)](buffers_.data(), problem.params);
  }

  void fetch(const Problem& problem, size_t index, void* out) override {
    std::memcpy(out, buffers_.at(index), problem.buffers[index].bytes);
  }

  void unload() override {
    for (void* d : buffers_)
      std::free(d);
    buffers_.clear();
  }

private:
  std::vector<void*> buffers_;
};

} // namespace

std::unique_ptr<Platform> make_openmp_platform(unsigned threads) {
  return std::make_unique<OpenMpPlatform>(threads);
}

} // namespace bench
