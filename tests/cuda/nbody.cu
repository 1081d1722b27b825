// One n-body step: each thread sums the softened gravitational pull of all bodies, read in
// tiles through shared memory, then integrates; compared with a double-precision host
// reference within a relative tolerance (the device sums in float in another order).
#include <cmath>
#include <vector>

#include "check.h"

constexpr int TILE = 128;

__global__ void step(const float4* pos, const float3* vel, float4* new_pos, float3* new_vel, int n,
                     float dt) {
  __shared__ float4 tile[TILE];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float4 p = i < n ? pos[i] : make_float4(0, 0, 0, 0);
  float3 acc = make_float3(0, 0, 0);
  for (int base = 0; base < n; base += TILE) {
    int j = base + threadIdx.x;
    tile[threadIdx.x] = j < n ? pos[j] : make_float4(0, 0, 0, 0);
    __syncthreads();
    for (int k = 0; k < TILE && base + k < n; ++k) {
      float4 q = tile[k];
      float dx = q.x - p.x, dy = q.y - p.y, dz = q.z - p.z;
      float r2 = dx * dx + dy * dy + dz * dz + 0.01f;
      float inv = 1.0f / sqrtf(r2);
      float s = q.w * inv * inv * inv;
      acc.x += dx * s, acc.y += dy * s, acc.z += dz * s;
    }
    __syncthreads();
  }
  if (i < n) {
    float3 v = vel[i];
    v.x += acc.x * dt, v.y += acc.y * dt, v.z += acc.z * dt;
    new_vel[i] = v;
    new_pos[i] = make_float4(p.x + v.x * dt, p.y + v.y * dt, p.z + v.z * dt, p.w);
  }
}

int main() {
  const int n = 1000;
  const float dt = 0.01f;
  std::vector<float4> pos(n), new_pos(n);
  std::vector<float3> vel(n), new_vel(n);
  for (int i = 0; i < n; ++i) {
    pos[i] = make_float4(std::sin(i * 0.7f) * 10, std::cos(i * 1.3f) * 10, (i % 17) - 8.0f,
                         1.0f + (i % 5));
    vel[i] = make_float3(0.1f * (i % 3), -0.2f, 0.05f * (i % 7));
  }
  float4 *d_pos, *d_new_pos;
  float3 *d_vel, *d_new_vel;
  CHECK(cudaMalloc(&d_pos, n * sizeof(float4)));
  CHECK(cudaMalloc(&d_new_pos, n * sizeof(float4)));
  CHECK(cudaMalloc(&d_vel, n * sizeof(float3)));
  CHECK(cudaMalloc(&d_new_vel, n * sizeof(float3)));
  CHECK(cudaMemcpy(d_pos, pos.data(), n * sizeof(float4), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_vel, vel.data(), n * sizeof(float3), cudaMemcpyHostToDevice));
  step<<<(n + TILE - 1) / TILE, TILE>>>(d_pos, d_vel, d_new_pos, d_new_vel, n, dt);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(new_pos.data(), d_new_pos, n * sizeof(float4), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(new_vel.data(), d_new_vel, n * sizeof(float3), cudaMemcpyDeviceToHost));
  std::vector<double> got, want;
  for (int i = 0; i < n; ++i) {
    double ax = 0, ay = 0, az = 0;
    for (int j = 0; j < n; ++j) {
      double dx = double(pos[j].x) - pos[i].x, dy = double(pos[j].y) - pos[i].y;
      double dz = double(pos[j].z) - pos[i].z;
      double r2 = dx * dx + dy * dy + dz * dz + 0.01;
      double s = pos[j].w / (r2 * std::sqrt(r2));
      ax += dx * s, ay += dy * s, az += dz * s;
    }
    double vx = vel[i].x + ax * dt, vy = vel[i].y + ay * dt, vz = vel[i].z + az * dt;
    double w[6] = {vx, vy, vz, pos[i].x + vx * dt, pos[i].y + vy * dt, pos[i].z + vz * dt};
    double g[6] = {new_vel[i].x, new_vel[i].y, new_vel[i].z,
                   new_pos[i].x, new_pos[i].y, new_pos[i].z};
    for (int k = 0; k < 6; ++k)
      got.push_back(g[k]), want.push_back(w[k]);
  }
  // Velocities and positions are O(1..10); float sums of 1000 terms stay well within 2e-3.
  expect_near("velocities and positions", got.data(), want.data(), got.size(), 2e-3);
  return report("nbody");
}
