// Warps and lanes computed from threadIdx.x (threadIdx.x / 32, threadIdx.x % 32), which
// the CPU backend runs warp by warp (codegen/warp_indices.h): a warp per row with loops
// of uneven trip counts per lane (interchanged), a 2D block 48 wide (a row's second warp
// has 16 threads), a barrier between reading and writing, and the same through % and /.
#include <vector>

#include "check.h"

// One warp per row: each lane sums its strided elements of the row, the warp combines.
__global__ void row_sums(const float* x, int rows, int cols, float* out) {
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  int lane = threadIdx.x % 32;
  if (row >= rows) return;
  float s = 0;
  for (int c = lane; c < cols; c += 32)
    s += x[row * cols + c] * float(c % 5 + 1);
  for (int m = 16; m > 0; m /= 2)
    s += __shfl_xor_sync(0xffffffffu, s, m);
  if (lane == 0) out[row] = s;
}

// A block of 48 x 3: each thread reads by its warp and lane within the row, waits for the
// block, and writes where another thread read.
__global__ void pieces(const int* in, int* out) {
  __shared__ int tile[3][48];
  int x = threadIdx.x, y = threadIdx.y;
  int w = x >> 5, l = x & 31;
  int v = in[(blockIdx.x * 3 + y) * 100 + w * 50 + l] + w * 1000 + l;
  tile[y][x] = v;
  __syncthreads();
  out[(blockIdx.x * 3 + y) * 48 + x] = tile[2 - y][47 - x] * 3 + (x / 32) * 7 + (x % 32);
}

int main() {
  const int rows = 37, cols = 101; // rows not a whole number of blocks, cols of lanes
  std::vector<float> x(rows * cols), sums(rows), want(rows);
  for (int i = 0; i < rows * cols; ++i)
    x[i] = float((i * 37) % 23) * 0.25f - 2.0f;
  for (int r = 0; r < rows; ++r) {
    float lanes[32] = {};
    for (int l = 0; l < 32; ++l)
      for (int c = l; c < cols; c += 32)
        lanes[l] += x[r * cols + c] * float(c % 5 + 1);
    for (int m = 16; m > 0; m /= 2) { // the butterfly's order of additions
      float next[32];
      for (int l = 0; l < 32; ++l)
        next[l] = lanes[l] + lanes[l ^ m];
      for (int l = 0; l < 32; ++l)
        lanes[l] = next[l];
    }
    want[r] = lanes[0];
  }
  float *d_x, *d_sums;
  CHECK(cudaMalloc(&d_x, x.size() * sizeof(float)));
  CHECK(cudaMalloc(&d_sums, sums.size() * sizeof(float)));
  CHECK(cudaMemcpy(d_x, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  row_sums<<<(rows + 7) / 8, 256>>>(d_x, rows, cols, d_sums);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(sums.data(), d_sums, sums.size() * sizeof(float), cudaMemcpyDeviceToHost));
  expect_equal("row sums", sums.data(), want.data(), rows);

  const int blocks = 4;
  std::vector<int> in(blocks * 3 * 100), out(blocks * 3 * 48), expect(out.size());
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = int(i * 7 % 101);
  for (int b = 0; b < blocks; ++b)
    for (int y = 0; y < 3; ++y)
      for (int xx = 0; xx < 48; ++xx) {
        int sy = 2 - y, sx = 47 - xx;
        int v = in[(b * 3 + sy) * 100 + (sx >> 5) * 50 + (sx & 31)] + (sx >> 5) * 1000 + (sx & 31);
        expect[(b * 3 + y) * 48 + xx] = v * 3 + (xx / 32) * 7 + (xx % 32);
      }
  int *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, in.size() * sizeof(int)));
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
  pieces<<<blocks, dim3(48, 3)>>>(d_in, d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
  expect_equal("48 x 3 block", out.data(), expect.data(), out.size());
  return report("warp_rows");
}
