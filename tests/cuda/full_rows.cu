// Kernels written for blocks of several rows: on the CPU a call of the whole block runs a
// copy of each thread loop that takes every row as whole, from its first thread to
// first + blockDim.x (codegen/lower.cpp, copy_full_rows); calls of part of a block (warps
// the chain releases at a shuffle, rows not a multiple of 32 threads) run the loop that
// bounds each row. Both must give the block's results.
// variants: debug
// mimic-env: MIMIC_QUICK_TIER=0
#include <vector>

#include "check.h"

// A tile with a halo through shared memory, then each element's neighbours: rows of any
// width, and blocks that end past the grid's edge.
__global__ void neighbours(const int* in, int* out, int width, int height) {
  extern __shared__ int tile[]; // blockDim.z planes of (blockDim.y + 2) x (blockDim.x + 2)
  int pitch = blockDim.x + 2;
  int* plane = tile + threadIdx.z * (blockDim.y + 2) * pitch;
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  int tx = threadIdx.x + 1, ty = threadIdx.y + 1;
  bool inside = x < width && y < height;
  auto at = [&](int xx, int yy) { return xx >= 0 && xx < width && yy >= 0 && yy < height ? in[yy * width + xx] : 0; };
  plane[ty * pitch + tx] = inside ? in[y * width + x] : 0;
  if (threadIdx.x == 0) plane[ty * pitch] = at(x - 1, y);
  if (threadIdx.x == blockDim.x - 1) plane[ty * pitch + tx + 1] = at(x + 1, y);
  if (threadIdx.y == 0) plane[tx] = at(x, y - 1);
  if (threadIdx.y == blockDim.y - 1) plane[(ty + 1) * pitch + tx] = at(x, y + 1);
  __syncthreads();
  if (inside)
    out[(threadIdx.z * height + y) * width + x] = plane[ty * pitch + tx - 1] + plane[ty * pitch + tx + 1] +
                                                  plane[(ty - 1) * pitch + tx] + plane[(ty + 1) * pitch + tx] +
                                                  10 * (threadIdx.z + 1);
}

// Each warp of a 2-D or 3-D block sums its lanes' values with shuffles and the block's warp 0
// sums the warps' between barriers: the chain runs warp 0 by itself.
__global__ void block_total(const int* in, int* out, int* marks) {
  __shared__ int warp_sums[32];
  int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  int n = blockDim.x * blockDim.y * blockDim.z;
  int v = in[blockIdx.x * n + t];
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_down_sync(0xffffffffu, v, offset);
  if (t % 32 == 0)
    warp_sums[t / 32] = v;
  __syncthreads();
  if (t < 32) {
    int s = t < n / 32 ? warp_sums[t] : 0;
    for (int offset = 16; offset > 0; offset /= 2)
      s += __shfl_down_sync(0xffffffffu, s, offset);
    if (t == 0)
      warp_sums[0] = s;
    marks[blockIdx.x * n + t] = 1; // warp 0's threads only
  }
  __syncthreads();
  out[blockIdx.x * n + t] = warp_sums[0] - threadIdx.y;
}

// Without barriers: the kernel's one thread loop gets the copy too. Each element from its
// row neighbours, guarded by the grid's edge.
__global__ void row_blur(const int* in, int* out, int width, int height) {
  int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < width && y < height) {
    int l = x > 0 ? in[y * width + x - 1] : 0, r = x + 1 < width ? in[y * width + x + 1] : 0;
    out[(threadIdx.z * height + y) * width + x] = l + 2 * in[y * width + x] + r + int(threadIdx.z);
  }
}

int main() {
  const int width = 75, height = 29;
  std::vector<int> in(width * height);
  for (int i = 0; i < width * height; ++i)
    in[i] = (i * 13) % 97 - 40;
  int *d_in, *d_out, *d_marks;
  CHECK(cudaMalloc(&d_in, 4096 * sizeof(int)));
  CHECK(cudaMalloc(&d_out, 8192 * sizeof(int)));
  CHECK(cudaMalloc(&d_marks, 4096 * sizeof(int)));
  CHECK(cudaMemcpy(d_in, in.data(), in.size() * sizeof(int), cudaMemcpyHostToDevice));
  auto at = [&](int x, int y) { return x >= 0 && x < width && y >= 0 && y < height ? in[y * width + x] : 0; };
  const dim3 shapes[] = {dim3(32, 8), dim3(24, 5), dim3(7, 3, 2), dim3(64, 4), dim3(16, 16), dim3(75, 1)};
  // Each of shape.z output planes of width x height against `expected(x, y, z)`.
  const int cells = width * height;
  auto compare_planes = [&](const char* what, dim3 shape, auto expected) {
    const int planes = int(shape.z);
    std::vector<int> got(planes * cells), want(planes * cells);
    if (cudaMemcpy(got.data(), d_out, got.size() * sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess)
      return false;
    for (int z = 0; z < planes; ++z)
      for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
          want[z * cells + y * width + x] = expected(x, y, z);
    char name[64];
    snprintf(name, sizeof name, "%s, block %ux%ux%u", what, shape.x, shape.y, shape.z);
    expect_equal(name, got.data(), want.data(), got.size());
    return true;
  };
  for (dim3 shape : shapes) {
    dim3 grid((width + shape.x - 1) / shape.x, (height + shape.y - 1) / shape.y);
    size_t shared = shape.z * (shape.y + 2) * (shape.x + 2) * sizeof(int);
    CHECK(cudaMemset(d_out, 0, 8192 * sizeof(int)));
    neighbours<<<grid, shape, shared>>>(d_in, d_out, width, height);
    CHECK_LAUNCH();
    EXPECT(compare_planes("neighbours", shape, [&](int x, int y, int z) {
      return at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1) + 10 * (z + 1);
    }));
    CHECK(cudaMemset(d_out, 0, 8192 * sizeof(int)));
    row_blur<<<grid, shape>>>(d_in, d_out, width, height);
    CHECK_LAUNCH();
    EXPECT(compare_planes("row blur", shape, [&](int x, int y, int z) {
      return at(x - 1, y) + 2 * at(x, y) + at(x + 1, y) + z;
    }));
  }
  const dim3 whole_warps[] = {dim3(32, 8), dim3(16, 16), dim3(64, 2), dim3(8, 4, 2)};
  for (dim3 shape : whole_warps) {
    const int n = int(shape.x * shape.y * shape.z), blocks = 4096 / n;
    std::vector<int> values(blocks * n);
    for (int i = 0; i < blocks * n; ++i)
      values[i] = i % 7 - 3;
    CHECK(cudaMemcpy(d_in, values.data(), values.size() * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_marks, 0, 4096 * sizeof(int)));
    block_total<<<blocks, shape>>>(d_in, d_out, d_marks);
    CHECK_LAUNCH();
    std::vector<int> got(blocks * n), want(blocks * n), marks(blocks * n), want_marks(blocks * n);
    CHECK(cudaMemcpy(got.data(), d_out, got.size() * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(marks.data(), d_marks, marks.size() * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < blocks * n; ++i)
      want_marks[i] = i % n < 32;
    for (int b = 0; b < blocks; ++b) {
      int total = 0;
      for (int t = 0; t < n; ++t)
        total += values[b * n + t];
      for (int t = 0; t < n; ++t)
        want[b * n + t] = total - (t / int(shape.x)) % int(shape.y);
    }
    char name[64];
    snprintf(name, sizeof name, "block total, block %ux%ux%u", shape.x, shape.y, shape.z);
    expect_equal(name, got.data(), want.data(), got.size());
    snprintf(name, sizeof name, "warp 0's marks, block %ux%ux%u", shape.x, shape.y, shape.z);
    expect_equal(name, marks.data(), want_marks.data(), marks.size());
  }
  return report("full_rows");
}
