// The planner's steps, one file each, in the order plan_kernel (pipeline.cc) runs them. Each
// is a function over the plan: it reads what its signature names and writes the fields of the
// plan that its comment lists.
#pragma once

#include <map>
#include <set>

#include "compiler/codegen/plan.h"

namespace mono::planner {

// Who reads what, once views are resolved to the values that own the bytes (grouping.cc).
struct Uses {
  std::map<const Value*, int> count;        // reads of each root value by non-view nodes and graph outputs
  std::set<const Value*> graph_outputs;     // roots of graph outputs
  std::set<const Value*> extra_outputs;     // outputs after the first of a multi-output anchor (Split)
  std::map<const Value*, int> producer;     // root value -> the group that writes it (form_groups)

  int of(const Value* v) const;
  // Read exactly once and not a graph output: a value a fused group may keep to itself.
  bool is_private(const Value* v) const;
};

// pipeline.cc: the context the settings describe (threads, blocks per SM, SMs, shared-memory
// budget). Throws UserError for a context no SM can hold.
KernelContext make_context(const KernelSettings& settings);

// dtypes.cc: KernelPlan::device_dtype and fp32_fallbacks. In fp16, float values become fp16
// unless their calibrated range (options.ranges) does not fit or options.keep_fp32 names them.
void assign_dtypes(const Graph& graph, const PlanOptions& options, KernelPlan* plan);

// grouping.cc: KernelPlan::alias (views: Reshape, Squeeze, Unsqueeze, Flatten, Identity,
// Dropout without a mask share their input's bytes).
void find_views(const Graph& graph, KernelPlan* plan);
// grouping.cc: the reads of every root value (Uses::count, graph_outputs).
Uses count_uses(const Graph& graph, const KernelPlan& plan);
// grouping.cc: KernelPlan::groups (an anchor and the elementwise epilogue fused into it, in graph
// order), Uses::producer and extra_outputs. Throws UserError for a node the backend cannot compile.
void form_groups(const Graph& graph, KernelPlan* plan, Uses* uses);

// dtypes.cc: Group::f16 (a GEMM runs in fp16 only if both operands are stored in fp16; an
// fp32 operand makes the other fp32 too), and the device dtypes that follows.
void assign_gemm_precision(KernelPlan* plan);

// attention_fusion.cc: MatMul - Softmax - MatMul chains as one group (Group::fused,
// fused_into; the two GEMMs' fixed tiles).
void fuse_attention(const Uses& uses, KernelPlan* plan);
// attention_fusion.cc: Group::flash, the flash heads' shared memory and a streamed head's wider
// row tiles (choose_schedules calls it once the tiles are chosen, before it counts the heads'
// items).
void choose_flash(const Uses& uses, KernelPlan* plan);

// squeeze_fusion.cc: Group::squeeze and the squeeze group's fused_into (a GEMV whose x is the
// private result of a small GEMV computes that GEMV itself, support.h squeeze_fits_inside).
void fuse_squeezes(const Uses& uses, KernelPlan* plan);

// operand_layout.cc: KernelPlan::swapped_last2 (GEMM outputs read only as the B operand of
// other GEMMs stored [N][K]).
void swap_b_operands(const Uses& uses, KernelPlan* plan);

// at_read.cc: Group::at_read and KernelPlan::computed (data movements read only by pointwise
// groups that load by index, or by other such movements: their readers compute them).
void compute_at_read(const Uses& uses, KernelPlan* plan);

// stages.cc: each group's stage as assign_stages would set it, at_read groups -1 (a function of
// the plan; compute_at_read weighs its choices with it).
std::vector<int> group_stages(const Uses& uses, const KernelPlan& plan);
// stages.cc: per group, the other groups that read its result (anchor or epilogue inputs).
std::vector<std::set<int>> group_readers(const Uses& uses, const KernelPlan& plan);
// stages.cc: Group::stage and KernelPlan::stages (a group runs one stage after the latest
// producer of what it reads; attention parts with their head).
void assign_stages(const Uses& uses, KernelPlan* plan);

// schedules.cc: every group's schedule (the cost model's default, or options.schedules' tuned
// one where valid; the GEMM core by choose_gemm_cores), Group::items, est_us, smem_bytes,
// signature, tuned, override_rejected, and KernelContext::smem_bytes.
void choose_schedules(const Uses& uses, const PlanOptions& options, KernelPlan* plan);
// gemm_cores.cc (called by choose_schedules, before items and estimates): GemmSchedule::wgmma
// (with its warps and 64-row tiles) of default schedules where the operands allow; tuned
// schedules on wgmma whose operands do not allow it fall back to mma.sync.
void choose_gemm_cores(const Uses& uses, KernelPlan* plan);

// weight_packing.cc: KernelPlan::weight_tiles (fp16 GEMM weights packed tile by tile for the
// final schedule).
void tile_weights(KernelPlan* plan);
// weight_packing.cc: the bytes constant `v` takes in the weights blob with `packing`.
size_t packed_bytes(const KernelPlan& plan, const Value& v, const Packing& packing);

// placement.cc: KernelPlan::placement, constants, weights_bytes, arena_bytes, sync_words,
// output_copies, and every split-K group's workspace_offset and counters_offset.
void place_tensors(const Graph& graph, KernelPlan* plan);

}  // namespace mono::planner
