// The tensor maps of a kernel (loaders.cuh TensorK): what the code generator asks for, what the
// artifact records (manifest.json "tensor_maps") and what the runtime encodes over the arena
// (compiler/runtime/tensor_map.h). A map views a 2-D row-major fp16 matrix in the arena; its box
// is 64 k (one 128-byte swizzled row) by the GEMM tile's rows.
#pragma once

#include <cstdint>
#include <string>

namespace mono {

// What a map describes, in the artifact's terms (manifest.json "tensor_maps"; the kernel's
// __constant__ table mono_tmaps holds them in this order).
struct TensorMapSpec {
  uint64_t arena_offset = 0;  // bytes into the arena of element (0, 0)
  int64_t rows = 0;           // matrix rows (the GEMM's M)
  int64_t cols = 0;           // matrix columns (K), contiguous
  int64_t row_stride = 0;     // bytes between rows
  int box_rows = 0;           // the tile's rows (BM)
  int box_cols = 64;          // k per copy: 64 fp16 = one 128-byte swizzle row

  bool operator==(const TensorMapSpec& o) const {
    return arena_offset == o.arena_offset && rows == o.rows && cols == o.cols && row_stride == o.row_stride &&
           box_rows == o.box_rows && box_cols == o.box_cols;
  }
};

// Why `s` cannot be encoded (the limits of cuTensorMapEncodeTiled for this layout), or "".
inline std::string tensor_map_problem(const TensorMapSpec& s) {
  if (s.rows < 1 || s.cols < 1 || s.rows > (int64_t(1) << 31) || s.cols > (int64_t(1) << 31))
    return "matrix dimensions out of range";
  if (s.row_stride % 16 != 0 || s.row_stride < s.cols * 2 || s.row_stride >= (int64_t(1) << 40))
    return "row stride not a multiple of 16 bytes covering a row, below 2^40";
  if (s.arena_offset % 16 != 0) return "start not 16-byte aligned";
  if (s.box_cols != 64) return "box width is not 64 fp16 (128 bytes, the swizzle span)";
  if (s.box_rows < 8 || s.box_rows > 256 || s.box_rows % 8 != 0) return "box rows not a multiple of 8 in 8..256";
  return "";
}

}  // namespace mono
