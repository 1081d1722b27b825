// Per-thread arrays indexed by data (local memory): an insertion sort, a private
// histogram, a permutation applied through an index array, and an array of structs.
#include <algorithm>
#include <vector>

#include "check.h"

constexpr int kLen = 32;

struct Pair {
  int key;
  float weight;
};

__global__ void local_work(const int* in, int* sorted, int* hist_out, int* permuted,
                           float* weights) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int a[kLen], hist[10] = {}, perm[kLen];
  Pair pairs[8];
  for (int i = 0; i < kLen; ++i) {
    a[i] = in[t * kLen + i];
    perm[i] = (i * 13 + t) % kLen;
  }
  for (int i = 1; i < kLen; ++i) { // insertion sort
    int v = a[i], j = i - 1;
    while (j >= 0 && a[j] > v) {
      a[j + 1] = a[j];
      --j;
    }
    a[j + 1] = v;
  }
  for (int i = 0; i < kLen; ++i)
    hist[(a[i] % 10 + 10) % 10]++;
  for (int i = 0; i < 8; ++i)
    pairs[i] = Pair{a[i * 4], i * 0.5f};
  float w = 0;
  for (int i = 0; i < 8; ++i)
    w += pairs[(pairs[i].key & 0x7fffffff) % 8].weight;
  for (int i = 0; i < kLen; ++i) {
    sorted[t * kLen + i] = a[i];
    permuted[t * kLen + i] = in[t * kLen + perm[i]];
  }
  for (int k = 0; k < 10; ++k)
    hist_out[t * 10 + k] = hist[k];
  weights[t] = w;
}

int main() {
  const int threads = 96;
  std::vector<int> in(threads * kLen), sorted(in.size()), permuted(in.size()), hist(threads * 10);
  std::vector<int> ws(in.size()), wp(in.size()), wh(threads * 10, 0);
  std::vector<float> weights(threads), ww(threads);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = int((i * 2654435761u) % 1000) - 500;
  for (int t = 0; t < threads; ++t) {
    std::vector<int> a(in.begin() + t * kLen, in.begin() + (t + 1) * kLen);
    std::sort(a.begin(), a.end());
    for (int i = 0; i < kLen; ++i) {
      ws[t * kLen + i] = a[i];
      wp[t * kLen + i] = in[t * kLen + (i * 13 + t) % kLen];
      wh[t * 10 + (a[i] % 10 + 10) % 10]++;
    }
    float w = 0;
    for (int i = 0; i < 8; ++i)
      w += ((a[i * 4] & 0x7fffffff) % 8) * 0.5f;
    ww[t] = w;
  }
  int *d_in, *d_sorted, *d_hist, *d_perm;
  float* d_w;
  CHECK(cudaMalloc(&d_in, in.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_sorted, in.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_perm, in.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_hist, hist.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_w, threads * sizeof(float)));
  CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
  local_work<<<3, threads / 3>>>(d_in, d_sorted, d_hist, d_perm, d_w);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(sorted.data(), d_sorted, in.size() * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(permuted.data(), d_perm, in.size() * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(hist.data(), d_hist, hist.size() * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(weights.data(), d_w, threads * sizeof(float), cudaMemcpyDeviceToHost));
  expect_equal("sorted", sorted.data(), ws.data(), ws.size());
  expect_equal("permuted", permuted.data(), wp.data(), wp.size());
  expect_equal("histograms", hist.data(), wh.data(), wh.size());
  expect_equal("struct array weights", weights.data(), ww.data(), threads);
  return report("local_arrays");
}
