// The cost model (cost_model.h): fitted to H100 measurements where a source is named,
// estimates otherwise; never stored as measurements.
#include "compiler/codegen/cost_model.h"

#include <algorithm>

#include "compiler/codegen/support.h"
#include "compiler/ops/op.h"
#include "compiler/ops/pool.h"
#include "compiler/support/error.h"

namespace mono {
namespace {

constexpr double kBandwidth = 2.5e12;     // bytes/s, sustained
// Convolutions only (see estimate_gemm_us): sustained MMA / FFMA rates (estimates).
constexpr double kConvPeakF16Flops = 400e12;
constexpr double kConvPeakF32Flops = 40e12;
// One SM streams at most about twice its share of the bandwidth (estimate): a group whose
// work sits on few blocks is bound by them.
constexpr double kSmBandwidthShare = 2.0;
constexpr double kItemLoopUs = 0.05;      // per extra work item a block loops over (estimate)
// fp32 GEMM work items (FFMA), from the device library's H100 timings of the BERT-base shapes
// (bench/runs/diag2.tar.xz, member diag2/diag/gemm.txt): about a fixed 4 us plus the MMAs at
// the f16 rate over the peak ratio or the operand bytes at about 60 KB per us per SM,
// whichever is slower.
constexpr double kGemmItemFixedUs = 4.0;
constexpr double kF32FmaPerSmUs = 0.1e6;  // estimate
constexpr double kItemBytesPerSmUs = 60e3;
// fp16 (mma.sync) work items, fitted to the clock64() probe of GemmF16 tiles on the H100 (SM
// clock 1980 MHz; bench/runs/probe1_h100.tar.xz, member probe1_h100/probe.txt, and
// bench/runs/run18_h100_splitk_preload.tar.xz, member run18_h100_splitk_preload/probe.txt):
// a k tile costs ~317 cycles plus its operand bytes at ~29 bytes per cycle, whatever its MMA
// count; the pipeline fill ~1000 cycles plus one k tile's bytes at ~22 B/cycle; the drain ~600;
// the epilogue ~1500 plus ~100 per accumulator a thread owns (64x64 over 256 threads: ~3000
// measured).
constexpr double kSmClockMHz = 1980;
constexpr double kKTileCycles = 317, kKTileBytesPerCycle = 29;
constexpr double kFillCycles = 1000, kFillBytesPerCycle = 22, kDrainCycles = 600;
constexpr double kEpilogueCycles = 1500, kEpilogueCyclesPerAcc = 100;
// wgmma (GemmWg) k tiles: the tensor cores' operand reads from shared memory at ~66 bytes per
// cycle, fitted to lone 64-row tiles on the H100 (bench/RESULTS.md, session 21: 128-wide k tiles
// of 64x64 with warpgroups along n 720 cycles, with k groups 495, 128x64 754).
constexpr double kWgReadBytesPerCycle = 66;
// Split-K (split_k.cuh): producers store their partial tile and count it; the reducer waits for the
// count (~0.9 us after its own k tiles) and reads the splits - 1 partial tiles one after another.
// Fitted to the same probe: 64x64 split-K 4 costs ~1.6-2 us over split-K 1, 32x64 split-K 2 ~1.3.
constexpr double kSplitWaitUs = 0.9;
constexpr double kSplitSlotUs = 0.1;  // plus the slot's bytes at kItemBytesPerSmUs
// fp16 convolutions (implicit GEMM, activations gathered as B): fitted by non-negative least
// squares (relative error) to the 579 measured candidates of resnet50's 24 convolution tasks
// in the 1 block/SM context (H200, the tuning database of bench/runs/run58, by
// bench/fit_conv_model.py --model resnet50-opset20; median error 4.9 %; run59's database gives
// the same within 10 %; with vit-base's patch convolution too, within 35 %, the item cost most).
// The busiest block runs ceil(items / grid) items one after another; each costs a fixed part,
// per k tile a fixed part plus the activations it gathers (BN x BK elements: ~4x dearer
// through im2col's index math than for a 1x1 kernel) and the weights (BM x BK), and its
// epilogue per BM x BN accumulators. Split-K adds a fixed cost and per extra split a partial
// tile's reduction per item. Chosen by this model, the planner's defaults sum to within 1.3 %
// of the measured best of each task (weighted by resnet50's groups; 13 % under the earlier
// bandwidth model's).
constexpr double kConvItemUs = 0.7266;
constexpr double kConvKTileUs = 0.1318;
constexpr double kConvGatherWindowUs = 0.4584;  // per 1024 activations gathered, kernel > 1x1
constexpr double kConvGatherPointUs = 0.1095;   // per 1024 activations gathered, 1x1 kernel
constexpr double kConvWeightUs = 0.0509;        // per 1024 weights
constexpr double kConvEpilogueUs = 1.2511;      // per 4096 accumulators
constexpr double kConvSplitUs = 1.2271;         // split-K > 1, once
constexpr double kConvSplitSlotUs = 0.0907;     // per extra split and 4096 accumulators, per item

// One SM's share of the bandwidth that a block with few, large items gets (an estimate).
double sm_bandwidth(const KernelContext& ctx) { return kBandwidth / ctx.sms * kSmBandwidthShare; }

// The GEMV a group computes inside its items (Group::squeeze), if it has one.
bool squeeze_form(const KernelPlan& plan, const Group& g, GemvForm* f) {
  return g.squeeze >= 0 && gemv_form(*plan.groups[g.squeeze].anchor, f);
}

}  // namespace

GemmProblem gemm_problem(const Group& grp) {
  const Node& n = *grp.anchor;
  GemmProblem s;
  if (channels_last_layout(n)) {  // a dense GEMM over all images' pixels, A gathered 16 bytes at a time
    const Shape& w = n.inputs[1]->type.shape;
    const Shape& y = n.outputs[0]->type.shape;
    s.m = y[0] * y[1] * y[2];
    s.n = w[0];
    s.k = w[1] * w[2] * w[3];
    return s;
  }
  if (n.op == OpKind::kConv) {
    const Shape& x = n.inputs[0]->type.shape;
    const Shape& w = n.inputs[1]->type.shape;
    const Shape& y = n.outputs[0]->type.shape;
    s.batch = x[0];
    s.m = w[0];
    s.k = shape_numel(w) / w[0];
    s.n = shape_numel(y) / (y[0] * y[1]);
    s.conv = true;
    s.window = shape_numel(w) / (w[0] * w[1]);
    return s;
  }
  const Shape& y = n.outputs[0]->type.shape;
  s.m = y.size() >= 2 ? y[y.size() - 2] : 1;
  s.n = y.back();
  s.batch = shape_numel(y) / (s.m * s.n);
  const Shape& a = n.inputs[0]->type.shape;
  const bool trans_a = n.op == OpKind::kGemm && node_attrs(n).attr_int("transA") != 0;
  s.k = n.op == OpKind::kGemm ? (trans_a ? a[0] : a[1]) : a.back();
  if (n.op == OpKind::kMatMul && a.size() == 1) s.k = a[0];
  return s;
}

std::vector<int> split_k_factors(int64_t k, int bk) {
  std::vector<int> out = {1};
  for (int want : {2, 3, 4, 6, 8, 12, 16}) {
    if (k / want < 2 * bk) break;
    // Every split gets a whole number of BK steps and none is empty.
    const int64_t chunk = ceil_div(ceil_div(k, want), bk) * bk;
    const int splits = static_cast<int>(ceil_div(k, chunk));
    if (splits > out.back()) out.push_back(splits);
  }
  return out;
}

int64_t gemm_items(const GemmProblem& p, const GemmSchedule& t) {
  return p.batch * ceil_div(p.m, t.bm) * ceil_div(p.n, t.bn) * t.splits;
}

double gemm_item_us(const GemmProblem& s, bool f16, const GemmSchedule& t, const KernelContext& ctx) {
  const int64_t k_tiles = ceil_div(ceil_div(s.k, t.splits), t.bk);
  const double reduce_us =
      t.splits > 1 ? kSplitWaitUs + (t.splits - 1) * (kSplitSlotUs + t.bm * t.bn * 4.0 / kItemBytesPerSmUs) : 0.0;
  if (f16) {
    const double tile_bytes = (t.bm + t.bn) * t.bk * 2.0;
    // A wgmma tile's epilogue runs on every thread of the block (its k groups' too).
    const int epilogue_warps = t.wgmma ? ctx.threads / 32 : t.warps_m * t.warps_n;
    const double accs = static_cast<double>(t.bm) * t.bn / (32.0 * std::max(1, epilogue_warps));
    // A wgmma k tile: the tensor cores' operand reads from shared memory, A once per warpgroup
    // along n and B once per 64 rows (gemm_wg.cuh).
    const double k_tile_cycles =
        t.wgmma ? (t.bm * t.warps_n + t.bn * (t.bm / 64)) * t.bk * 2.0 / kWgReadBytesPerCycle
                : kKTileCycles + tile_bytes / kKTileBytesPerCycle;
    const double cycles = kFillCycles + tile_bytes / kFillBytesPerCycle + k_tiles * k_tile_cycles + kDrainCycles +
                          kEpilogueCycles + kEpilogueCyclesPerAcc * accs;
    return cycles / kSmClockMHz + reduce_us;
  }
  const double k_item = static_cast<double>(k_tiles * t.bk);
  const double fma_us = t.bm * t.bn * k_item / kF32FmaPerSmUs;
  const double bytes_us = (t.bm + t.bn) * k_item * 4 / kItemBytesPerSmUs;
  return kGemmItemFixedUs + std::max(fma_us, bytes_us) + reduce_us;
}

double round_robin_us(int64_t items, double item_us, const KernelContext& ctx) {
  return static_cast<double>(ceil_div(items, ctx.grid())) * item_us;
}

double estimate_gemm_us(const GemmProblem& s, bool f16, const GemmSchedule& t, const KernelContext& ctx) {
  if (!s.conv) return round_robin_us(gemm_items(s, t), gemm_item_us(s, f16, t, ctx), ctx);
  if (f16) {  // the fit above (kConv*)
    const double waves = static_cast<double>(ceil_div(gemm_items(s, t), ctx.grid()));
    const double k_tiles = static_cast<double>(ceil_div(ceil_div(s.k, t.splits), t.bk));
    const double gather = (s.window > 1 ? kConvGatherWindowUs : kConvGatherPointUs) * t.bn * t.bk / 1024.0;
    const double tile = t.bm * t.bn / 4096.0;
    const double split = t.splits > 1 ? kConvSplitUs + kConvSplitSlotUs * (t.splits - 1) * tile * waves : 0.0;
    return waves * (kConvItemUs + k_tiles * (kConvKTileUs + gather + kConvWeightUs * t.bm * t.bk / 1024.0) +
                    kConvEpilogueUs * tile) +
           split;
  }
  // fp32 convolutions keep the earlier bandwidth model: per item the larger of MMA time at the
  // sustained rate and operand bytes at the SM's share of the bandwidth, plus split-K's
  // atomics priced at 8x streaming.
  const double k_item = static_cast<double>(s.k) / t.splits;
  const double rate = (f16 ? kConvPeakF16Flops : kConvPeakF32Flops) / ctx.sms;
  const double item_us =
      std::max(2.0 * t.bm * t.bn * k_item / rate, (t.bm + t.bn) * k_item * (f16 ? 2 : 4) / (kBandwidth / ctx.sms)) * 1e6;
  const double split_us = t.splits > 1 ? 8.0 * s.batch * s.m * s.n * 4.0 * t.splits / kBandwidth * 1e6 : 0;
  return round_robin_us(gemm_items(s, t), item_us, ctx) + split_us;
}

int wgmma_k_groups(const GemmSchedule& t, const KernelContext& ctx) {
  const int group_threads = t.warps_m * t.warps_n * 32;
  return t.wgmma && group_threads > 0 ? std::max(1, ctx.threads / group_threads) : 1;
}

void gemm_warps(int threads, int* warps_m, int* warps_n) {
  const int warps = std::max(1, threads / 32);
  *warps_n = std::min(4, warps);
  *warps_m = std::max(1, warps / *warps_n);
}

std::string gemm_schedule_problem(bool f16, const GemmSchedule& t, const KernelContext& ctx, const GemmProblem* p) {
  if (t.bm <= 0 || t.bn <= 0 || t.bk <= 0 || t.warps_m <= 0 || t.warps_n <= 0 || t.stages <= 0 || t.splits <= 0)
    return str_cat("knobs must be positive (", t.str(), ")");
  // wgmma tiles may leave warpgroups over: they form k groups (gemm_wg.cuh KGROUPS).
  const int group_threads = t.warps_m * t.warps_n * 32;
  if (t.wgmma ? ctx.threads % group_threads != 0 : group_threads != ctx.threads)
    return str_cat("warps ", t.warps_m, "x", t.warps_n, " are ", group_threads, " threads, the context has ", ctx.threads);
  if (f16) {
    if (t.bm % (16 * t.warps_m)) return str_cat("BM ", t.bm, " is not a multiple of 16 x warps_m (", 16 * t.warps_m, ")");
    if (t.bn % (8 * t.warps_n)) return str_cat("BN ", t.bn, " is not a multiple of 8 x warps_n (", 8 * t.warps_n, ")");
    if (t.bk % 16) return str_cat("BK ", t.bk, " is not a multiple of 16");
    if (t.stages < 2 || t.stages > 8) return str_cat("stages ", t.stages, " is not in 2..8");
  } else {
    if (t.bm % (8 * t.warps_m)) return str_cat("BM ", t.bm, " is not a multiple of 8 x warps_m (", 8 * t.warps_m, ")");
    if (t.bn % (4 * t.warps_n)) return str_cat("BN ", t.bn, " is not a multiple of 4 x warps_n (", 4 * t.warps_n, ")");
    if (t.bk % 4) return str_cat("BK ", t.bk, " is not a multiple of 4");
    if (t.stages != 2) return str_cat("the fp32 GEMM has 2 stages, not ", t.stages);
  }
  if (t.wgmma) {  // GemmWg (gemm_wg.cuh): 64-row warpgroups, wgmma's N, 128-byte swizzled k blocks
    if (!f16) return "wgmma tiles are fp16 only";
    if (t.warps_m % 4 != 0 || t.bm != 16 * t.warps_m)
      return str_cat("a wgmma tile needs BM = 16 x warps_m with warps_m a multiple of 4 (", t.str(), ")");
    if (t.bm > 256) return str_cat("a wgmma tile's BM ", t.bm, " is over 256 (the tensor map's box)");
    const int wn = t.bn / t.warps_n;
    if (wn != 16 && wn != 32 && wn != 48 && wn != 64 && wn != 128)
      return str_cat("a wgmma tile needs BN / warps_n in 16, 32, 48, 64, 128, not ", wn);
    if (t.bk % 64) return str_cat("a wgmma tile needs BK a multiple of 64, not ", t.bk);
    // The 128x128 tile runs as measured (bench/RESULTS.md session 29): two warpgroups of m64n128.
    if (t.bm == 128 && t.bn == 128 && t.warps_n != 1)
      return str_cat("a 128x128 wgmma tile runs as two warpgroups of m64n128 (warps 8x1), not ", t.str());
    const int kgroups = wgmma_k_groups(t, ctx);
    // The k groups split each k tile's k steps and sum through the staged epilogue. The device
    // takes up to 32 values a thread there (GemmF16::kChunkFits); k groups are offered up to 16,
    // the tiles they were measured on (64x64, 64x32: bench/RESULTS.md session 21).
    if (kgroups > 1) {
      if ((t.bk / 16) % kgroups) return str_cat(kgroups, " k groups do not divide a k tile's ", t.bk / 16, " k steps");
      if (t.bm * t.bn / ctx.threads > 16 || (t.bm * t.bn / 8) % ctx.threads)
        return str_cat(kgroups, " k groups sum through the staged epilogue, and are offered for tiles of at most 16 values "
                       "a thread in whole chunks of 8 (", t.bm, "x", t.bn, " over ", ctx.threads, " threads)");
    }
  }
  // Registers: the accumulators alone (BM x BN / threads fp32 values per thread) must leave
  // room for addresses and fragments.
  const int acc = t.bm * t.bn / (t.wgmma ? group_threads : ctx.threads);
  if (acc > ctx.register_cap() / 2)
    return str_cat("tile ", t.bm, "x", t.bn, " needs ", acc, " accumulator registers per thread, over half the cap of ",
                   ctx.register_cap());
  const int smem = gemm_smem_bytes(f16, t.bm, t.bn, t.bk, t.stages);
  if (smem > ctx.smem_limit) return str_cat("tile needs ", smem, " B of shared memory, the context allows ", ctx.smem_limit);
  if (p && t.splits > 1) {
    const std::vector<int> ok = split_k_factors(p->k, t.bk);
    if (std::find(ok.begin(), ok.end(), t.splits) == ok.end())
      return str_cat("split-K ", t.splits, " leaves a split empty or uneven at K = ", p->k, ", BK = ", t.bk);
  }
  return "";
}

std::vector<GemmSchedule> default_gemm_tiles(bool f16, const KernelContext& ctx, bool conv) {
  // fp16 menu from the device library's H100 timings of the BERT-base shapes (2026-11-21):
  // BK = 64 with 4 stages was fastest at 128x768..3072x768.
  struct Tile { int bm, bn, bk, stages; };
  // fp16 convolutions also 64x64x32: the measured best of most of resnet50's 3x3 convolutions
  // (with split-K; bench/runs/run58), where a 32-row tile gathers the activations twice.
  std::vector<Tile> tiles = f16 ? std::vector<Tile>{{64, 128, 32, 3}, {64, 64, 64, 4}, {32, 64, 64, 4}}
                                : std::vector<Tile>{{64, 64, 16, 2}, {32, 64, 16, 2}};
  if (f16 && conv) tiles.push_back({64, 64, 32, 3});
  // And 32x32x64: a narrow output (DenseNet's 32-channel 3x3 convolutions, its 128-channel 1x1s
  // on 14x14 and 7x7 pixels) wastes half of a 64-wide tile's k-tile bytes, and small problems get
  // twice the items. Measured in one call against the menu without it (H100, bench/runs/run137):
  // densenet121 881.8 -> 726.1 us, resnet18 153.5 -> 145.0, resnet50 339.9 -> 333.4, gpt2
  // 428.5 -> 414.8, bert-base 424.4 -> 418.0, vit-base 635.3 -> 645.9 (within that model's
  // +-3 % between calls of the same code).
  if (f16) tiles.push_back({32, 32, 64, 4});
  int wm, wn;
  gemm_warps(ctx.threads, &wm, &wn);
  std::vector<GemmSchedule> out;
  for (const Tile& t : tiles) {
    GemmSchedule s{t.bm, t.bn, t.bk, wm, wn, t.stages, 1};
    if (gemm_schedule_problem(f16, s, ctx, nullptr).empty()) out.push_back(s);
  }
  return out;
}

namespace {

// Adds the fp16 tile (BM, BN, BK) with `wm` warps across M to `out` if it is valid in the
// context, new, and keeps to at most 48 accumulators a thread (3 or 4 stages by BK).
void add_fitted(std::vector<GemmSchedule>* out, const KernelContext& ctx, int bm, int bn, int bk, int wm) {
  const int warps = ctx.threads / 32;
  if (bm * bn > 48 * ctx.threads || wm < 1 || warps % wm) return;
  const GemmSchedule s{bm, bn, bk, wm, warps / wm, bk == 32 ? 3 : 4, 1};
  if (gemm_schedule_problem(true, s, ctx, nullptr).empty()) append_new_tiles(out, {s});
}

int dense_bk(const GemmProblem& p) { return p.k <= 32 ? 32 : 64; }

}  // namespace

// Fitted tiles, measured in one call against the menu alone (H100, bench/runs/run151, fp16
// medians): mobilenet-v2 191.3 -> 182.2 us (its 112x112 expansions 8.7 -> 6.4 us, the 32 -> 16
// channel projection 3.8 -> 1.8, the stem 5.4 -> 3.1), mobilenet-v3-large 224.9 -> 221.0,
// regnet-y-400mf 357.1 -> 353.8; efficientnet-b0 325.8 -> 327.0 and densenet121 735.7 -> 737.6
// within the call's noise.
std::vector<GemmSchedule> fitted_gemm_tiles(const GemmProblem& p, bool f16, const KernelContext& ctx) {
  std::vector<GemmSchedule> out;
  // The output channels: N of a dense GEMM (pixels x channels), M of a convolution (weights
  // are its A: channels x pixels).
  const int64_t channels = p.conv ? p.m : p.n;
  if (!f16 || channels % 64 == 0) return out;
  const int warps = ctx.threads / 32;
  for (int tiles = 1; tiles <= 8; ++tiles) {
    const int fit = static_cast<int>(ceil_div(ceil_div(channels, tiles), 16) * 16);
    if (fit > 192 || (tiles > 1 && fit < 32)) continue;
    if (p.conv) {  // BM fitted; the menu's widths over the pixels
      for (int bn : {64, 128}) add_fitted(&out, ctx, fit, bn, 64, fit % 32 == 0 ? 2 : 1);
    } else {  // BN fitted; four warps across it where it allows (the menu's layout), else two
      for (int bm : {32, 64, 96, 128}) add_fitted(&out, ctx, bm, fit, dense_bk(p), fit % 32 == 0 ? warps / 4 : warps / 2);
    }
  }
  return out;
}

void append_new_tiles(std::vector<GemmSchedule>* tiles, const std::vector<GemmSchedule>& more) {
  for (const GemmSchedule& t : more)
    if (std::find(tiles->begin(), tiles->end(), t) == tiles->end()) tiles->push_back(t);
}

// Tiles of 96 and 128 rows for GEMMs of at least 1024 rows. As defaults for every GEMM they
// measured neutral (H100, bench/runs/run152: resnet50 334.9 -> 333.5 us, densenet121 727.0 ->
// 730.9); the default offers them only to a GEMM alone in its stage whose menu tile would not
// run on wgmma (planner/schedules.cc choose_gemm: H200, run248, resnet50 320.8 -> 315.6 us).
// The tuner tries them everywhere.
std::vector<GemmSchedule> tall_gemm_tiles(const GemmProblem& p, bool f16, const KernelContext& ctx) {
  std::vector<GemmSchedule> out;
  if (!f16 || p.conv || p.m < 1024) return out;
  for (int bn : {32, 64, 128})
    for (int bm : {96, 128}) add_fitted(&out, ctx, bm, bn, dense_bk(p), ctx.threads / 32 / 4);
  return out;
}

std::vector<GemmSchedule> wide_wgmma_tiles(const GemmProblem& p, bool f16, bool alone, const KernelContext& ctx) {
  std::vector<GemmSchedule> out;
  if (!f16) return out;
  int wm, wn;
  gemm_warps(ctx.threads, &wm, &wn);
  std::vector<GemmSchedule> wide = {GemmSchedule{64, 96, 64, wm, wn, 4, 1}};
  // The 128x128 tile where its k loop is long and the stage is the group's alone (H200,
  // bench/RESULTS.md session 29, run240, per-stage profiles, same call, albert's means over its
  // 12 layers): albert's FFN2 (K 16384) 51.5 -> 41.9 us, FFN1 (K 4096) 58.1 -> 50.7,
  // out-projection (K 4096) 18.4 -> 17.9; slower where offered at short K or beside other GEMMs:
  // whisper-encoder's Q/K/V (K 384, a shared stage) 8.7 -> 12.3, swin-t's FFN1 (K 96) 11.5 ->
  // 16.6, albert's shared Q/K/V (K 4096) 43.3 -> 48.4. Whole kernel (run241): albert 2416.3 ->
  // 2241.0 us.
  if (alone && p.k >= kWideTileMinK) wide.push_back(GemmSchedule{128, 128, 64, wm, wn, 3, 1});
  for (const GemmSchedule& s : wide)
    if (gemm_schedule_problem(true, s, ctx, nullptr).empty() &&
        gemm_schedule_problem(true, wgmma_schedule(s, ctx), ctx, nullptr).empty())
      out.push_back(s);
  return out;
}

PointwiseProblem pointwise_problem(const KernelPlan& plan, const Group& grp) {
  // Split loops over its input (each element goes to one output); others over the output.
  const Value* out = grp.output;
  PointwiseProblem p;
  p.elements = grp.anchor->op == OpKind::kSplit ? grp.anchor->inputs[0]->type.numel() : out->type.numel();
  if (grp.anchor->op == OpKind::kGlobalAveragePool)  // warps per output (emit/pointwise.cc emit_global_pool)
    p.elements *= 32 * std::max(1, grp.pointwise.warps);
  if (grp.pointwise.strip > 0) p.elements = conv_strips(*grp.anchor, grp.pointwise.strip);  // a strip a thread
  if (channel_vectors(plan, grp)) p.elements /= 8;  // eight channels a thread
  p.bytes = 2.0 * static_cast<double>(out->type.numel()) * dtype_size(plan.dtype_of(out));
  GemvForm f;
  if (gemv_form(*grp.anchor, &f)) {  // lanes per output; the weights are what moves
    const int lanes = gemv_lanes(f.k);  // a gated image's read and write are the 2 x output above
    p.elements = f.n * gate_parts(gate_plane(grp), lanes) * lanes;
    p.bytes += static_cast<double>(f.n) * f.k * dtype_size(plan.dtype_of(f.w));
  }
  GemvForm sq;  // a squeeze inside: one block reads all its weights at one SM's rate, then syncs
  if (squeeze_form(plan, grp, &sq))
    p.item_us = static_cast<double>(sq.n) * sq.k * dtype_size(plan.dtype_of(sq.w)) / sm_bandwidth(plan.ctx) * 1e6 + 0.1;
  return p;
}

// As many elements a thread (up to eight) as fit the group in one round of the grid; four a
// thread beyond. Items just over the grid ran in two rounds before (one element a thread below
// four rounds' worth, four above): H200, bench/RESULTS.md session 31, run249 and run250, same
// call against that rule, swin-t 591.6 -> 583.2 us, densenet121 736.7 -> 727.3, vit-b-16 512.4
// -> 497.4, vit-base 454.4 -> 450.8 (its patch gather 3.58 -> 2.30 us, the class token and
// position embedding 4.10 -> 3.07), mobilenet-v2 and efficientnet-b0 -0.5 to -0.7 %; bert-base,
// gpt2, resnet50, resnet18 and whisper-encoder within noise.
int default_ilp(const PointwiseProblem& p, const KernelContext& ctx) {
  const int64_t round = int64_t{ctx.threads} * ctx.grid();
  const int64_t fit = ceil_div(p.elements, round);
  return fit <= 1 ? 1 : fit <= 8 ? static_cast<int>(fit) : 4;
}

int64_t pointwise_items(const PointwiseProblem& p, int ilp, const KernelContext& ctx) {
  return ceil_div(p.elements, int64_t{ctx.threads} * ilp);
}

double estimate_pointwise_us(const PointwiseProblem& p, int ilp, const KernelContext& ctx) {
  // Read and write at the bandwidth, unless the busiest block's share of the bytes (few,
  // large items) is slower at one SM's rate; plus a fixed cost and the item loop.
  const int64_t items = pointwise_items(p, ilp, ctx);
  const int64_t waves = ceil_div(items, ctx.grid());
  const double per_element = p.elements > 0 ? p.bytes / static_cast<double>(p.elements) : 0;
  const double block_bytes = static_cast<double>(std::min<int64_t>(p.elements, waves * int64_t{ctx.threads} * ilp)) * per_element;
  return std::max(p.bytes / kBandwidth, block_bytes / sm_bandwidth(ctx)) * 1e6 + 0.3 + (waves - 1) * kItemLoopUs + waves * p.item_us;
}

int pointwise_smem_bytes(const KernelPlan& plan, const Group& g, int warps) {
  GemvForm f;
  if (squeeze_form(plan, g, &f)) return squeeze_smem_bytes(f.n);
  return pool_smem_bytes(warps, plan.ctx);
}

std::string ilp_problem(int ilp) {
  if (ilp < 1 || ilp > 64) return str_cat("ILP factor ", ilp, " is not in 1..64");
  return "";
}

double estimate_rows_us(double bytes) { return 3 * bytes / kBandwidth * 1e6 + 0.5; }

}  // namespace mono
