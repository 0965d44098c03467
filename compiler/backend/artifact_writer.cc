#include "compiler/backend/artifact_writer.h"

#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "compiler/codegen/device_headers.h"
#include "compiler/support/atomic_file.h"
#include "compiler/support/error.h"

namespace mono {

using nlohmann::json;

static json io_json(const ArtifactIo& io) {
  return json{{"name", io.name}, {"dtype", dtype_name(io.device_dtype)}, {"model_dtype", dtype_name(io.model_dtype)},
              {"shape", io.shape}};
}

static json schedule_json(const Graph& g, const KernelPlan& plan) {
  json groups = json::array();
  size_t tuned = 0;
  for (const Group& grp : plan.groups) {
    json nodes = json::array();
    nodes.push_back({{"name", grp.anchor->name}, {"op", op_name(grp.anchor->op)}});
    for (const Node* e : grp.epilogue) nodes.push_back({{"name", e->name}, {"op", op_name(e->op)}});
    json j = {{"id", grp.id}, {"kind", group_kind_name(grp.kind)}, {"stage", grp.stage}, {"items", grp.items},
              {"nodes", nodes}, {"output", grp.output->type.str()}, {"estimated_us", grp.est_us}};
    if (grp.kind == GroupKind::kGemm || grp.kind == GroupKind::kConvGemm)
      j["gemm"] = {{"bm", grp.gemm.bm}, {"bn", grp.gemm.bn}, {"bk", grp.gemm.bk}, {"warps_m", grp.gemm.warps_m},
                   {"warps_n", grp.gemm.warps_n}, {"stages", grp.gemm.stages}, {"split_k", grp.gemm.splits}};
    if (grp.kind == GroupKind::kPointwise) j["ilp"] = grp.pointwise.ilp;
    if (grp.pointwise.strip) j["strip"] = grp.pointwise.strip;
    if (grp.pointwise.warps) j["warps"] = grp.pointwise.warps;
    j["schedule_source"] = grp.tuned ? "tuned" : "default (untuned)";
    if (!grp.signature.empty()) j["signature"] = grp.signature;
    if (!grp.override_rejected.empty()) j["tuned_schedule_rejected"] = grp.override_rejected;
    tuned += grp.tuned;
    groups.push_back(j);
  }
  (void)g;
  const std::string source = tuned == 0 ? "default schedules (cost model; no tuning records)"
                                        : str_cat(tuned, " of ", plan.groups.size(), " groups tuned, the others default (cost model)");
  return json{{"source", source}, {"groups", groups}};
}

// Every file of an artifact whole or not at all: a full disk is an error, never a truncated
// cubin that a later run would load.
static void write_bytes(const std::string& path, const void* data, size_t size) {
  std::string error;
  if (!write_file_atomic(path, data, size, &error)) user_error("cannot write '", path, "': ", error);
}
static void write_text(const std::string& path, const std::string& text) { write_bytes(path, text.data(), text.size()); }

void write_artifact(const std::string& dir, const Graph& graph, const BuiltKernel& b, const json& verification) {
  mkdir(dir.c_str(), 0755);
  mkdir((dir + "/mono_dev").c_str(), 0755);
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) user_error("cannot create output folder '", dir, "'");
  write_text(dir + "/model.cu", b.source);
  for (const DeviceHeader& h : device_headers()) write_text(dir + "/" + h.include_name, h.text);
  write_bytes(dir + "/weights.bin", b.weights.data(), b.weights.size());
  if (!b.compiled.cubin.empty()) {
    write_bytes(dir + "/kernel.cubin", b.compiled.cubin.data(), b.compiled.cubin.size());
    write_text(dir + "/build.log", b.compiled.log);
  }
  const Manifest& m = b.manifest;
  json j = {{"format", kArtifactFormat},
            {"model", m.model},
            {"precision", m.precision},
            {"sm_arch", m.sm_arch},
            {"kernel", m.kernel},
            {"context", {{"threads", m.threads}, {"blocks_per_sm", m.blocks_per_sm}, {"smem_bytes", m.smem_bytes},
                         {"register_cap", b.plan.ctx.register_cap()}, {"planned_sms", b.plan.ctx.sms}}},
            {"memory", {{"arena_bytes", m.arena_bytes}, {"sync_words", m.sync_words}, {"weights_bytes", m.weights_bytes}}},
            {"files", {{"source", "model.cu"}, {"cubin", b.compiled.cubin.empty() ? "" : "kernel.cubin"}, {"weights", "weights.bin"}}},
            {"stages", m.stages},
            {"groups", m.groups},
            {"profile", m.profile},
            {"verification", verification},
            {"schedule", schedule_json(graph, b.plan)}};
  j["inputs"] = json::array();
  for (const auto& io : m.inputs) j["inputs"].push_back(io_json(io));
  j["outputs"] = json::array();
  for (const auto& io : m.outputs) j["outputs"].push_back(io_json(io));
  j["tensor_maps"] = json::array();  // the kernel's mono_tmaps, in order (compiler/codegen/tensor_map_spec.h)
  for (const TensorMapSpec& t : m.tensor_maps)
    j["tensor_maps"].push_back({{"arena_offset", t.arena_offset}, {"rows", t.rows}, {"cols", t.cols},
                                {"row_stride", t.row_stride}, {"box_rows", t.box_rows}, {"box_cols", t.box_cols}});
  if (!b.compiled.cubin.empty())
    j["resources"] = {{"registers", m.usage.registers}, {"spill_store_bytes", m.usage.spill_store_bytes},
                      {"spill_load_bytes", m.usage.spill_load_bytes}, {"stack_frame_bytes", m.usage.stack_frame_bytes}};
  write_text(dir + "/manifest.json", j.dump(1) + "\n");
}

}  // namespace mono
