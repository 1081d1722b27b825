// sm_90 bulk copies and thread block clusters on the CPU backend:
// - cp.async.bulk global -> shared completing an mbarrier transaction (the TMA-less Hopper
//   pipeline), then shared -> global in a bulk group, multicast included;
// - cooperative groups' cluster API in launches of clusters of one block (the default);
// - a kernel that uses its cluster, launched in clusters of two, fails cleanly with
//   cudaErrorNotSupported, while a kernel that does not use it runs in any cluster shape.
// nvcc-flags: -arch=sm_90
// mimic-env: MIMIC_COMPUTE_CAPABILITY=9.0
// expect-stderr: runs such kernels in clusters of one block only
#include <cooperative_groups.h>
#include <cstdint>
#include <vector>

#include "check.h"

namespace cg = cooperative_groups;

constexpr int kTile = 1024; // floats per block

__global__ void scale_tiles(const float* in, float* out, float factor) {
  __shared__ __align__(128) float tile[kTile];
  __shared__ __align__(8) uint64_t bar;
  unsigned bar_addr = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned tile_addr = (unsigned)__cvta_generic_to_shared(tile);
  const float* src = in + blockIdx.x * kTile;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar_addr));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    // Two halves: the second is issued before the arrival that expects its bytes.
    unsigned half = kTile * 2;
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(tile_addr + half), "l"(src + kTile / 2), "r"(half), "r"(bar_addr) : "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_addr), "r"(2 * half));
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(tile_addr), "l"(src), "r"(half), "r"(bar_addr) : "memory");
  }
  asm volatile("{\n .reg .pred done;\n wait:\n"
               " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
               " @!done bra wait;\n}" ::"r"(bar_addr) : "memory");
  for (int i = threadIdx.x; i < kTile; i += blockDim.x)
    tile[i] *= factor;
  asm volatile("fence.proxy.async.shared::cta;");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 ::"l"(out + blockIdx.x * kTile), "r"(tile_addr), "r"(kTile * 4) : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}

// Multicast to the blocks of ctaMask: in a cluster of one, to this block when bit 0 is set.
__global__ void multicast(const int* in, int* out) {
  __shared__ __align__(128) int tile[64];
  __shared__ __align__(8) uint64_t bar;
  unsigned bar_addr = (unsigned)__cvta_generic_to_shared(&bar);
  unsigned tile_addr = (unsigned)__cvta_generic_to_shared(tile);
  for (int i = threadIdx.x; i < 64; i += blockDim.x)
    tile[i] = -1;
  if (threadIdx.x == 0)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar_addr));
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_addr), "r"(256));
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
                 " [%0], [%1], 256, [%2], %3;" ::"r"(tile_addr), "l"(in), "r"(bar_addr), "h"((unsigned short)1)
                 : "memory");
  }
  asm volatile("{\n .reg .pred done;\n wait:\n"
               " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n"
               " @!done bra wait;\n}" ::"r"(bar_addr) : "memory");
  for (int i = threadIdx.x; i < 64; i += blockDim.x)
    out[i] = tile[i];
}

// The cluster API: rank, size, a sync, and distributed shared memory of rank 0.
__global__ void cluster_info(int* out) {
  __shared__ int value;
  cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0)
    value = 100 + blockIdx.x;
  cluster.sync();
  int* remote = cluster.map_shared_rank(&value, 0);
  if (threadIdx.x == 0) {
    int* o = out + blockIdx.x * 4;
    o[0] = int(cluster.block_rank());
    o[1] = int(cluster.num_blocks());
    o[2] = *remote;
    o[3] = int(cluster.block_index().x);
  }
  cluster.sync();
}

__global__ void plain(int* out) { out[blockIdx.x] = blockIdx.x * 3; }

int main() {
  const int blocks = 6;
  std::vector<float> in(blocks * kTile);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = float(i % 977) - 400.0f;
  float *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, in.size() * 4));
  CHECK(cudaMalloc(&d_out, in.size() * 4));
  CHECK(cudaMemcpy(d_in, in.data(), in.size() * 4, cudaMemcpyHostToDevice));
  scale_tiles<<<blocks, 128>>>(d_in, d_out, 0.5f);
  CHECK_LAUNCH();
  std::vector<float> out(in.size()), want(in.size());
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * 4, cudaMemcpyDeviceToHost));
  for (size_t i = 0; i < in.size(); ++i)
    want[i] = in[i] * 0.5f;
  expect_equal("bulk copies", out.data(), want.data(), out.size());

  int *d_i, *d_o;
  std::vector<int> ints(64);
  for (int i = 0; i < 64; ++i)
    ints[i] = i * i;
  CHECK(cudaMalloc(&d_i, 256));
  CHECK(cudaMalloc(&d_o, 256));
  CHECK(cudaMemcpy(d_i, ints.data(), 256, cudaMemcpyHostToDevice));
  multicast<<<1, 64>>>(d_i, d_o);
  CHECK_LAUNCH();
  std::vector<int> got(64);
  CHECK(cudaMemcpy(got.data(), d_o, 256, cudaMemcpyDeviceToHost));
  expect_equal("multicast", got.data(), ints.data(), 64);

  int* d_info;
  CHECK(cudaMalloc(&d_info, blocks * 4 * sizeof(int)));
  cluster_info<<<blocks, 64>>>(d_info);
  CHECK_LAUNCH();
  std::vector<int> info(blocks * 4), want_info(blocks * 4);
  CHECK(cudaMemcpy(info.data(), d_info, info.size() * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b) {
    want_info[b * 4 + 0] = 0;
    want_info[b * 4 + 1] = 1;
    want_info[b * 4 + 2] = 100 + b;
    want_info[b * 4 + 3] = 0;
  }
  expect_equal("clusters of one", info.data(), want_info.data(), info.size());

  // Clusters of two: refused for the kernel that uses its cluster, fine for the other.
  cudaLaunchConfig_t config = {};
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = 2;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  config.gridDim = dim3(blocks);
  config.blockDim = dim3(64);
  config.attrs = &attr;
  config.numAttrs = 1;
  cudaError_t e = cudaLaunchKernelEx(&config, cluster_info, d_info);
  EXPECT(e == cudaErrorNotSupported);
  cudaGetLastError();
  CHECK(cudaLaunchKernelEx(&config, plain, d_info));
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(info.data(), d_info, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  for (int b = 0; b < blocks; ++b)
    EXPECT(info[b] == b * 3);
  CHECK(cudaFree(d_in));
  CHECK(cudaFree(d_out));
  CHECK(cudaFree(d_i));
  CHECK(cudaFree(d_o));
  CHECK(cudaFree(d_info));
  return report("bulk_copy_cluster");
}
