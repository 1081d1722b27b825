// Code that only a row's first or last thread runs between two barriers (a tile's halo, a
// row's total): on the CPU, in a thread loop for whole rows, it runs after the loop for that
// thread (codegen/edge_threads.h), where the thread's later code in the interval does not
// touch what it touches; otherwise it stays. Both must give the block's results.
// variants: debug
// mimic-env: MIMIC_QUICK_TIER=0
#include <vector>

#include "check.h"

// Each row of the block loads blockDim.x items (read-only: loads the moved code can make
// again) into a row of the tile with a cell either side; thread 0 fills the left cell, the
// last thread the right one in two steps (the second reads what the first and its own item
// wrote). Then each item from its neighbours.
__global__ void edges_move(const int* __restrict__ in, int* out) {
  extern __shared__ int tile[]; // blockDim.y rows of blockDim.x + 2
  const int width = blockDim.x, last = width - 1, tx = threadIdx.x;
  int* row = tile + threadIdx.y * (width + 2);
  const int g = (blockIdx.x * blockDim.y + threadIdx.y) * width + tx;
  row[tx + 1] = in[g];
  if (tx == 0)
    row[0] = -in[g];
  if (tx == last)
    row[last + 2] = 2 * in[g];
  if (tx == last)
    row[last + 2] += row[last + 1];
  __syncthreads();
  out[g] = row[tx] + 3 * row[tx + 2];
}

// The last thread's code is followed by its own store to the same cell, and thread 0's uses
// a value the thread loaded from shared memory: both have to stay in place.
__global__ void edges_stay(const int* in, int* out, int* totals) {
  extern __shared__ int tile[];
  const int width = blockDim.x, tx = threadIdx.x;
  int* row = tile + threadIdx.y * width;
  const int g = (blockIdx.x * blockDim.y + threadIdx.y) * width + tx;
  row[tx] = in[g];
  if (tx == width - 1)
    row[tx] = 7 * in[g];
  row[tx] += 1;
  const int mine = row[tx];
  if (tx == 0)
    totals[blockIdx.x * blockDim.y + threadIdx.y] = mine * 5;
  __syncthreads();
  out[g] = row[(tx + 1) % width] - mine;
}

// One-row blocks: each warp's sum by shuffles, lane 0 storing it, then thread 0 adds the
// block's total and the last thread its own item to what memory holds (zeros): loops that
// run a warp, or part of a row, check after the loop that the thread is one they ran (run
// twice, the sums would be twice too).
__global__ void row_totals(const int* __restrict__ in, int* totals, int* lasts, int* firsts) {
  __shared__ int warp_sums[32];
  const int t = threadIdx.x, n = blockDim.x;
  const int v = in[blockIdx.x * n + t];
  int s = v;
  for (int offset = 16; offset > 0; offset /= 2)
    s += __shfl_down_sync(0xffffffffu, s, offset);
  if (t % 32 == 0)
    warp_sums[t / 32] = s;
  if (t == 0) // in a loop over one warp: the other warps' loops do not run thread 0
    firsts[blockIdx.x] += 5 * v;
  __syncthreads();
  if (t == 0) {
    int total = 0;
    for (int w = 0; w < (n + 31) / 32; ++w)
      total += warp_sums[w];
    totals[blockIdx.x] += total;
  }
  if (t == n - 1)
    lasts[blockIdx.x] += 3 * v;
}

int main() {
  const dim3 shapes[] = {dim3(32, 8), dim3(24, 4), dim3(16, 16), dim3(7, 3), dim3(100, 2), dim3(64, 1)};
  const int blocks = 5;
  for (const dim3& shape : shapes) {
    const int width = shape.x, rows = shape.y * blocks, n = width * rows;
    std::vector<int> in(n), out(n), totals(rows), want(n), want_totals(rows);
    for (int i = 0; i < n; ++i)
      in[i] = (i * 29) % 101 - 50;
    int *d_in, *d_out, *d_totals;
    CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CHECK(cudaMalloc(&d_out, n * sizeof(int)));
    CHECK(cudaMalloc(&d_totals, rows * sizeof(int)));
    CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    char what[64];

    edges_move<<<blocks, shape, shape.y * (width + 2) * sizeof(int)>>>(d_in, d_out);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int r = 0; r < rows; ++r) {
      const int* item = &in[r * width];
      std::vector<int> row(width + 2);
      row[0] = -item[0];
      for (int x = 0; x < width; ++x)
        row[x + 1] = item[x];
      row[width + 1] = 3 * item[width - 1];
      for (int x = 0; x < width; ++x)
        want[r * width + x] = row[x] + 3 * row[x + 2];
    }
    snprintf(what, sizeof what, "edges_move %ux%u", shape.x, shape.y);
    expect_equal(what, out.data(), want.data(), n);

    edges_stay<<<blocks, shape, shape.y * width * sizeof(int)>>>(d_in, d_out, d_totals);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(totals.data(), d_totals, rows * sizeof(int), cudaMemcpyDeviceToHost));
    for (int r = 0; r < rows; ++r) {
      std::vector<int> row(&in[r * width], &in[r * width] + width);
      row[width - 1] *= 7;
      for (int& v : row)
        v += 1;
      want_totals[r] = row[0] * 5;
      for (int x = 0; x < width; ++x)
        want[r * width + x] = row[(x + 1) % width] - row[x];
    }
    snprintf(what, sizeof what, "edges_stay %ux%u", shape.x, shape.y);
    expect_equal(what, out.data(), want.data(), n);
    expect_equal(what, totals.data(), want_totals.data(), rows);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_totals));
  }
  for (int n : {256, 96, 64, 1024}) { // warps whole: the shuffles' lanes all take part
    const int blocks = 7;
    std::vector<int> in(n * blocks), totals(blocks), lasts(blocks), firsts(blocks), want_totals(blocks),
        want_lasts(blocks), want_firsts(blocks);
    for (int i = 0; i < n * blocks; ++i)
      in[i] = (i * 37) % 91 - 45;
    for (int b = 0; b < blocks; ++b) {
      for (int t = 0; t < n; ++t)
        want_totals[b] += in[b * n + t];
      want_lasts[b] = 3 * in[b * n + n - 1];
      want_firsts[b] = 5 * in[b * n];
    }
    int *d_in, *d_totals, *d_lasts, *d_firsts;
    CHECK(cudaMalloc(&d_in, in.size() * sizeof(int)));
    CHECK(cudaMalloc(&d_firsts, blocks * sizeof(int)));
    CHECK(cudaMemset(d_firsts, 0, blocks * sizeof(int)));
    CHECK(cudaMalloc(&d_totals, blocks * sizeof(int)));
    CHECK(cudaMalloc(&d_lasts, blocks * sizeof(int)));
    CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_totals, 0, blocks * sizeof(int)));
    CHECK(cudaMemset(d_lasts, 0, blocks * sizeof(int)));
    row_totals<<<blocks, n>>>(d_in, d_totals, d_lasts, d_firsts);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(totals.data(), d_totals, blocks * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(lasts.data(), d_lasts, blocks * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(firsts.data(), d_firsts, blocks * sizeof(int), cudaMemcpyDeviceToHost));
    char what[64];
    snprintf(what, sizeof what, "row_totals %d totals", n);
    expect_equal(what, totals.data(), want_totals.data(), blocks);
    snprintf(what, sizeof what, "row_totals %d lasts", n);
    expect_equal(what, lasts.data(), want_lasts.data(), blocks);
    snprintf(what, sizeof what, "row_totals %d firsts", n);
    expect_equal(what, firsts.data(), want_firsts.data(), blocks);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_totals));
    CHECK(cudaFree(d_lasts));
    CHECK(cudaFree(d_firsts));
  }
  return report("edge_threads");
}
