// The plan of one monolithic kernel: which IR nodes form each group (an anchor plus the
// elementwise epilogue fused into it), which stage each group runs in (stages are separated
// by grid-wide barriers), where every tensor lives, the kernel's context (one block size,
// one shared-memory size, one register cap) and each group's schedule.
#pragma once

#include <iosfwd>
#include <map>
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
  int sms = 132;            // multiprocessors of the target GPU (H100 SXM: 132)
  int sm_arch = 90;
  int grid() const { return sms * blocks_per_sm; }
  int register_cap() const;  // 65536 registers per SM shared by the resident blocks, at most 255
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
};

struct PointwiseSchedule {
  int ilp = 4;  // elements per thread per work item (parallelism compensation)
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
  std::string nodes() const;    // "node_a (MatMul) + node_b (Add)"
};

struct Stage {
  std::vector<int> groups;
};

struct KernelPlan {
  Precision precision = Precision::kF32;
  bool profile = false;
  bool prefetch_weights = true;
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

  const Value* root(const Value* v) const;  // follows aliases
  DType dtype_of(const Value* v) const;
  size_t constant_offset(const Value* v, const std::string& packing) const;
};

constexpr float kMinFp16Range = 1e-3f;  // below: fp16's subnormals cost precision (smallest normal 6.1e-5)
constexpr float kMaxFp16Range = 3e4f;   // above: close to fp16's largest value, 65504

struct PlanOptions {
  Precision precision = Precision::kF32;
  // Profiling build: every block stamps %globaltimer when it finishes each stage's work and
  // when it leaves each barrier (into MonoParams::profile), for per-stage timings.
  bool profile = false;
  // Before each barrier, blocks prefetch the weights the next stage reads into L2 (spread
  // over the grid), so that stage's GEMMs stream from L2 instead of HBM.
  bool prefetch_weights = true;
  // fp16 with fp32 fallback: largest |x| of float values on calibration inputs (from the CPU
  // reference). Values outside [kMinFp16Range, kMaxFp16Range] stay fp32.
  std::map<const Value*, float> ranges;
  int sms = 132;
  int threads = 256;
};

// Builds the plan for a simplified graph. Throws UserError naming the node if an op cannot be
// compiled to CUDA.
KernelPlan plan_kernel(const Graph& graph, const PlanOptions& options);

// Packs the constants into the weights blob (converted to the device dtype, B operands of
// GEMMs transposed to [N][K]).
std::vector<unsigned char> pack_weights(const KernelPlan& plan);

// `mono-compile --emit plan`: context, groups, stages, barriers, schedules and estimates.
void print_plan(std::ostream& os, const Graph& graph, const KernelPlan& plan);

}  // namespace mono
