// The plan of one monolithic kernel: which IR nodes form each group (an anchor plus the
// elementwise epilogue fused into it), which stage each group runs in (stages are separated
// by grid-wide barriers), where every tensor lives, the kernel's context (one block size,
// one shared-memory size, one register cap) and each group's schedule.
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/ir/graph.h"

namespace mono {

enum class Precision { kF32, kF16 };

// The resources every group's schedule must fit (DESIGN: "the context").
struct KernelContext {
  int threads = 256;        // per block
  int blocks_per_sm = 1;
  int smem_bytes = 0;       // dynamic shared memory: the largest any group needs
  int smem_limit = kMaxSmemPerSm;  // what a group may use in this context (the budget)
  int sms = 132;            // multiprocessors of the target GPU (H100 SXM: 132)
  int sm_arch = 90;
  int grid() const { return sms * blocks_per_sm; }
  int register_cap() const;  // 65536 registers per SM shared by the resident blocks, at most 255
  // Dynamic shared memory per SM that blocks may take on sm_90 (227 KB), and a block's share
  // of it when `blocks_per_sm` blocks are resident.
  static constexpr int kMaxSmemPerSm = 227 * 1024;
  static int smem_budget(int blocks_per_sm) { return kMaxSmemPerSm / blocks_per_sm; }
};

enum class GroupKind {
  kGemm,       // MatMul / Gemm: tiled GEMM on tensor cores (fp16) or FFMA (fp32)
  kConvGemm,   // Conv (group 1) as implicit GEMM: weights x im2col(input)
  kRows,       // LayerNormalization / Softmax over the last axis: one warp per row
  kPointwise,  // any op computed element by element (loops inside for pools, reductions...)
};
const char* group_kind_name(GroupKind k);

struct GemmSchedule {
  int bm = 64, bn = 64, bk = 32, warps_m = 2, warps_n = 4, stages = 3;
  int splits = 1;  // split-K: partial tiles combined with atomics, the last one applies the epilogue
  std::string str() const;
  bool operator==(const GemmSchedule& o) const;
  bool operator!=(const GemmSchedule& o) const { return !(*this == o); }
};

struct PointwiseSchedule {
  int ilp = 4;  // elements per thread per work item (parallelism compensation)
  bool operator==(const PointwiseSchedule& o) const { return ilp == o.ilp; }
  bool operator!=(const PointwiseSchedule& o) const { return !(*this == o); }
};

// The tunable knobs of one group, whatever its kind: the GEMM tile for gemm and conv-gemm
// groups, the ILP factor for pointwise ones; rows groups have none. compiler/tuning
// serialises it (JSON) and enumerates candidates.
struct Schedule {
  GroupKind kind = GroupKind::kPointwise;
  GemmSchedule gemm;            // kGemm, kConvGemm
  PointwiseSchedule pointwise;  // kPointwise
  bool operator==(const Schedule& o) const;
  bool operator!=(const Schedule& o) const { return !(*this == o); }
  std::string str() const;  // "gemm tile 64x64x32, ...", "pointwise ilp 4", "rows (no knobs)"
};

// Where a tensor lives on the device.
struct Placement {
  enum Space { kArena, kWeights, kInput, kOutput } space = kArena;
  size_t offset = 0;  // bytes into the arena or the weights blob
  int index = 0;      // input or output number
};

struct Group {
  int id = 0;
  GroupKind kind = GroupKind::kPointwise;
  const Node* anchor = nullptr;
  std::vector<const Node*> epilogue;  // elementwise nodes applied in order to the anchor's result
  const Value* output = nullptr;      // what the group writes (the last node's output)
  int stage = 0;
  int64_t items = 0;                  // work items (tiles, row blocks, element chunks)
  GemmSchedule gemm;
  bool f16 = false;  // GEMM operands in fp16 (tensor cores); else fp32 FFMA
  PointwiseSchedule pointwise;
  int smem_bytes = 0;
  size_t workspace_offset = 0;  // split-K fp32 workspace in the arena
  size_t counters_offset = 0;   // split-K tile counters, in 32-bit words of the sync area
  double est_us = 0;            // cost-model estimate (never a measurement)
  // Tuning: the group's signature (set when PlanOptions::signature is), whether its schedule
  // came from PlanOptions::schedules ("tuned") or the cost model ("default (untuned)"), and
  // why an override was refused (then the default is used).
  std::string signature;
  bool tuned = false;
  // Attention (MatMul - Softmax - MatMul) as one group: the first GEMM group is the head and
  // lists the softmax rows group and the second GEMM group in `fused`; those two name the head
  // in `fused_into` and run inside it. One work item is one batch entry x BM query rows,
  // carried through the three in one block (S and P pass through the arena, read back by the
  // block that wrote them; no grid barrier between). The head's items and estimate cover the
  // whole attention; the parts' GEMM tiles are fixed (BM query rows, all keys), not tuned.
  std::vector<int> fused;
  int fused_into = -1;
  bool in_attention() const { return !fused.empty() || fused_into >= 0; }
  // LayerNorm folding (LnFold): on the LayerNorm group, the fold that replaces it (it then
  // emits nothing); on the producer GEMM, the fold whose statistics it computes.
  int folded_ln = -1;
  int computes_stats = -1;
  std::string override_rejected;
  std::string nodes() const;    // "node_a (MatMul) + node_b (Add)"
  Schedule schedule() const;    // the knobs in use
};

struct Stage {
  std::vector<int> groups;
};

// A LayerNormalization folded into its neighbouring GEMMs: y = LN(x) is never stored. The GEMM
// group writing x (the producer) computes each row's statistics after its epilogue (gemm tile ->
// rows.cuh ln_row_stats: partials per column tile, combined by the row panel's last tile into
// stats[row] = (rstd, -mean * rstd)); the readers of y apply the normalisation to x:
//  - a GEMM reading y as its A operand against constant weights W reads x instead, against
//    W' = diag(gamma) W (packing "<nk or plain>|ln<fold>"), and its epilogue starts with
//    v = acc * rstd + (-mean * rstd) * c[n] + d[n], c = column sums of W' as packed, d = beta W
//    (packing "cd|ln<fold>": float2 per column, fp32);
//  - an epilogue step reading y reads (x * rstd - mean * rstd) * gamma + beta.
// The LayerNorm group stays in the plan (folded = true: no stage, no items, emits nothing).
// The statistics sit behind x in the arena; x lives as long as y's readers.
struct LnFold {
  int ln_group = -1;
  int producer = -1;
  const Value* x = nullptr;  // roots
  const Value* y = nullptr;
  int64_t rows = 0, len = 0;  // rows of x (all batch entries) and the normalised row length
  float eps = 1e-5f;
  int parts = 0;                   // the producer's column tiles per row (set with its schedule)
  size_t stats_offset = 0;         // arena bytes: float2 stats[rows]
  size_t partial_offset = 0;       // arena bytes: float2 part[rows][parts]
  size_t counters_offset = 0;      // sync words: one counter per producer row panel
};

struct KernelPlan {
  Precision precision = Precision::kF32;
  bool profile = false;
  bool prefetch_weights = true;
  int prefetch_distance = 1;
  bool staged_epilogue = false;
  bool bulk_weights = false;
  bool early_weights = false;
  bool vec_epilogue = true;
  bool tensor_a = true;
  int epi_chunk = 8;
  bool inline_groups = true;
  KernelContext ctx;
  std::vector<Group> groups;
  std::vector<Stage> stages;
  std::map<const Value*, Placement> placement;  // every value the kernel touches (after aliasing)
  std::map<const Value*, const Value*> alias;   // a view value -> the value that owns the bytes
  std::map<const Value*, DType> device_dtype;   // float values become f16 in fp16 mode
  int fp32_fallbacks = 0;                       // fp16 mode: float values kept in fp32 by range
  size_t arena_bytes = 0;
  size_t sync_words = 0;  // barrier state + split-K counters
  // Packed constants: each used constant once per packing ("" plain, "nk" transposed to [N][K]).
  struct PackedConstant {
    const Value* value;
    std::string packing;
    size_t offset;
    size_t bytes;
  };
  std::vector<PackedConstant> constants;
  size_t weights_bytes = 0;

  // Values stored with their last two axes swapped ([.., a, b] kept as [.., b, a] in memory):
  // a GEMM output whose epilogue transposes it only so that GEMMs can read it as a [K][N] B
  // operand (attention's K^T). Stored swapped, the producer's stores run along its N (contiguous,
  // like Q's and V's) and the readers load B as [N][K] rows (16-byte cp.async) instead of
  // transposing [K][N] tiles on the way to shared memory.
  std::set<const Value*> swapped_last2;
  std::vector<LnFold> ln_folds;
  std::map<const Value*, int> ln_fold_of_y;     // y root -> fold
  std::map<const Node*, int> ln_fold_of_gemm;   // a GEMM anchor reading y as A -> fold
  // fp16 GEMMs whose constant weights are packed tile by tile for their schedule and read with
  // one bulk copy per pipeline stage (gemm.cuh BulkTileK, tile_pack.h): anchor -> the packing
  // suffix "@t<rows>x<bk>" (rows = BN for MatMul/Gemm B, BM for a convolution's A).
  std::map<const Node*, std::string> weight_tiles;

  const Value* root(const Value* v) const;  // follows aliases
  // The packing of constant input i of node n (support.h constant_packing, plus "|ln<fold>"
  // for the weights of a GEMM that reads a folded LayerNorm's output, or the weight_tiles
  // suffix).
  std::string packing(const Node& n, int i) const;
  DType dtype_of(const Value* v) const;
  size_t constant_offset(const Value* v, const std::string& packing) const;
};

// Inline group functions up to this many groups. Measured on the H100 (bench/RESULTS.md,
// session 3): resnet50 (56 groups) runs 1217 us inlined against 1322 us out of line (it
// compiles in 163 s against 131 s, and spills 384 B at the register cap); the transformers
// (134-158 groups) are not slower out of line and compile far faster that way.
constexpr int kInlineGroupLimit = 64;
constexpr float kMinFp16Range = 1e-3f;  // below: fp16's subnormals cost precision (smallest normal 6.1e-5)
constexpr float kMaxFp16Range = 3e4f;   // above: close to fp16's largest value, 65504

struct PlanOptions {
  Precision precision = Precision::kF32;
  // Profiling build: every block stamps %globaltimer when it finishes each stage's work and
  // when it leaves each barrier (into MonoParams::profile), for per-stage timings.
  bool profile = false;
  // At the start of stage s, every block prefetches a slice of the weights stage
  // s + prefetch_distance reads into L2, so that stage's GEMMs stream from L2 instead of HBM.
  // (Session 2's version prefetched only the next stage, just before the barrier, and cost
  // 0.5-2.7 % on the H100: the lines had no time to arrive.)
  bool prefetch_weights = false;
  int prefetch_distance = 1;
  // fp16 GEMM epilogues through shared memory (gemm.cuh, GemmF16::StagedFrags: coalesced
  // epilogue reads and stores) instead of straight from the mma register layout. Off: faster
  // for a lone GEMM tile, but slower inside the whole kernel on the H100 (bert-base 895 ->
  // 1000 us, bench/RESULTS.md session 6), for reasons not yet understood.
  bool staged_epilogue = false;
  // fp16 GEMMs read constant weights ([N][K] packed, K whole k tiles) with bulk copies through
  // the TMA unit (gemm.cuh BulkK) instead of per-thread cp.async.
  bool bulk_weights = false;
  // Between its arrival at each grid barrier and its wait, a block issues the first k tiles of
  // the weights of its first GEMM item of the next stage (gemm.cuh GemmF16::preload). Off: no
  // faster on the H100 (bert-base 853.3 against 853.2 us, vit-base 1158.5 against 1131.0,
  // bench/RESULTS.md session 7).
  bool early_weights = false;
  // Group functions inlined into the kernel (1), or kept as separate functions that groups
  // with the same code share (0): far less code for ptxas on big models, a call per item.
  // -1 (auto): inline up to kInlineGroupLimit groups.
  int inline_groups = -1;
  // fp16 with fp32 fallback: largest |x| of float values on calibration inputs (from the CPU
  // reference). Values outside [kMinFp16Range, kMaxFp16Range] stay fp32.
  std::map<const Value*, float> ranges;
  // fp16: float values kept in fp32 whatever their range. A tuning fragment (a group cut out
  // of its model, compiler/tuning/fragment.h) lists here the values its model keeps in fp32
  // because they meet an fp32 GEMM outside the fragment.
  std::set<const Value*> keep_fp32;
  int sms = 132;
  // Attention chains (MatMul, Softmax over the last axis, MatMul; plan.h Group::fused) become
  // one group. Off: three groups in three stages (for A/B timings).
  bool fuse_attention = true;
  // LayerNormalization folded into the GEMM that writes its input and the GEMMs that read its
  // output (LnFold) where every reader allows it. Off by default: slower on the H100 although it
  // removes a stage and a barrier per LayerNorm (bert-base 855.7 against 765.6 us, bench/RESULTS.md
  // session 8: the statistics pass and the readers' extra epilogue loads cost more than that).
  bool fold_layernorm = false;
  // Two-phase GEMM epilogues (gemm.cuh kEpiChunk): elements whose reads are issued together,
  // one memory round trip per chunk.
  int epi_chunk = 8;
  // GEMM outputs read only as the B operand of other GEMMs stored [N][K] (KernelPlan::swapped_last2).
  bool swap_b_operands = true;
  // fp16 GEMM pipeline depth (cp.async stages) for every default tile; 0: the menu's (A/B).
  int gemm_stages = 0;
  // fp16 GEMM weights packed tile by tile for the chosen schedule and read with one bulk copy
  // (TMA unit) per pipeline stage instead of per-thread cp.async (KernelPlan::weight_tiles).
  // H100, same call (bench/RESULTS.md session 9): bert-base 735.5 -> 718.7 us, gpt2 754.7 ->
  // 733.5, vit-base 1095.1 -> 1068.1. A convolution's weights (its A operand) only with
  // tile_conv_weights: resnet50 went 921.6 -> 933.0 us with them.
  bool tile_weights = true;
  bool tile_conv_weights = false;
  // fp16 GEMM epilogues whose stores run along n store 8 elements with one 16-byte store
  // (gemm.cuh vec8_stores: the accumulators staged through shared memory in chunks of 8).
  // H100, same call: bert-base 765.0 -> 735.5 us, gpt2 775.4 -> 754.7, vit-base 1115.6 ->
  // 1095.1, resnet50 938.0 -> 921.6.
  bool vec_epilogue = true;
  // fp16 GEMM k tile for every default tile (not convolutions); 0: the menu's (A/B); -1 (auto):
  // 128 for MatMul/Gemm with K >= 128 when tensor_a, else the menu's. With A through tensor maps,
  // BK = 128 measured faster on all four full models (H100, bench/RESULTS.md session 10: bert-base
  // 659.1 -> 643.3 us, gpt2 677.0 -> 663.0, vit-base 1038.7 -> 919.0); without them it was slower
  // on bert-base and gpt2 (session 9).
  int gemm_bk = -1;
  // fp16 MatMul/Gemm activations (A operands in the arena) read through tensor maps by the TMA
  // unit (gemm.cuh TensorK: one copy per 64 k of a stage, 128-byte swizzled) instead of per-thread
  // cp.async; the runtime encodes the maps at load time.
  bool tensor_a = true;
  // The context: block size, resident blocks per SM, and the dynamic shared memory a group
  // may use (0: 227 KB / blocks_per_sm). The register cap follows (65536 / threads / blocks).
  int threads = 256;
  int blocks_per_sm = 1;
  int smem_limit = 0;
  // Tuned schedules by group signature (compiler/tuning computes signatures; its
  // tuning::use_schedules sets both fields). A group whose signature has an entry uses it if
  // it is valid in the context, else its default schedule (Group::override_rejected says why).
  std::map<std::string, Schedule> schedules;
  // Called once per group after grouping and dtype assignment (before placement); required
  // when `schedules` is not empty.
  std::function<std::string(const KernelPlan&, const Group&)> signature;
};

// Builds the plan for a simplified graph. Throws UserError naming the node if an op cannot be
// compiled to CUDA.
KernelPlan plan_kernel(const Graph& graph, const PlanOptions& options);

// ---- The cost model (shared by the planner and compiler/tuning; estimates, never measurements)

// GEMM problem of a gemm or conv-gemm group: batch x M x N x K.
struct GemmProblem {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool conv = false;  // implicit GEMM (im2col gather): priced by the bandwidth model (plan.cc)
};
GemmProblem gemm_problem(const Group& g);
// Split-K factors for K and a BK that give every split a whole number of BK steps and leave
// none empty, ascending, starting with 1.
std::vector<int> split_k_factors(int64_t k, int bk);
// Work items (tiles x splits) of a GEMM schedule.
int64_t gemm_items(const GemmProblem& p, const GemmSchedule& s);
// One work item (BM x BN tile over K / splits) on one SM, reduction included (fitted, plan.cc).
double gemm_item_us(const GemmProblem& p, bool f16, const GemmSchedule& s);
double estimate_gemm_us(const GemmProblem& p, bool f16, const GemmSchedule& s, const KernelContext& ctx);
// Why a GEMM schedule cannot run in the context ("" if it can): the device library's tile
// constraints (fp16: BM % (16 warps_m), BN % (8 warps_n), BK % 16, stages >= 2; fp32: BM % (8
// warps_m), BN % (4 warps_n), BK % 4, stages 2), warps_m * warps_n * 32 == threads, shared
// memory within the context's budget and, with a problem, a split-K factor of split_k_factors.
std::string gemm_schedule_problem(bool f16, const GemmSchedule& s, const KernelContext& ctx, const GemmProblem* p);
// The warp layout GEMM tiles use with `threads` threads per block (2 x 4 for 256).
void gemm_warps(int threads, int* warps_m, int* warps_n);
// The planner's default tile menu in the context (split-K 1; valid tiles only).
std::vector<GemmSchedule> default_gemm_tiles(bool f16, const KernelContext& ctx);
// Pointwise: elements computed and output bytes of a group.
struct PointwiseProblem {
  int64_t elements = 0;
  double bytes = 0;
};
PointwiseProblem pointwise_problem(const KernelPlan& plan, const Group& g);
int default_ilp(const PointwiseProblem& p, const KernelContext& ctx);
int64_t pointwise_items(const PointwiseProblem& p, int ilp, const KernelContext& ctx);
double estimate_pointwise_us(const PointwiseProblem& p, int ilp, const KernelContext& ctx);
// Why an ILP factor cannot be used ("" if it can): 1..64.
std::string ilp_problem(int ilp);

// The fold a "...|ln<F>" packing names (LnFold).
int ln_fold_index(const std::string& packing);

// A packing with the weight_tiles suffix "@t<rows>x<bk>": the tile shape, and whether the
// constant is stored [K][rows] in the model ("nk" base: a MatMul weight) rather than [rows][K].
struct TilePacking {
  bool nk = false;
  int rows = 0, bk = 0;
};
bool parse_tile_packing(const std::string& packing, TilePacking* t);

// Packs the constants into the weights blob (converted to the device dtype, B operands of
// GEMMs transposed to [N][K]).
std::vector<unsigned char> pack_weights(const KernelPlan& plan);

// `mono-compile --emit plan`: context, groups, stages, barriers, schedules and estimates.
void print_plan(std::ostream& os, const Graph& graph, const KernelPlan& plan);

}  // namespace mono
