// The plan of one monolithic kernel: which IR nodes form each group (an anchor plus the
// elementwise epilogue fused into it), which stage each group runs in (stages are separated
// by grid-wide barriers), where every tensor lives, the kernel's context (one block size,
// one shared-memory size, one register cap) and each group's schedule.
//
// plan_kernel (planner/pipeline.cc) builds it in steps, one file each under planner/; the cost
// model that chooses default schedules is cost_model.h; the CUDA emitter (cuda_emitter.h)
// prints it.
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/codegen/settings.h"
#include "compiler/ir/graph.h"

namespace mono {

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
  kRows,       // LayerNormalization / Softmax over the last axis: a warp per row (a block past 1024)
  kPointwise,  // any op computed element by element (loops inside for pools, reductions...)
};
const char* group_kind_name(GroupKind k);

struct GemmSchedule {
  int bm = 64, bn = 64, bk = 32, warps_m = 2, warps_n = 4, stages = 3;
  int splits = 1;  // split-K: partial tiles combined with atomics, the last one applies the epilogue
  // The tile runs on wgmma (GemmWg, sm_90a) instead of mma.sync (GemmF16): fp16 only, A through
  // a tensor map, B weights packed swizzled; warps_m = bm / 16 (a multiple of 4).
  bool wgmma = false;
  std::string str() const;
  bool operator==(const GemmSchedule& o) const;
  bool operator!=(const GemmSchedule& o) const { return !(*this == o); }
};

struct PointwiseSchedule {
  int ilp = 4;  // elements per thread per work item (parallelism compensation)
  // A strip convolution's outputs per thread down a column (support.h strip_conv), 1..8; 0 for
  // every other pointwise group.
  int strip = 0;
  // A GlobalAveragePool's warps per output (support.h default_pool_warps), 1, 2, 4 or 8; 0 for
  // every other pointwise group.
  int warps = 0;
  bool operator==(const PointwiseSchedule& o) const { return ilp == o.ilp && strip == o.strip && warps == o.warps; }
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
  // kComputed: no bytes at all; the value's readers compute each element they load
  // (Group::at_read).
  enum Space { kArena, kWeights, kInput, kOutput, kComputed } space = kArena;
  size_t offset = 0;  // bytes into the arena or the weights blob
  int index = 0;      // input or output number
};

// How a constant is laid out in the weights blob (planner/weight_packing.cc packs it).
struct Packing {
  // A GEMM's B operand stored [N][K] (K contiguous) although the model holds it [K][N]; a
  // channels-last depthwise Conv's W [C][KH][KW][1] stored [KH*KW][C].
  bool transposed = false;
  // Packed tile by tile for one schedule (tile_pack.h: each tile_rows x tile_k block laid out
  // as a pipeline stage in shared memory, one bulk copy per stage); 0: row by row.
  int tile_rows = 0, tile_k = 0;
  // Tiles laid out for wgmma (GemmWg) instead: unpadded, 128-byte swizzled (tile_pack.h).
  bool swizzled = false;

  bool tiled() const { return tile_rows > 0; }
  bool operator==(const Packing& o) const {
    return transposed == o.transposed && tile_rows == o.tile_rows && tile_k == o.tile_k && swizzled == o.swizzled;
  }
  bool operator!=(const Packing& o) const { return !(*this == o); }
  bool operator<(const Packing& o) const;
  // "" (as is), "nk" (transposed), "nk@t64x128" (and tiled), "nk@t64x128s" (swizzled):
  // signatures and messages.
  std::string str() const;
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
  // carried through the three in one block (without `flash`, S and P pass through the arena,
  // read back by the block that wrote them; no grid barrier between). The head's items and
  // estimate cover the whole attention; the parts' GEMM tiles are fixed (BM query rows, all
  // keys), not tuned.
  std::vector<int> fused;
  int fused_into = -1;  // also set on a squeeze group computed inside its consumer (`squeeze`)
  // The head of an attention group runs its items as FlashAttention (attention.cuh): S and P in
  // registers, no arena round trip; set by choose_flash (planner/attention_fusion.cc) where
  // the operands allow it, else the three parts run one after another as above.
  bool flash = false;
  // A flash head over more keys than kFlashWholeKeys streams them in chunks of this many keys
  // (FlashStream, attention.cuh); 0: all keys at once (FlashAttention).
  int flash_chunk = 0;
  // A flash head whose scores' last epilogue step adds a constant causal mask (0 where key <=
  // row + keys - rows, <= -1e30 or -inf elsewhere; planner/attention_fusion.cc): that Add node,
  // which the item applies by index instead (skipping the masked key tiles), or null.
  const Node* causal_mask = nullptr;
  // Part of a fused group, with nothing to tune: an attention group (fixed tiles) or a squeeze
  // computed inside its consumer (`squeeze`: its own schedule is never used).
  bool runs_fused() const { return !fused.empty() || fused_into >= 0 || at_read; }
  // A data movement (Slice, Concat, Pad, Transpose) with no code or stage of its own: each
  // pointwise group that reads its result computes the elements it loads from the movement's
  // inputs instead (planner/at_read.cc; emit/expressions.cc Expressions::load). Its stage is
  // the latest of its readers' (placement keeps its inputs alive until then); its output is
  // placed kComputed.
  bool at_read = false;
  // A GEMV group's (support.h gemv_form) last epilogue step may be a gate: Mul(x, r) with r its
  // running result [1, C, 1...] and x [1, C, spatial...], each channel's plane of x scaled by r
  // (squeeze-and-excitation). The group then writes the gated x, its items covering the planes
  // too (emit/pointwise.cc emit_gemv), and the gate's Mul has no stage of its own.
  const Node* gate = nullptr;
  // A GEMV group (support.h gemv_form) whose x is the whole result of another, small GEMV group
  // read by nothing else (a squeeze-and-excitation's squeeze; planner/squeeze_fusion.cc): that
  // group's id, or -1. Every item of this group computes the squeeze's result again into shared
  // memory before its own dot products (emit/pointwise.cc emit_gemv); the squeeze group names this
  // one in `fused_into` and has no stage of its own.
  int squeeze = -1;
  std::string override_rejected;
  std::string nodes() const;    // "node_a (MatMul) + node_b (Add)"
  // Every input of its anchor and epilogue nodes (absent optional ones left out), in order.
  std::vector<const Value*> inputs() const;
  Schedule schedule() const;    // the knobs in use
};

struct Stage {
  std::vector<int> groups;
};

struct KernelPlan {
  KernelSettings settings;
  bool inline_groups = true;  // settings.inline_groups resolved
  int kernel_calls = 0;       // the group-function calls in the kernel's text (cuda_emitter.h kernel_calls)
  KernelContext ctx;
  std::vector<Group> groups;
  std::vector<Stage> stages;
  std::map<const Value*, Placement> placement;  // every value the kernel touches (after aliasing)
  std::map<const Value*, const Value*> alias;   // a view value -> the value that owns the bytes
  std::map<const Value*, DType> device_dtype;   // float values become f16 in fp16 mode
  int fp32_fallbacks = 0;                       // fp16 mode: float values kept in fp32 by range
  size_t arena_bytes = 0;
  size_t sync_words = 0;  // barrier state + split-K counters
  // Packed constants: each used constant once per packing.
  struct PackedConstant {
    const Value* value;
    Packing packing;
    size_t offset;
    size_t bytes;
  };
  std::vector<PackedConstant> constants;
  size_t weights_bytes = 0;
  // Graph outputs that no group writes (a graph input, a constant, a view of one, or a value
  // another output already is): the kernel copies them from where they live after its stages.
  struct OutputCopy {
    const Value* source;  // a root value: input, constant (packed as is) or another output
    int output;           // the graph output it goes to
  };
  std::vector<OutputCopy> output_copies;
  // Graph inputs the kernel copies into the arena before its first stage (PlanOptions::
  // arena_inputs): groups read them as they read activations.
  std::set<const Value*> arena_inputs;

  // Values stored with their last two axes swapped ([.., a, b] kept as [.., b, a] in memory):
  // a GEMM output whose epilogue transposes it only so that GEMMs can read it as a [K][N] B
  // operand (attention's K^T). Stored swapped, the producer's stores run along its N (contiguous,
  // like Q's and V's) and the readers load B as [N][K] rows (16-byte cp.async) instead of
  // transposing [K][N] tiles on the way to shared memory.
  std::set<const Value*> swapped_last2;
  // fp16 GEMMs whose constant weights are packed tile by tile for their schedule and read with
  // one bulk copy per pipeline stage (BulkTileK, tile_pack.h): anchor -> their packing.
  std::map<const Node*, Packing> weight_tiles;
  // Values computed where they are read (Group::at_read): root value -> the group.
  std::map<const Value*, int> computed;

  const Value* root(const Value* v) const;  // follows aliases
  // The packing of constant input i of node n (constant_packing(), or its weight_tiles entry).
  Packing packing(const Node& n, int i) const;
  DType dtype_of(const Value* v) const;
  // Whether `v` lives in Mono's own buffers (the arena or the weights), which start 256-byte
  // aligned; model inputs and outputs are the caller's pointers and are not assumed to be.
  bool own_buffer(const Value* v) const;
  // The work items stage s walks: its groups' items, those running inside another group aside.
  int64_t stage_items(int s) const;
  size_t constant_offset(const Value* v, const Packing& packing) const;
};

// The movements group g reads directly and computes where it reads them (Group::at_read):
// each once, in the order its anchor and epilogue read them.
std::vector<int> computed_inputs(const KernelPlan& plan, const Group& g);
// The same, directly or through another such movement: inner ones after the one that reads them.
std::vector<int> at_read_groups(const KernelPlan& plan, const Group& g);
// Whether group g is a tuning task: it runs code of its own (not Group::runs_fused) and its
// tuning fragment (tuning/fragment.cc: its nodes and the movements it computes at read) plans
// as it does in the model. Not when a movement it computes is also read by a group outside
// that set: in the fragment the movement's one reader would fuse into it as an epilogue.
bool tunable(const KernelPlan& plan, const Group& g);

// Inline the group functions where the kernel's text calls them at most this many times
// (cuda_emitter.h kernel_calls: a layer loop's stages count once). Out of line, ptxas serializes
// every wgmma (C7510) and each call costs its arguments; inlined, each call site is a copy of its
// function. Measured on the H100 with layer loops (bench/RESULTS.md, session 25), inlined against
// out of line, same call: bert-base (11 calls) 406.9 -> 381.5 us, gpt2 (11) 405.4 -> 372.9,
// vit-base (13) 490.4 -> 450.7, resnet50 (33) 323.8 -> 316.1 (run220); regnet-y-400mf (46) 354.7
// -> 332.0, mobilenet-v3-large (59) 218.7 -> 208.8, efficientnet-b0 (69) 326.4 -> 304.0, swin-t
// (142) 695.3 -> 682.2, densenet121 (189) 728.2 -> 722.4 (run223). Beyond the largest measured
// kernel, out of line keeps NVRTC's time bounded.
constexpr int kInlineCallLimit = 200;
constexpr float kMinFp16Range = 1e-3f;  // below: fp16's subnormals cost precision (smallest normal 6.1e-5)
constexpr float kMaxFp16Range = 3e4f;   // above: close to fp16's largest value, 65504

struct PlanOptions {
  KernelSettings settings;
  // fp16 with fp32 fallback: largest |x| of float values on calibration inputs (from the CPU
  // reference). Values outside [kMinFp16Range, kMaxFp16Range] stay fp32.
  std::map<const Value*, float> ranges;
  // Float values that were never negative on the calibration inputs (x * x, an RMS norm's
  // mean square): a tuning fragment that takes one as an input feeds it non-negative values.
  std::set<const Value*> nonnegative;
  // fp16: float values kept in fp32 whatever their range. A tuning fragment (a group cut out
  // of its model, compiler/tuning/fragment.h) lists here the values its model keeps in fp32
  // because they meet an fp32 GEMM outside the fragment.
  std::set<const Value*> keep_fp32;
  // Graph inputs to copy into the arena before the first stage, so that the groups reading them
  // read an activation (tensor maps, wgmma: cost_model.h wgmma_operands). A tuning fragment
  // (compiler/tuning/fragment.h) lists the inputs that were activations in its model, so that
  // its group runs on the operand paths it runs on there.
  std::set<const Value*> arena_inputs;
  // Tuned schedules by group signature (compiler/tuning computes signatures; its
  // tuning::use_schedules sets both fields). A group whose signature has an entry uses it if
  // it is valid in the context, else its default schedule (Group::override_rejected says why).
  std::map<std::string, Schedule> schedules;
  // Called once per group after grouping and dtype assignment (before placement); required
  // when `schedules` is not empty.
  std::function<std::string(const KernelPlan&, const Group&)> signature;
  // Called after each planner step with its name (planner/steps.h), e.g. to dump or time the
  // plan as it is built; the golden tests list the steps through it.
  std::function<void(const char* step, const KernelPlan&)> after_step;
};

// Builds the plan for a simplified graph (planner/pipeline.cc). Throws UserError naming the
// node if an op cannot be compiled to CUDA.
KernelPlan plan_kernel(const Graph& graph, const PlanOptions& options);

// The weights blob: every packed constant converted to the device dtype and laid out as its
// Packing says (planner/weight_packing.cc).
std::vector<unsigned char> pack_weights(const KernelPlan& plan);

// `mono-compile --emit plan`: context, groups, stages, barriers, schedules and estimates
// (planner/plan_printer.cc).
void print_plan(std::ostream& os, const Graph& graph, const KernelPlan& plan);

}  // namespace mono
