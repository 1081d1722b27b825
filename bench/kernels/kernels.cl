// bench_kernels for OpenCL 1.2 (run on PoCL): the algorithms of cuda/*.cu in OpenCL's
// idiom. OpenCL 1.2 has no sub-group shuffles, so warp reductions and scans become
// local-memory trees; everything else (tiles, halos, local atomics, barriers) is the same.

// ---- triad, saxpy
__kernel void triad(__global float* a, __global const float* b, __global const float* c, float s,
                    ulong n) {
  size_t i = get_global_id(0);
  if (i < n) a[i] = b[i] + s * c[i];
}

__kernel void saxpy(ulong n, float a, __global const float* restrict x,
                    __global float* restrict y) {
  size_t i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}

// ---- reduce: grid-stride sums, a local tree per work-group, partials, then one group.
__kernel void reduce_sum(__global const float* restrict in, __global float* restrict out, ulong n,
                         __local float* scratch) {
  size_t lid = get_local_id(0), size = get_local_size(0);
  float sum = 0;
  for (size_t i = get_global_id(0); i < n; i += get_global_size(0))
    sum += in[i];
  scratch[lid] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t active = size / 2; active > 0; active /= 2) {
    if (lid < active) scratch[lid] += scratch[lid + active];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[get_group_id(0)] = scratch[0];
}

// ---- scan: tiles of 1024 (256 work-items x 4), tile sums scanned by one group, offsets added.
#define SCAN_ITEMS 4

// Exclusive scan of v over the work-group (Hillis-Steele in local memory); *total gets the sum.
uint group_exclusive_scan(uint v, __local uint* tmp, uint* total) {
  size_t lid = get_local_id(0), size = get_local_size(0);
  tmp[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t offset = 1; offset < size; offset *= 2) {
    uint add = lid >= offset ? tmp[lid - offset] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    tmp[lid] += add;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  uint inclusive = tmp[lid];
  *total = tmp[size - 1];
  barrier(CLK_LOCAL_MEM_FENCE);
  return inclusive - v;
}

__kernel void scan_tiles(__global const uint* restrict in, __global uint* restrict out,
                         __global uint* restrict tile_sums, ulong n, __local uint* tmp) {
  size_t tile = get_local_size(0) * SCAN_ITEMS;
  size_t base = get_group_id(0) * tile + get_local_id(0) * SCAN_ITEMS;
  uint items[SCAN_ITEMS];
  uint sum = 0;
  for (int k = 0; k < SCAN_ITEMS; ++k) {
    items[k] = base + k < n ? in[base + k] : 0;
    sum += items[k];
  }
  uint total;
  uint prefix = group_exclusive_scan(sum, tmp, &total);
  for (int k = 0; k < SCAN_ITEMS; ++k) {
    if (base + k < n) out[base + k] = prefix;
    prefix += items[k];
  }
  if (get_local_id(0) == 0) tile_sums[get_group_id(0)] = total;
}

__kernel void scan_tile_sums(__global uint* sums, ulong count, __local uint* tmp) {
  uint carry = 0;
  size_t size = get_local_size(0), lid = get_local_id(0);
  for (size_t chunk = 0; chunk < count; chunk += size) {
    size_t i = chunk + lid;
    uint v = i < count ? sums[i] : 0;
    uint total;
    uint prefix = group_exclusive_scan(v, tmp, &total);
    if (i < count) sums[i] = carry + prefix;
    carry += total;
  }
}

__kernel void add_tile_offsets(__global uint* restrict out, __global const uint* restrict tile_sums,
                               ulong n) {
  size_t tile = get_local_size(0) * SCAN_ITEMS;
  uint offset = tile_sums[get_group_id(0)];
  size_t base = get_group_id(0) * tile;
  for (size_t k = get_local_id(0); k < tile; k += get_local_size(0))
    if (base + k < n) out[base + k] += offset;
}

// ---- histogram: local bins with local atomics, then global atomics.
__kernel void histogram256(__global const uchar* restrict bytes, ulong n,
                           __global uint* restrict bins) {
  __local uint local_bins[256];
  __global const uint* words = (__global const uint*)bytes;
  ulong n_words = n / 4;
  size_t lid = get_local_id(0);
  for (size_t i = lid; i < 256; i += get_local_size(0))
    local_bins[i] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t i = get_global_id(0); i < n_words; i += get_global_size(0)) {
    uint w = words[i];
    atomic_inc(&local_bins[w & 0xff]);
    atomic_inc(&local_bins[(w >> 8) & 0xff]);
    atomic_inc(&local_bins[(w >> 16) & 0xff]);
    atomic_inc(&local_bins[w >> 24]);
  }
  if (get_group_id(0) == 0 && lid < n % 4) atomic_inc(&local_bins[bytes[n_words * 4 + lid]]);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t i = lid; i < 256; i += get_local_size(0))
    if (local_bins[i]) atomic_add(&bins[i], local_bins[i]);
}

// ---- transpose through a padded 32x33 local tile, 32x8 work-groups.
#define TILE 32
#define TILE_ROWS 8
__kernel void transpose_tiled(__global float* restrict out, __global const float* restrict in,
                              uint rows, uint cols) {
  __local float tile[TILE][TILE + 1];
  uint lx = get_local_id(0), ly = get_local_id(1);
  uint x = get_group_id(0) * TILE + lx, y = get_group_id(1) * TILE + ly;
  for (uint j = 0; j < TILE; j += TILE_ROWS)
    if (x < cols && y + j < rows) tile[ly + j][lx] = in[(size_t)(y + j) * cols + x];
  barrier(CLK_LOCAL_MEM_FENCE);
  x = get_group_id(1) * TILE + lx;
  y = get_group_id(0) * TILE + ly;
  for (uint j = 0; j < TILE; j += TILE_ROWS)
    if (x < rows && y + j < cols) out[(size_t)(y + j) * rows + x] = tile[lx][ly + j];
}

// ---- sgemm with 16x16 local tiles, one output per work-item.
#define GEMM_TILE 16
__kernel void sgemm_tiled(__global const float* restrict a, __global const float* restrict b,
                          __global float* restrict c, uint n) {
  __local float as[GEMM_TILE][GEMM_TILE];
  __local float bs[GEMM_TILE][GEMM_TILE];
  uint lx = get_local_id(0), ly = get_local_id(1);
  uint row = get_group_id(1) * GEMM_TILE + ly, col = get_group_id(0) * GEMM_TILE + lx;
  float sum = 0;
  for (uint t = 0; t < n; t += GEMM_TILE) {
    as[ly][lx] = a[(size_t)row * n + t + lx];
    bs[ly][lx] = b[(size_t)(t + ly) * n + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < GEMM_TILE; ++k)
      sum += as[ly][k] * bs[k][lx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  c[(size_t)row * n + col] = sum;
}

// ---- 5-point Jacobi sweep through a local tile with a one-cell halo, 32x8 work-groups.
#define SBX 32
#define SBY 8
__kernel void stencil5(__global const float* restrict in, __global float* restrict out, uint rows,
                       uint cols, float centre, float neighbour) {
  __local float tile[SBY + 2][SBX + 2];
  uint lx = get_local_id(0), ly = get_local_id(1);
  uint x = get_group_id(0) * SBX + lx, y = get_group_id(1) * SBY + ly;
  uint tx = lx + 1, ty = ly + 1;
  bool inside = x < cols && y < rows;
  if (inside) {
    size_t i = (size_t)y * cols + x;
    tile[ty][tx] = in[i];
    if (lx == 0 && x > 0) tile[ty][0] = in[i - 1];
    if (lx == SBX - 1 && x + 1 < cols) tile[ty][tx + 1] = in[i + 1];
    if (ly == 0 && y > 0) tile[0][tx] = in[i - cols];
    if (ly == SBY - 1 && y + 1 < rows) tile[ty + 1][tx] = in[i + cols];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (!inside) return;
  float v = tile[ty][tx];
  if (x > 0 && y > 0 && x + 1 < cols && y + 1 < rows)
    v = centre * v +
        neighbour * (tile[ty][tx - 1] + tile[ty][tx + 1] + tile[ty - 1][tx] + tile[ty + 1][tx]);
  out[(size_t)y * cols + x] = v;
}

// ---- n-body: tiles of bodies in local memory, rsqrt.
#define NBODY_GROUP 256
__kernel void nbody_accel(__global const float4* restrict pos, __global float4* restrict accel,
                          uint n, float softening2) {
  __local float4 tile[NBODY_GROUP];
  size_t i = get_global_id(0), lid = get_local_id(0);
  float4 me = pos[i];
  float3 a = (float3)(0.0f);
  for (uint t = 0; t < n; t += NBODY_GROUP) {
    tile[lid] = pos[t + lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = 0; j < NBODY_GROUP; ++j) {
      float4 other = tile[j];
      float3 r = other.xyz - me.xyz;
      float dist2 = dot(r, r) + softening2;
      float inv = rsqrt(dist2);
      a += r * (other.w * inv * inv * inv);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  accel[i] = (float4)(a, 0.0f);
}

// ---- softmax and layernorm: one work-group per row, local-memory tree reductions.
float group_reduce(float v, __local float* tmp, int is_max) {
  size_t lid = get_local_id(0);
  tmp[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t active = get_local_size(0) / 2; active > 0; active /= 2) {
    if (lid < active)
      tmp[lid] = is_max ? fmax(tmp[lid], tmp[lid + active]) : tmp[lid] + tmp[lid + active];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float result = tmp[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return result;
}

__kernel void softmax_rows(__global const float* restrict in, __global float* restrict out,
                           uint cols, __local float* tmp) {
  __global const float* x = in + get_group_id(0) * (size_t)cols;
  __global float* y = out + get_group_id(0) * (size_t)cols;
  size_t lid = get_local_id(0), size = get_local_size(0);
  float m = -INFINITY;
  for (size_t c = lid; c < cols; c += size)
    m = fmax(m, x[c]);
  m = group_reduce(m, tmp, 1);
  float sum = 0;
  for (size_t c = lid; c < cols; c += size)
    sum += exp(x[c] - m);
  sum = group_reduce(sum, tmp, 0);
  float inv = 1.0f / sum;
  for (size_t c = lid; c < cols; c += size)
    y[c] = exp(x[c] - m) * inv;
}

__kernel void layernorm_rows(__global const float* restrict in,
                             __global const float* restrict gamma,
                             __global const float* restrict beta, __global float* restrict out,
                             uint cols, float eps, __local float* tmp) {
  __global const float* x = in + get_group_id(0) * (size_t)cols;
  __global float* y = out + get_group_id(0) * (size_t)cols;
  size_t lid = get_local_id(0), size = get_local_size(0);
  float sum = 0;
  for (size_t c = lid; c < cols; c += size)
    sum += x[c];
  float mean = group_reduce(sum, tmp, 0) / cols;
  float squares = 0;
  for (size_t c = lid; c < cols; c += size) {
    float d = x[c] - mean;
    squares += d * d;
  }
  float var = group_reduce(squares, tmp, 0) / cols;
  float inv_std = rsqrt(var + eps);
  for (size_t c = lid; c < cols; c += size)
    y[c] = (x[c] - mean) * inv_std * gamma[c] + beta[c];
}

// ---- bitonic sort of 2048-key segments by 1024-work-item groups.
#define SEGMENT 2048
__kernel void bitonic_sort_segments(__global const uint* restrict in, __global uint* restrict out) {
  __local uint keys[SEGMENT];
  size_t base = get_group_id(0) * SEGMENT;
  uint t = get_local_id(0);
  keys[t] = in[base + t];
  keys[t + SEGMENT / 2] = in[base + t + SEGMENT / 2];
  for (uint size = 2; size <= SEGMENT; size *= 2) {
    for (uint stride = size / 2; stride > 0; stride /= 2) {
      barrier(CLK_LOCAL_MEM_FENCE);
      uint i = 2 * t - (t & (stride - 1));
      uint j = i + stride;
      bool ascending = (i & size) == 0;
      uint a = keys[i], b = keys[j];
      if ((a > b) == ascending) {
        keys[i] = b;
        keys[j] = a;
      }
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  out[base + t] = keys[t];
  out[base + t + SEGMENT / 2] = keys[t + SEGMENT / 2];
}

// ---- Black-Scholes.
float normal_cdf(float d) {
  return 0.5f * erfc(-d * 0.70710678118654752f);
}

__kernel void black_scholes(__global const float* restrict spot,
                            __global const float* restrict strike,
                            __global const float* restrict years, __global float* restrict call,
                            __global float* restrict put, float rate, float volatility, ulong n) {
  size_t i = get_global_id(0);
  if (i >= n) return;
  float s = spot[i], x = strike[i], t = years[i];
  float sqrt_t = sqrt(t);
  float d1 = (log(s / x) + (rate + 0.5f * volatility * volatility) * t) / (volatility * sqrt_t);
  float d2 = d1 - volatility * sqrt_t;
  float discount = exp(-rate * t);
  float cnd1 = normal_cdf(d1), cnd2 = normal_cdf(d2);
  call[i] = s * cnd1 - x * discount * cnd2;
  put[i] = x * discount * (1.0f - cnd2) - s * (1.0f - cnd1);
}
