// The cost model, shared by the planner (default schedules) and compiler/tuning (ordering and
// pruning candidates). Its numbers are ESTIMATES, never measurements. planner/cost_model.cc.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "compiler/codegen/plan.h"

namespace mono {

// One grid barrier over 132 blocks (measured, H100).
constexpr double kBarrierUs = 1.1;

// GEMM problem of a gemm or conv-gemm group: batch x M x N x K.
struct GemmProblem {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool conv = false;    // implicit GEMM: activations gathered (im2col), priced by the conv model
  int64_t window = 1;   // conv: kernel positions (kh x kw); > 1 gathers through im2col index math
};
GemmProblem gemm_problem(const Group& g);
// Split-K factors for K and a BK that give every split a whole number of BK steps and leave
// none empty, ascending, starting with 1.
std::vector<int> split_k_factors(int64_t k, int bk);
// Work items (tiles x splits) of a GEMM schedule.
int64_t gemm_items(const GemmProblem& p, const GemmSchedule& s);
// One work item (BM x BN tile over K / splits) on one SM, reduction included (fitted).
double gemm_item_us(const GemmProblem& p, bool f16, const GemmSchedule& s, const KernelContext& ctx);
double estimate_gemm_us(const GemmProblem& p, bool f16, const GemmSchedule& s, const KernelContext& ctx);
// Items go round-robin over the blocks: the busiest block runs ceil(items / grid) of them, each
// taking up to the slowest item's time.
double round_robin_us(int64_t items, double item_us, const KernelContext& ctx);
// Why a GEMM schedule cannot run in the context ("" if it can): the device library's tile
// constraints (fp16: BM % (16 warps_m), BN % (8 warps_n), BK % 16, stages >= 2; fp32: BM % (8
// warps_m), BN % (4 warps_n), BK % 4, stages 2), warps_m * warps_n * 32 == threads (wgmma: a
// divisor of threads, the warpgroups over it k groups that need the staged epilogue), shared
// memory within the context's budget and, with a problem, a split-K factor of split_k_factors.
std::string gemm_schedule_problem(bool f16, const GemmSchedule& s, const KernelContext& ctx, const GemmProblem* p);
// Whether the A operand of fp16 MatMul/Gemm group `grp` can be read through a tensor map
// (TensorK; with a k tile that is a multiple of 64): one fp16 [M][K] matrix (no batch, no
// transA, K % 8 == 0, rows 16-byte aligned) in the arena. A value is in the arena unless it is
// a constant, a graph input (KernelPlan::arena_inputs aside) or (`graph_outputs`, roots) a graph
// output; without `graph_outputs` the plan's placement decides (a placed plan: the emitter).
// planner/gemm_cores.cc.
bool a_through_tensor_map(const KernelPlan& plan, const Group& grp, const std::set<const Value*>* graph_outputs);
// Whether group `grp`'s operands are read as wgmma (GemmWg) needs them: A through a tensor map,
// B constant 2-D weights packed tile by tile (a gemm group, not part of an attention).
bool wgmma_operands(const KernelPlan& plan, const Group& grp, const std::set<const Value*>* graph_outputs);
// wgmma's version of a GEMM tile (GemmSchedule::wgmma, BM at least 64, 4 warps per 64 rows,
// warpgroups side by side along n); check it with gemm_schedule_problem.
GemmSchedule wgmma_schedule(const GemmSchedule& s, const KernelContext& ctx);
// The wgmma tile the planner moves tile `s` of a GEMM with `m` rows (and wgmma operands) onto, or
// none: its wgmma version must keep the item count (a 32-row tile grows to 64 only where M <= 32)
// and fit the context (planner/gemm_cores.cc choose_gemm_cores; choose_gemm asks it of the
// menu's tile).
std::optional<GemmSchedule> moved_to_wgmma(const GemmSchedule& s, int64_t m, const KernelContext& ctx);
// The same wgmma tile in k groups (one warpgroup over the tile's width, the block's others on
// the other k steps of each k tile: gemm_wg.cuh KGROUPS), or `s` where they do not fit. A
// layout of the tuning space, not the default: faster as a lone tile (64x64x128 k tiles 0.404
// -> 0.299 us), no faster in the whole models (H100, bench/RESULTS.md session 21, run185).
GemmSchedule wgmma_k_grouped(const GemmSchedule& s, const KernelContext& ctx);
// The warp layout GEMM tiles use with `threads` threads per block (2 x 4 for 256).
void gemm_warps(int threads, int* warps_m, int* warps_n);
// The k groups of a wgmma tile: the context's warpgroups over those its warps_m x warps_n take
// (gemm_wg.cuh KGROUPS; 1 for every other tile).
int wgmma_k_groups(const GemmSchedule& t, const KernelContext& ctx);
// The planner's default tile menu in the context (split-K 1; valid tiles only).
std::vector<GemmSchedule> default_gemm_tiles(bool f16, const KernelContext& ctx, bool conv = false);
// Tiles fitted to an fp16 dense GEMM whose N is not a multiple of 64, where the menu's 64- and
// 128-wide tiles compute empty columns: BN = N split into 1..8 column tiles (rounded up to 16),
// BM 32..128, at most 48 accumulators a thread (split-K 1; valid tiles only; empty otherwise).
std::vector<GemmSchedule> fitted_gemm_tiles(const GemmProblem& p, bool f16, const KernelContext& ctx);
// Tuning candidates only: row tiles of 96 and 128 for an fp16 dense GEMM of M >= 1024
// rows (pixels), over the menu's widths, so that its items can fit one round of the grid.
std::vector<GemmSchedule> tall_gemm_tiles(const GemmProblem& p, bool f16, const KernelContext& ctx);
// A 96-wide row tile for fp16 GEMMs that run on wgmma (two warpgroups of m64n48 once
// planner/gemm_cores.cc converts it): between the menu's 64 and 128, for problems where 64-wide
// items take two rounds of the grid and 128-wide ones leave SMs idle (vit-base's 197-row
// GEMMs: 96 items of 64x128 against 128 of 64x96). And a 128x128 tile (two warpgroups of
// m64n128, 3 stages; gemm_schedule_problem takes no other layout of it) for a GEMM `alone` in its
// stage (every other group there runs fused) with K >= kWideTileMinK: each weight byte goes to
// one block, not one per 64 rows. Split-K 1, the menu's warp layout; empty where they are not
// valid in the context. The tuning space offers the 128x128 tile to every wgmma group: its
// fragments time a group alone, so a tuned choice for a group that shares its stage rests on that.
constexpr int64_t kWideTileMinK = 2048;
std::vector<GemmSchedule> wide_wgmma_tiles(const GemmProblem& p, bool f16, bool alone, const KernelContext& ctx);
// Appends to `tiles` those of `more` it does not hold yet, in order.
void append_new_tiles(std::vector<GemmSchedule>* tiles, const std::vector<GemmSchedule>& more);

// Pointwise: elements computed and output bytes of a group.
struct PointwiseProblem {
  int64_t elements = 0;  // threads' worth of work (one per output; lanes per output for GEMVs, GlobalAveragePool)
  double bytes = 0;      // bytes moved: twice the output's (read and write), plus a GEMV's weights
  double item_us = 0;    // what every item does first: a squeeze computed inside (Group::squeeze)
};
PointwiseProblem pointwise_problem(const KernelPlan& plan, const Group& g);
int default_ilp(const PointwiseProblem& p, const KernelContext& ctx);
int64_t pointwise_items(const PointwiseProblem& p, int ilp, const KernelContext& ctx);
double estimate_pointwise_us(const PointwiseProblem& p, int ilp, const KernelContext& ctx);
// The dynamic shared memory a pointwise group needs with `warps` warps per output (a pool's
// sums, support.h pool_smem_bytes) or a squeeze inside (its outputs, squeeze_smem_bytes).
int pointwise_smem_bytes(const KernelPlan& plan, const Group& g, int warps);
// Why an ILP factor cannot be used ("" if it can): 1..64.
std::string ilp_problem(int ilp);

// A rows group (a warp per row, or a block per row past 1024 values) that reads and writes `bytes`.
double estimate_rows_us(double bytes);
// The softmax rows of one attention work item.
constexpr double kAttentionRowsUs = 1.0;

}  // namespace mono
