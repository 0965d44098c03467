#include "compiler/codegen/plan.h"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <ostream>
#include <set>
#include <sstream>

#include "compiler/codegen/support.h"
#include "compiler/codegen/tile_pack.h"
#include "compiler/support/error.h"

namespace mono {

int KernelContext::register_cap() const {
  int cap = 65536 / (threads * blocks_per_sm);
  return std::min(255, cap - cap % 8);
}

const char* group_kind_name(GroupKind k) {
  switch (k) {
    case GroupKind::kGemm: return "gemm";
    case GroupKind::kConvGemm: return "conv-gemm";
    case GroupKind::kRows: return "rows";
    case GroupKind::kPointwise: return "pointwise";
  }
  return "?";
}

std::string GemmSchedule::str() const {
  return str_cat("tile ", bm, "x", bn, "x", bk, ", warps ", warps_m, "x", warps_n, ", stages ", stages,
                 ", split-k ", splits);
}

bool GemmSchedule::operator==(const GemmSchedule& o) const {
  return bm == o.bm && bn == o.bn && bk == o.bk && warps_m == o.warps_m && warps_n == o.warps_n &&
         stages == o.stages && splits == o.splits;
}

bool Schedule::operator==(const Schedule& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case GroupKind::kGemm:
    case GroupKind::kConvGemm: return gemm == o.gemm;
    case GroupKind::kPointwise: return pointwise == o.pointwise;
    case GroupKind::kRows: return true;
  }
  return true;
}

std::string Schedule::str() const {
  switch (kind) {
    case GroupKind::kGemm:
    case GroupKind::kConvGemm: return str_cat(group_kind_name(kind), " ", gemm.str());
    case GroupKind::kPointwise: return str_cat("pointwise ilp ", pointwise.ilp);
    case GroupKind::kRows: return "rows (no knobs)";
  }
  return "?";
}

Schedule Group::schedule() const {
  Schedule s;
  s.kind = kind;
  s.gemm = gemm;
  s.pointwise = pointwise;
  return s;
}

std::string Group::nodes() const {
  std::string s = str_cat(anchor->name, " (", op_name(anchor->op), ")");
  for (const Node* n : epilogue) s += str_cat(" + ", n->name, " (", op_name(n->op), ")");
  return s;
}

const Value* KernelPlan::root(const Value* v) const {
  for (auto it = alias.find(v); it != alias.end(); it = alias.find(v)) v = it->second;
  return v;
}

DType KernelPlan::dtype_of(const Value* v) const {
  auto it = device_dtype.find(root(v));
  return it != device_dtype.end() ? it->second : v->type.dtype;
}

std::string KernelPlan::packing(const Node& n, int i) const {
  std::string p = constant_packing(n, i);
  if (i == 1) {
    auto it = ln_fold_of_gemm.find(&n);
    if (it != ln_fold_of_gemm.end()) p += "|ln" + std::to_string(it->second);
    auto t = weight_tiles.find(&n);
    if (t != weight_tiles.end()) p += t->second;
  }
  return p;
}

bool parse_tile_packing(const std::string& packing, TilePacking* t) {
  const size_t at = packing.find("@t");
  if (at == std::string::npos) return false;
  const size_t x = packing.find('x', at);
  MONO_CHECK(x != std::string::npos, "malformed tile packing '", packing, "'");
  t->nk = packing.rfind("nk", 0) == 0;
  t->rows = std::stoi(packing.substr(at + 2, x - at - 2));
  t->bk = std::stoi(packing.substr(x + 1));
  return true;
}

size_t KernelPlan::constant_offset(const Value* v, const std::string& packing) const {
  for (const PackedConstant& c : constants)
    if (c.value == v && c.packing == packing) return c.offset;
  MONO_CHECK(false, "constant ", v->name, " was not packed as '", packing, "'");
}

namespace {

constexpr double kBandwidth = 2.5e12;     // bytes/s, sustained
// Convolutions only (see estimate_gemm_us): sustained MMA / FFMA rates (estimates).
constexpr double kConvPeakF16Flops = 400e12;
constexpr double kConvPeakF32Flops = 40e12;
constexpr double kBarrierUs = 1.1;        // measured: one grid barrier over 132 blocks
// One SM streams at most about twice its share of the bandwidth (estimate): a group whose
// work sits on few blocks is bound by them.
constexpr double kSmBandwidthShare = 2.0;
constexpr double kAttentionRowsUs = 1.0;  // the softmax rows of one attention item (estimate)
constexpr double kRowStatsUs = 0.7;       // a folded LayerNorm's statistics after a GEMM tile (estimate)
constexpr double kItemLoopUs = 0.05;      // per extra work item a block loops over (estimate)
// fp32 GEMM work items (FFMA), from the device library's H100 timings of the BERT-base shapes
// (bench/runs/diag2/diag/gemm.txt): about a fixed 4 us plus the MMAs at the f16 rate over the
// peak ratio or the operand bytes at about 60 KB per us per SM, whichever is slower.
constexpr double kGemmItemFixedUs = 4.0;
constexpr double kF32FmaPerSmUs = 0.1e6;  // estimate
constexpr double kItemBytesPerSmUs = 60e3;
// fp16 (mma.sync) work items, fitted to the clock64() probe of GemmF16 tiles on the H100 (SM
// clock 1980 MHz; bench/runs/probe1_h100/probe.txt and run18_h100_splitk_preload/probe.txt): a k tile costs ~317 cycles plus its
// operand bytes at ~29 bytes per cycle, whatever its MMA count; the pipeline fill ~1000 cycles
// plus one k tile's bytes at ~22 B/cycle; the drain ~600; the epilogue ~1500 plus ~100 per
// accumulator a thread owns (64x64 over 256 threads: ~3000 measured).
constexpr double kSmClockMHz = 1980;
constexpr double kKTileCycles = 317, kKTileBytesPerCycle = 29;
constexpr double kFillCycles = 1000, kFillBytesPerCycle = 22, kDrainCycles = 600;
constexpr double kEpilogueCycles = 1500, kEpilogueCyclesPerAcc = 100;
// Split-K (gemm.cuh): producers store their partial tile and count it; the reducer waits for the
// count (~0.9 us after its own k tiles) and reads the splits - 1 partial tiles one after another.
// Fitted to the same probe: 64x64 split-K 4 costs ~1.6-2 us over split-K 1, 32x64 split-K 2 ~1.3.
constexpr double kSplitWaitUs = 0.9;
constexpr double kSplitSlotUs = 0.1;  // plus the slot's bytes at kItemBytesPerSmUs

}  // namespace

// ---- cost model -------------------------------------------------------------------------

GemmProblem gemm_problem(const Group& grp) {
  const Node& n = *grp.anchor;
  GemmProblem s;
  if (n.op == OpKind::kConv) {
    const Shape& x = n.inputs[0]->type.shape;
    const Shape& w = n.inputs[1]->type.shape;
    const Shape& y = n.outputs[0]->type.shape;
    s.batch = x[0];
    s.m = w[0];
    s.k = shape_numel(w) / w[0];
    s.n = shape_numel(y) / (y[0] * y[1]);
    s.conv = true;
    return s;
  }
  const Shape& y = n.outputs[0]->type.shape;
  s.m = y.size() >= 2 ? y[y.size() - 2] : 1;
  s.n = y.back();
  s.batch = shape_numel(y) / (s.m * s.n);
  const Shape& a = n.inputs[0]->type.shape;
  bool trans_a = false;
  if (n.op == OpKind::kGemm)
    if (const AttrValue* t = n.attr("transA")) trans_a = std::get<int64_t>(*t) != 0;
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

double gemm_item_us(const GemmProblem& s, bool f16, const GemmSchedule& t) {
  const int64_t k_tiles = ceil_div(ceil_div(s.k, t.splits), t.bk);
  const double reduce_us =
      t.splits > 1 ? kSplitWaitUs + (t.splits - 1) * (kSplitSlotUs + t.bm * t.bn * 4.0 / kItemBytesPerSmUs) : 0.0;
  if (f16) {
    const double tile_bytes = (t.bm + t.bn) * t.bk * 2.0;
    const double accs = static_cast<double>(t.bm) * t.bn / (32.0 * std::max(1, t.warps_m * t.warps_n));
    const double cycles = kFillCycles + tile_bytes / kFillBytesPerCycle +
                          k_tiles * (kKTileCycles + tile_bytes / kKTileBytesPerCycle) + kDrainCycles +
                          kEpilogueCycles + kEpilogueCyclesPerAcc * accs;
    return cycles / kSmClockMHz + reduce_us;
  }
  const double k_item = static_cast<double>(k_tiles * t.bk);
  const double fma_us = t.bm * t.bn * k_item / kF32FmaPerSmUs;
  const double bytes_us = (t.bm + t.bn) * k_item * 4 / kItemBytesPerSmUs;
  return kGemmItemFixedUs + std::max(fma_us, bytes_us) + reduce_us;
}

namespace {
// Items go round-robin over the blocks: the busiest block runs ceil(items / grid) of them, each
// taking up to the slowest item's time.
double round_robin_us(int64_t items, double item_us, const KernelContext& ctx) {
  return static_cast<double>(ceil_div(items, ctx.grid())) * item_us;
}
}  // namespace

double estimate_gemm_us(const GemmProblem& s, bool f16, const GemmSchedule& t, const KernelContext& ctx) {
  if (!s.conv) return round_robin_us(gemm_items(s, t), gemm_item_us(s, f16, t), ctx);
  // Convolutions (im2col gather) keep the earlier bandwidth model, under which resnet50's
  // defaults were measured; the fit above is from dense-operand GEMMs only. Per item the
  // larger of MMA time at the sustained rate and operand bytes at the SM's share of the
  // bandwidth, plus split-K's atomics priced at 8x streaming.
  const double k_item = static_cast<double>(s.k) / t.splits;
  const double rate = (f16 ? kConvPeakF16Flops : kConvPeakF32Flops) / ctx.sms;
  const double item_us =
      std::max(2.0 * t.bm * t.bn * k_item / rate, (t.bm + t.bn) * k_item * (f16 ? 2 : 4) / (kBandwidth / ctx.sms)) * 1e6;
  const double split_us = t.splits > 1 ? 8.0 * s.batch * s.m * s.n * 4.0 * t.splits / kBandwidth * 1e6 : 0;
  return round_robin_us(gemm_items(s, t), item_us, ctx) + split_us;
}

void gemm_warps(int threads, int* warps_m, int* warps_n) {
  const int warps = std::max(1, threads / 32);
  *warps_n = std::min(4, warps);
  *warps_m = std::max(1, warps / *warps_n);
}

std::string gemm_schedule_problem(bool f16, const GemmSchedule& t, const KernelContext& ctx, const GemmProblem* p) {
  if (t.bm <= 0 || t.bn <= 0 || t.bk <= 0 || t.warps_m <= 0 || t.warps_n <= 0 || t.stages <= 0 || t.splits <= 0)
    return str_cat("knobs must be positive (", t.str(), ")");
  if (t.warps_m * t.warps_n * 32 != ctx.threads)
    return str_cat("warps ", t.warps_m, "x", t.warps_n, " are ", t.warps_m * t.warps_n * 32, " threads, the context has ",
                   ctx.threads);
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
  // Registers: the accumulators alone (BM x BN / threads fp32 values per thread) must leave
  // room for addresses and fragments.
  const int acc = t.bm * t.bn / ctx.threads;
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

std::vector<GemmSchedule> default_gemm_tiles(bool f16, const KernelContext& ctx) {
  // fp16 menu from the device library's H100 timings of the BERT-base shapes (2026-11-21):
  // BK = 64 with 4 stages was fastest at 128x768..3072x768.
  struct Tile { int bm, bn, bk, stages; };
  const std::vector<Tile> tiles = f16 ? std::vector<Tile>{{64, 128, 32, 3}, {64, 64, 64, 4}, {32, 64, 64, 4}}
                                      : std::vector<Tile>{{64, 64, 16, 2}, {32, 64, 16, 2}};
  int wm, wn;
  gemm_warps(ctx.threads, &wm, &wn);
  std::vector<GemmSchedule> out;
  for (const Tile& t : tiles) {
    GemmSchedule s{t.bm, t.bn, t.bk, wm, wn, t.stages, 1};
    if (gemm_schedule_problem(f16, s, ctx, nullptr).empty()) out.push_back(s);
  }
  return out;
}

PointwiseProblem pointwise_problem(const KernelPlan& plan, const Group& grp) {
  // Split loops over its input (each element goes to one output); others over the output.
  const Value* out = grp.output;
  PointwiseProblem p;
  p.elements = grp.anchor->op == OpKind::kSplit ? grp.anchor->inputs[0]->type.numel() : out->type.numel();
  p.bytes = static_cast<double>(out->type.numel()) * dtype_size(plan.dtype_of(out));
  return p;
}

int default_ilp(const PointwiseProblem& p, const KernelContext& ctx) {
  return p.elements >= int64_t{ctx.threads} * 4 * ctx.grid() ? 4 : 1;
}

int64_t pointwise_items(const PointwiseProblem& p, int ilp, const KernelContext& ctx) {
  return ceil_div(p.elements, int64_t{ctx.threads} * ilp);
}

double estimate_pointwise_us(const PointwiseProblem& p, int ilp, const KernelContext& ctx) {
  // Read and write at the bandwidth, unless the busiest block's share of the bytes (few,
  // large items) is slower at one SM's rate; plus a fixed cost and the item loop.
  const int64_t items = pointwise_items(p, ilp, ctx);
  const int64_t waves = ceil_div(items, ctx.grid());
  const double per_element = p.elements > 0 ? 2 * p.bytes / static_cast<double>(p.elements) : 0;
  const double block_bytes = static_cast<double>(std::min<int64_t>(p.elements, waves * int64_t{ctx.threads} * ilp)) * per_element;
  const double sm_bandwidth = kBandwidth / ctx.sms * kSmBandwidthShare;
  return std::max(2 * p.bytes / kBandwidth, block_bytes / sm_bandwidth) * 1e6 + 0.3 + (waves - 1) * kItemLoopUs;
}

std::string ilp_problem(int ilp) {
  if (ilp < 1 || ilp > 64) return str_cat("ILP factor ", ilp, " is not in 1..64");
  return "";
}

namespace {

bool is_view(const Node& n) {
  switch (n.op) {
    case OpKind::kReshape:
    case OpKind::kSqueeze:
    case OpKind::kUnsqueeze:
    case OpKind::kFlatten:
    case OpKind::kIdentity:
      return true;
    case OpKind::kDropout:
      return n.outputs.size() < 2 || !n.outputs[1];
    default:
      return false;
  }
}

// The [rows][K] matrix a tile-packed constant is read as: a MatMul weight ("nk") is [K][rows]
// in the model; a Gemm transB weight [rows][K]; a convolution's [Cout][Cin x KH x KW].
void tile_matrix(const Value& v, const TilePacking& t, int64_t* rows, int64_t* k) {
  const Shape& s = v.type.shape;
  MONO_CHECK(!s.empty() && s[0] > 0, "tile-packed constant ", v.name, " has no rows");
  *rows = t.nk ? s[1] : s[0];
  *k = t.nk ? s[0] : v.type.numel() / s[0];
}

class Planner {
 public:
  Planner(const Graph& g, const PlanOptions& o) : g_(g), opt_(o) {}

  KernelPlan run() {
    plan_.precision = opt_.precision;
    plan_.profile = opt_.profile;
    plan_.prefetch_weights = opt_.prefetch_weights;
    plan_.prefetch_distance = opt_.prefetch_distance;
    plan_.staged_epilogue = opt_.staged_epilogue;
    plan_.bulk_weights = opt_.bulk_weights;
    plan_.early_weights = opt_.early_weights;
    plan_.vec_epilogue = opt_.vec_epilogue;
    plan_.tensor_a = opt_.tensor_a;
    plan_.epi_chunk = opt_.epi_chunk;

    if (opt_.threads < 32 || opt_.threads > 1024 || opt_.threads % 32)
      user_error("a block of ", opt_.threads, " threads is not a multiple of 32 in 32..1024");
    if (opt_.blocks_per_sm < 1 || opt_.threads * opt_.blocks_per_sm > 2048)
      user_error(opt_.blocks_per_sm, " blocks of ", opt_.threads, " threads per SM do not fit an SM (2048 threads)");
    if (!opt_.schedules.empty()) MONO_CHECK(opt_.signature, "tuned schedules given without a signature function");
    plan_.ctx.threads = opt_.threads;
    plan_.ctx.blocks_per_sm = opt_.blocks_per_sm;
    plan_.ctx.sms = opt_.sms;
    plan_.ctx.smem_limit = KernelContext::smem_budget(opt_.blocks_per_sm);
    if (opt_.smem_limit > 0) plan_.ctx.smem_limit = std::min(plan_.ctx.smem_limit, opt_.smem_limit);
    assign_dtypes();
    find_aliases();
    count_uses();
    form_groups();
    assign_gemm_precision();
    fuse_attention();
    if (opt_.fold_layernorm) fold_layernorms();
    if (opt_.swap_b_operands) swap_b_operands();
    assign_stages();
    choose_schedules();
    tile_weights();
    place_tensors();
    plan_.inline_groups = opt_.inline_groups < 0 ? static_cast<int>(plan_.groups.size()) <= kInlineGroupLimit
                                                  : opt_.inline_groups > 0;
    return std::move(plan_);
  }

 private:
  void assign_dtypes() {
    for (const auto& v : g_.values()) {
      DType d = v->type.dtype;
      if (opt_.precision == Precision::kF16 && d == DType::kF32) {
        auto r = opt_.ranges.find(v.get());
        const bool fits = !opt_.keep_fp32.count(v.get()) &&
                          (r == opt_.ranges.end() || r->second == 0.0f ||
                           (r->second >= kMinFp16Range && r->second <= kMaxFp16Range));
        if (fits) d = DType::kF16;
        else ++plan_.fp32_fallbacks;
      }
      plan_.device_dtype[v.get()] = d;
    }
  }

  // A GEMM runs in fp16 only if both operands are stored in fp16; an fp32 operand makes the
  // other fp32 too (to the fixpoint, since operands can be shared).
  void assign_gemm_precision() {
    auto operands = [&](const Group& g) {
      return std::vector<const Value*>{plan_.root(g.anchor->inputs[0]), plan_.root(g.anchor->inputs[1])};
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (Group& g : plan_.groups) {
        if (g.kind != GroupKind::kGemm && g.kind != GroupKind::kConvGemm) continue;
        bool any_f32 = false;
        for (const Value* v : operands(g)) any_f32 |= plan_.device_dtype[v] == DType::kF32;
        g.f16 = !any_f32;
        if (!any_f32) continue;
        for (const Value* v : operands(g)) {
          if (plan_.device_dtype[v] == DType::kF16) {
            plan_.device_dtype[v] = DType::kF32;
            ++plan_.fp32_fallbacks;
            changed = true;
          }
        }
      }
    }
  }

  void find_aliases() {
    for (const auto& n : g_.nodes()) {
      if (!is_view(*n)) continue;
      plan_.alias[n->outputs[0]] = n->inputs[0];
    }
  }

  // Uses of each root value by non-view nodes and graph outputs.
  void count_uses() {
    for (const auto& n : g_.nodes()) {
      if (is_view(*n)) continue;
      for (const Value* in : n->inputs)
        if (in) ++uses_[plan_.root(in)];
    }
    for (const Value* out : g_.outputs) {
      ++uses_[plan_.root(out)];
      graph_output_roots_.insert(plan_.root(out));
    }
  }

  static GroupKind anchor_kind(const Node& n) {
    switch (n.op) {
      case OpKind::kMatMul:
      case OpKind::kGemm:
        return GroupKind::kGemm;
      case OpKind::kConv: {
        const AttrValue* group = n.attr("group");
        return (!group || std::get<int64_t>(*group) == 1) ? GroupKind::kConvGemm : GroupKind::kPointwise;
      }
      case OpKind::kLayerNormalization:
        return GroupKind::kRows;
      case OpKind::kSoftmax: {
        int64_t axis = -1;
        if (const AttrValue* a = n.attr("axis")) axis = std::get<int64_t>(*a);
        else if (n.opset < 13) axis = 1;
        const int64_t rank = n.inputs[0]->type.rank();
        if (axis < 0) axis += rank;
        return axis == rank - 1 || (n.opset < 13 && axis == 1 && rank == 2) ? GroupKind::kRows : GroupKind::kPointwise;
      }
      default:
        return GroupKind::kPointwise;
    }
  }

  // The input of `n` that is `running` (the group's current result), if `n` can extend the
  // group as an epilogue step: an elementwise op, or a Transpose (the store goes to the
  // permuted index).
  int epilogue_input(const Node& n, const Group& grp) {
    const bool transpose = n.op == OpKind::kTranspose;
    if ((!is_epilogue_op(n.op) && !transpose) || n.outputs.size() != 1 || !n.outputs[0]) return -1;
    if (grp.anchor->outputs.size() != 1) return -1;
    const Value* running = plan_.root(grp.output);
    if (uses_[running] != 1 || graph_output_roots_.count(running)) return -1;
    if (!is_float(n.outputs[0]->type.dtype) || !is_float(running->type.dtype)) return -1;
    if (n.outputs[0]->type.numel() != running->type.numel()) return -1;
    int found = -1;
    for (int i = 0; i < n.num_inputs(); ++i) {
      if (!n.inputs[i]) continue;
      if (plan_.root(n.inputs[i]) == running) {
        if (found >= 0) return -1;  // reads the running value twice
        found = i;
      }
    }
    if (found < 0) return -1;
    // The data input must be read at the output's own index: same numel, no broadcasting.
    if (n.inputs[found]->type.numel() != n.outputs[0]->type.numel()) return -1;
    return found;
  }

  // `Where(IsNaN(r), c, r)` (or with the branches swapped) on the running value r, with c a
  // scalar constant: what exporters put after Softmax. Returns the Where node, fused with the
  // IsNaN as one epilogue step.
  const Node* nan_guard(const Node& isnan, const Group& grp) {
    if (isnan.op != OpKind::kIsNaN || grp.anchor->outputs.size() != 1) return nullptr;
    const Value* running = plan_.root(grp.output);
    if (plan_.root(isnan.inputs[0]) != running || uses_[running] != 2 || graph_output_roots_.count(running)) return nullptr;
    if (!is_float(running->type.dtype)) return nullptr;
    const Value* cond = isnan.outputs[0];
    if (uses_[plan_.root(cond)] != 1 || graph_output_roots_.count(plan_.root(cond))) return nullptr;
    for (const auto& up : g_.nodes()) {
      const Node& w = *up;
      if (w.op != OpKind::kWhere || plan_.root(w.inputs[0]) != plan_.root(cond)) continue;
      const bool x_is_running = plan_.root(w.inputs[2]) == running;
      const Value* other = x_is_running ? w.inputs[1] : w.inputs[2];
      if (!x_is_running && plan_.root(w.inputs[1]) != running) return nullptr;
      if (!plan_.root(other)->is_constant() || other->type.numel() != 1) return nullptr;
      if (w.outputs[0]->type != running->type) return nullptr;
      return &w;
    }
    return nullptr;
  }

  void form_groups() {
    std::map<const Value*, int> group_of_root;  // root value -> group writing it
    std::set<const Node*> consumed;  // Where nodes already fused with their IsNaN
    for (const auto& up : g_.nodes()) {
      const Node& n = *up;
      if (is_view(n) || consumed.count(&n)) continue;
      check_supported(n);
      // Extend the group that produced this node's data input?
      bool fused = false;
      if (n.op == OpKind::kIsNaN) {
        auto it = group_of_root.find(plan_.root(n.inputs[0]));
        if (it != group_of_root.end()) {
          Group& grp = plan_.groups[it->second];
          if (const Node* w = nan_guard(n, grp)) {
            grp.epilogue.push_back(&n);
            grp.epilogue.push_back(w);
            grp.output = w->outputs[0];
            group_of_root[plan_.root(w->outputs[0])] = grp.id;
            consumed.insert(w);
            continue;
          }
        }
      }
      for (int i = 0; i < n.num_inputs() && !fused; ++i) {
        if (!n.inputs[i]) continue;
        auto it = group_of_root.find(plan_.root(n.inputs[i]));
        if (it == group_of_root.end()) continue;
        Group& grp = plan_.groups[it->second];
        if (epilogue_input(n, grp) != i) continue;
        grp.epilogue.push_back(&n);
        grp.output = n.outputs[0];
        group_of_root[plan_.root(n.outputs[0])] = grp.id;
        fused = true;
      }
      if (fused) continue;
      Group grp;
      grp.id = static_cast<int>(plan_.groups.size());
      grp.kind = anchor_kind(n);
      grp.anchor = &n;
      grp.output = n.outputs[0];
      for (const Value* out : n.outputs)
        if (out) group_of_root[plan_.root(out)] = grp.id;
      plan_.groups.push_back(grp);
      if (n.outputs.size() > 1) {
        // Multi-output ops (Split): every output is written by this group.
        for (size_t k = 1; k < n.outputs.size(); ++k)
          if (n.outputs[k]) multi_output_.insert(n.outputs[k]);
      }
    }
    for (const auto& [root, gid] : group_of_root) producer_group_[root] = gid;
  }

  // ---- attention as one group (plan.h: Group::fused) ----

  bool private_value(const Value* v) {
    auto it = uses_.find(v);
    return it != uses_.end() && it->second == 1 && !graph_output_roots_.count(v);
  }
  static bool has_transpose(const Group& g) {
    for (const Node* e : g.epilogue)
      if (e->op == OpKind::kTranspose) return true;
    return false;
  }
  static Shape batch_dims(const Group& g) {
    const Shape& y = g.anchor->outputs[0]->type.shape;
    return y.size() > 2 ? Shape(y.begin(), y.end() - 2) : Shape{};
  }
  // A batched MatMul group that can be part of an attention group (S = QK must also store in
  // its natural layout: no Transpose in its epilogue).
  static bool attention_gemm(const Group& g) {
    return g.kind == GroupKind::kGemm && g.anchor->op == OpKind::kMatMul && !g.in_attention() &&
           g.anchor->inputs[0]->type.rank() >= 2 && g.anchor->inputs[1]->type.rank() >= 2;
  }
  // Every input of the groups `set` that another group writes comes from a group before `head`
  // (so the fused group's stage follows all of them).
  bool inputs_before(int head, const std::vector<const Group*>& set) {
    std::set<int> ids;
    for (const Group* g : set) ids.insert(g->id);
    for (const Group* g : set) {
      std::vector<const Node*> nodes = {g->anchor};
      nodes.insert(nodes.end(), g->epilogue.begin(), g->epilogue.end());
      for (const Node* n : nodes)
        for (const Value* in : n->inputs) {
          if (!in) continue;
          auto it = producer_group_.find(plan_.root(in));
          if (it != producer_group_.end() && !ids.count(it->second) && it->second > head) return false;
        }
    }
    return true;
  }
  // The fixed tiles of the two GEMMs: BM query rows (the smallest of 16, 32, 64 whose items fit
  // the grid in one round), all warps along N, BN covering all keys (S) / the head size (O) up to
  // 256 columns per tile.
  bool attention_tiles(const GemmProblem& s, const GemmProblem& o, bool f16, GemmSchedule* t1, GemmSchedule* t3) {
    const int wn = plan_.ctx.threads / 32;
    const int quantum = (f16 ? 8 : 4) * wn;
    auto cover = [&](int64_t n) {
      const int64_t q = ceil_div(std::min<int64_t>(n, 256), quantum) * quantum;
      return static_cast<int>(q);
    };
    int bq = 64;
    for (int c : {16, 32}) {
      if (s.batch * ceil_div(s.m, c) <= plan_.ctx.grid()) {
        bq = c;
        break;
      }
    }
    const int bk1 = f16 ? (s.k <= 16 ? 16 : s.k <= 32 ? 32 : 64) : 16;
    *t1 = GemmSchedule{bq, cover(s.n), bk1, 1, wn, 2, 1};
    *t3 = GemmSchedule{bq, cover(o.n), f16 ? 64 : 16, 1, wn, f16 ? 3 : 2, 1};
    return gemm_schedule_problem(f16, *t1, plan_.ctx, &s).empty() && gemm_schedule_problem(f16, *t3, plan_.ctx, &o).empty();
  }

  // S = MatMul(Q, K) [+ elementwise], P = Softmax(S) over the last axis [+ NaN guard],
  // O = MatMul(P, V) [+ epilogue], with S and P read by nothing else: one group.
  void fuse_attention() {
    if (!opt_.fuse_attention) return;
    for (Group& sm : plan_.groups) {
      if (sm.kind != GroupKind::kRows || sm.anchor->op != OpKind::kSoftmax || sm.in_attention() || has_transpose(sm))
        continue;
      const Value* s = plan_.root(sm.anchor->inputs[0]);
      auto pit = producer_group_.find(s);
      if (pit == producer_group_.end()) continue;
      Group& qk = plan_.groups[pit->second];
      if (!attention_gemm(qk) || has_transpose(qk) || plan_.root(qk.output) != s || !private_value(s)) continue;
      const Value* p = plan_.root(sm.output);
      if (!private_value(p)) continue;
      Group* pv = nullptr;
      for (Group& g : plan_.groups)
        if (g.kind == GroupKind::kGemm && plan_.root(g.anchor->inputs[0]) == p) pv = &g;
      if (!pv || pv->id <= sm.id || !attention_gemm(*pv) || pv->f16 != qk.f16) continue;
      const GemmProblem a = gemm_problem(qk), b = gemm_problem(*pv);
      if (a.batch != b.batch || a.m != b.m || b.k != a.n || row_length(*sm.anchor) != a.n) continue;
      if (batch_dims(qk) != batch_dims(*pv) || pv->anchor->inputs[0]->type.numel() != b.batch * b.m * b.k) continue;
      if (!inputs_before(qk.id, {&qk, &sm, pv})) continue;
      GemmSchedule t1, t3;
      if (!attention_tiles(a, b, qk.f16, &t1, &t3)) continue;
      qk.fused = {sm.id, pv->id};
      sm.fused_into = pv->fused_into = qk.id;
      qk.gemm = t1;
      pv->gemm = t3;
    }
  }

  // ---- LayerNorm folded into its neighbouring GEMMs (plan.h: LnFold) ----

  // The GEMM group `g` reads `y` as its A operand against constant weights (MatMul with a 2-D
  // constant B, or Gemm without transA), K = len: it can read x and gamma-scaled weights instead.
  bool ln_foldable_a(const Group& g, const Value* y, int64_t len) {
    const Node& n = *g.anchor;
    if (g.kind != GroupKind::kGemm || g.in_attention() || plan_.root(n.inputs[0]) != y) return false;
    if (plan_.root(n.inputs[1]) == y || !plan_.root(n.inputs[1])->is_constant()) return false;
    if (n.op == OpKind::kMatMul) return n.inputs[1]->type.rank() == 2 && n.inputs[0]->type.shape.back() == len;
    if (n.op == OpKind::kGemm) {
      const AttrValue* ta = n.attr("transA");
      return !(ta && std::get<int64_t>(*ta) != 0) && n.inputs[0]->type.shape.back() == len;
    }
    return false;
  }

  void fold_layernorms() {
    for (Group& ln : plan_.groups) {
      const Node& n = *ln.anchor;
      if (ln.kind != GroupKind::kRows || n.op != OpKind::kLayerNormalization || ln.in_attention() || !ln.epilogue.empty())
        continue;
      const int64_t rank = n.inputs[0]->type.rank();
      int64_t axis = -1;
      if (const AttrValue* a = n.attr("axis")) axis = std::get<int64_t>(*a);
      if (axis < 0) axis += rank;
      if (axis != rank - 1) continue;
      bool stash_used = false;  // Mean / InvStdDev outputs
      for (size_t k = 1; k < n.outputs.size(); ++k)
        if (n.outputs[k] && (uses_[plan_.root(n.outputs[k])] > 0 || graph_output_roots_.count(plan_.root(n.outputs[k]))))
          stash_used = true;
      if (stash_used) continue;
      const int64_t len = n.inputs[0]->type.shape.back();
      const Value* gamma = plan_.root(n.inputs[1]);
      const Value* beta = n.input(2) ? plan_.root(n.inputs[2]) : nullptr;
      if (!gamma->is_constant() || gamma->type.numel() != len || (beta && (!beta->is_constant() || beta->type.numel() != len)))
        continue;
      // The producer: a GEMM group storing x row-major, N = len, that computes no other stats.
      const Value* x = plan_.root(n.inputs[0]);
      const Value* y = plan_.root(ln.output);
      auto pit = producer_group_.find(x);
      if (pit == producer_group_.end()) continue;
      Group& prod = plan_.groups[pit->second];
      if (prod.kind != GroupKind::kGemm || prod.in_attention() || has_transpose(prod) || prod.computes_stats >= 0 ||
          plan_.root(prod.output) != x || multi_output_.count(x) || graph_output_roots_.count(x) ||
          graph_output_roots_.count(y))
        continue;
      const GemmProblem pp = gemm_problem(prod);
      if (pp.n != len || x->type.shape.back() != len || x->type.numel() != pp.batch * pp.m * pp.n) continue;
      if (plan_.dtype_of(x) != plan_.dtype_of(y) || !is_float(plan_.dtype_of(x))) continue;
      // Every reader of y: a GEMM's A operand (ln_foldable_a) or an epilogue step's operand.
      int readers = 0;
      bool ok = true;
      std::vector<const Node*> a_readers;
      for (const Group& g : plan_.groups) {
        if (g.id == ln.id) continue;
        for (int i = 0; i < g.anchor->num_inputs(); ++i) {
          if (!g.anchor->inputs[i] || plan_.root(g.anchor->inputs[i]) != y) continue;
          ++readers;
          if (i == 0 && ln_foldable_a(g, y, len)) a_readers.push_back(g.anchor);
          else ok = false;
        }
        for (const Node* e : g.epilogue)
          for (const Value* in : e->inputs)
            if (in && plan_.root(in) == y) {
              ++readers;
              ok = ok && (g.kind == GroupKind::kGemm || g.kind == GroupKind::kConvGemm);
            }
      }
      if (!ok || readers == 0 || readers != uses_[y]) continue;
      const int f = static_cast<int>(plan_.ln_folds.size());
      LnFold fold;
      fold.ln_group = ln.id;
      fold.producer = prod.id;
      fold.x = x;
      fold.y = y;
      fold.len = len;
      fold.rows = x->type.numel() / len;
      fold.eps = attr_eps(n);
      plan_.ln_folds.push_back(fold);
      plan_.ln_fold_of_y[y] = f;
      for (const Node* r : a_readers) plan_.ln_fold_of_gemm[r] = f;
      ln.folded_ln = f;
      prod.computes_stats = f;
    }
  }
  // KernelPlan::swapped_last2: a GEMM group's output (rank >= 2, not a graph output, written by
  // nothing else, no views of it) whose every reader is a MatMul reading it as B.
  void swap_b_operands() {
    for (const Group& g : plan_.groups) {
      if (g.kind != GroupKind::kGemm || g.fused_into >= 0 || g.computes_stats >= 0) continue;
      const Value* v = g.output;
      if (plan_.root(v) != v || v->type.rank() < 2 || graph_output_roots_.count(v) || multi_output_.count(v)) continue;
      if (plan_.ln_fold_of_y.count(v)) continue;
      bool viewed = false;
      for (const auto& a : plan_.alias) viewed = viewed || a.second == v;
      if (viewed) continue;
      if (!stores_along_m(g)) continue;  // only where the layout makes the producer store along m (K^T)
      int readers = 0;
      bool ok = true;
      for (const Group& r : plan_.groups) {
        for (int i = 0; i < r.anchor->num_inputs(); ++i) {
          if (r.anchor->inputs[i] != v) continue;
          ++readers;
          ok = ok && i == 1 && r.kind == GroupKind::kGemm && r.anchor->op == OpKind::kMatMul && r.anchor->inputs[0] != v;
        }
        for (const Node* e : r.epilogue)
          for (const Value* in : e->inputs) ok = ok && in != v;
      }
      if (ok && readers > 0 && readers == uses_[v]) plan_.swapped_last2.insert(v);
    }
  }

  // The group's epilogue transposes its result so that the output's last axis runs along the
  // GEMM's m (stride N in the anchor's output): its stores are contiguous along m only.
  static bool stores_along_m(const Group& g) {
    Shape cur = g.anchor->outputs[0]->type.shape;
    if (cur.empty()) return false;
    const int64_t n = cur.back();
    std::vector<int64_t> stride;  // of each axis of `cur` in the anchor's output, once permuted
    for (const Node* e : g.epilogue) {
      if (e->op == OpKind::kTranspose) {
        const Shape& in = e->inputs[0]->type.shape;
        if (stride.empty()) {
          stride.assign(in.size(), 1);
          for (int64_t d = static_cast<int64_t>(in.size()) - 2; d >= 0; --d) stride[d] = stride[d + 1] * in[d + 1];
        } else if (in != cur) {
          return false;  // a view between transposes
        }
        std::vector<int64_t> perm;
        if (const AttrValue* a = e->attr("perm")) perm = std::get<std::vector<int64_t>>(*a);
        if (perm.empty())
          for (int64_t d = static_cast<int64_t>(in.size()) - 1; d >= 0; --d) perm.push_back(d);
        std::vector<int64_t> next;
        for (int64_t p : perm) next.push_back(stride[p]);
        stride = next;
      } else if (!stride.empty() && e->outputs[0]->type.shape != cur && e->op != OpKind::kIsNaN) {
        return false;  // a view after a transpose
      }
      if (e->op != OpKind::kIsNaN) cur = e->outputs[0]->type.shape;
    }
    return !stride.empty() && n > 1 && stride.back() == n;
  }

  static float attr_eps(const Node& n) {
    const AttrValue* a = n.attr("epsilon");
    return a ? std::get<float>(*a) : 1e-5f;
  }

  void check_supported(const Node& n) {
    for (const Value* v : n.outputs)
      if (v && v->type.numel() == 0) user_error(n.describe(), ": zero-sized tensors are not supported by the CUDA backend");
    if (!codegen_supports(n))
      user_error(n.describe(), ": ", op_name(n.op), " cannot be compiled to CUDA yet");
  }

  void assign_stages() {
    int max_stage = -1;
    for (Group& grp : plan_.groups) {
      if (grp.fused_into >= 0) continue;  // placed with its head
      std::set<int> members = {grp.id};
      members.insert(grp.fused.begin(), grp.fused.end());
      int stage = 0;
      auto visit = [&](const Node* n) {
        for (const Value* in : n->inputs) {
          if (!in) continue;
          auto it = producer_group_.find(plan_.root(in));
          if (it == producer_group_.end() || members.count(it->second)) continue;
          stage = std::max(stage, plan_.groups[it->second].stage + 1);
        }
      };
      for (int id : members) {
        visit(plan_.groups[id].anchor);
        for (const Node* e : plan_.groups[id].epilogue) visit(e);
      }
      if (grp.folded_ln >= 0) stage = plan_.groups[plan_.ln_folds[grp.folded_ln].producer].stage;  // emits nothing
      for (int id : members) plan_.groups[id].stage = stage;
      max_stage = std::max(max_stage, stage);
    }
    plan_.stages.assign(max_stage + 1, Stage{});
    for (const Group& grp : plan_.groups) plan_.stages[grp.stage].groups.push_back(grp.id);
  }

  // The default schedule of a GEMM group: the menu tile and split-K factor with the lowest
  // estimate for its stage. Groups sharing a stage share the grid: their items go round-robin
  // over the blocks, so the stage takes about ceil(all items / grid) times its slowest item.
  // `others_items` / `others_item_us` describe the stage's other groups (0 when alone).
  // `copies`: the stage runs that many groups of this problem with the same schedule (their
  // items all count).
  void choose_gemm(Group& grp, int64_t others_items = 0, double others_item_us = 0, int copies = 1) {
    const GemmProblem s = gemm_problem(grp);
    const std::vector<GemmSchedule> tiles = default_gemm_tiles(grp.f16, plan_.ctx);
    if (tiles.empty())
      user_error(grp.anchor->describe(), ": no GEMM tile of the menu fits the context (", plan_.ctx.threads,
                 " threads, ", plan_.ctx.smem_limit, " B shared memory)");
    // PlanOptions::gemm_bk; auto (-1): 128 for the one-matrix fp16 GEMMs whose A the emitter reads
    // through a tensor map (batched ones, attention's, are not).
    const bool auto_bk = opt_.gemm_bk < 0 && opt_.tensor_a && grp.f16 && !s.conv && s.batch == 1 && s.k >= 128;
    const int bk = opt_.gemm_bk >= 0 ? opt_.gemm_bk : auto_bk ? 128 : 0;
    double best = 1e30;
    auto choose = [&](int k_tile) {
      for (GemmSchedule t : tiles) {
        if (opt_.gemm_stages > 0 && grp.f16) t.stages = opt_.gemm_stages;
        if (k_tile > 0 && grp.f16 && !s.conv) t.bk = k_tile;
        if ((opt_.gemm_stages > 0 || k_tile > 0) && !gemm_schedule_problem(grp.f16, t, plan_.ctx, nullptr).empty()) continue;
        for (int splits : split_k_factors(s.k, t.bk)) {
          GemmSchedule c = t;
          c.splits = splits;
          const double us = s.conv || (others_items == 0 && copies == 1)
                                ? estimate_gemm_us(s, grp.f16, c, plan_.ctx)
                                : round_robin_us(copies * gemm_items(s, c) + others_items,
                                                 std::max(gemm_item_us(s, grp.f16, c), others_item_us), plan_.ctx);
          if (us < best * 0.97) {
            best = us;
            grp.gemm = c;
          }
        }
      }
    };
    choose(bk);
    if (best == 1e30 && bk > 0 && opt_.gemm_bk < 0) choose(0);  // BK 128 fits no tile of this context: the menu's
    if (best == 1e30)
      user_error(grp.anchor->describe(), ": no GEMM tile of the menu fits the context with",
                 opt_.gemm_stages > 0 ? str_cat(" --gemm-stages ", opt_.gemm_stages) : std::string(),
                 bk > 0 ? str_cat(" a k tile of ", bk) : std::string(), " (", plan_.ctx.threads, " threads, ",
                 plan_.ctx.smem_limit, " B shared memory)");
  }

  // Re-chooses the default schedules of GEMM groups that share a stage with other GEMM groups,
  // each against the others' current choice (two rounds settle the BERT-style Q/K/V stages).
  void choose_shared_stage_gemms() {
    for (const Stage& st : plan_.stages) {
      std::vector<int> gemms;
      for (int gid : st.groups) {
        const GroupKind k = plan_.groups[gid].kind;
        if (k == GroupKind::kGemm && !plan_.groups[gid].in_attention()) gemms.push_back(gid);  // dense GEMMs only (see estimate_gemm_us)
      }
      if (gemms.size() < 2) continue;
      // GEMMs of one problem (BERT's Q, K, V) start from the best common schedule. Chosen
      // alone, each took split-K 3; against each other's 72 items no single one could get the
      // stage back into one round of the grid (3 x 72 items on 132 blocks), although 3 x 24
      // unsplit items fit.
      const GemmProblem p0 = gemm_problem(plan_.groups[gemms[0]]);
      bool same = true;
      for (int gid : gemms) {
        const GemmProblem p = gemm_problem(plan_.groups[gid]);
        same = same && p.m == p0.m && p.n == p0.n && p.k == p0.k && p.batch == p0.batch && !p.conv &&
               plan_.groups[gid].f16 == plan_.groups[gemms[0]].f16;
      }
      if (same) {
        choose_gemm(plan_.groups[gemms[0]], 0, 0, static_cast<int>(gemms.size()));
        for (int gid : gemms) plan_.groups[gid].gemm = plan_.groups[gemms[0]].gemm;
      }
      for (int round = 0; round < 2; ++round) {
        for (int gid : gemms) {
          int64_t items = 0;
          double item_us = 0;
          for (int other : gemms) {
            if (other == gid) continue;
            const Group& o = plan_.groups[other];
            const GemmProblem op = gemm_problem(o);
            items += gemm_items(op, o.gemm);
            item_us = std::max(item_us, gemm_item_us(op, o.f16, o.gemm));
          }
          choose_gemm(plan_.groups[gid], items, item_us);
        }
      }
    }
  }

  // A tuned schedule for the group, if PlanOptions has a valid one for its signature.
  bool apply_override(Group& grp) {
    if (!opt_.signature) return false;
    grp.signature = opt_.signature(plan_, grp);
    auto it = opt_.schedules.find(grp.signature);
    if (it == opt_.schedules.end()) return false;
    if (grp.in_attention()) {
      grp.override_rejected = "the group is part of an attention group, whose tiles are fixed";
      return false;
    }
    const Schedule& o = it->second;
    const bool gemm_like = grp.kind == GroupKind::kGemm || grp.kind == GroupKind::kConvGemm;
    std::string why;
    if (o.kind != grp.kind) {
      why = str_cat("the schedule is for a ", group_kind_name(o.kind), " group, this is a ", group_kind_name(grp.kind), " group");
    } else if (gemm_like) {
      const GemmProblem p = gemm_problem(grp);
      why = gemm_schedule_problem(grp.f16, o.gemm, plan_.ctx, &p);
    } else if (grp.kind == GroupKind::kPointwise) {
      why = ilp_problem(o.pointwise.ilp);
    }
    if (!why.empty()) {
      grp.override_rejected = why;
      return false;
    }
    if (gemm_like) grp.gemm = o.gemm;
    if (grp.kind == GroupKind::kPointwise) grp.pointwise = o.pointwise;
    grp.tuned = true;
    return true;
  }

  void choose_schedules() {
    const int threads = plan_.ctx.threads;
    // Defaults first, all of them (so that a default never depends on another group's tuned
    // schedule), then the tuned schedules replace theirs.
    for (Group& grp : plan_.groups)
      if ((grp.kind == GroupKind::kGemm || grp.kind == GroupKind::kConvGemm) && !grp.in_attention()) choose_gemm(grp);
    choose_shared_stage_gemms();
    std::vector<bool> tuned(plan_.groups.size(), false);
    for (Group& grp : plan_.groups) tuned[grp.id] = apply_override(grp);
    for (Group& grp : plan_.groups) {
      const Value* out = grp.output;
      const double bytes = static_cast<double>(out->type.numel()) * dtype_size(plan_.dtype_of(out));
      switch (grp.kind) {
        case GroupKind::kGemm:
        case GroupKind::kConvGemm: {
          const GemmProblem p = gemm_problem(grp);
          grp.items = gemm_items(p, grp.gemm);
          grp.est_us = estimate_gemm_us(p, grp.f16, grp.gemm, plan_.ctx);
          if (grp.computes_stats >= 0) {
            plan_.ln_folds[grp.computes_stats].parts = static_cast<int>(ceil_div(p.n, grp.gemm.bn));
            grp.est_us += kRowStatsUs;
          }
          grp.smem_bytes = gemm_smem_bytes(grp.f16, grp.gemm.bm, grp.gemm.bn, grp.gemm.bk, grp.gemm.stages);
          break;
        }
        case GroupKind::kRows: {
          if (grp.folded_ln >= 0) {  // applied by its neighbours (LnFold)
            grp.items = 0;
            grp.est_us = 0;
            break;
          }
          const Shape& x = grp.anchor->inputs[0]->type.shape;
          int64_t len = row_length(*grp.anchor);
          int64_t rows = shape_numel(x) / len;
          grp.items = ceil_div(rows, threads / 32);
          grp.est_us = 3 * bytes / kBandwidth * 1e6 + 0.5;
          break;
        }
        case GroupKind::kPointwise: {
          const PointwiseProblem p = pointwise_problem(plan_, grp);
          if (!tuned[grp.id]) grp.pointwise.ilp = default_ilp(p, plan_.ctx);
          grp.items = pointwise_items(p, grp.pointwise.ilp, plan_.ctx);
          grp.est_us = estimate_pointwise_us(p, grp.pointwise.ilp, plan_.ctx);
          break;
        }
      }
      plan_.ctx.smem_bytes = std::max(plan_.ctx.smem_bytes, grp.smem_bytes);
    }
    for (Group& grp : plan_.groups) {
      if (grp.fused.empty()) continue;
      Group& pv = plan_.groups[grp.fused[1]];
      const GemmProblem a = gemm_problem(grp), b = gemm_problem(pv);
      grp.items = a.batch * ceil_div(a.m, grp.gemm.bm);
      const double item_us = ceil_div(a.n, grp.gemm.bn) * gemm_item_us(a, grp.f16, grp.gemm) + kAttentionRowsUs +
                             ceil_div(b.n, pv.gemm.bn) * gemm_item_us(b, pv.f16, pv.gemm);
      grp.est_us = round_robin_us(grp.items, item_us, plan_.ctx);
      for (int id : grp.fused) {
        plan_.groups[id].items = 0;
        plan_.groups[id].est_us = 0;
      }
    }
  }

  // fp16 GEMMs with constant 2-D weights (opt_.tile_weights; convolutions: tile_conv_weights)
  // read them packed tile by tile for their (final) schedule, one bulk copy per stage (KernelPlan::weight_tiles). Not the GEMMs that read a
  // folded LayerNorm (their weights are packed gamma-scaled) nor attention's (no weights).
  void tile_weights() {
    for (const Group& grp : plan_.groups) {
      if (!grp.f16 || grp.in_attention() || (grp.kind != GroupKind::kGemm && grp.kind != GroupKind::kConvGemm)) continue;
      const Node& n = *grp.anchor;
      const Value* w = n.input(1) ? plan_.root(n.inputs[1]) : nullptr;
      if (!w || !w->is_constant() || plan_.ln_fold_of_gemm.count(&n)) continue;
      const bool conv = grp.kind == GroupKind::kConvGemm;
      if (!(conv ? opt_.tile_conv_weights : opt_.tile_weights)) continue;
      if (!conv && n.op == OpKind::kMatMul && n.inputs[1]->type.rank() != 2) continue;
      const GemmSchedule& s = grp.gemm;
      plan_.weight_tiles[&n] = str_cat("@t", conv ? s.bm : s.bn, "x", s.bk);
    }
  }

  // Arena placement with reuse: a buffer is live from the stage that writes it to the last
  // stage that reads it; stages are separated by barriers, so a later stage may reuse it.
  void place_tensors() {
    // Graph inputs and outputs.
    for (size_t i = 0; i < g_.inputs.size(); ++i) plan_.placement[g_.inputs[i]] = {Placement::kInput, 0, static_cast<int>(i)};
    for (size_t i = 0; i < g_.outputs.size(); ++i) {
      const Value* r = plan_.root(g_.outputs[i]);
      if (!r->producer || plan_.placement.count(r))
        user_error("graph output '", g_.outputs[i]->name,
                   "' is an input, a constant or another output: the CUDA backend cannot write it yet");
      plan_.placement[r] = {Placement::kOutput, 0, static_cast<int>(i)};
    }
    // Constants: packed per use.
    for (const Group& grp : plan_.groups) {
      auto use = [&](const Node* n) {
        for (int i = 0; i < n->num_inputs(); ++i) {
          const Value* v = n->inputs[i] ? plan_.root(n->inputs[i]) : nullptr;
          if (!v || !v->is_constant()) continue;
          const std::string packing = plan_.packing(*n, i);
          pack(v, packing);
          if (packing.find("|ln") != std::string::npos) pack(v, "cd" + packing);
        }
      };
      use(grp.anchor);
      for (const Node* e : grp.epilogue) use(e);
    }
    // A folded LayerNorm's y is never stored: its readers read x, whose buffer also holds the
    // statistics (LnFold) and lives as long as they do.
    auto source = [&](const Value* v) {
      v = plan_.root(v);
      auto it = plan_.ln_fold_of_y.find(v);
      return it == plan_.ln_fold_of_y.end() ? v : plan_.ln_folds[it->second].x;
    };
    std::map<const Value*, size_t> stats_bytes;  // x -> bytes of its statistics
    for (const LnFold& f : plan_.ln_folds)
      stats_bytes[f.x] = align_up(static_cast<size_t>(f.rows) * 8, 256) + align_up(static_cast<size_t>(f.rows) * f.parts * 8, 256);
    // Intermediates written by a group and read by later stages.
    struct Live {
      const Value* v;
      int first, last;
      size_t bytes;
    };
    std::vector<Live> live;
    std::map<const Value*, size_t> index;
    auto written = [&](const Value* v, int stage) {
      v = plan_.root(v);
      if (plan_.placement.count(v) || v->is_constant() || index.count(v) || plan_.ln_fold_of_y.count(v)) return;
      index[v] = live.size();
      const size_t extra = stats_bytes.count(v) ? stats_bytes[v] : 0;
      live.push_back({v, stage, stage, align_up(static_cast<size_t>(v->type.numel()) * dtype_size(plan_.dtype_of(v)), 256) + extra});
    };
    for (const Group& grp : plan_.groups) {
      if (grp.folded_ln >= 0) continue;  // writes nothing
      for (const Value* out : grp.anchor->outputs)
        if (out) written(out, grp.stage);
      if (!grp.epilogue.empty()) written(grp.output, grp.stage);
    }
    for (const Group& grp : plan_.groups) {
      auto read = [&](const Node* n) {
        for (const Value* in : n->inputs) {
          if (!in) continue;
          auto it = index.find(source(in));
          if (it != index.end()) live[it->second].last = std::max(live[it->second].last, grp.stage);
        }
      };
      read(grp.anchor);
      for (const Node* e : grp.epilogue) read(e);
    }
    // Split-K workspaces (gemm.cuh: splits - 1 partial tiles per output tile) and tile counters
    // (zero between uses: the reducer resets its counter), so GEMMs of different stages share
    // one region; those of one stage sit side by side.
    size_t ws_bytes = 0, counter_words = 0;
    for (const Stage& st : plan_.stages) {
      size_t ws = 0, cw = 0;
      for (int gid : st.groups) {
        Group& grp = plan_.groups[gid];
        if (grp.gemm.splits <= 1 || (grp.kind != GroupKind::kGemm && grp.kind != GroupKind::kConvGemm)) continue;
        GemmProblem s = gemm_problem(grp);
        grp.workspace_offset = ws;
        grp.counters_offset = cw;
        const size_t tiles = static_cast<size_t>(s.batch * ceil_div(s.m, grp.gemm.bm) * ceil_div(s.n, grp.gemm.bn));
        ws += align_up(tiles * (grp.gemm.splits - 1) * grp.gemm.bm * grp.gemm.bn * 4, 256);
        cw += tiles;
      }
      for (int gid : st.groups) {  // a folded LayerNorm's row panel counters (LnFold)
        const Group& grp = plan_.groups[gid];
        if (grp.computes_stats < 0) continue;
        const GemmProblem s = gemm_problem(grp);
        plan_.ln_folds[grp.computes_stats].counters_offset = kBarrierWords + cw;
        cw += static_cast<size_t>(s.batch * ceil_div(s.m, grp.gemm.bm));
      }
      ws_bytes = std::max(ws_bytes, ws);
      counter_words = std::max(counter_words, cw);
    }
    for (Group& grp : plan_.groups) grp.counters_offset += kBarrierWords;
    plan_.sync_words = kBarrierWords + counter_words;
    // First-fit over stages.
    std::sort(live.begin(), live.end(), [](const Live& a, const Live& b) { return a.first < b.first || (a.first == b.first && a.bytes > b.bytes); });
    struct Block {
      size_t off, bytes;
      int last;
    };
    std::vector<Block> used;
    size_t top = ws_bytes;  // workspace first
    for (const Live& l : live) {
      size_t off = SIZE_MAX;
      // Candidate offsets: the workspace end and the end of each block; take the first that
      // overlaps no block still live at l.first.
      std::vector<size_t> candidates = {ws_bytes};
      for (const Block& b : used) candidates.push_back(b.off + b.bytes);
      std::sort(candidates.begin(), candidates.end());
      for (size_t c : candidates) {
        bool clash = false;
        for (const Block& b : used)
          if (b.last >= l.first && c < b.off + b.bytes && b.off < c + l.bytes) clash = true;
        if (!clash) {
          off = c;
          break;
        }
      }
      used.push_back({off, l.bytes, l.last});
      plan_.placement[l.v] = {Placement::kArena, off, 0};
      for (LnFold& f : plan_.ln_folds) {
        if (f.x != l.v) continue;
        f.stats_offset = off + align_up(static_cast<size_t>(f.x->type.numel()) * dtype_size(plan_.dtype_of(f.x)), 256);
        f.partial_offset = f.stats_offset + align_up(static_cast<size_t>(f.rows) * 8, 256);
      }
      top = std::max(top, off + l.bytes);
    }
    plan_.arena_bytes = std::max<size_t>(top, 256);
  }

  void pack(const Value* v, const std::string& packing) {
    for (const auto& c : plan_.constants)
      if (c.value == v && c.packing == packing) return;
    size_t bytes = align_up(static_cast<size_t>(v->type.numel()) * dtype_size(plan_.dtype_of(v)), 256);
    if (packing.rfind("cd", 0) == 0)  // float2 (c, d) per GEMM column (LnFold)
      bytes = align_up(static_cast<size_t>(v->type.numel() / plan_.ln_folds[ln_fold_index(packing)].len) * 8, 256);
    TilePacking t;
    if (parse_tile_packing(packing, &t)) {
      int64_t rows, k;
      tile_matrix(*v, t, &rows, &k);
      bytes = align_up(static_cast<size_t>(tile_packed_elems(rows, k, t.rows, t.bk)) * dtype_size(plan_.dtype_of(v)), 256);
    }
    plan_.constants.push_back({v, packing, plan_.weights_bytes, bytes});
    plan_.weights_bytes += bytes;
    plan_.placement[v] = {Placement::kWeights, 0, 0};
  }

  const Graph& g_;
  PlanOptions opt_;
  KernelPlan plan_;
  std::map<const Value*, int> uses_;
  std::set<const Value*> graph_output_roots_;
  std::set<const Value*> multi_output_;
  std::map<const Value*, int> producer_group_;
};

}  // namespace

KernelPlan plan_kernel(const Graph& graph, const PlanOptions& options) { return Planner(graph, options).run(); }

int ln_fold_index(const std::string& packing) {
  const size_t p = packing.find("|ln");
  MONO_CHECK(p != std::string::npos, "packing '", packing, "' names no folded LayerNorm");
  return std::stoi(packing.substr(p + 3));
}

namespace {
// Weights of a GEMM that reads a folded LayerNorm's output (plan.h LnFold). Packing "nk|lnF":
// W [K][N] -> W' [N][K], W'[n][k] = W[k][n] gamma[k]; "|lnF": W [N][K] (Gemm transB) -> W'
// [N][K]; "cd" + either: float2 per column n, c[n] = sum_k W'[n][k] as stored (rounded to the
// device dtype, so that acc - mean c cancels exactly what the GEMM summed), d[n] = sum_k beta[k] W.
void pack_ln_folded(const KernelPlan& plan, const KernelPlan::PackedConstant& c, unsigned char* dst) {
  const LnFold& f = plan.ln_folds[ln_fold_index(c.packing)];
  const Node& ln = *plan.groups[f.ln_group].anchor;
  const bool cd = c.packing.rfind("cd", 0) == 0;
  const std::string base = c.packing.substr(cd ? 2 : 0, c.packing.find("|ln") - (cd ? 2 : 0));
  const bool kn = base == "nk";  // the model's W is [K][N]
  const Tensor w = c.value->constant->cast(DType::kF32);
  const Tensor gamma = plan.root(ln.inputs[1])->constant->cast(DType::kF32);
  const bool has_beta = ln.input(2) != nullptr;
  const Tensor beta = has_beta ? plan.root(ln.inputs[2])->constant->cast(DType::kF32) : Tensor();
  const int64_t K = f.len, N = w.numel() / K;
  const float* wp = w.data<float>();
  const float* gp = gamma.data<float>();
  std::vector<float> scaled(static_cast<size_t>(N * K));  // [N][K]
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) scaled[n * K + k] = (kn ? wp[k * N + n] : wp[n * K + k]) * gp[k];
  const Tensor packed = Tensor::from_floats({N, K}, scaled, DType::kF32).cast(plan.dtype_of(c.value));
  if (!cd) {
    std::memcpy(dst, packed.raw(), packed.nbytes());
    return;
  }
  const Tensor rounded = packed.cast(DType::kF32);
  const float* rp = rounded.data<float>();
  std::vector<float> out(static_cast<size_t>(2 * N));
  for (int64_t n = 0; n < N; ++n) {
    double cs = 0, ds = 0;
    for (int64_t k = 0; k < K; ++k) {
      cs += rp[n * K + k];
      if (has_beta) ds += static_cast<double>(beta.data<float>()[k]) * (kn ? wp[k * N + n] : wp[n * K + k]);
    }
    out[2 * n] = static_cast<float>(cs);
    out[2 * n + 1] = static_cast<float>(ds);
  }
  std::memcpy(dst, out.data(), out.size() * sizeof(float));
}
}  // namespace

std::vector<unsigned char> pack_weights(const KernelPlan& plan) {
  std::vector<unsigned char> blob(plan.weights_bytes, 0);
  for (const auto& c : plan.constants) {
    if (c.packing.find("|ln") != std::string::npos) {
      pack_ln_folded(plan, c, blob.data() + c.offset);
      continue;
    }
    Tensor t = c.value->constant->cast(plan.dtype_of(c.value));
    TilePacking tp;
    if (parse_tile_packing(c.packing, &tp)) {  // tile by tile (tile_pack.h); padding stays zero
      int64_t rows, k;
      tile_matrix(*c.value, tp, &rows, &k);
      const size_t es = dtype_size(t.dtype());
      const unsigned char* src = static_cast<const unsigned char*>(t.raw());
      unsigned char* dst = blob.data() + c.offset;
      for_each_tile_packed(rows, k, tp.rows, tp.bk, [&](size_t i, int64_t r, int64_t kk) {
        std::memcpy(dst + i * es, src + static_cast<size_t>(tp.nk ? kk * rows + r : r * k + kk) * es, es);
      });
      continue;
    }
    if (c.packing == "nk") {
      // [K][N] -> [N][K] (B operands of GEMMs read K-contiguous).
      const Shape& s = t.shape();
      const int64_t k = s[0], n = s[1];
      const size_t es = dtype_size(t.dtype());
      const unsigned char* src = static_cast<const unsigned char*>(t.raw());
      unsigned char* dst = blob.data() + c.offset;
      for (int64_t i = 0; i < k; ++i)
        for (int64_t j = 0; j < n; ++j) std::memcpy(dst + (j * k + i) * es, src + (i * n + j) * es, es);
    } else if (t.nbytes() > 0) {
      std::memcpy(blob.data() + c.offset, t.raw(), t.nbytes());
    }
  }
  return blob;
}

void print_plan(std::ostream& os, const Graph& graph, const KernelPlan& plan) {
  const KernelContext& c = plan.ctx;
  os << "kernel plan for " << graph.name << " (" << (plan.precision == Precision::kF16 ? "fp16" : "fp32") << ", sm_"
     << c.sm_arch << ")\n";
  os << "context: " << c.threads << " threads/block, " << c.blocks_per_sm << " block/SM x " << c.sms << " SMs = grid "
     << c.grid() << ", dynamic shared memory " << c.smem_bytes << " B (budget " << c.smem_limit << " B), register cap "
     << c.register_cap() << "\n";
  int tuned = 0, rejected = 0;
  for (const Group& g : plan.groups) tuned += g.tuned, rejected += !g.override_rejected.empty();
  os << "schedules: " << tuned << " tuned, " << plan.groups.size() - tuned << " default (untuned)";
  if (rejected) os << ", " << rejected << " tuned schedules rejected";
  os << "\n";
  if (plan.precision == Precision::kF16)
    os << "precision: fp16 storage, fp32 accumulation; " << plan.fp32_fallbacks
       << " float tensors kept in fp32 (calibrated range outside fp16)\n";
  os << "memory: weights " << plan.weights_bytes << " B (" << plan.constants.size() << " packed constants), arena "
     << plan.arena_bytes << " B, sync " << plan.sync_words << " words\n";
  double total = 0;
  for (size_t s = 0; s < plan.stages.size(); ++s) {
    os << "stage " << s << ":\n";
    for (int gid : plan.stages[s].groups) {
      const Group& g = plan.groups[gid];
      if (g.fused_into >= 0) continue;  // printed with its head
      if (!g.fused.empty()) {
        const Group& sm = plan.groups[g.fused[0]];
        const Group& pv = plan.groups[g.fused[1]];
        os << "  group " << g.id << " [attention] " << g.nodes() << " + " << sm.nodes() << " + " << pv.nodes() << "\n";
        os << "    -> " << pv.output->type.str() << ", " << g.items << " work items (batch x " << g.gemm.bm
           << " query rows), S = QK: " << g.gemm.str() << ", O = PV: " << pv.gemm.str() << (g.f16 ? ", fp16 mma" : ", fp32 ffma")
           << ", est " << format_us(g.est_us) << ", fixed tiles\n";
        continue;
      }
      os << "  group " << g.id << " [" << group_kind_name(g.kind) << "] " << g.nodes() << "\n";
      if (g.folded_ln >= 0) {
        const LnFold& f = plan.ln_folds[g.folded_ln];
        os << "    -> " << g.output->type.str() << " never stored: folded (row statistics after group " << f.producer
           << "'s epilogue, normalisation applied by the readers of its output)\n";
        continue;
      }
      os << "    -> " << g.output->type.str() << ", " << g.items << " work items";
      if (g.kind == GroupKind::kGemm || g.kind == GroupKind::kConvGemm)
        os << ", " << g.gemm.str() << (g.f16 ? ", fp16 mma" : ", fp32 ffma");
      if (g.kind == GroupKind::kPointwise) os << ", ilp " << g.pointwise.ilp;
      if (g.computes_stats >= 0) os << ", + row statistics of group " << plan.ln_folds[g.computes_stats].ln_group;
      os << ", est " << format_us(g.est_us) << ", " << (g.tuned ? "tuned" : "default (untuned)") << "\n";
      if (!g.override_rejected.empty()) os << "    tuned schedule rejected: " << g.override_rejected << "\n";
    }
    double stage_us = 0;
    for (int gid : plan.stages[s].groups) stage_us = std::max(stage_us, plan.groups[gid].est_us);
    total += stage_us;
    if (s + 1 < plan.stages.size()) {
      os << "  -- grid barrier --\n";
      total += kBarrierUs;
    }
  }
  os << "total: " << plan.groups.size() << " groups in " << plan.stages.size() << " stages, "
     << (plan.stages.empty() ? 0 : plan.stages.size() - 1) << " barriers; estimated " << format_us(total)
     << " (cost model, not a measurement)\n";
}

}  // namespace mono
