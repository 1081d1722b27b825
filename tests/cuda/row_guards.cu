// Tests of a thread's position that the CPU backend makes once per row of threads
// (codegen/row_guards.h): `if (i < n)` with n inside a row, `if (i >= n) return`, a 2D
// interior test `x > 0 && x + 1 < cols` beside a row-invariant one, a 32-bit index that
// wraps around inside a row (the test passes at both ends, not between: the pass must
// see the wrap), a thread's four items (a step of 4 between threads, as bench scan's
// tiles), signed indices that go below zero, and threads counted downwards.
// MIMIC_QUICK_TIER=0: every launch runs the optimised code, which has the pass.
// mimic-env: MIMIC_QUICK_TIER=0
#include <climits>
#include <vector>

#include "check.h"

__global__ void below(float* y, const float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

__global__ void returns_past(float* y, const float* x, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] += x[i];
}

// y[r][c] = x[r][c-1] + x[r][c+1] inside, -1 on the edges; rows past `rows` untouched.
__global__ void interior(float* y, const float* x, unsigned rows, unsigned cols) {
  unsigned c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y;
  if (r >= rows || c >= cols) return;
  float v = -1.0f;
  if (c > 0 && c + 1 < cols) v = x[r * cols + c - 1] + x[r * cols + c + 1];
  y[r * cols + c] = v;
}

// i wraps past UINT_MAX inside the first block, between threads that pass i < n at both
// ends of the row; the ten threads before the wrap fail it.
__global__ void wrapping(int* flags, unsigned start, unsigned n) {
  unsigned i = start + blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) flags[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

// Signed: k goes from -`shift` upwards; only k >= 0 store.
__global__ void signed_from(int* out, int shift) {
  int k = int(blockIdx.x * blockDim.x + threadIdx.x) - shift;
  if (k >= 0) out[k] = k * 2;
}

// Four items a thread, as bench scan's tiles: base + k steps by 4 from thread to thread.
__global__ void four_items(unsigned* out, const unsigned* in, size_t n) {
  size_t base = size_t(blockIdx.x) * blockDim.x * 4 + threadIdx.x * 4;
  unsigned items[4];
  for (unsigned k = 0; k < 4; ++k)
    items[k] = base + k < n ? in[base + k] : 0;
  for (unsigned k = 0; k < 4; ++k)
    if (base + k < n) out[base + k] = items[k] * 3 + (k == 3 ? items[0] : 0);
}

// Counted downwards: j = last - thread; j < n in the upper threads only.
__global__ void downwards(int* out, unsigned last, unsigned n) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned j = last - t;
  if (j < n) out[j] = int(t);
}

int main() {
  const unsigned threads = 256, blocks = 40, total = threads * blocks;
  const unsigned n = total - 3 * threads - 77; // ends inside a block
  std::vector<float> x(total), y(total, 0.5f);
  for (unsigned i = 0; i < total; ++i)
    x[i] = float(i % 31) - 15.0f;
  float *dx, *dy;
  CHECK(cudaMalloc(&dx, total * sizeof(float)));
  CHECK(cudaMalloc(&dy, total * sizeof(float)));
  CHECK(cudaMemcpy(dx, x.data(), total * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dy, y.data(), total * sizeof(float), cudaMemcpyHostToDevice));
  below<<<blocks, threads>>>(dy, dx, n);
  returns_past<<<blocks, threads>>>(dy, dx, n - 100);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(y.data(), dy, total * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<float> want(total, 0.5f);
  for (unsigned i = 0; i < n; ++i)
    want[i] = 2.0f * x[i] + 1.0f;
  for (unsigned i = 0; i < n - 100; ++i)
    want[i] += x[i];
  expect_equal("below and returns_past", y.data(), want.data(), total);

  const unsigned rows = 5, cols = 1000, row_blocks = (cols + threads - 1) / threads;
  std::vector<float> grid(rows * cols), out((rows + 1) * cols, 7.0f);
  for (unsigned i = 0; i < rows * cols; ++i)
    grid[i] = float(i % 17);
  float *dgrid, *dout;
  CHECK(cudaMalloc(&dgrid, grid.size() * sizeof(float)));
  CHECK(cudaMalloc(&dout, out.size() * sizeof(float)));
  CHECK(cudaMemcpy(dgrid, grid.data(), grid.size() * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dout, out.data(), out.size() * sizeof(float), cudaMemcpyHostToDevice));
  interior<<<dim3(row_blocks, rows + 1), threads>>>(dout, dgrid, rows, cols);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(out.data(), dout, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<float> want_grid((rows + 1) * cols, 7.0f);
  for (unsigned r = 0; r < rows; ++r)
    for (unsigned c = 0; c < cols; ++c)
      want_grid[r * cols + c] =
          c > 0 && c + 1 < cols ? grid[r * cols + c - 1] + grid[r * cols + c + 1] : -1.0f;
  expect_equal("interior", out.data(), want_grid.data(), out.size());

  const unsigned start = UINT_MAX - 20, wrap_n = UINT_MAX - 10;
  int* dflags;
  CHECK(cudaMalloc(&dflags, 4 * threads * sizeof(int)));
  CHECK(cudaMemset(dflags, 0, 4 * threads * sizeof(int)));
  wrapping<<<4, threads>>>(dflags, start, wrap_n);
  CHECK(cudaGetLastError());
  std::vector<int> flags(4 * threads), want_flags(4 * threads, 0);
  CHECK(cudaMemcpy(flags.data(), dflags, flags.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (unsigned t = 0; t < 4 * threads; ++t)
    want_flags[t] = unsigned(start + t) < wrap_n ? 1 : 0;
  expect_equal("wrapping", flags.data(), want_flags.data(), flags.size());

  const int shift = 300;
  int *dsigned, *ddown;
  CHECK(cudaMalloc(&dsigned, 4 * threads * sizeof(int)));
  CHECK(cudaMalloc(&ddown, 4 * threads * sizeof(int)));
  CHECK(cudaMemset(dsigned, 0xff, 4 * threads * sizeof(int)));
  CHECK(cudaMemset(ddown, 0xff, 4 * threads * sizeof(int)));
  signed_from<<<4, threads>>>(dsigned, shift);
  downwards<<<4, threads>>>(ddown, 4 * threads + 50, 700);
  CHECK(cudaGetLastError());
  std::vector<int> got_signed(4 * threads), got_down(4 * threads);
  CHECK(cudaMemcpy(got_signed.data(), dsigned, got_signed.size() * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(got_down.data(), ddown, got_down.size() * sizeof(int), cudaMemcpyDeviceToHost));
  std::vector<int> want_signed(4 * threads, -1), want_down(4 * threads, -1);
  for (int t = 0; t < int(4 * threads); ++t)
    if (t - shift >= 0) want_signed[t - shift] = (t - shift) * 2;
  for (unsigned t = 0; t < 4 * threads; ++t) {
    unsigned j = 4 * threads + 50 - t;
    if (j < 700) want_down[j] = int(t);
  }
  expect_equal("signed_from", got_signed.data(), want_signed.data(), got_signed.size());
  expect_equal("downwards", got_down.data(), want_down.data(), got_down.size());
  {
    const size_t items = 4 * total, n4 = items - 1000 - 3; // ends inside a block, mid-thread
    std::vector<unsigned> in4(items), out4(items, 5u), want4(items, 5u);
    for (size_t i = 0; i < items; ++i)
      in4[i] = unsigned(i * 7 + 1);
    unsigned *din4, *dout4;
    CHECK(cudaMalloc(&din4, items * sizeof(unsigned)));
    CHECK(cudaMalloc(&dout4, items * sizeof(unsigned)));
    CHECK(cudaMemcpy(din4, in4.data(), items * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dout4, out4.data(), items * sizeof(unsigned), cudaMemcpyHostToDevice));
    four_items<<<blocks, threads>>>(dout4, din4, n4);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(out4.data(), dout4, items * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (size_t b = 0; b < items; b += 4)
      for (size_t k = 0; k < 4; ++k)
        if (b + k < n4) want4[b + k] = in4[b + k] * 3 + (k == 3 ? in4[b] : 0);
    expect_equal("four_items", out4.data(), want4.data(), items);
  }
  return report("row_guards");
}
