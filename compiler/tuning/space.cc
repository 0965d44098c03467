#include "compiler/tuning/space.h"

#include <algorithm>
#include <map>
#include <ostream>

#include "compiler/codegen/cost_model.h"
#include "compiler/codegen/support.h"
#include "compiler/support/error.h"
#include "compiler/tuning/signature.h"

namespace mono::tuning {

namespace {

std::string dims(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += str_cat(i ? "," : "", s[i]);
  return out + "]";
}

std::string describe(const KernelPlan& plan, const Group& g) {
  std::string s = op_name(g.anchor->op);
  for (const Node* e : g.epilogue) s += str_cat(" + ", op_name(e->op));
  return str_cat(s, " -> ", dtype_name(plan.dtype_of(g.output)), dims(g.output->type.shape));
}

bool gemm_like(GroupKind k) { return k == GroupKind::kGemm || k == GroupKind::kConvGemm; }

}  // namespace

std::vector<GemmSchedule> tuning_gemm_tiles(bool f16, const KernelContext& ctx) {
  // The planner's default menu first (so ties keep its order), then larger and smaller tiles.
  std::vector<GemmSchedule> out = default_gemm_tiles(f16, ctx);
  if (!f16) return out;
  struct Tile { int bm, bn, bk, stages; };
  int wm, wn;
  gemm_warps(ctx.threads, &wm, &wn);
  for (const Tile& t : {Tile{64, 64, 32, 3}, Tile{128, 128, 32, 3}, Tile{128, 64, 32, 3}}) {
    GemmSchedule s{t.bm, t.bn, t.bk, wm, wn, t.stages, 1};
    if (gemm_schedule_problem(f16, s, ctx, nullptr).empty()) out.push_back(s);
  }
  return out;
}

std::vector<GemmSchedule> tuning_wgmma_tiles(const KernelContext& ctx) {
  // The wgmma tiles of the lone-tile benchmark (bench/gemm_tiles.sh, bench/RESULTS.md issue 19):
  // 64x64x128 fastest at N = 2304..3072, 64x32x128 at N = 768, 64x64x64 deep at M = 197; and
  // the planner's 96-wide and 128x128 tiles (cost_model.h wide_wgmma_tiles).
  struct Tile { int bm, bn, bk, stages; };
  std::vector<GemmSchedule> out;
  for (const Tile& t : {Tile{64, 64, 128, 4}, Tile{64, 32, 128, 4}, Tile{64, 64, 64, 6}, Tile{64, 128, 64, 3},
                        Tile{128, 64, 128, 4}, Tile{64, 96, 128, 4}, Tile{128, 128, 128, 3}}) {
    const GemmSchedule s = wgmma_schedule(GemmSchedule{t.bm, t.bn, t.bk, 1, 1, t.stages, 1}, ctx);
    if (gemm_schedule_problem(true, s, ctx, nullptr).empty()) out.push_back(s);
    // And in k groups where they fit (the other warp layout).
    const GemmSchedule k = wgmma_k_grouped(s, ctx);
    if (k != s) out.push_back(k);
  }
  return out;
}

std::vector<int> tuning_ilp_factors() { return {1, 2, 4, 8}; }

void keep_lowest_estimates(std::vector<Candidate>* candidates, int most) {
  if (most <= 0) return;
  std::vector<Candidate> kept;
  int others = 0;
  for (const Candidate& c : *candidates)  // already in estimate order (group_candidates)
    if (c.is_default || others++ < most - 1) kept.push_back(c);
  *candidates = std::move(kept);
}

std::vector<Candidate> group_candidates(const KernelPlan& plan, const Group& g, double prune_factor, int* before) {
  const KernelContext& ctx = plan.ctx;
  std::vector<Candidate> all;
  Candidate def;
  def.schedule = g.schedule();
  // The default's estimate from the same functions as every other candidate's (for rows
  // groups, which have no knobs, the planner's).
  def.est_us = g.est_us;
  if (gemm_like(g.kind)) def.est_us = estimate_gemm_us(gemm_problem(g), g.f16, g.gemm, ctx);
  if (g.kind == GroupKind::kPointwise) def.est_us = estimate_pointwise_us(pointwise_problem(plan, g), g.pointwise.ilp, ctx);
  def.items = g.items;
  def.smem_bytes = g.smem_bytes;
  def.is_default = true;
  auto add = [&](Candidate c) {
    if (c.schedule == def.schedule) return;  // the default is added once, below
    all.push_back(c);
  };
  if (gemm_like(g.kind)) {
    const GemmProblem p = gemm_problem(g);
    std::vector<GemmSchedule> tiles = tuning_gemm_tiles(g.f16, ctx);
    append_new_tiles(&tiles, fitted_gemm_tiles(p, g.f16, ctx));
    append_new_tiles(&tiles, tall_gemm_tiles(p, g.f16, ctx));
    // The wgmma tiles where the operands allow (a job's fragment copies such an A into its
    // arena, fragment.h "arena_inputs", so the worker times them on wgmma too).
    if (wgmma_operands(plan, g, nullptr))
      for (const GemmSchedule& t : tuning_wgmma_tiles(ctx)) tiles.push_back(t);
    for (const GemmSchedule& t : tiles) {
      for (int splits : split_k_factors(p.k, t.bk)) {
        Candidate c;
        c.schedule.kind = g.kind;
        c.schedule.gemm = t;
        c.schedule.gemm.splits = splits;
        c.est_us = estimate_gemm_us(p, g.f16, c.schedule.gemm, ctx);
        c.items = gemm_items(p, c.schedule.gemm);
        c.smem_bytes = gemm_smem_bytes(g.f16, t.bm, t.bn, t.bk, t.stages);
        add(c);
      }
    }
  } else if (g.kind == GroupKind::kPointwise) {
    // A strip convolution's heights: the even cuts of at most 1, 2, 4 and 8 rows.
    std::vector<int> strips = {0};
    if (g.pointwise.strip > 0) {
      strips.clear();
      for (int most : {1, 2, 4, 8}) {
        const int h = even_strip_height(g.anchor->outputs[0]->type.shape[2], most);
        if (std::find(strips.begin(), strips.end(), h) == strips.end()) strips.push_back(h);
      }
    }
    // A GlobalAveragePool's warps per output: 1, 2, 4 and 8 where they divide a block.
    std::vector<int> warps = {g.pointwise.warps};
    if (g.pointwise.warps > 0) {
      warps.clear();
      for (int w : {1, 2, 4, 8})
        if (pool_warps_problem(*g.anchor, w, ctx).empty()) warps.push_back(w);
    }
    for (int strip : strips)
      for (int w : warps) {
        Group h = g;
        h.pointwise.strip = strip;
        h.pointwise.warps = w;
        const PointwiseProblem p = pointwise_problem(plan, h);
        for (int ilp : tuning_ilp_factors()) {
          Candidate c;
          c.schedule.kind = g.kind;
          c.schedule.pointwise.ilp = ilp;
          c.schedule.pointwise.strip = strip;
          c.schedule.pointwise.warps = w;
          c.est_us = estimate_pointwise_us(p, ilp, ctx);
          c.items = pointwise_items(p, ilp, ctx);
          c.smem_bytes = pointwise_smem_bytes(plan, g, w);
          add(c);
        }
      }
  }
  // rows groups: no knobs, the default is the only candidate.
  all.insert(all.begin(), def);
  if (before) *before = static_cast<int>(all.size());
  std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.est_us < b.est_us; });
  if (prune_factor > 0 && gemm_like(g.kind)) {
    const double best = all.front().est_us;
    all.erase(std::remove_if(all.begin(), all.end(),
                             [&](const Candidate& c) { return !c.is_default && c.est_us > prune_factor * best; }),
              all.end());
  }
  return all;
}

TuningSpace enumerate_space(const Graph& graph, const PlanOptions& options, const SpaceOptions& opts) {
  TuningSpace space;
  space.contexts = opts.contexts;
  bool first = true;
  for (const Context& ctx : opts.contexts) {
    PlanOptions o = options;
    o.schedules.clear();
    use_context(&o, ctx);
    enable_signatures(&o);
    const KernelPlan plan = plan_kernel(graph, o);
    std::map<std::string, size_t> task_of;  // signature -> index into space.tasks
    for (const Group& g : plan.groups) {
      if (!tunable(plan, g)) continue;  // fixed tiles, no code of its own, or no fragment that plans as it does (plan.h)
      auto it = task_of.find(g.signature);
      if (it != task_of.end()) {
        space.tasks[it->second].groups.push_back(g.id);
        continue;
      }
      TuningTask t;
      t.signature = g.signature;
      t.signature_text = group_signature_text(plan, g);
      t.kind = g.kind;
      t.context = ctx;
      t.groups = {g.id};
      t.description = describe(plan, g);
      t.default_schedule = g.schedule();
      t.default_est_us = g.est_us;
      t.candidates = group_candidates(plan, g, opts.prune_factor, &t.candidates_before);
      keep_lowest_estimates(&t.candidates, opts.max_candidates);
      task_of[g.signature] = space.tasks.size();
      space.tasks.push_back(std::move(t));
    }
    for (const Stage& st : plan.stages) {
      SharedStage ss;
      ss.context = ctx;
      ss.grid = plan.ctx.grid();
      for (int gid : st.groups)
        if (tunable(plan, plan.groups[gid])) ss.signatures.push_back(plan.groups[gid].signature);
      if (ss.signatures.size() < 2) continue;
      std::sort(ss.signatures.begin(), ss.signatures.end());
      auto same = std::find_if(space.shared_stages.begin(), space.shared_stages.end(), [&](const SharedStage& o) {
        return o.context == ss.context && o.signatures == ss.signatures;
      });
      if (same != space.shared_stages.end()) ++same->count;
      else space.shared_stages.push_back(std::move(ss));
    }
    if (first) {
      space.groups_total = static_cast<int>(std::count_if(plan.groups.begin(), plan.groups.end(),
                                                          [&](const Group& g) { return tunable(plan, g); }));
      space.unique_signatures = static_cast<int>(task_of.size());
      first = false;
    }
  }
  return space;
}

SpaceSummary summarize(const TuningSpace& space) {
  SpaceSummary s;
  s.contexts = static_cast<int>(space.contexts.size());
  s.groups_total = space.groups_total;
  s.unique_signatures = space.unique_signatures;
  s.tasks = static_cast<int>(space.tasks.size());
  for (const TuningTask& t : space.tasks) {
    s.candidates_before += t.candidates_before;
    s.candidates_after += static_cast<int64_t>(t.candidates.size());
  }
  return s;
}

nlohmann::json task_to_json(const TuningTask& t) {
  nlohmann::json cands = nlohmann::json::array();
  for (const Candidate& c : t.candidates)
    cands.push_back({{"schedule", schedule_to_json(c.schedule)}, {"est_us", c.est_us}, {"items", c.items},
                     {"smem_bytes", c.smem_bytes}, {"default", c.is_default}});
  return {{"signature", t.signature},
          {"signature_version", kSignatureVersion},
          {"kind", group_kind_name(t.kind)},
          {"context", context_to_json(t.context)},
          {"groups", t.groups},
          {"description", t.description},
          {"default", schedule_to_json(t.default_schedule)},
          {"default_est_us", t.default_est_us},
          {"candidates_before_pruning", t.candidates_before},
          {"candidates", cands},
          {"estimates", "cost model, not measurements"}};
}

void print_space(std::ostream& os, const TuningSpace& space) {
  const SpaceSummary s = summarize(space);
  os << "tuning space: " << s.contexts << " contexts x " << s.unique_signatures << " unique group signatures ("
     << s.groups_total << " groups before dedup) = " << s.tasks << " tasks\n";
  os << "  candidates: " << s.candidates_before << " before pruning, " << s.candidates_after
     << " after (cost-model estimates, not measurements; the default schedule is always kept)\n";
  for (size_t i = 0; i < space.contexts.size(); ++i)
    os << "  context " << i << ": " << space.contexts[i].str() << "\n";
  // Per signature, its counts in each context.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const TuningTask*>> by_sig;
  for (const TuningTask& t : space.tasks) {
    if (!by_sig.count(t.signature)) order.push_back(t.signature);
    by_sig[t.signature].push_back(&t);
  }
  for (const std::string& sig : order) {
    const std::vector<const TuningTask*>& ts = by_sig[sig];
    const TuningTask& t = *ts.front();
    os << "  signature " << sig << " [" << group_kind_name(t.kind) << "] x" << t.groups.size() << " groups: " << t.description
       << "\n    candidates before -> after pruning:";
    for (size_t i = 0; i < ts.size(); ++i) {
      size_t ci = std::find(space.contexts.begin(), space.contexts.end(), ts[i]->context) - space.contexts.begin();
      os << (i ? "," : "") << " context " << ci << ": " << ts[i]->candidates_before << " -> " << ts[i]->candidates.size();
    }
    os << "\n";
  }
}

std::map<std::string, Schedule> menu_schedules(const Graph& graph, const PlanOptions& base, const Context& ctx,
                                               int tile, bool split, int ilp) {
  PlanOptions o = base;
  use_context(&o, ctx);
  enable_signatures(&o);
  const KernelPlan plan = plan_kernel(graph, o);
  std::map<std::string, Schedule> out;
  int next = 0;
  for (const Group& grp : plan.groups) {
    if (out.count(grp.signature) || !tunable(plan, grp)) continue;
    Schedule s = grp.schedule();
    if (grp.kind == GroupKind::kGemm || grp.kind == GroupKind::kConvGemm) {
      const std::vector<GemmSchedule> menu = tuning_gemm_tiles(grp.f16, plan.ctx);
      s.gemm = menu[(tile >= 0 ? tile : next++) % menu.size()];
      if (split) s.gemm.splits = split_k_factors(gemm_problem(grp).k, s.gemm.bk).back();
    } else if (grp.kind == GroupKind::kPointwise) {
      s.pointwise.ilp = ilp;
    }
    out[grp.signature] = s;
  }
  return out;
}

}  // namespace mono::tuning
