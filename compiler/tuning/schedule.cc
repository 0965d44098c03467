#include "compiler/tuning/schedule.h"

#include <algorithm>
#include <set>

#include "compiler/support/error.h"
#include "compiler/tuning/signature.h"

namespace mono::tuning {

using nlohmann::json;

namespace {

bool kind_from_name(const std::string& name, GroupKind* out) {
  for (GroupKind k : {GroupKind::kGemm, GroupKind::kConvGemm, GroupKind::kRows, GroupKind::kPointwise})
    if (name == group_kind_name(k)) {
      *out = k;
      return true;
    }
  return false;
}

// Reads the object's integer fields; unknown keys and missing or non-integer fields are errors.
class Fields {
 public:
  Fields(const json& j, const char* what) : j_(j), what_(what) {
    if (!j.is_object()) user_error(what, ": expected a JSON object, got ", j.dump());
  }
  int get(const std::string& key) {
    seen_.insert(key);
    auto it = j_.find(key);
    if (it == j_.end()) user_error(what_, ": missing \"", key, "\" in ", j_.dump());
    if (!it->is_number_integer()) user_error(what_, ": \"", key, "\" must be an integer in ", j_.dump());
    const int64_t v = it->get<int64_t>();
    if (v < -(int64_t{1} << 30) || v > (int64_t{1} << 30)) user_error(what_, ": \"", key, "\" is out of range in ", j_.dump());
    return static_cast<int>(v);
  }
  int get_or(const std::string& key, int fallback) { return j_.contains(key) ? get(key) : (seen_.insert(key), fallback); }
  void skip(const std::string& key) { seen_.insert(key); }
  void done() const {
    for (auto it = j_.begin(); it != j_.end(); ++it)
      if (!seen_.count(it.key())) user_error(what_, ": unknown field \"", it.key(), "\" in ", j_.dump());
  }

 private:
  const json& j_;
  const char* what_;
  std::set<std::string> seen_;
};

json parse_text(const std::string& text, const char* what) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    user_error(what, ": not JSON: ", e.what());
  }
}

}  // namespace

// ---- Context ------------------------------------------------------------------------------

static int derived_register_cap(int threads, int blocks_per_sm) {
  KernelContext k;
  k.threads = threads;
  k.blocks_per_sm = blocks_per_sm;
  return k.register_cap();
}

std::string Context::problem() const {
  if (threads < 32 || threads > 1024 || threads % 32) return str_cat("threads ", threads, " is not a multiple of 32 in 32..1024");
  if (blocks_per_sm < 1 || blocks_per_sm > 32) return str_cat("blocks_per_sm ", blocks_per_sm, " is not in 1..32");
  if (threads * blocks_per_sm > 2048)
    return str_cat(blocks_per_sm, " blocks of ", threads, " threads exceed an SM's 2048 threads");
  const int budget = KernelContext::smem_budget(blocks_per_sm);
  if (smem_bytes < 0 || smem_bytes > budget)
    return str_cat("smem_bytes ", smem_bytes, " is not in 0..", budget, " (227 KB / ", blocks_per_sm, " blocks)");
  if (register_cap != derived_register_cap(threads, blocks_per_sm))
    return str_cat("register_cap ", register_cap, " is not the one of ", threads, " threads x ", blocks_per_sm, " blocks (",
                   derived_register_cap(threads, blocks_per_sm), ")");
  return "";
}

Context Context::make(int threads, int blocks_per_sm) {
  Context c;
  c.threads = threads;
  c.blocks_per_sm = blocks_per_sm;
  c.smem_bytes = blocks_per_sm >= 1 ? KernelContext::smem_budget(blocks_per_sm) : 0;
  c.register_cap = threads > 0 && blocks_per_sm > 0 ? derived_register_cap(threads, blocks_per_sm) : 0;
  if (std::string why = c.problem(); !why.empty()) user_error("context: ", why);
  return c;
}

std::string Context::key() const {
  return str_cat("threads=", threads, ",blocks_per_sm=", blocks_per_sm, ",smem=", smem_bytes);
}

std::string Context::str() const {
  return str_cat(threads, " threads x ", blocks_per_sm, blocks_per_sm == 1 ? " block/SM, " : " blocks/SM, ", smem_bytes,
                 " B shared memory, ", register_cap, " registers");
}

bool Context::operator==(const Context& o) const {
  return threads == o.threads && blocks_per_sm == o.blocks_per_sm && smem_bytes == o.smem_bytes &&
         register_cap == o.register_cap;
}

std::vector<Context> default_contexts() { return {Context::make(256, 1), Context::make(256, 2)}; }

json context_to_json(const Context& c) {
  return json{{"threads", c.threads}, {"blocks_per_sm", c.blocks_per_sm}, {"smem_bytes", c.smem_bytes},
              {"register_cap", c.register_cap}};
}

Context context_from_json(const json& j) {
  Fields f(j, "context");
  Context c = Context::make(f.get("threads"), f.get("blocks_per_sm"));
  c.smem_bytes = f.get_or("smem_bytes", c.smem_bytes);
  c.register_cap = f.get_or("register_cap", c.register_cap);
  f.done();
  if (std::string why = c.problem(); !why.empty()) user_error("context: ", why);
  return c;
}

KernelConfig kernel_config_from_json(const json& j) {
  if (!j.is_object() || !j.contains("context") || !j.contains("schedules") || !j.at("schedules").is_object())
    user_error("a whole-kernel configuration needs \"context\" and \"schedules\" (an object), got ", j.dump().substr(0, 200));
  KernelConfig c;
  c.context = context_from_json(j.at("context"));
  for (const auto& [sig, sched] : j.at("schedules").items()) c.schedules[sig] = schedule_from_json(sched);
  return c;
}

std::string context_to_string(const Context& c) { return context_to_json(c).dump(); }
Context context_from_string(const std::string& text) { return context_from_json(parse_text(text, "context")); }

// ---- Schedule -----------------------------------------------------------------------------

json schedule_to_json(const Schedule& s) {
  json j = {{"kind", group_kind_name(s.kind)}};
  switch (s.kind) {
    case GroupKind::kGemm:
    case GroupKind::kConvGemm:
      j["bm"] = s.gemm.bm, j["bn"] = s.gemm.bn, j["bk"] = s.gemm.bk;
      j["warps_m"] = s.gemm.warps_m, j["warps_n"] = s.gemm.warps_n;
      j["stages"] = s.gemm.stages, j["split_k"] = s.gemm.splits;
      if (s.gemm.wgmma) j["wgmma"] = 1;  // absent: mma.sync (the key keeps older records' text)
      break;
    case GroupKind::kPointwise:
      j["ilp"] = s.pointwise.ilp;
      if (s.pointwise.strip) j["strip"] = s.pointwise.strip;  // absent: not a strip convolution
      if (s.pointwise.warps) j["warps"] = s.pointwise.warps;  // absent: not a GlobalAveragePool
      break;
    case GroupKind::kRows:
      break;
  }
  return j;
}

Schedule schedule_from_json(const json& j) {
  if (!j.is_object()) user_error("schedule: expected a JSON object, got ", j.dump());
  auto kind = j.find("kind");
  if (kind == j.end() || !kind->is_string()) user_error("schedule: missing \"kind\" in ", j.dump());
  Schedule s;
  if (!kind_from_name(kind->get<std::string>(), &s.kind))
    user_error("schedule: \"kind\" ", kind->dump(), " is not one of: gemm, conv-gemm, rows, pointwise");
  Fields f(j, "schedule");
  f.skip("kind");
  switch (s.kind) {
    case GroupKind::kGemm:
    case GroupKind::kConvGemm:
      s.gemm.bm = f.get("bm"), s.gemm.bn = f.get("bn"), s.gemm.bk = f.get("bk");
      s.gemm.warps_m = f.get("warps_m"), s.gemm.warps_n = f.get("warps_n");
      s.gemm.stages = f.get("stages"), s.gemm.splits = f.get("split_k");
      if (const int w = f.get_or("wgmma", 0); w == 0 || w == 1) s.gemm.wgmma = w == 1;
      else user_error("schedule: \"wgmma\" must be 0 or 1, got ", w);
      break;
    case GroupKind::kPointwise:
      s.pointwise.ilp = f.get("ilp");
      s.pointwise.strip = f.get_or("strip", 0);
      s.pointwise.warps = f.get_or("warps", 0);
      break;
    case GroupKind::kRows:
      break;
  }
  f.done();
  return s;
}

std::string schedule_to_string(const Schedule& s) { return schedule_to_json(s).dump(); }
Schedule schedule_from_string(const std::string& text) { return schedule_from_json(parse_text(text, "schedule")); }

// ---- planner glue -------------------------------------------------------------------------

void use_context(PlanOptions* options, const Context& ctx) {
  if (std::string why = ctx.problem(); !why.empty()) user_error("context: ", why);
  options->settings.threads = ctx.threads;
  options->settings.blocks_per_sm = ctx.blocks_per_sm;
  options->settings.smem_limit = ctx.smem_bytes;
}

void use_schedules(PlanOptions* options, const std::map<std::string, Schedule>& schedules) {
  for (const auto& [sig, s] : schedules) options->schedules[sig] = s;
  enable_signatures(options);
}

PlanOptions tuned_options(const PlanOptions& base, const Context& ctx, const std::map<std::string, Schedule>& schedules) {
  PlanOptions o = base;
  use_context(&o, ctx);
  use_schedules(&o, schedules);
  return o;
}

}  // namespace mono::tuning
