// Pitched and 3D memory, CUDA arrays, stream-ordered allocation with memory pools,
// occupancy queries and launch-configuration validation, through the CUDA runtime API.
// No kernel runs: the one __global__ function is only asked about, and every launch
// attempted here is invalid on purpose. Checks every result.
// variants: all
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "check.h"
// The call fails with `code`, and the error is not sticky.
#define EXPECT_ERROR(call, code)                                                                   \
  do {                                                                                             \
    cudaError_t err_ = (call);                                                                     \
    if (err_ != (code)) {                                                                          \
      fprintf(stderr, "%s:%d: %s: got %s, expected %s\n", __FILE__, __LINE__, #call,               \
              cudaGetErrorName(err_), cudaGetErrorName(code));                                     \
      ++failures;                                                                                  \
    }                                                                                              \
    cudaGetLastError();                                                                            \
  } while (0)

__global__ void never_launched(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = float(i);
}

static int pitched_2d() {
  const size_t width = 100, height = 37, width_bytes = width * sizeof(float);
  std::vector<float> host(width * height), back(width * height + 64, -1.0f);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = float(i) * 0.5f;
  float* dev = nullptr;
  size_t pitch = 0;
  CHECK(cudaMallocPitch(&dev, &pitch, width_bytes, height));
  EXPECT(pitch >= width_bytes);
  CHECK(cudaMemset(dev, 0, pitch * height));
  CHECK(cudaMemcpy2D(dev, pitch, host.data(), width_bytes, width_bytes, height, cudaMemcpyHostToDevice));
  // Back through a wider host pitch: the gaps keep their old values.
  const size_t host_pitch = width_bytes + 16;
  std::vector<uint8_t> wide(host_pitch * height, 0xab);
  CHECK(cudaMemcpy2D(wide.data(), host_pitch, dev, pitch, width_bytes, height, cudaMemcpyDeviceToHost));
  bool rows_ok = true, gaps_ok = true;
  for (size_t r = 0; r < height; ++r) {
    rows_ok &= memcmp(&wide[r * host_pitch], &host[r * width], width_bytes) == 0;
    gaps_ok &= wide[r * host_pitch + width_bytes] == 0xab && wide[r * host_pitch + host_pitch - 1] == 0xab;
  }
  EXPECT(rows_ok);
  EXPECT(gaps_ok);

  // Device to device between two pitches, then a sub-rectangle at an offset.
  float* other = nullptr;
  size_t other_pitch = 0;
  CHECK(cudaMallocPitch(&other, &other_pitch, width_bytes * 2, height));
  CHECK(cudaMemcpy2D(other, other_pitch, dev, pitch, width_bytes, height, cudaMemcpyDeviceToDevice));
  CHECK(cudaMemcpy2D(back.data(), width_bytes, other, other_pitch, width_bytes, height, cudaMemcpyDefault));
  EXPECT(memcmp(back.data(), host.data(), width_bytes * height) == 0);
  float corner[4 * 3];
  CHECK(cudaMemcpy2D(corner, 4 * sizeof(float), reinterpret_cast<char*>(dev) + 5 * pitch + 10 * sizeof(float),
                     pitch, 4 * sizeof(float), 3, cudaMemcpyDeviceToHost));
  EXPECT(corner[0] == host[5 * width + 10] && corner[11] == host[7 * width + 13]);

  // cudaMemset2D touches the rectangle only.
  CHECK(cudaMemset2D(dev, pitch, 0x7f, 8, 4));
  std::vector<uint8_t> raw(pitch * height);
  CHECK(cudaMemcpy(raw.data(), dev, pitch * height, cudaMemcpyDeviceToHost));
  EXPECT(raw[0] == 0x7f && raw[7] == 0x7f && raw[3 * pitch + 7] == 0x7f);
  EXPECT(memcmp(&raw[8], reinterpret_cast<const uint8_t*>(host.data()) + 8, 8) == 0);
  EXPECT(memcmp(&raw[4 * pitch], &host[4 * width], 8) == 0);
  // An async 2D fill and copy, ordered on a stream.
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  CHECK(cudaMemset2DAsync(other, other_pitch, 0, width_bytes, height, s));
  CHECK(cudaMemcpy2DAsync(other, other_pitch, dev, pitch, width_bytes, height, cudaMemcpyDeviceToDevice, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemcpy2D(back.data(), width_bytes, other, other_pitch, width_bytes, height, cudaMemcpyDeviceToHost));
  EXPECT(memcmp(back.data(), raw.data(), 8) == 0 && back[width * height - 1] == host[width * height - 1]);
  // Pinned host memory: the copies really run on the stream, after the caller returns.
  float *pinned_in, *pinned_out;
  CHECK(cudaMallocHost(&pinned_in, width_bytes * height));
  CHECK(cudaMallocHost(&pinned_out, width_bytes * height));
  memcpy(pinned_in, host.data(), width_bytes * height);
  memset(pinned_out, 0, width_bytes * height);
  CHECK(cudaMemcpy2DAsync(other, other_pitch, pinned_in, width_bytes, width_bytes, height, cudaMemcpyHostToDevice,
                          s));
  CHECK(cudaMemcpy2DAsync(pinned_out, width_bytes, other, other_pitch, width_bytes, height,
                          cudaMemcpyDeviceToHost, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(memcmp(pinned_out, host.data(), width_bytes * height) == 0);
  CHECK(cudaFreeHost(pinned_in));
  CHECK(cudaFreeHost(pinned_out));
  CHECK(cudaStreamDestroy(s));

  // Rows that leave the allocation, a wild device pointer, a pitch narrower than a row.
  EXPECT_ERROR(cudaMemcpy2D(dev, pitch, host.data(), width_bytes, width_bytes, height + 1, cudaMemcpyHostToDevice),
               cudaErrorInvalidValue);
  EXPECT_ERROR(cudaMemcpy2D(back.data(), width_bytes, reinterpret_cast<char*>(dev) + pitch * (height - 1), pitch,
                            width_bytes, 2, cudaMemcpyDeviceToHost),
               cudaErrorInvalidValue);
  EXPECT_ERROR(cudaMemset2D(reinterpret_cast<char*>(dev) + 32, pitch, 0, width_bytes, height), cudaErrorInvalidValue);
  EXPECT_ERROR(cudaMemcpy2D(reinterpret_cast<void*>(uintptr_t(0x1000)), 256, host.data(), 64, 64, 4,
                            cudaMemcpyHostToDevice),
               cudaErrorInvalidValue);
  EXPECT(cudaMemcpy2D(dev, 8, host.data(), width_bytes, width_bytes, 2, cudaMemcpyHostToDevice) != cudaSuccess);
  cudaGetLastError();

  // A peer copy within device 0.
  CHECK(cudaMemcpyPeer(other, 0, dev, 0, width_bytes));
  CHECK(cudaMemcpy(back.data(), other, width_bytes, cudaMemcpyDeviceToHost));
  EXPECT(memcmp(back.data(), raw.data(), 8) == 0 && back[width - 1] == host[width - 1]);
  CHECK(cudaFree(dev));
  CHECK(cudaFree(other));
  return 0;
}

static int pitched_3d() {
  const size_t nx = 20, ny = 6, nz = 5;
  cudaExtent extent = make_cudaExtent(nx * sizeof(int), ny, nz);
  cudaPitchedPtr dev;
  CHECK(cudaMalloc3D(&dev, extent));
  EXPECT(dev.pitch >= nx * sizeof(int) && dev.ysize == ny);
  std::vector<int> host(nx * ny * nz), back(nx * ny * nz, -1);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = int(i * 7);
  cudaMemcpy3DParms up = {};
  up.srcPtr = make_cudaPitchedPtr(host.data(), nx * sizeof(int), nx, ny);
  up.dstPtr = dev;
  up.extent = extent;
  up.kind = cudaMemcpyHostToDevice;
  CHECK(cudaMemcpy3D(&up));
  cudaMemcpy3DParms down = {};
  down.srcPtr = dev;
  down.dstPtr = make_cudaPitchedPtr(back.data(), nx * sizeof(int), nx, ny);
  down.extent = extent;
  down.kind = cudaMemcpyDeviceToHost;
  CHECK(cudaMemcpy3D(&down));
  EXPECT(back == host);
  // A sub-box from an offset into the start of a host buffer.
  std::vector<int> box(3 * 2 * 2, -1);
  cudaMemcpy3DParms part = {};
  part.srcPtr = dev;
  part.srcPos = make_cudaPos(4 * sizeof(int), 3, 2);
  part.dstPtr = make_cudaPitchedPtr(box.data(), 3 * sizeof(int), 3, 2);
  part.extent = make_cudaExtent(3 * sizeof(int), 2, 2);
  part.kind = cudaMemcpyDeviceToHost;
  CHECK(cudaMemcpy3D(&part));
  EXPECT(box[0] == host[(2 * ny + 3) * nx + 4]);
  EXPECT(box[11] == host[(3 * ny + 4) * nx + 6]);
  // One slice too deep.
  part.srcPos = make_cudaPos(0, 0, nz - 1);
  EXPECT_ERROR(cudaMemcpy3D(&part), cudaErrorInvalidValue);
  CHECK(cudaMemset3D(dev, 0, extent));
  CHECK(cudaMemcpy3D(&down));
  EXPECT(back[0] == 0 && back[nx * ny * nz - 1] == 0);
  CHECK(cudaFree(dev.ptr));
  return 0;
}

static int arrays() {
  const size_t w = 16, h = 8;
  cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
  cudaArray_t array;
  CHECK(cudaMallocArray(&array, &desc, w, h));
  std::vector<float> host(w * h), back(w * h, -1.0f);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = float(i) + 0.25f;
  CHECK(cudaMemcpy2DToArray(array, 0, 0, host.data(), w * sizeof(float), w * sizeof(float), h,
                            cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy2DFromArray(back.data(), w * sizeof(float), array, 0, 0, w * sizeof(float), h,
                              cudaMemcpyDeviceToHost));
  EXPECT(back == host);
  float piece[2 * 3];
  CHECK(cudaMemcpy2DFromArray(piece, 2 * sizeof(float), array, 5 * sizeof(float), 4, 2 * sizeof(float), 3,
                              cudaMemcpyDeviceToHost));
  EXPECT(piece[0] == host[4 * w + 5] && piece[5] == host[6 * w + 6]);
  cudaChannelFormatDesc got;
  cudaExtent got_extent;
  unsigned flags = 99;
  CHECK(cudaArrayGetInfo(&got, &got_extent, &flags, array));
  EXPECT(got.x == 32 && got.f == cudaChannelFormatKindFloat);
  EXPECT(got_extent.width == w && got_extent.height == h);
  // Past the array's edge.
  EXPECT_ERROR(cudaMemcpy2DToArray(array, 4, 0, host.data(), w * sizeof(float), w * sizeof(float), h,
                                   cudaMemcpyHostToDevice),
               cudaErrorInvalidValue);
  // Device memory to the array and back through a 3D array copy.
  float* dev;
  CHECK(cudaMalloc(&dev, w * h * sizeof(float)));
  CHECK(cudaMemcpy2DFromArray(dev, w * sizeof(float), array, 0, 0, w * sizeof(float), h,
                              cudaMemcpyDeviceToDevice));
  cudaArray_t volume;
  CHECK(cudaMalloc3DArray(&volume, &desc, make_cudaExtent(w, h, 2)));
  cudaMemcpy3DParms in = {};
  in.srcPtr = make_cudaPitchedPtr(dev, w * sizeof(float), w, h);
  in.dstArray = volume;
  in.dstPos = make_cudaPos(0, 0, 1);
  in.extent = make_cudaExtent(w, h, 1); // elements, for arrays
  in.kind = cudaMemcpyDeviceToDevice;
  CHECK(cudaMemcpy3D(&in));
  std::fill(back.begin(), back.end(), -1.0f);
  cudaMemcpy3DParms out = {};
  out.srcArray = volume;
  out.srcPos = make_cudaPos(0, 0, 1);
  out.dstPtr = make_cudaPitchedPtr(back.data(), w * sizeof(float), w, h);
  out.extent = make_cudaExtent(w, h, 1);
  out.kind = cudaMemcpyDeviceToHost;
  CHECK(cudaMemcpy3D(&out));
  EXPECT(back == host);
  CHECK(cudaFreeArray(volume));
  CHECK(cudaFreeArray(array));
  CHECK(cudaFree(dev));
  return 0;
}

static uint64_t pool_attribute(cudaMemPool_t pool, cudaMemPoolAttr attr) {
  uint64_t value = ~0ull;
  if (cudaMemPoolGetAttribute(pool, attr, &value) != cudaSuccess)
    ++failures;
  return value;
}

static int pools() {
  cudaMemPool_t pool;
  CHECK(cudaDeviceGetDefaultMemPool(&pool, 0));
  cudaMemPool_t current;
  CHECK(cudaDeviceGetMemPool(&current, 0));
  EXPECT(current == pool);
  uint64_t keep_all = UINT64_MAX;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const size_t bytes = 1 << 20;
  void* a = nullptr;
  CHECK(cudaMallocAsync(&a, bytes, s));
  EXPECT(pool_attribute(pool, cudaMemPoolAttrUsedMemCurrent) >= bytes);
  EXPECT(pool_attribute(pool, cudaMemPoolAttrReservedMemCurrent) >= bytes);
  std::vector<uint8_t> host(bytes, 0x3c), back(bytes);
  CHECK(cudaMemcpyAsync(a, host.data(), bytes, cudaMemcpyHostToDevice, s));
  CHECK(cudaMemcpyAsync(back.data(), a, bytes, cudaMemcpyDeviceToHost, s));
  CHECK(cudaFreeAsync(a, s));
  // Freed on this stream, so a new allocation on it may take the same block at once.
  void* b = nullptr;
  CHECK(cudaMallocAsync(&b, bytes, s));
  EXPECT(b == a);
  CHECK(cudaFreeAsync(b, s));
  CHECK(cudaStreamSynchronize(s));
  EXPECT(back == host);
  EXPECT(pool_attribute(pool, cudaMemPoolAttrUsedMemCurrent) == 0);
  EXPECT(pool_attribute(pool, cudaMemPoolAttrUsedMemHigh) >= bytes);
  EXPECT(pool_attribute(pool, cudaMemPoolAttrReservedMemCurrent) >= bytes);
  // Another stream reuses it once the free has run.
  void* c = nullptr;
  CHECK(cudaMallocAsync(&c, bytes, 0));
  EXPECT(c == a);
  CHECK(cudaFreeAsync(c, 0));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaMemPoolTrimTo(pool, 0));
  EXPECT(pool_attribute(pool, cudaMemPoolAttrReservedMemCurrent) == 0);
  uint64_t zero = 0;
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
  EXPECT(pool_attribute(pool, cudaMemPoolAttrUsedMemHigh) == 0);
  CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &zero));
  EXPECT(pool_attribute(pool, cudaMemPoolAttrReleaseThreshold) == 0);
  EXPECT_ERROR(cudaFreeAsync(reinterpret_cast<void*>(uintptr_t(0x1000)), s), cudaErrorInvalidValue);

  // An explicit pool.
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t mine;
  CHECK(cudaMemPoolCreate(&mine, &props));
  void* d = nullptr;
  CHECK(cudaMallocFromPoolAsync(&d, 4096, mine, s));
  EXPECT(pool_attribute(mine, cudaMemPoolAttrUsedMemCurrent) == 4096);
  cudaPointerAttributes attrs;
  CHECK(cudaPointerGetAttributes(&attrs, d));
  EXPECT(attrs.type == cudaMemoryTypeDevice && attrs.device == 0);
  cudaMemLocation here = {cudaMemLocationTypeDevice, 0};
  cudaMemAccessFlags access;
  CHECK(cudaMemPoolGetAccess(&access, mine, &here));
  EXPECT(access == cudaMemAccessFlagsProtReadWrite);
  CHECK(cudaFreeAsync(d, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemPoolDestroy(mine));
  CHECK(cudaStreamDestroy(s));
  return 0;
}

static int occupancy() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  cudaFuncAttributes attr;
  CHECK(cudaFuncGetAttributes(&attr, never_launched));
  // The calculator's formula (see src/runtime/occupancy.h) for 256 threads, no dynamic
  // shared memory.
  const int warps = 256 / prop.warpSize;
  int expected = prop.maxThreadsPerMultiProcessor / prop.warpSize / warps;
  expected = expected < prop.maxBlocksPerMultiProcessor ? expected : prop.maxBlocksPerMultiProcessor;
  const int regs_per_warp = (attr.numRegs * prop.warpSize + 255) / 256 * 256;
  const int by_regs = prop.regsPerMultiprocessor / regs_per_warp / warps;
  expected = expected < by_regs ? expected : by_regs;
  const size_t smem = (attr.sharedSizeBytes + prop.reservedSharedMemPerBlock + 127) / 128 * 128;
  const int by_smem = int(prop.sharedMemPerMultiprocessor / smem);
  expected = expected < by_smem ? expected : by_smem;
  int blocks = -1;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, never_launched, 256, 0));
  EXPECT(blocks == expected);
  EXPECT(blocks >= 1);
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, never_launched, prop.maxThreadsPerBlock + 1, 0));
  EXPECT(blocks == 0);
  int min_grid = 0, block = 0;
  CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, never_launched, 0, 0));
  EXPECT(block > 0 && block <= prop.maxThreadsPerBlock && block % prop.warpSize == 0);
  EXPECT(min_grid >= prop.multiProcessorCount);
  size_t dynamic = 0;
  CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&dynamic, never_launched, 2, 128));
  EXPECT(dynamic > 0 && dynamic <= prop.sharedMemPerBlockOptin);
  return 0;
}

static int launch_validation() {
  float* out;
  CHECK(cudaMalloc(&out, 1024 * sizeof(float)));
  int n = 1024;
  void* args[] = {&out, &n};
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(4);
  config.blockDim = dim3(2048); // more threads than a block may have
  EXPECT_ERROR(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(never_launched), args),
               cudaErrorInvalidValue);
  config.blockDim = dim3(32, 32, 2);
  EXPECT_ERROR(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(never_launched), args),
               cudaErrorInvalidValue);
  config.blockDim = dim3(128);
  config.gridDim = dim3(0);
  EXPECT_ERROR(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(never_launched), args),
               cudaErrorInvalidValue);
  config.gridDim = dim3(4);
  config.dynamicSmemBytes = 1 << 30;
  EXPECT_ERROR(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(never_launched), args),
               cudaErrorInvalidValue);
  config.dynamicSmemBytes = 0;
  cudaLaunchAttribute attribute;
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = 3; // does not divide the grid
  attribute.val.clusterDim.y = 1;
  attribute.val.clusterDim.z = 1;
  config.attrs = &attribute;
  config.numAttrs = 1;
  EXPECT(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(never_launched), args) != cudaSuccess);
  cudaGetLastError();
  // A cooperative grid larger than what can be resident at once.
  attribute.id = cudaLaunchAttributeCooperative;
  attribute.val.cooperative = 1;
  config.gridDim = dim3(1 << 20);
  config.blockDim = dim3(256);
  EXPECT_ERROR(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(never_launched), args),
               cudaErrorCooperativeLaunchTooLarge);
  EXPECT_ERROR(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(never_launched), dim3(1 << 20), dim3(256),
                                           args, 0, 0),
               cudaErrorCooperativeLaunchTooLarge);
  CHECK(cudaFree(out));
  return 0;
}

int main() {
  if (pitched_2d() || pitched_3d() || arrays() || pools() || occupancy() || launch_validation())
    return 1;
  CHECK(cudaDeviceSynchronize());
  if (failures) {
    fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
  printf("memory2d_pools: all checks passed\n");
  return 0;
}
