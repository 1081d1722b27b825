// stmatrix (.x1/.x2/.x4, with and without .trans) and movmatrix.trans, the sm_90 fragment
// moves: each lane's registers are its ldmatrix layout of 16-bit elements; the stored tiles
// and the transposed fragments are checked against the layout computed on the host.
// nvcc-flags: -arch=sm_90
#include <cstdint>
#include <vector>

#include "check.h"

// Lane l's word q of matrix q: elements (l/4, 2(l%4)) low and (l/4, 2(l%4)+1) high, with the
// value 1000*q + 10*row + col so every element says where it belongs.
__device__ unsigned fragment_word(int q, int lane) {
  unsigned row = lane / 4, col = 2 * (lane % 4);
  return (1000u * q + 10u * row + col) | (1000u * q + 10u * row + col + 1) << 16;
}

template <int X, bool Trans> __global__ void store_tiles(uint16_t* out) {
  __shared__ __align__(16) uint16_t tile[4][8][8];
  int lane = threadIdx.x;
  for (int i = lane; i < 4 * 64; i += 32)
    (&tile[0][0][0])[i] = 0xffff;
  __syncwarp();
  unsigned r[4];
  for (int q = 0; q < 4; ++q)
    r[q] = fragment_word(q, lane);
  // Lane q*8 + r gives the address of row r of matrix q.
  unsigned addr = (unsigned)__cvta_generic_to_shared(&tile[(lane / 8) % X][lane % 8][0]);
  if (X == 1 && !Trans)
    asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" ::"r"(addr), "r"(r[0]));
  if (X == 2 && !Trans)
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(addr), "r"(r[0]), "r"(r[1]));
  if (X == 4 && !Trans)
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r[0]),
                 "r"(r[1]), "r"(r[2]), "r"(r[3]));
  if (X == 1 && Trans)
    asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" ::"r"(addr), "r"(r[0]));
  if (X == 4 && Trans)
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r[0]),
                 "r"(r[1]), "r"(r[2]), "r"(r[3]));
  __syncwarp();
  for (int i = lane; i < 4 * 64; i += 32)
    out[i] = (&tile[0][0][0])[i];
}

__global__ void transpose_fragment(unsigned* out) {
  int lane = threadIdx.x;
  unsigned d;
  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(d) : "r"(fragment_word(0, lane)));
  out[lane] = d;
}

template <int X, bool Trans> int check_store(const char* name) {
  uint16_t* d_out;
  CHECK(cudaMalloc(&d_out, 4 * 64 * sizeof(uint16_t)));
  store_tiles<X, Trans><<<1, 32>>>(d_out);
  CHECK_LAUNCH();
  std::vector<uint16_t> got(4 * 64), want(4 * 64, 0xffff);
  CHECK(cudaMemcpy(got.data(), d_out, got.size() * 2, cudaMemcpyDeviceToHost));
  for (int q = 0; q < X; ++q)
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c) // .trans stores the transpose of the fragment's matrix
        want[q * 64 + r * 8 + c] = uint16_t(Trans ? 1000 * q + 10 * c + r : 1000 * q + 10 * r + c);
  expect_equal(name, got.data(), want.data(), got.size());
  CHECK(cudaFree(d_out));
  return 0;
}

int main() {
  if (check_store<1, false>("stmatrix.x1") || check_store<2, false>("stmatrix.x2") ||
      check_store<4, false>("stmatrix.x4") || check_store<1, true>("stmatrix.x1.trans") ||
      check_store<4, true>("stmatrix.x4.trans"))
    return 1;
  unsigned* d_t;
  CHECK(cudaMalloc(&d_t, 32 * sizeof(unsigned)));
  transpose_fragment<<<1, 32>>>(d_t);
  CHECK_LAUNCH();
  std::vector<unsigned> t(32);
  CHECK(cudaMemcpy(t.data(), d_t, sizeof(unsigned) * 32, cudaMemcpyDeviceToHost));
  std::vector<unsigned> want(32);
  for (int lane = 0; lane < 32; ++lane) { // transposed (r, c) is the original (c, r) = 10c + r
    unsigned r = lane / 4, c = 2 * (lane % 4);
    want[lane] = (10 * c + r) | (10 * (c + 1) + r) << 16;
  }
  expect_equal("movmatrix", t.data(), want.data(), 32);
  CHECK(cudaFree(d_t));
  return report("matrix_moves");
}
