// Schedules and contexts as values that travel: stable JSON for the tuning service (job
// payloads, stored records) and the glue that makes the planner use tuned schedules.
//
// Schedule itself is defined in compiler/codegen/plan.h (the planner takes it in
// PlanOptions::schedules); its JSON forms, stable (keys sorted, every knob of its kind):
//   {"bk":32,"bm":64,"bn":128,"kind":"gemm","split_k":1,"stages":3,"warps_m":2,"warps_n":4}
//   (kind "conv-gemm" likewise; "wgmma":1 added for a tile on wgmma, absent otherwise),
//   {"ilp":4,"kind":"pointwise"}, {"kind":"rows"}.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/codegen/plan.h"

namespace mono::tuning {

using mono::Schedule;

// The launch context one whole kernel runs in (DESIGN §5): every group's schedule must fit.
// The shared-memory budget and the register cap follow from threads and blocks per SM
// (227 KB / blocks, 65536 / (threads x blocks), at most 255); a context may lower the budget.
struct Context {
  int threads = 256;
  int blocks_per_sm = 1;
  int smem_bytes = KernelContext::kMaxSmemPerSm;  // dynamic shared memory budget per block
  int register_cap = 255;

  // A context with the derived budget and cap. Throws UserError if it is not one.
  static Context make(int threads, int blocks_per_sm);
  // Canonical text, stable (a database key): "threads=256,blocks_per_sm=1,smem=232448".
  std::string key() const;
  // "256 threads x 1 block/SM, 232448 B shared memory, 255 registers"
  std::string str() const;
  // "" or why the context cannot be launched.
  std::string problem() const;
  bool operator==(const Context& o) const;
  bool operator!=(const Context& o) const { return !(*this == o); }
  bool operator<(const Context& o) const { return key() < o.key(); }
};

// The contexts tuned by default: 256 threads x 1 and x 2 blocks per SM.
std::vector<Context> default_contexts();

// JSON. The parsers throw UserError naming the field at fault (unknown keys included).
nlohmann::json schedule_to_json(const Schedule& s);
Schedule schedule_from_json(const nlohmann::json& j);
std::string schedule_to_string(const Schedule& s);  // compact JSON, canonical (a database key)
Schedule schedule_from_string(const std::string& text);

nlohmann::json context_to_json(const Context& c);  // {"blocks_per_sm","register_cap","smem_bytes","threads"}
Context context_from_json(const nlohmann::json& j);  // budget and cap optional; checked against threads x blocks
std::string context_to_string(const Context& c);
Context context_from_string(const std::string& text);

// One configuration of a whole-kernel job ({"context", "schedules": {signature: schedule}}, an
// element of its payload's "configs", jobs.h; other keys such as "index" and "label" are left to
// the caller): the worker builds each so, and bench/build_time --config plans a fragment so.
// Throws UserError naming what is missing or malformed.
struct KernelConfig {
  Context context;
  std::map<std::string, Schedule> schedules;
};
KernelConfig kernel_config_from_json(const nlohmann::json& j);

// Plan options that compile in context `ctx` with the given tuned schedules (by group
// signature; groups without one keep their default schedule). `base` gives precision,
// calibration ranges, SMs...
PlanOptions tuned_options(const PlanOptions& base, const Context& ctx, const std::map<std::string, Schedule>& schedules);
// The pieces of it: set the context; add schedules (and the signature function).
void use_context(PlanOptions* options, const Context& ctx);
void use_schedules(PlanOptions* options, const std::map<std::string, Schedule>& schedules);

}  // namespace mono::tuning
