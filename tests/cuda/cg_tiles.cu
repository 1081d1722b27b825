// Cooperative groups: thread_block (sync, ranks, indices), static tiles of 32, 16 and 4
// threads and a dynamic tile of 8: ranks, meta-group ranks, shfl, shfl_down, shfl_xor,
// any/all/ballot, and tile.sync between shared-memory writes and reads.
// variants: debug
#include <cooperative_groups.h>
#include <vector>

#include "check.h"

namespace cg = cooperative_groups;
constexpr int kOut = 12;

__global__ void tiles(int* out) {
  __shared__ int buf[128];
  cg::thread_block block = cg::this_thread_block();
  auto t32 = cg::tiled_partition<32>(block);
  auto t16 = cg::tiled_partition<16>(block);
  auto t4 = cg::tiled_partition<4>(block);
  cg::thread_group t8 = cg::tiled_partition(block, 8);
  int r = block.thread_rank();
  int* o = out + (blockIdx.x * block.size() + r) * kOut;
  o[0] = r == int(threadIdx.x) && block.size() == blockDim.x && block.group_index().x == blockIdx.x;
  o[1] = t32.thread_rank() * 1000 + t32.meta_group_rank();
  o[2] = t16.thread_rank() * 1000 + t16.meta_group_rank() * 10 + t16.meta_group_size();
  o[3] = t4.shfl(r * 3, 3);   // broadcast the last of each 4
  o[4] = t16.shfl_down(r, 5); // past the tile end: own value
  o[5] = t32.shfl_xor(r, 16);
  o[6] = t4.shfl_up(r, 1);
  o[7] = t8.thread_rank() * 100 + int(t8.size());
  o[8] = t32.ballot(r % 3 == 0);
  o[9] = t16.any(r == 37) * 2 + t4.all(r < 64);
  buf[r] = r * r;
  t8.sync();
  int partner = (r & ~7) | (7 - t8.thread_rank());
  o[10] = buf[partner];
  block.sync();
  buf[r] = -r;
  block.sync();
  o[11] = buf[(r + 64) % 128];
}

int main() {
  const int blocks = 2, threads = 128;
  std::vector<int> out(blocks * threads * kOut), want(out.size());
  for (int b = 0; b < blocks; ++b)
    for (int r = 0; r < threads; ++r) {
      int* w = &want[(b * threads + r) * kOut];
      int lane = r % 32;
      unsigned ballot = 0;
      for (int l = 0; l < 32; ++l)
        ballot |= unsigned(((r & ~31) + l) % 3 == 0) << l;
      bool any37 = (r & ~15) <= 37 && 37 < (r & ~15) + 16;
      w[0] = 1;
      w[1] = lane * 1000 + r / 32;
      w[2] = (r % 16) * 1000 + (r / 16) * 10 + threads / 16;
      w[3] = ((r & ~3) + 3) * 3;
      w[4] = r % 16 + 5 < 16 ? r + 5 : r;
      w[5] = r ^ 16;
      w[6] = r % 4 >= 1 ? r - 1 : r;
      w[7] = (r % 8) * 100 + 8;
      w[8] = int(ballot);
      w[9] = any37 * 2 + (r < 64);
      w[10] = ((r & ~7) | (7 - r % 8)) * ((r & ~7) | (7 - r % 8));
      w[11] = -((r + 64) % 128);
    }
  int* d_out;
  CHECK(cudaMalloc(&d_out, out.size() * sizeof(int)));
  tiles<<<blocks, threads>>>(d_out);
  CHECK_LAUNCH();
  CHECK(cudaMemcpy(out.data(), d_out, out.size() * sizeof(int), cudaMemcpyDeviceToHost));
  const char* names[kOut] = {"block ranks",      "tile32 ranks",    "tile16 ranks",  "tile4 shfl",
                             "tile16 shfl_down", "tile32 shfl_xor", "tile4 shfl_up", "tile8 ranks",
                             "tile32 ballot",    "any/all",         "tile8 sync",    "block sync"};
  for (int k = 0; k < kOut; ++k) {
    std::vector<int> g, w;
    for (size_t i = k; i < out.size(); i += kOut)
      g.push_back(out[i]), w.push_back(want[i]);
    expect_equal(names[k], g.data(), w.data(), g.size());
  }
  return report("cg_tiles");
}
