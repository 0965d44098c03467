#pragma once
// Tile-contiguous packing of a GEMM operand for BulkTileK (device/loaders.cuh): the operand is a
// [rows][K] matrix (K contiguous); its (row tile rt, k tile kt) block of tile_rows x bk elements
// is stored exactly as GemmF16 lays out a pipeline stage in shared memory (rows padded to
// bk + 8 elements), blocks ordered [row tile][k tile]. One bulk copy then fills a stage.
// Header-only: the compiler (pack_weights) and the device-library check use it.
#include <cstddef>
#include <cstdint>

namespace mono {

// Elements of the packed operand (padding included).
inline int64_t tile_packed_elems(int64_t rows, int64_t K, int tile_rows, int bk) {
  return ((rows + tile_rows - 1) / tile_rows) * ((K + bk - 1) / bk) * tile_rows * (bk + 8);
}

// Calls copy(dst_index, r, k) for every element (r < rows, k < K) of the operand with its index in
// the packed form. Padding, rows beyond `rows` and k beyond K are not visited: the caller
// zero-fills the destination first.
template <class Copy>
void for_each_tile_packed(int64_t rows, int64_t K, int tile_rows, int bk, const Copy& copy) {
  const int64_t ld = bk + 8, kt_count = (K + bk - 1) / bk;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t rt = r / tile_rows, rr = r % tile_rows;
    for (int64_t k = 0; k < K; ++k) {
      const int64_t block = rt * kt_count + k / bk;
      copy(static_cast<size_t>((block * tile_rows + rr) * ld + k % bk), r, k);
    }
  }
}

}  // namespace mono
