// All-pairs gravitational accelerations (GPU Gems 3, ch. 31): bodies are float4
// (x, y, z, mass); each block stages a tile of bodies in shared memory and every thread
// accumulates its body's acceleration with rsqrtf and a softening term.
#include "cuda_kernels.h"

namespace bench::cuda {

constexpr unsigned kBlock = 256;

static __device__ float3 body_body(float4 bi, float4 bj, float3 a, float softening2) {
  float3 r = make_float3(bj.x - bi.x, bj.y - bi.y, bj.z - bi.z);
  float dist2 = r.x * r.x + r.y * r.y + r.z * r.z + softening2;
  float inv = rsqrtf(dist2);
  float s = bj.w * inv * inv * inv;
  a.x += r.x * s;
  a.y += r.y * s;
  a.z += r.z * s;
  return a;
}

__global__ void nbody_accel(const float4* __restrict__ pos, float4* __restrict__ accel, unsigned n,
                            float softening2) {
  __shared__ float4 tile[kBlock];
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 me = pos[i];
  float3 a = make_float3(0, 0, 0);
  for (unsigned t = 0; t < n; t += kBlock) {
    tile[threadIdx.x] = pos[t + threadIdx.x];
    __syncthreads();
#pragma unroll 8
    for (unsigned j = 0; j < kBlock; ++j)
      a = body_body(me, tile[j], a, softening2);
    __syncthreads();
  }
  accel[i] = make_float4(a.x, a.y, a.z, 0);
}

// buffers: positions (float4), accelerations (out, float4); n a multiple of 256; alpha: softening^2
void run_nbody(void* const* buffers, const Params& p) {
  nbody_accel<<<unsigned(p.n / kBlock), kBlock>>>(static_cast<const float4*>(buffers[0]),
                                                  static_cast<float4*>(buffers[1]), unsigned(p.n),
                                                  p.alpha);
}

} // namespace bench::cuda
