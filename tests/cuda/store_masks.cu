// Conditional stores in thread loops, which the CPU backend vectorises as masked stores and
// then branches on the mask (codegen/store_masks.h): no lane, every lane or some lanes
// store. Masks here are all empty, all full, alternate lane by lane, end part-way through
// a vector (n not a multiple of any vector width), and differ from one thread loop to the
// next (a loop some threads never enter). MIMIC_STORE_MASKS=all: the pass runs whatever
// the machine's vector extensions; MIMIC_QUICK_TIER=0: every launch runs optimised code.
// mimic-env: MIMIC_QUICK_TIER=0 MIMIC_STORE_MASKS=all
#include <vector>

#include "check.h"

// Each thread stores y[i] = a*x[i] + y[i] when i < n, and tags[i] when i is odd.
__global__ void guarded(const float* x, float* y, int* tags, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
  if (i % 2 == 1 && i < n) tags[i] = i * 3;
}

// Row sums over a row whose length differs per block: threads past the row's end never
// enter the loop and store their 0 after it, beside those that did.
__global__ void ragged_rows(const float* in, float* out, const int* lengths, int stride) {
  __shared__ float partial[256];
  const int len = lengths[blockIdx.x];
  float s = 0;
  for (int c = threadIdx.x; c < len; c += blockDim.x)
    s += in[blockIdx.x * stride + c];
  partial[threadIdx.x] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = 0;
    for (int k = 0; k < blockDim.x; ++k)
      t += partial[k];
    out[blockIdx.x] = t;
  }
  if (threadIdx.x >= len) out[gridDim.x + blockIdx.x * blockDim.x + threadIdx.x] = -1.0f;
}

int main() {
  {
    const int n = 1000 * 256 + 37, blocks = (n + 255) / 256 + 1;
    const int total = blocks * 256;
    std::vector<float> x(total), y(total, 0.5f);
    std::vector<int> tags(total, 0);
    for (int i = 0; i < total; ++i)
      x[i] = float(i % 97) * 0.25f;
    float *dx, *dy;
    int* dtags;
    CHECK(cudaMalloc(&dx, total * sizeof(float)));
    CHECK(cudaMalloc(&dy, total * sizeof(float)));
    CHECK(cudaMalloc(&dtags, total * sizeof(int)));
    CHECK(cudaMemcpy(dx, x.data(), total * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dy, y.data(), total * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dtags, tags.data(), total * sizeof(int), cudaMemcpyHostToDevice));
    guarded<<<blocks, 256>>>(dx, dy, dtags, n, 2.0f);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(y.data(), dy, total * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(tags.data(), dtags, total * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < total; ++i) {
      const float want = i < n ? 2.0f * x[i] + 0.5f : 0.5f;
      const int want_tag = i < n && i % 2 == 1 ? i * 3 : 0;
      if (y[i] != want || tags[i] != want_tag) {
        std::fprintf(stderr, "guarded: element %d: y %g tag %d, want %g and %d\n", i, y[i], tags[i], want, want_tag);
        return 1;
      }
    }
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    CHECK(cudaFree(dtags));
  }
  {
    const int rows = 64, stride = 1024, threads = 256;
    std::vector<float> in(rows * stride);
    std::vector<int> lengths(rows);
    for (int r = 0; r < rows; ++r)
      lengths[r] = (r * 37) % (stride + 1); // 0, 37, ... some shorter than a block
    for (int i = 0; i < rows * stride; ++i)
      in[i] = float(i % 13) - 6.0f;
    const int outs = rows + rows * threads;
    float *din, *dout;
    int* dlen;
    CHECK(cudaMalloc(&din, in.size() * sizeof(float)));
    CHECK(cudaMalloc(&dout, outs * sizeof(float)));
    CHECK(cudaMalloc(&dlen, rows * sizeof(int)));
    CHECK(cudaMemcpy(din, in.data(), in.size() * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dlen, lengths.data(), rows * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dout, 0, outs * sizeof(float)));
    ragged_rows<<<rows, threads>>>(din, dout, dlen, stride);
    CHECK(cudaGetLastError());
    std::vector<float> out(outs);
    CHECK(cudaMemcpy(out.data(), dout, outs * sizeof(float), cudaMemcpyDeviceToHost));
    for (int r = 0; r < rows; ++r) {
      float want = 0;
      for (int c = 0; c < lengths[r]; ++c)
        want += in[r * stride + c];
      if (std::fabs(out[r] - want) > 1e-3f * (1 + std::fabs(want))) {
        std::fprintf(stderr, "ragged_rows: row %d (length %d): sum %g, want %g\n", r, lengths[r], out[r], want);
        return 1;
      }
      for (int t = 0; t < threads; ++t) {
        const float flag = out[rows + r * threads + t], want_flag = t >= lengths[r] ? -1.0f : 0.0f;
        if (flag != want_flag) {
          std::fprintf(stderr, "ragged_rows: row %d thread %d: flag %g, want %g\n", r, t, flag, want_flag);
          return 1;
        }
      }
    }
    CHECK(cudaFree(din));
    CHECK(cudaFree(dout));
    CHECK(cudaFree(dlen));
  }
  return report("store_masks");
}
