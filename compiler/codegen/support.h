// Small facts shared by the planner and the CUDA emitter.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "compiler/codegen/plan.h"
#include "compiler/ir/graph.h"

namespace mono {

// 32-bit words at the start of the sync area used by the grid barrier (padded to a line).
constexpr size_t kBarrierWords = 32;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }
inline std::string format_us(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, us < 10 ? "%.2f us" : "%.1f us", us);
  return buf;
}

// Ops that can be applied to a group's running result element by element.
bool is_epilogue_op(OpKind op);
// Whether the CUDA emitter can compile this node.
bool codegen_supports(const Node& n);
// Row length of a row-wise op (LayerNormalization: product of normalized dims; Softmax: the
// normalised extent).
int64_t row_length(const Node& n);
// Values of a row a warp caches in registers (device/rows.cuh: 32 lanes x detail::kRowCache).
constexpr int64_t kWarpRowValues = 1024;
// Shared memory of a block-per-row group: common.cuh block_sum's scratch of 33 floats.
constexpr int kBlockRowScratchBytes = 33 * 4;
// Whether a rows group runs a block per row (device/rows.cuh *_block_f): rows longer than the
// kWarpRowValues a warp caches in registers. Over one warp, ALBERT-xxlarge's 4096-wide LayerNorm
// kept 16 of 132 blocks busy for its 128 rows: 63 us a stage, against 11 a block a row (H100,
// bench/RESULTS.md session 16). Attention's softmax keeps a warp a row (emit/attention.cc).
bool block_per_row(const Node& n);
// Keys a flash attention item holds in shared memory at once (FlashAttention); a head with
// more streams them in chunks (FlashStream: planner/attention_fusion.cc choose_flash).
constexpr int64_t kFlashWholeKeys = 256;
// The streamed items FlashWg (attention.cuh) runs on the warpgroup MMA: 128 query rows of a
// 64-wide head, keys in chunks of 128 (choose_flash's wide items; emit/attention.cc).
struct FlashWgShape {
  static constexpr int kRows = 128, kChunk = 128, kHead = 64;
  // attention.cuh FlashWg::kSmemBytes: Q, then K and V of two chunks.
  static constexpr int64_t kSmemBytes = kRows * kHead * 2 + 2 * 2 * kChunk * kHead * 2;
};
// The value epilogue node `e` of group `g` reads as its running input: the previous step's
// output (an IsNaN step, the condition of the Where after it, is not one), the anchor's for the
// first; with e not in the epilogue, the group's result.
const Value* running_value(const Group& g, const Node* e);
// How constant input `i` of `n` is packed into the weights before any schedule is known: a
// GEMM's 2-D B operand transposed to [N][K], a channels-last depthwise Conv's W [C][KH][KW][1]
// to [KH*KW][C], anything else as is.
Packing constant_packing(const Node& n, int i);
// A product of one row with a constant weight matrix, y[n] = alpha * sum_k x[k] * W[n][k]
// (+ beta * C, or + B[n]): a Gemm or MatMul whose A holds one row, or a one-group Conv with a
// 1x1 kernel and no padding on a one-pixel image (a classifier head, a squeeze-and-excitation
// layer). The planner gives it a pointwise group and the emitter a warp (or part of one) per
// output; as a tiled GEMM it ran one row of a 64-row tile. `w` is stored [N][K] as its packing
// (`constant_packing`) leaves it.
struct GemvForm {
  const Value* x = nullptr;     // K values
  const Value* w = nullptr;     // [N][K] after packing
  const Value* bias = nullptr;  // Gemm's C (broadcast to [1, N]) or Conv's B[N]; may be null
  int64_t k = 0, n = 0;
  float alpha = 1.0f, beta = 1.0f;
};
bool gemv_form(const Node& n, GemvForm* out = nullptr);
// Lanes per output of a GEMV: the fewest (a power of two, at most a warp) that cover K in
// 8-element chunks.
int gemv_lanes(int64_t k);
// A GEMV computed again by every item of the GEMV that reads its result (Group::squeeze,
// planner/squeeze_fusion.cc): one of at most kSqueezeInsideWeights weights (every item reads
// them all) and 1024 outputs (held in shared memory as floats, squeeze_smem_bytes). Measured on
// the H100 (bench/RESULTS.md session 14, same call): with squeezes of up to 4096 weights inside,
// efficientnet-b0 335.9 -> 326.0 us, mobilenet-v3-large 228.5 -> 224.3, regnet-y-400mf 359.4 ->
// 355.9; with up to 65536 (efficientnet-b0's 1152 x 48 included) 338.4, 231.4 and 389.5: a
// squeeze of 480 x 20 took as long inside as its own stage and barrier, 672 x 28 and 1152 x 48
// 1-3 us longer, although each block starts at a pass of its own.
constexpr int64_t kSqueezeInsideWeights = 4096;
bool squeeze_fits_inside(const GemvForm& f);
inline int squeeze_smem_bytes(int64_t outputs) { return static_cast<int>(align_up(static_cast<size_t>(outputs) * 4, 16)); }
// A gated GEMV (Group::gate): each channel's plane (`gate_plane` elements, 0 without a gate) is
// cut into parts of kGateLaneElements per lane (one 16-byte vector of fp16); each part is a unit
// of work that computes its channel's result again (the dot is short: a squeeze-and-excitation's
// squeezed width). With 32 elements a lane, four vectors one after another, the gated stages of
// efficientnet-b0 and regnet-y-400mf ran on 21 to 50 blocks and were slower than the GEMV and a
// Mul stage (H100, bench/RESULTS.md session 10).
constexpr int kGateLaneElements = 8;
int64_t gate_plane(const Group& g);
int64_t gate_parts(int64_t plane, int lanes);
// A grouped or depthwise 2-D Conv in NCHW (a pointwise group) computed a strip at a time:
// each thread PointwiseSchedule::strip outputs of one column of one channel, the lanes of a warp
// on consecutive columns (emit/pointwise.cc emit_conv_strips). The weights must be constant and
// finite (a padding position adds 0 x w).
bool strip_conv(const Node& n);
// A strip height cut so that a column's strips are as even as possible: at most `most` (112 -> 8,
// 28 -> 7, 14 -> 7 for 8).
int even_strip_height(int64_t rows, int most);
// The default: at most 8 for a depthwise Conv; for a grouped one, whose thread loops over its
// group's input channels, the tallest whose strips still give every thread of the grid one.
// Measured (H100, bench/RESULTS.md session 11): the tallest everywhere was 2 % faster on
// mobilenet-v2 and 2 % slower on regnet-y-400mf (grouped, 8 channels a group) than this rule.
int default_strip_height(const Node& n, const KernelContext& ctx);
// Why a strip height is not valid for node n ("" when it is): 1..8 for a strip convolution,
// 0 for anything else.
std::string strip_problem(const Node& n, int strip);
// A strip convolution's strips at height `height`: a work unit of its group (the planner's
// items and the emitter's loop bound).
int64_t conv_strips(const Node& n, int height);
// Warps per output of a GlobalAveragePool (PointwiseSchedule::warps; emit/pointwise.cc
// emit_global_pool), the default: one, or up to 8 (all in one block, their sums added through
// shared memory) while each lane still reads at least two 16-byte vectors of the plane and the
// warps fit in the grid; 0 for any other node. With a warp per plane,
// efficientnet-b0's first squeeze (32 planes of 112x112) ran on 4 blocks, 49 vectors a lane:
// 4.10 us, against 1.79 with 8 warps; the whole kernel 334.9 -> 331.0 us (H100, same call,
// bench/runs/run142).
int default_pool_warps(const Node& n, const KernelContext& ctx);
// Why `warps` is not valid for node n ("" when it is): 1, 2, 4 or 8 dividing a block's warps for
// a GlobalAveragePool, 0 for anything else.
std::string pool_warps_problem(const Node& n, int warps, const KernelContext& ctx);
// The shared memory a pool with `warps` warps an output needs: a float per warp of the block
// for more than one, none for one.
inline int pool_smem_bytes(int warps, const KernelContext& ctx) { return warps > 1 ? ctx.threads / 32 * 4 : 0; }
// A depthwise Conv in the channels-last layout (the channels_last pass's; ops/pool.h): a
// pointwise group computed eight channels a thread (channel_vectors). Its weights are packed
// [KH*KW][C] (constant_packing: "transposed"), so that a window position's eight weights are
// one 16-byte load.
bool channels_last_depthwise(const Node& n);
// A pointwise group computed eight channels a thread (emit/pointwise.cc emit_channel_vectors).
// Its values are floats (the eight are held as float), and either its anchor is a Concat along
// the last axis of inputs whose last axes are whole multiples of 8 (DenseNet's, channels-last)
// or a channels-last MaxPool or depthwise Conv of a multiple of 8 channels, with steps that keep the anchor's
// layout (no Transpose, no swapped store); or it is an image padded to 8 channels and stored
// channels-last (padded_to_channels_last). A thread's eight elements are one 16-byte vector
// where a buffer is fp16 and Mono's own. The planner counts a unit of work per eight elements.
bool channel_vectors(const KernelPlan& plan, const Group& g);
// A Pad of an NCHW image whose one step is its Transpose to NHWC, 8 channels (the channels_last
// pass's entry for an image of 3): each thread stores one pixel's 8 channels, the lanes of a
// warp on consecutive pixels, so that its reads of each channel plane stay contiguous.
bool padded_to_channels_last(const Group& g);
// Dynamic shared memory of a GEMM tile configuration (must match GemmF16 / GemmF32::kSmemBytes,
// compiler/codegen/device/gemm_f16.cuh and gemm_f32.cuh).
int gemm_smem_bytes(bool f16, int bm, int bn, int bk, int stages);

}  // namespace mono
