// Where each element of a matrix instruction's fragments lives: which (row, column) of the
// logical matrix a lane's element i is. mma.sync uses the PTX ISA's layouts; wmma uses
// Mimic's own (lane l holds elements l*E/32 ... in row-major order), which only wmma.load,
// wmma.store and wmma.mma see. Shared by the lowering (to refuse what is not described
// here) and the CPU executor (to compute the results).
#pragma once

#include "codegen/block_state.h"

#include <vector>

namespace mimic::codegen {

enum class MatrixOperand { A, B, C };

inline unsigned matrix_rows(const MatrixOp& op, MatrixOperand which) {
  return which == MatrixOperand::B ? op.k : op.m;
}
inline unsigned matrix_cols(const MatrixOp& op, MatrixOperand which) {
  return which == MatrixOperand::A ? op.k : op.n;
}
inline MatrixType operand_type(const MatrixOp& op, MatrixOperand which) {
  return which == MatrixOperand::A ? op.a : which == MatrixOperand::B ? op.b : op.c;
}

// Elements of `which` each lane holds, or 0 when the combination is not supported.
inline unsigned fragment_elements(const MatrixOp& op, MatrixOperand which) {
  unsigned total = matrix_rows(op, which) * matrix_cols(op, which);
  if (op.kind == MatrixOp::Wmma)
    return total % 32 == 0 ? total / 32 : 0;
  // mma.sync: the shapes and types of the PTX ISA's fragment tables handled below.
  MatrixType t = operand_type(op, which);
  unsigned bits = matrix_type_bits(t);
  bool m16n8 = op.m == 16 && op.n == 8;
  bool ok = (m16n8 && (bits == 16 && (op.k == 8 || op.k == 16))) ||
            (m16n8 && t == MatrixType::TF32 && (op.k == 4 || op.k == 8)) ||
            (m16n8 && bits == 8 && (op.k == 16 || op.k == 32)) ||
            (m16n8 && bits == 4 && (op.k == 32 || op.k == 64)) ||
            (op.m == 8 && op.n == 8 && op.k == 4 && op.a == MatrixType::F64);
  if (which == MatrixOperand::C)
    ok = m16n8 || (op.m == 8 && op.n == 8 && op.k == 4 && op.a == MatrixType::F64);
  return ok ? total / 32 : 0;
}

// Row and column of element i of lane `lane`'s fragment.
inline void fragment_position(const MatrixOp& op, MatrixOperand which, unsigned lane, unsigned i, unsigned& row,
                              unsigned& col) {
  if (op.kind == MatrixOp::Wmma) {
    unsigned e = lane * fragment_elements(op, which) + i;
    row = e / matrix_cols(op, which);
    col = e % matrix_cols(op, which);
    return;
  }
  const unsigned g = lane >> 2, tg = lane & 3;
  const unsigned bits = matrix_type_bits(operand_type(op, which));
  const bool f64 = op.m == 8;
  if (which == MatrixOperand::C) {
    row = f64 ? g : g + 8 * (i / 2);
    col = f64 ? tg * 2 + i : tg * 2 + (i % 2);
    return;
  }
  if (f64) {
    row = which == MatrixOperand::A ? g : tg;
    col = which == MatrixOperand::A ? tg : g;
    return;
  }
  if (which == MatrixOperand::A) {
    if (operand_type(op, which) == MatrixType::TF32) {
      row = g + 8 * (i % 2);
      col = tg + 4 * (i / 2);
    } else if (bits == 16) {
      row = g + 8 * ((i / 2) % 2);
      col = tg * 2 + (i % 2) + 8 * (i / 4);
    } else { // 8 or 4 bits: per = elements per 32-bit register
      unsigned per = 32 / bits;
      row = g + 8 * ((i / per) % 2);
      col = tg * per + (i % per) + 4 * per * (i / (2 * per));
    }
    return;
  }
  // B (k x n), "col": one column per group
  col = g;
  if (operand_type(op, which) == MatrixType::TF32)
    row = tg + 4 * i;
  else {
    unsigned per = 32 / bits;
    row = tg * per + (i % per) + 4 * per * (i / per);
  }
}

// Where lane l finds an operand element of an mma.sync it multiplies for its output element
// i (at (row_l, col_l), C's layout): A[row_l][x] or B[x][col_l]. In the PTX ISA's layouts it
// is element `element` of lane per_group * (l / 4) + per_in_group * (l % 4) + offset, the
// same element for every lane; `found` is false where that does not hold for all 32 lanes.
struct LaneSource {
  int per_group = 0, per_in_group = 0, offset = 0;
  unsigned element = 0;
  bool found = false;
};

inline LaneSource mma_operand_source(const MatrixOp& op, MatrixOperand which, unsigned i,
                                     unsigned x) {
  LaneSource s;
  const unsigned count = fragment_elements(op, which), cols = matrix_cols(op, which);
  if (which == MatrixOperand::C || count == 0 || count > 64) return s;
  // holder[position]: lane * 64 + element + 1 of the element there, 0 for none.
  std::vector<unsigned> holder(matrix_rows(op, which) * cols, 0);
  for (unsigned lane = 0; lane < 32; ++lane)
    for (unsigned e = 0; e < count; ++e) {
      unsigned r, c;
      fragment_position(op, which, lane, e, r, c);
      if (r * cols + c < holder.size()) holder[r * cols + c] = lane * 64 + e + 1;
    }
  int lanes[32];
  for (unsigned lane = 0; lane < 32; ++lane) {
    unsigned row, col;
    fragment_position(op, MatrixOperand::C, lane, i, row, col);
    unsigned r = which == MatrixOperand::A ? row : x, c = which == MatrixOperand::A ? x : col;
    unsigned h = r * cols + c < holder.size() ? holder[r * cols + c] : 0;
    if (h == 0 || (lane > 0 && (h - 1) % 64 != s.element)) return s;
    s.element = (h - 1) % 64;
    lanes[lane] = int((h - 1) / 64);
  }
  s.offset = lanes[0];
  s.per_in_group = lanes[1] - lanes[0];
  s.per_group = lanes[4] - lanes[0];
  for (unsigned lane = 0; lane < 32; ++lane)
    if (lanes[lane] != s.per_group * int(lane / 4) + s.per_in_group * int(lane % 4) + s.offset)
      return s;
  s.found = true;
  return s;
}

} // namespace mimic::codegen
