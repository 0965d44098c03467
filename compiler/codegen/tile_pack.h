#pragma once
// Tile-contiguous packing of a GEMM operand for BulkTileK (device/loaders.cuh): the operand is a
// [rows][K] matrix (K contiguous); its (row tile rt, k tile kt) block of tile_rows x bk elements
// is stored exactly as the GEMM lays out a pipeline stage in shared memory, blocks ordered
// [row tile][k tile]. One bulk copy then fills a stage. Two layouts:
//  - padded (GemmF16): rows of bk + 8 elements, so that ldmatrix is conflict-free;
//  - swizzled (GemmWg, wgmma): unpadded, [bk/64][tile_rows][64] fp16, the 16-byte chunk c of
//    row r of each 64-wide k block at chunk c ^ (r % 8): the 128-byte swizzle wgmma reads.
// Header-only: the compiler (pack_weights) and the device-library check use it.
#include <cstddef>
#include <cstdint>

namespace mono {

// Elements of one packed block (padding included).
inline int64_t tile_block_elems(int tile_rows, int bk, bool swizzled) {
  return static_cast<int64_t>(tile_rows) * (swizzled ? bk : bk + 8);
}

// Elements of the packed operand (padding included).
inline int64_t tile_packed_elems(int64_t rows, int64_t K, int tile_rows, int bk, bool swizzled = false) {
  return ((rows + tile_rows - 1) / tile_rows) * ((K + bk - 1) / bk) * tile_block_elems(tile_rows, bk, swizzled);
}

// Where element (r, k) of a [rows][K] operand lands in its tile-packed form (padding included).
// Swizzled packing needs bk % 64 == 0 (fp16 elements).
struct TilePackedIndex {
  int64_t kt_count, block_elems;
  int tile_rows, bk;
  bool swizzled;
  TilePackedIndex(int64_t K, int tile_rows_, int bk_, bool swizzled_)
      : kt_count((K + bk_ - 1) / bk_), block_elems(tile_block_elems(tile_rows_, bk_, swizzled_)), tile_rows(tile_rows_),
        bk(bk_), swizzled(swizzled_) {}
  size_t operator()(int64_t r, int64_t k) const {
    const int64_t rt = r / tile_rows, rr = r % tile_rows;
    const int64_t block = rt * kt_count + k / bk, kk = k % bk;
    const int64_t in_block = swizzled ? (kk / 64) * tile_rows * 64 + rr * 64 + ((((kk % 64) / 8) ^ (rr % 8)) * 8) + kk % 8
                                      : rr * (bk + 8) + kk;
    return static_cast<size_t>(block * block_elems + in_block);
  }
};

// Calls copy(dst_index, r, k) for every element (r < rows, k < K) of the operand with its index in
// the packed form. Padding, rows beyond `rows` and k beyond K are not visited: the caller
// zero-fills the destination first.
template <class Copy>
void for_each_tile_packed(int64_t rows, int64_t K, int tile_rows, int bk, const Copy& copy, bool swizzled = false) {
  const TilePackedIndex at(K, tile_rows, bk, swizzled);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < K; ++k) copy(at(r, k), r, k);
}

// The same visits in squares of 64 rows x 64 k, k squares outermost, so that a source read
// k-major ([K][rows], a transposed weight) is read a few cache lines at a time.
template <class Copy>
void for_each_tile_packed_blocked(int64_t rows, int64_t K, int tile_rows, int bk, const Copy& copy, bool swizzled = false) {
  const TilePackedIndex at(K, tile_rows, bk, swizzled);
  constexpr int64_t kSquare = 64;
  for (int64_t k0 = 0; k0 < K; k0 += kSquare)
    for (int64_t r0 = 0; r0 < rows; r0 += kSquare)
      for (int64_t r = r0; r < rows && r < r0 + kSquare; ++r)
        for (int64_t k = k0; k < K && k < k0 + kSquare; ++k) copy(at(r, k), r, k);
}

// The same visits in runs: copy(dst_index, r, k, len) for the elements (r, k .. k + len - 1),
// which are consecutive in the packed form too. A run is 8 elements from a k that is a multiple
// of 8 (fewer at K's end), so it never crosses a tile's k or a swizzled 16-byte chunk. Needs
// bk % 8 == 0 (every tile the planner makes).
template <class Copy>
void for_each_tile_run(int64_t rows, int64_t K, int tile_rows, int bk, const Copy& copy, bool swizzled = false) {
  const TilePackedIndex at(K, tile_rows, bk, swizzled);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < K; k += 8) copy(at(r, k), r, k, static_cast<int>(K - k < 8 ? K - k : 8));
}

}  // namespace mono
