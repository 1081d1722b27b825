// mma / wmma / ldmatrix for the CPU executor: every lane's operands are decoded into the
// logical matrices, D = A * B + C is computed once (products exact in double, one rounding
// to the result type; integers in 64 bits, wrapped or saturated to 32), and each lane gets
// its fragment of D.
#include "backends/cpu/matrix.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "codegen/matrix_layout.h"

namespace mimic::cpu {

using codegen::BlockState;
using codegen::kFragmentWords;
using codegen::MatrixOp;
using codegen::MatrixOperand;
using codegen::MatrixType;

namespace {

double half_to_double(uint16_t h) {
  _Float16 f;
  std::memcpy(&f, &h, 2);
  return double(f);
}

uint16_t double_to_half(double d) {
  _Float16 f = _Float16(float(d)); // float -> half rounds to nearest even
  uint16_t h;
  std::memcpy(&h, &f, 2);
  return h;
}

uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f))
    return uint16_t((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return uint16_t(u >> 16);
}

// Element i of a lane's words, as a double (floating types) or an integer.
uint64_t raw_element(const uint32_t* words, unsigned bits, unsigned i) {
  if (bits == 64)
    return uint64_t(words[2 * i]) | uint64_t(words[2 * i + 1]) << 32;
  unsigned per = 32 / bits;
  uint32_t w = words[i / per];
  return (w >> ((i % per) * bits)) & (bits == 32 ? 0xffffffffu : ((1u << bits) - 1));
}

void set_raw_element(uint32_t* words, unsigned bits, unsigned i, uint64_t v) {
  if (bits == 64) {
    words[2 * i] = uint32_t(v);
    words[2 * i + 1] = uint32_t(v >> 32);
    return;
  }
  unsigned per = 32 / bits, shift = (i % per) * bits;
  uint32_t mask = bits == 32 ? 0xffffffffu : ((1u << bits) - 1) << shift;
  words[i / per] = (words[i / per] & ~mask) | ((uint32_t(v) << shift) & mask);
}

bool is_integer(MatrixType t) {
  return t == MatrixType::S8 || t == MatrixType::U8 || t == MatrixType::S32 || t == MatrixType::S4 ||
         t == MatrixType::U4;
}

double to_double(MatrixType t, uint64_t raw) {
  switch (t) {
  case MatrixType::F16:
    return half_to_double(uint16_t(raw));
  case MatrixType::BF16: {
    uint32_t u = uint32_t(raw) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  case MatrixType::TF32: { // the tensor core reads 10 bits of mantissa
    uint32_t u = uint32_t(raw) & 0xffffe000u;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  case MatrixType::F32: {
    uint32_t u = uint32_t(raw);
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  case MatrixType::F64: {
    double d;
    std::memcpy(&d, &raw, 8);
    return d;
  }
  default:
    return 0;
  }
}

int64_t to_integer(MatrixType t, uint64_t raw) {
  switch (t) {
  case MatrixType::S8:
    return int8_t(raw);
  case MatrixType::U8:
    return uint8_t(raw);
  case MatrixType::S4:
    return int64_t(raw & 8 ? int64_t(raw) - 16 : int64_t(raw));
  case MatrixType::U4:
    return int64_t(raw & 15);
  case MatrixType::S32:
    return int32_t(raw);
  default:
    return 0;
  }
}

uint64_t from_double(MatrixType t, double d) {
  switch (t) {
  case MatrixType::F16:
    return double_to_half(d);
  case MatrixType::BF16:
    return float_to_bf16(float(d));
  case MatrixType::F32: {
    float f = float(d);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
  }
  case MatrixType::F64: {
    uint64_t u;
    std::memcpy(&u, &d, 8);
    return u;
  }
  default:
    return 0;
  }
}

void matrix_multiply(BlockState& block, uint32_t warp_base, uint32_t group, const MatrixOp& op) {
  const unsigned m = op.m, n = op.n, k = op.k;
  const bool integer = is_integer(op.a);
  std::vector<double> a(m * k), b(k * n), c(m * n);
  std::vector<int64_t> ai(integer ? m * k : 0), bi(integer ? k * n : 0), ci(integer ? m * n : 0);
  auto lane_words = [&](unsigned lane) { return block.fragments + size_t(warp_base + lane) * kFragmentWords; };
  auto gather = [&](MatrixOperand which, unsigned first_word, std::vector<double>& out, std::vector<int64_t>& out_i) {
    MatrixType t = codegen::operand_type(op, which);
    unsigned bits = codegen::matrix_type_bits(t), count = codegen::fragment_elements(op, which);
    unsigned cols = codegen::matrix_cols(op, which);
    for (unsigned lane = 0; lane < 32; ++lane) {
      if (!(group & (1u << lane)))
        continue;
      const uint32_t* w = lane_words(lane) + first_word;
      for (unsigned i = 0; i < count; ++i) {
        unsigned r, col;
        codegen::fragment_position(op, which, lane, i, r, col);
        uint64_t raw = raw_element(w, bits, i);
        if (integer)
          out_i[r * cols + col] = to_integer(t, raw);
        else
          out[r * cols + col] = to_double(t, raw);
      }
    }
  };
  gather(MatrixOperand::A, 0, a, ai);
  gather(MatrixOperand::B, op.a_words, b, bi);
  gather(MatrixOperand::C, op.a_words + op.b_words, c, ci);
  // D = A * B + C, then each lane's fragment of D (laid out as C, in D's type).
  MatrixOp d_op = op;
  d_op.c = op.d;
  unsigned d_bits = codegen::matrix_type_bits(op.d), d_count = codegen::fragment_elements(d_op, MatrixOperand::C);
  std::vector<uint64_t> d(m * n);
  for (unsigned r = 0; r < m; ++r)
    for (unsigned col = 0; col < n; ++col) {
      if (integer) {
        int64_t sum = ci[r * n + col];
        for (unsigned x = 0; x < k; ++x)
          sum += ai[r * k + x] * bi[x * n + col];
        if (op.satfinite)
          sum = std::clamp<int64_t>(sum, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max());
        d[r * n + col] = uint32_t(int32_t(uint32_t(sum)));
      } else {
        double sum = c[r * n + col];
        for (unsigned x = 0; x < k; ++x)
          sum = std::fma(a[r * k + x], b[x * n + col], sum);
        d[r * n + col] = from_double(op.d, sum);
      }
    }
  for (unsigned lane = 0; lane < 32; ++lane) {
    if (!(group & (1u << lane)))
      continue;
    uint32_t* w = lane_words(lane);
    uint32_t out[kFragmentWords] = {};
    for (unsigned i = 0; i < d_count; ++i) {
      unsigned r, col;
      codegen::fragment_position(d_op, MatrixOperand::C, lane, i, r, col);
      set_raw_element(out, d_bits, i, d[r * n + col]);
    }
    std::memcpy(w, out, sizeof out);
  }
}

void load_matrix(BlockState& block, uint32_t warp_base, uint32_t group, const MatrixOp& op) {
  auto row_address = [&](unsigned lane) {
    uint64_t a;
    std::memcpy(&a, block.fragments + size_t(warp_base + lane) * kFragmentWords, 8);
    return reinterpret_cast<const uint8_t*>(a);
  };
  const unsigned matrices = op.m;
  std::vector<uint32_t> results(32 * 4, 0);
  for (unsigned lane = 0; lane < 32; ++lane) {
    if (!(group & (1u << lane)))
      continue;
    for (unsigned q = 0; q < matrices; ++q) {
      uint32_t v;
      if (!op.transpose) {
        std::memcpy(&v, row_address(q * 8 + lane / 4) + (lane % 4) * 4, 4);
      } else {
        uint16_t lo, hi;
        std::memcpy(&lo, row_address(q * 8 + 2 * (lane % 4)) + (lane / 4) * 2, 2);
        std::memcpy(&hi, row_address(q * 8 + 2 * (lane % 4) + 1) + (lane / 4) * 2, 2);
        v = uint32_t(lo) | uint32_t(hi) << 16;
      }
      results[lane * 4 + q] = v;
    }
  }
  for (unsigned lane = 0; lane < 32; ++lane)
    if (group & (1u << lane))
      std::memcpy(block.fragments + size_t(warp_base + lane) * kFragmentWords, &results[lane * 4], 16);
}

// stmatrix: lane l's register q holds row l/4, columns 2(l%4) and 2(l%4)+1 of matrix q (with
// .trans, column l/4 of rows 2(l%4) and 2(l%4)+1); lane q*8+r gives the address of row r.
void store_matrix(BlockState& block, uint32_t warp_base, uint32_t group, const MatrixOp& op) {
  auto lane_words = [&](unsigned lane) { return block.fragments + size_t(warp_base + lane) * kFragmentWords; };
  auto row_address = [&](unsigned lane) {
    uint64_t a;
    std::memcpy(&a, lane_words(lane), 8);
    return reinterpret_cast<uint8_t*>(a);
  };
  for (unsigned lane = 0; lane < 32; ++lane) {
    if (!(group & (1u << lane)))
      continue;
    for (unsigned q = 0; q < op.m; ++q) {
      uint32_t v = lane_words(lane)[2 + q];
      if (!op.transpose) {
        std::memcpy(row_address(q * 8 + lane / 4) + (lane % 4) * 4, &v, 4);
      } else {
        uint16_t lo = uint16_t(v), hi = uint16_t(v >> 16);
        std::memcpy(row_address(q * 8 + 2 * (lane % 4)) + (lane / 4) * 2, &lo, 2);
        std::memcpy(row_address(q * 8 + 2 * (lane % 4) + 1) + (lane / 4) * 2, &hi, 2);
      }
    }
  }
}

// movmatrix.trans: lane l holds row l/4, columns 2(l%4) and 2(l%4)+1; element (r, c) is half
// c%2 of lane 4r + c/2's word. The transposed fragment's (r, c) is the original's (c, r).
void move_matrix(BlockState& block, uint32_t warp_base, uint32_t group) {
  auto word = [&](unsigned lane) -> uint32_t& { return block.fragments[size_t(warp_base + lane) * kFragmentWords]; };
  uint16_t a[8][8];
  for (unsigned lane = 0; lane < 32; ++lane) {
    uint32_t v = (group & (1u << lane)) ? word(lane) : 0;
    a[lane / 4][2 * (lane % 4)] = uint16_t(v);
    a[lane / 4][2 * (lane % 4) + 1] = uint16_t(v >> 16);
  }
  for (unsigned lane = 0; lane < 32; ++lane)
    if (group & (1u << lane))
      word(lane) = uint32_t(a[2 * (lane % 4)][lane / 4]) | uint32_t(a[2 * (lane % 4) + 1][lane / 4]) << 16;
}

} // namespace

void run_matrix_op(BlockState& block, uint32_t warp_base, uint32_t group) {
  if (!group)
    return;
  unsigned first = unsigned(__builtin_ctz(group));
  MatrixOp op = MatrixOp::decode(block.exchange[warp_base + first]);
  if (op.kind == MatrixOp::Ldmatrix)
    load_matrix(block, warp_base, group, op);
  else if (op.kind == MatrixOp::Stmatrix)
    store_matrix(block, warp_base, group, op);
  else if (op.kind == MatrixOp::Movmatrix)
    move_matrix(block, warp_base, group);
  else
    matrix_multiply(block, warp_base, group, op);
}

} // namespace mimic::cpu

namespace mimic::codegen {

namespace {

struct WmmaShape {
  MatrixOp op;
  MatrixOperand which;
  MatrixType type;
};

WmmaShape wmma_shape(uint64_t word, uint32_t matrix) {
  WmmaShape s{MatrixOp::decode(word), matrix == 0 ? MatrixOperand::A : matrix == 1 ? MatrixOperand::B : MatrixOperand::C,
              MatrixType::None};
  s.type = operand_type(s.op, s.which);
  return s;
}

} // namespace

extern "C" void mimic_wmma_load(uint32_t* words, const void* memory, uint32_t lane, uint64_t op_word, uint32_t matrix,
                                uint32_t column_major, uint32_t stride) {
  WmmaShape s = wmma_shape(op_word, matrix);
  unsigned bits = matrix_type_bits(s.type), count = fragment_elements(s.op, s.which);
  std::memset(words, 0, kFragmentWords * 4);
  const uint8_t* base = static_cast<const uint8_t*>(memory);
  for (unsigned i = 0; i < count; ++i) {
    unsigned r, c;
    fragment_position(s.op, s.which, lane, i, r, c);
    size_t index = column_major ? size_t(c) * stride + r : size_t(r) * stride + c;
    uint64_t raw = 0;
    if (bits >= 8)
      std::memcpy(&raw, base + index * (bits / 8), bits / 8);
    else // 4-bit elements, two per byte, the lower index in the low nibble
      raw = (base[index / 2] >> ((index % 2) * 4)) & 15;
    cpu::set_raw_element(words, bits, i, raw);
  }
}

extern "C" void mimic_wmma_store(void* memory, const uint32_t* words, uint32_t lane, uint64_t op_word, uint32_t matrix,
                                 uint32_t column_major, uint32_t stride) {
  WmmaShape s = wmma_shape(op_word, matrix);
  unsigned bits = matrix_type_bits(s.type), count = fragment_elements(s.op, s.which);
  uint8_t* base = static_cast<uint8_t*>(memory);
  for (unsigned i = 0; i < count; ++i) {
    unsigned r, c;
    fragment_position(s.op, s.which, lane, i, r, c);
    size_t index = column_major ? size_t(c) * stride + r : size_t(r) * stride + c;
    uint64_t raw = cpu::raw_element(words, bits, i);
    std::memcpy(base + index * (bits / 8), &raw, bits / 8);
  }
}

} // namespace mimic::codegen
