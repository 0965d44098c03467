// The settings of one kernel build that are not a group's schedule: the precision, the GPU
// it targets, the context (block size, blocks per SM, shared memory) and how group functions
// are emitted. One struct, held whole by PlanOptions and KernelPlan (never copied field by
// field). The tools set it through one table: --set NAME=VALUE (and --dtype, --profile,
// which are the same as --set dtype=..., --set profile=on); settings_help() lists it.
//
// Choices measured slower on the GPU are not settings: they were deleted (bench/RESULTS.md
// keeps the evidence). A group's performance knobs are its Schedule (plan.h), which tuning varies.
#pragma once

#include <string>

namespace mono {

enum class Precision { kF32, kF16 };

struct KernelSettings {
  Precision precision = Precision::kF32;  // dtype: fp16 storage and tensor cores, fp32 accumulation
  // Profiling build: every block stamps %globaltimer when it finishes each stage's work and
  // when it leaves each barrier (into MonoParams::profile), for per-stage timings.
  bool profile = false;
  int sms = 132;  // multiprocessors of the target GPU (H100 SXM: 132)
  // The context: threads per block, resident blocks per SM, and the dynamic shared memory a
  // group may use (0: 227 KB / blocks_per_sm). The register cap follows (65536 / threads / blocks).
  int threads = 256;
  int blocks_per_sm = 1;
  int smem_limit = 0;
  // Group functions inlined into the kernel (1), or kept as separate functions that groups
  // with the same code share (0: far less code for ptxas on big models, a call per item).
  // -1 (auto): inline up to kInlineCallLimit calls in the kernel's text (plan.h).
  int inline_groups = -1;
};

// Sets one setting; `spelled` is how the user wrote it ("--dtype fp8"), for the error. Throws
// UserError naming the setting and what it accepts.
void set_setting(KernelSettings* settings, const std::string& name, const std::string& value, const std::string& spelled);
// Applies "NAME=VALUE" (a --set argument).
void apply_setting(KernelSettings* settings, const std::string& assignment);
// One line per setting: "  NAME=VALUES  what it does (default ...)", for --help.
std::string settings_help();

}  // namespace mono
