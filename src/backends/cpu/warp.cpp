// Warp operations for the CPU executor (codegen/block_state.h): when a lane resumes after a
// warp operation, the lanes that reached it together (warp_mask) have published their operands
// (in `released`); each lane derives its own result here, with PTX ISA semantics.
#include <algorithm>
#include <bit>
#include <cmath>

#include "codegen/block_state.h"

namespace mimic::codegen {

namespace {

struct Warp {
  uint32_t base;    // linear index of lane 0
  uint32_t lane;    // this thread's lane
  uint32_t members; // lanes that take part: reached the operation and are in membermask
};

Warp warp_of(const BlockState* block, uint32_t t, uint32_t mask) {
  Warp w;
  w.base = t & ~31u;
  w.lane = t & 31u;
  w.members = block->warp_mask[t] & mask;
  return w;
}

uint32_t value32(const BlockState* block, const Warp& w, uint32_t lane) {
  return uint32_t(block->released[w.base + lane]);
}

} // namespace

extern "C" uint32_t mimic_warp_vote(const BlockState* block, uint32_t t, uint32_t mode, uint32_t mask) {
  Warp w = warp_of(block, t, mask);
  uint32_t ballot = 0;
  for (uint32_t m = w.members; m; m &= m - 1) {
    uint32_t lane = uint32_t(std::countr_zero(m));
    if (block->released[w.base + lane] & 1)
      ballot |= 1u << lane;
  }
  switch (mode) {
  case 0: // all
    return ballot == w.members;
  case 1: // any
    return ballot != 0;
  case 2: // uni: all members agree
    return ballot == 0 || ballot == w.members;
  default:
    return ballot;
  }
}

extern "C" uint64_t mimic_warp_match(const BlockState* block, uint32_t t, uint32_t mode, uint32_t wide,
                                     uint32_t mask) {
  Warp w = warp_of(block, t, mask);
  auto get = [&](uint32_t lane) {
    uint64_t v = block->released[w.base + lane];
    return wide ? v : (v & 0xffffffffu);
  };
  const uint64_t mine = get(w.lane);
  uint32_t same = 0;
  for (uint32_t m = w.members; m; m &= m - 1) {
    uint32_t lane = uint32_t(std::countr_zero(m));
    if (get(lane) == mine)
      same |= 1u << lane;
  }
  if (mode == 0) // any: the lanes holding my value
    return same;
  bool all = same == w.members;
  return (all ? uint64_t(w.members) : 0) | (uint64_t(all) << 32);
}

namespace {

// redux.sync.min|max{.abs}{.NaN}.f32: -0 orders below +0; a NaN is ignored unless .NaN asks
// for it to win (as the canonical NaN).
uint32_t redux_f32(const BlockState* block, const Warp& w, bool max, bool abs, bool nan) {
  bool seen_nan = false, any = false;
  float acc = 0;
  for (uint32_t m = w.members; m; m &= m - 1) {
    float v = std::bit_cast<float>(value32(block, w, uint32_t(std::countr_zero(m))));
    if (abs)
      v = std::fabs(v);
    if (std::isnan(v)) {
      seen_nan = true;
      continue;
    }
    if (!any) {
      acc = v;
      any = true;
      continue;
    }
    bool less = v < acc || (v == acc && std::signbit(v) && !std::signbit(acc));
    bool greater = v > acc || (v == acc && !std::signbit(v) && std::signbit(acc));
    if (max ? greater : less)
      acc = v;
  }
  if ((seen_nan && nan) || !any)
    return 0x7fffffffu;
  return std::bit_cast<uint32_t>(acc);
}

} // namespace

extern "C" uint32_t mimic_warp_redux(const BlockState* block, uint32_t t, uint32_t op, uint32_t is_signed,
                                     uint32_t mask) {
  Warp w = warp_of(block, t, mask);
  if (op == 6 || op == 7)
    return redux_f32(block, w, op == 7, is_signed & 1, is_signed & 2);
  bool first = true;
  uint32_t acc = 0;
  for (uint32_t m = w.members; m; m &= m - 1) {
    uint32_t v = value32(block, w, uint32_t(std::countr_zero(m)));
    if (first) {
      acc = v;
      first = false;
      continue;
    }
    switch (op) {
    case 0:
      acc += v;
      break;
    case 1:
      acc = is_signed ? uint32_t(std::min(int32_t(acc), int32_t(v))) : std::min(acc, v);
      break;
    case 2:
      acc = is_signed ? uint32_t(std::max(int32_t(acc), int32_t(v))) : std::max(acc, v);
      break;
    case 3:
      acc &= v;
      break;
    case 4:
      acc |= v;
      break;
    default:
      acc ^= v;
      break;
    }
  }
  return acc;
}

} // namespace mimic::codegen
