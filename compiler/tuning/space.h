// The tuning space of a model (DESIGN §5): contexts x unique group signatures x candidate
// schedules. Repeated layers collapse to one task per context; a cost model (the planner's:
// the same functions) orders each task's candidates and prunes those far slower than the
// best, always keeping the default schedule. Its numbers are ESTIMATES, never measurements:
// they only decide what gets measured.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compiler/codegen/plan.h"
#include "compiler/tuning/schedule.h"

namespace mono::tuning {

struct SpaceOptions {
  std::vector<Context> contexts = default_contexts();
  // Drop GEMM and convolution candidates whose estimate exceeds this factor times the best
  // estimate of their task (pointwise groups keep their four ILP factors); 0 (or less) keeps
  // every candidate. In the tuning databases of bench/runs/run58 and run59 (bert-base, gpt2,
  // vit-base, resnet50; two contexts) every task's measured best was estimated within 1.18x
  // of its lowest estimate (bench/prune_check.py; test tuning_data_checks): 1.5 keeps it and
  // a third of the candidates.
  double prune_factor = 1.5;
  // At most this many candidates a task: the default and the lowest estimates after it; 0 (or
  // less) keeps every candidate the factor keeps. In three tuning databases measured in full
  // (bench/runs/run54 bert-base, run119 and run154 resnet50, H100), the default and the 4
  // lowest estimates kept all the gain of the measured bests over the defaults, summed over
  // each model's groups, from 11 % (bert-base) and 43-45 % (resnet50) of the candidates
  // (bench/topk_check.py; test tuning_data_checks). 3 in all kept 77-99 %.
  int max_candidates = 5;
};

struct Candidate {
  Schedule schedule;
  double est_us = 0;     // cost-model estimate (not a measurement)
  int64_t items = 0;     // work items the group would have
  int smem_bytes = 0;    // dynamic shared memory it needs
  bool is_default = false;  // the planner's choice without tuning
};

// One unique group signature in one context.
struct TuningTask {
  std::string signature;       // 16 hex digits
  std::string signature_text;  // the canonical text hashed
  GroupKind kind = GroupKind::kPointwise;
  Context context;
  std::vector<int> groups;  // ids of the model's groups with this signature (the first is the example)
  std::string description;  // "MatMul + Transpose + Mul -> f16[1,4,16,16]"
  Schedule default_schedule;
  double default_est_us = 0;
  int candidates_before = 0;          // before pruning
  std::vector<Candidate> candidates;  // after pruning, by estimate (ties: menu order); has the default
};

// A stage of the plan where several tunable groups share the grid (BERT's Q, K and V): it
// takes about ceil(all their items / grid) rounds of its slowest item, so their schedules are
// chosen together (merge.cc), not each as if alone.
struct SharedStage {
  Context context;
  std::vector<std::string> signatures;  // one per tunable group of the stage, sorted (repeats: one task)
  int count = 1;                        // the plan's stages with this composition (one per layer)
  int grid = 0;                         // blocks in the context's grid
};

struct TuningSpace {
  std::vector<Context> contexts;
  int groups_total = 0;        // tunable groups of the model (not attention parts), the same in every context
  int unique_signatures = 0;   // distinct signatures among them
  std::vector<TuningTask> tasks;  // context-major: contexts x unique signatures, first-seen order
  std::vector<SharedStage> shared_stages;  // per context, first-seen order
};

struct SpaceSummary {
  int contexts = 0;
  int groups_total = 0;
  int unique_signatures = 0;
  int tasks = 0;  // contexts x unique signatures
  int64_t candidates_before = 0;  // over all tasks, before pruning
  int64_t candidates_after = 0;
};

// Plans the graph in every context and builds the tasks. `options` gives precision,
// calibration ranges and SMs (its context and schedules are replaced).
TuningSpace enumerate_space(const Graph& graph, const PlanOptions& options, const SpaceOptions& space = {});
SpaceSummary summarize(const TuningSpace& space);

// The candidates of one group of a plan (in the plan's context), pruned, with the count
// before pruning in *before.
std::vector<Candidate> group_candidates(const KernelPlan& plan, const Group& group, double prune_factor, int* before);
// Keeps the default and the `most - 1` first others of candidates in estimate order (`most` <= 0:
// all of them).
void keep_lowest_estimates(std::vector<Candidate>* candidates, int most);
// The GEMM tile menu of the tuning space in a context (split-K 1; valid tiles that fit).
std::vector<GemmSchedule> tuning_gemm_tiles(bool f16, const KernelContext& ctx);
// The wgmma (GemmWg) tiles tried for groups whose operands allow them (cost_model.h
// wgmma_operands), in a context (split-K 1; valid tiles only).
std::vector<GemmSchedule> tuning_wgmma_tiles(const KernelContext& ctx);
// The ILP factors tried for pointwise groups.
std::vector<int> tuning_ilp_factors();

// Schedules that walk the tuning menu, to exercise tuned code paths (tests/tuning/
// tuned_kernels_test.cc, bench/tuned_artifacts.cc), not to tune: for the plan of `graph` in
// `ctx`, the i-th GEMM signature gets the i-th tile of tuning_gemm_tiles (every one the tile
// `tile` when >= 0) with its largest split-K factor when `split`; pointwise groups get ILP
// `ilp`; attention parts keep their fixed tiles. By group signature.
std::map<std::string, Schedule> menu_schedules(const Graph& graph, const PlanOptions& base, const Context& ctx,
                                               int tile, bool split, int ilp);

// A task as JSON (a job payload's core): signature, kind, context, groups, default and
// candidates with their estimates (labelled "est_us").
nlohmann::json task_to_json(const TuningTask& task);

// `mono-compile --emit plan`: the "tuning space:" section.
void print_space(std::ostream& os, const TuningSpace& space);

}  // namespace mono::tuning
