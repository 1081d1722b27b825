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
  return report("edge_threads");
}
