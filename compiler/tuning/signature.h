// Group signatures: a canonical, stable key for "the same tuning problem". Two groups with
// equal signatures have the same best schedule in a given context and on a given GPU kind,
// so repeated layers collapse to one tuning task and results are reused across models.
//
// The signature covers the group's STRUCTURE: its kind, the anchor op and every epilogue op
// in order with their attributes (defaults filled in, axes normalised, keys sorted), the
// shapes and device dtypes of every operand and result, which operands are constants and how
// they are packed, the broadcast pattern of epilogue operands, Transpose perms, and the
// values of small integer constants (axes, starts, shapes: they change the generated code).
// It does NOT cover value or node names, addresses or the values of float constants (a
// schedule's speed does not depend on weight values), nor the context or the GPU (those key
// the tuning task beside the signature).
#pragma once

#include <string>
#include <vector>

#include "compiler/codegen/plan.h"

namespace mono::tuning {

// Part of every signature. Bump it whenever the canonical text, the hash or the code a
// group generates for a given schedule changes in a way that invalidates stored results,
// and say why here (like XLA's autotune cache version). The code_version test
// (tests/tuning/code_version.sh) fails when the device library or the golden kernels change
// under the same version:
//   1 (2026-11): first version.
//   2 (2026-11-24): attribute defaults filled from the op definitions (compiler/ops), every
//     attribute that has one; the generated code is unchanged (issue 17), the text is not.
//   3 (2026-11-24): the generated code changed (issue 18): LayerNorm rows take the mean of
//     x - x[0] (rows.cuh), grouped convolutions loop over each spatial axis, names in comments
//     are escaped; measurements of version-2 kernels do not describe version-3 ones.
//   4 (2026-11-25): kernels are built for sm_90a (wgmma, gemm_wg.cuh), and schedules gained
//     the wgmma field (issue 19).
//   5 (2026-11-25): group functions that differ only in comments are one function (a model's
//     layers share theirs), GEMM functions declare the kernel's shared memory instead of taking
//     it as an argument, out-of-line functions are static (issues 19, 21).
//   6 (2026-11-25): models of 33 to 64 groups get their group functions out of line (resnet50).
//   7 (2026-11-26): the grid barrier orders memory with an atomic add and acquire polls instead
//     of fences (barrier.cuh), so group timings that include a barrier changed (issue 19).
//   8 (2026-11-26): attention groups whose operands allow it run as FlashAttention
//     (attention.cuh): scores and probabilities in registers, no arena round trip (issue 19).
//   9 (2026-11-26): the barrier's add is acq_rel (release-only let the last arrival read stale
//     data).
//  10 (2026-11-26): FlashAttention items start with a block barrier (attention.cuh), as GEMM
//     tiles do: a block's previous work in the same stage may still read shared memory.
//  11 (2026-11-26): split-K producers publish with one release add after a bar.sync and the
//     reducer acquires without a fence (split_k.cuh): split-K stages got faster (issue 19).
//  12 (2026-11-26): GemmF16, GemmF32 and the flash attention take their shared addresses by
//     32-bit arithmetic from one smem_u32 instead of converting generic pointers back (a ptxas
//     operand-reuse fault, gemm_f32.cuh).
//  13 (2026-11-26): a flash attention whose scores end with the addition of a constant causal
//     mask applies it by index and skips the masked key tiles (attention.cuh CAUSAL, planner/
//     attention_fusion.cc causal_mask): GPT-2's attention (issue 19). The flash attention's S and
//     softmax no longer wait for V's copy.
//  14 (2026-11-26): regions of convolutions run channels-last (passes/channels_last.cc): 1x1
//     convolutions as Gemms, the others through Im2colK (16-byte gathers of NHWC activations,
//     loaders.cuh) with their weights packed as B, MaxPool in NHWC, an image's channels padded
//     to 8 (issue 20). Grouped and depthwise convolutions (direct_conv_code) issue their window's
//     loads unconditionally, unrolled. GlobalAveragePool takes a warp per output.
//  15 (2026-11-26): a product of one row with constant weights (a classifier head, a squeeze-
//     and-excitation Conv: codegen/support.h gemv_form) is a pointwise group, lanes of a warp per
//     output (emit/pointwise.cc emit_gemv), no longer a 64-row GEMM tile (issue 20).
//  16 (2026-11-26): Mul(x, Sigmoid(x)) is one Swish (passes/recognize_swish.cc), an epilogue
//     step; a GEMV whose result gates an image (squeeze-and-excitation's Mul) writes the gated
//     image itself (Group::gate), its items covering the planes (issue 20).
//  17 (2026-11-26): grouped and depthwise convolutions compute a strip of outputs down a column
//     per thread (emit/pointwise.cc emit_conv_strips; PointwiseSchedule::strip, a new knob that a
//     pointwise schedule's JSON carries as "strip") (issue 20).
//  18 (2026-11-26): channel Concats and BatchNormalizations no Conv absorbs join channels-last
//     regions (DenseNet); Concats along the last axis and channels-last MaxPools compute eight
//     channels a thread (support.h channel_vectors), as does an image padded to 8 channels
//     stored channels-last; a 32x32x64 fp16 tile joins the GEMM menu (issue 20).
//  19 (2026-11-27): depthwise convolutions whose activation feeds a Conv join channels-last
//     regions (MobileNetV2's inverted residual blocks), computed eight channels a thread with
//     their weights packed [KH*KW][C] (support.h channels_last_depthwise); a GlobalAveragePool
//     of a large plane takes several warps an output (PointwiseSchedule::warps, support.h default_pool_warps) (issue 20).
//  20 (2026-11-27): the channels-last depthwise Conv and MaxPool share their window code in
//     emit_channel_vectors, and both pools their plane sum (plane_sum): the depthwise groups' CUDA
//     text changed (indentation, a local's name); its PTX and cubins are identical to 19's.
//  21 (2026-11-27): a small squeeze GEMV (at most 4096 weights) runs inside every item of the
//     GEMV that reads it (Group::squeeze, planner/squeeze_fusion.cc), without a stage of its own;
//     the consumer's signature includes it (issue 20).
//  22 (2026-11-27): a LayerNormalization or Softmax group whose rows are longer than 1024 values
//     runs a block per row (support.h block_per_row, device/rows.cuh *_block_f), reading in chunks
//     of 16 values a thread; shorter rows, and attention's softmax, compile as before (issue 19,
//     the zoo's ALBERT-xxlarge and swin-t).
//  23 (2026-11-27): a flash attention head over more than 256 keys streams K and V in chunks
//     with an online softmax (device/attention.cuh FlashStream, Group::flash_chunk; 32 query rows
//     an item at most, exp as ex2.approx, no per-score tests in whole chunks) instead of
//     running the three phases through the arena; FlashAttention's staging, score and P V steps
//     are shared helpers (its PTX register numbering changed, not its arithmetic) (issue 19, the
//     zoo's whisper-encoder).
//  24 (2026-11-27): FlashStream scales its exponents to base 2 after subtracting the running
//     maximum (not before), so a maximum near -FLT_MAX (a torch.finfo(float32).min padding mask)
//     no longer overflows into NaN (found in review; device-library case added).
//  25 (2026-11-27): a GEMM group's items take their row tile fastest, then the column tile
//     (was the column tile fastest), so the items that run at once share weight tiles.
//  (26 was taken by the LayerNorm-inside-GEMM fusion of session 19, c518ce2 and 8241654, and 27
//   by its tensor-core form, branch wip/ln-fusion-tc; both measured slower and not on main.)
//  28 (2026-11-27): a split-K reducer loads up to 4 partial slots at once before adding them in
//     slot order (device/split_k.cuh add_partials): the same sums, fewer L2 round trips.
//  (29 was taken by branch wip/epilogue-loads-first, session 21: measured mixed, not on main.)
//  30 (2026-11-27): GemmWg takes k groups (KGROUPS: one warpgroup over the tile's width, the
//     others on the other k steps of each k tile, summed in shared memory), a layout of the
//     tuning space; the staged epilogue's accumulator staging can add (device headers changed,
//     the default tiles' code did not).
//  (31 was taken by a prefetch of the next stage's tensor-map descriptors before each barrier,
//   session 21: measured slower, not on main.)
//  32 (2026-11-27): split-K workspaces hold a slot for every split; the splits of a tile finish
//     it together (each sums and finishes its share of the chunks) where the stage's items fit the
//     grid (split_k.cuh, Epilogue::split_together_items).
//  33 (2026-11-27): every fp16 split-K tile finishes together where its stage fits the grid, the
//     element view too (GemmF16::Frags::elem_pos), not only the staged 8-wide one.
//  34 (2026-11-27): the staged 8-wide epilogue takes tiles of up to 32 values a thread (64x128,
//     128x64 over 256 threads), not 16.
//  35 (2026-11-27): LayerNorm rows of fp16, a multiple of 256 long, in Mono's own buffers load
//     and store 16 bytes at a time (rows.cuh layer_norm_row_v8). (A LayerNorm run in the stage
//     of the GEMM that writes its rows, waiting on row-tile counters instead of a grid barrier,
//     was measured slower in session 22 and is not on main.)
//  (36 was taken by the next stage's small constants and weights prefetched into the L2, session
//   22: measured slower, not on main.)
//  37 (2026-11-27): the LayerNorm rows' statistics through one helper (rows.cuh warp_row_stats),
//     the 16-byte form's registers as flat arrays: the same arithmetic; bumped because the device
//     library's text changed (tiny-bert fp16's cubin is unchanged, checked).
//  38 (2026-11-27): GemmWg takes warpgroups 48 wide (wgmma m64n48, ptx.cuh Wgmma<48>), and the
//     planner offers a 64x96 tile to groups that run on wgmma (cost_model.h wide_wgmma_tiles).
//  39 (2026-11-27): FlashStream takes 8 row blocks (128 query rows, one key group, chunks of 128
//     keys), and a streamed head whose items take more than one round runs them where they fit
//     one (planner/attention_fusion.cc choose_flash).
//  40 (2026-11-28): 128-row streamed items of 64-wide heads run on the warpgroup MMA (attention.cuh
//     FlashWg, ptx.cuh WgmmaRsT64).
//  41 (2026-11-28): FlashStream and FlashWg take their online-softmax step from one helper
//     (attention.cuh online_softmax_step; the same arithmetic); bumped because the device
//     library's text changed.
//  42 (2026-11-28): FlashStream and FlashWg take a chunk's score epilogue from one helper
//     (attention.cuh chunk_scores; the same arithmetic); the device library's text changed.
//  43 (2026-11-28): repeated layers run as loops over a table of their pointers (emit/stages.h);
//     group functions inlined where the kernel's text makes at most 40 calls (plan.h
//     kInlineCallLimit), no longer by the group count.
//  44 (2026-11-28): group functions inlined up to 200 calls in the kernel's text (was 40): the
//     kernels of models with 41-200 calls change (regnet, the MobileNets, EfficientNet, Swin,
//     DenseNet).
//  45 (2026-11-28): a layer loop's header comment says its comments name the first repeat's
//     groups (comment only; the loops' tables are the same).
//  (46 was taken by a grid barrier polled from four warps, session 26: measured slower, not on
//   main.)
//  47 (2026-11-28): Slices, Concats, Pads and Transposes read only by pointwise groups that load
//     by index are computed where they are read (planner/at_read.cc): their readers' code and
//     signatures include them and name those operands "computed" (Swin's shifted windows and
//     patch merging lose their stages); a group sharing such a movement with another reader is
//     no tuning task (plan.h tunable).
//  (48 was taken by GEMM weights fetched between a block's arrival at the grid barrier and its
//   wait, sessions 28 and 29: measured slower on the zoo, not on main.)
//  49 (2026-11-28): the planner offers a 128x128 wgmma tile (two warpgroups of m64n128) to GEMMs
//     alone in their stage with K >= 2048 (cost_model.h wide_wgmma_tiles), and the tuning space
//     has it (tuning_wgmma_tiles).
//  50 (2026-11-28): GEMMs alone in their stage whose menu tile would not run on wgmma, and that
//     are not 1-D convolutions, are offered the tall row tiles by default (planner/schedules.cc
//     choose_gemm): resnet50's stem and 56x56 1x1 convolutions change tiles.
//  51 (2026-11-28): a pointwise group's default elements a thread fit it in one round of the grid,
//     up to eight (planner/cost_model.cc default_ilp): groups of 1-8 rounds' worth change ILP.
constexpr int kSignatureVersion = 51;

struct GroupSignature {
  std::string hash;  // 16 lower-case hex digits (64-bit FNV-1a of `text`)
  std::string text;  // the canonical form that is hashed (readable, for debugging)
};

// The canonical text of a group of a plan (valid once groups and device dtypes are set, as
// when PlanOptions::signature is called).
std::string group_signature_text(const KernelPlan& plan, const Group& group);
// 64-bit FNV-1a of `text`, as 16 hex digits.
std::string signature_hash(const std::string& text);
GroupSignature group_signature(const KernelPlan& plan, const Group& group);
// The hash only: what PlanOptions::signature expects.
std::string group_signature_hash(const KernelPlan& plan, const Group& group);
// Makes the planner fill Group::signature (needed for PlanOptions::schedules).
void enable_signatures(PlanOptions* options);

}  // namespace mono::tuning
