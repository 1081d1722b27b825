// Surface objects: a kernel writes a 2D float array with surf2Dwrite, a second kernel reads
// it back with surf2Dread (inside, zero boundary and clamp boundary outside) into a second
// surface, and the host copies both arrays out.
#include <vector>

#include "check.h"

constexpr int W = 40, H = 12;

__global__ void produce(cudaSurfaceObject_t s) {
  int x = threadIdx.x, y = blockIdx.x;
  surf2Dwrite(float(y * 1000 + x), s, x * int(sizeof(float)), y);
}

__global__ void consume(cudaSurfaceObject_t in, cudaSurfaceObject_t out, float* edges) {
  int x = threadIdx.x, y = blockIdx.x;
  float left = x == 0 ? 0.0f : surf2Dread<float>(in, (x - 1) * 4, y);
  surf2Dwrite(surf2Dread<float>(in, x * 4, y) * 2 + left, out, x * 4, y);
  if (x == 0) {
    edges[y * 2] = surf2Dread<float>(in, -4, y, cudaBoundaryModeZero);
    edges[y * 2 + 1] = surf2Dread<float>(in, (W + 3) * 4, y, cudaBoundaryModeClamp);
  }
}

static cudaSurfaceObject_t surface(cudaArray_t a) {
  cudaResourceDesc res{};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = a;
  cudaSurfaceObject_t s = 0;
  return cudaCreateSurfaceObject(&s, &res) == cudaSuccess ? s : 0;
}

int main() {
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t a, b;
  CHECK(cudaMallocArray(&a, &desc, W, H, cudaArraySurfaceLoadStore));
  CHECK(cudaMallocArray(&b, &desc, W, H, cudaArraySurfaceLoadStore));
  cudaSurfaceObject_t sa = surface(a), sb = surface(b);
  EXPECT(sa && sb);
  float* d_edges;
  CHECK(cudaMalloc(&d_edges, H * 2 * sizeof(float)));
  produce<<<H, W>>>(sa);
  CHECK_LAUNCH();
  consume<<<H, W>>>(sa, sb, d_edges);
  CHECK_LAUNCH();
  std::vector<float> ha(W * H), hb(W * H), edges(H * 2), wa(W * H), wb(W * H), we(H * 2);
  CHECK(cudaMemcpy2DFromArray(ha.data(), W * 4, a, 0, 0, W * 4, H, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy2DFromArray(hb.data(), W * 4, b, 0, 0, W * 4, H, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(edges.data(), d_edges, edges.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int y = 0; y < H; ++y) {
    for (int x = 0; x < W; ++x) {
      wa[y * W + x] = float(y * 1000 + x);
      wb[y * W + x] = wa[y * W + x] * 2 + (x == 0 ? 0 : float(y * 1000 + x - 1));
    }
    we[y * 2] = 0, we[y * 2 + 1] = float(y * 1000 + W - 1);
  }
  expect_equal("written", ha.data(), wa.data(), ha.size());
  expect_equal("read and rewritten", hb.data(), wb.data(), hb.size());
  expect_equal("boundary reads", edges.data(), we.data(), edges.size());
  CHECK(cudaDestroySurfaceObject(sa));
  CHECK(cudaDestroySurfaceObject(sb));
  return report("surface_array");
}
