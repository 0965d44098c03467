#include "compiler/runtime/artifact.h"

#include <sys/stat.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "compiler/codegen/cuda_emitter.h"
#include "compiler/support/error.h"

namespace mono {

using nlohmann::json;

static Manifest make_manifest(const Graph& g, const KernelPlan& plan, const std::string& model) {
  Manifest m;
  m.model = model;
  m.precision = plan.precision == Precision::kF16 ? "fp16" : "fp32";
  m.sm_arch = plan.ctx.sm_arch;
  m.kernel = kKernelName;
  m.threads = plan.ctx.threads;
  m.blocks_per_sm = plan.ctx.blocks_per_sm;
  m.smem_bytes = plan.ctx.smem_bytes;
  m.arena_bytes = plan.arena_bytes;
  m.sync_words = plan.sync_words;
  m.weights_bytes = plan.weights_bytes;
  m.stages = static_cast<int>(plan.stages.size());
  m.groups = static_cast<int>(plan.groups.size());
  m.profile = plan.profile;
  for (const Value* v : g.inputs) m.inputs.push_back({v->name, plan.dtype_of(v), v->type.dtype, v->type.shape});
  for (const Value* v : g.outputs) m.outputs.push_back({v->name, plan.dtype_of(v), v->type.dtype, v->type.shape});
  return m;
}

BuiltKernel build_kernel(const Graph& graph, const PlanOptions& plan_options, const std::string& model_name,
                         const NvrtcOptions& nvrtc, bool compile) {
  if (graph.inputs.size() > static_cast<size_t>(kMaxKernelIo) || graph.outputs.size() > static_cast<size_t>(kMaxKernelIo))
    user_error("the CUDA backend takes at most ", kMaxKernelIo, " inputs and outputs");
  BuiltKernel b;
  b.plan = plan_kernel(graph, plan_options);
  std::vector<TensorMapSpec> tensor_maps;
  b.source = emit_cuda(graph, b.plan, model_name, &tensor_maps);
  b.weights = pack_weights(b.plan);
  if (compile) b.compiled = compile_cuda(b.source, kKernelName, nvrtc);
  b.manifest = make_manifest(graph, b.plan, model_name);
  b.manifest.usage = b.compiled.usage;
  b.manifest.tensor_maps = std::move(tensor_maps);
  return b;
}

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

static void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) user_error("cannot write '", path, "'");
}

void write_artifact(const std::string& dir, const Graph& graph, const BuiltKernel& b) {
  mkdir(dir.c_str(), 0755);
  mkdir((dir + "/mono_dev").c_str(), 0755);
  struct stat st;
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) user_error("cannot create output folder '", dir, "'");
  write_text(dir + "/model.cu", b.source);
  for (const DeviceHeader& h : device_headers()) write_text(dir + "/" + h.include_name, h.text);
  {
    std::ofstream w(dir + "/weights.bin", std::ios::binary);
    w.write(reinterpret_cast<const char*>(b.weights.data()), static_cast<std::streamsize>(b.weights.size()));
    if (!w) user_error("cannot write '", dir, "/weights.bin'");
  }
  if (!b.compiled.cubin.empty()) {
    std::ofstream c(dir + "/kernel.cubin", std::ios::binary);
    c.write(b.compiled.cubin.data(), static_cast<std::streamsize>(b.compiled.cubin.size()));
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

std::vector<unsigned char> read_binary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) user_error("cannot open '", path, "'");
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

static ArtifactIo io_from(const json& j) {
  ArtifactIo io;
  io.name = j.at("name").get<std::string>();
  if (!dtype_from_name(j.at("dtype").get<std::string>(), &io.device_dtype) ||
      !dtype_from_name(j.at("model_dtype").get<std::string>(), &io.model_dtype))
    user_error("manifest: bad dtype for '", io.name, "'");
  io.shape = j.at("shape").get<std::vector<int64_t>>();
  return io;
}

Manifest read_manifest(const std::string& dir) {
  std::ifstream in(dir + "/manifest.json");
  if (!in) user_error("'", dir, "' is not a Mono artifact (no manifest.json)");
  Manifest m;
  try {
    json j = json::parse(in);
    const int format = j.at("format").get<int>();
    if (format != kArtifactFormat && format != 1)
      user_error(dir, "/manifest.json: format ", format, " is not one this runtime reads (1, ", kArtifactFormat, ")");
    m.model = j.at("model").get<std::string>();
    m.precision = j.at("precision").get<std::string>();
    m.sm_arch = j.at("sm_arch").get<int>();
    m.kernel = j.at("kernel").get<std::string>();
    const json& c = j.at("context");
    m.threads = c.at("threads").get<int>();
    m.blocks_per_sm = c.at("blocks_per_sm").get<int>();
    m.smem_bytes = c.at("smem_bytes").get<int>();
    const json& mem = j.at("memory");
    m.arena_bytes = mem.at("arena_bytes").get<size_t>();
    m.sync_words = mem.at("sync_words").get<size_t>();
    m.weights_bytes = mem.at("weights_bytes").get<size_t>();
    m.stages = j.at("stages").get<int>();
    m.groups = j.at("groups").get<int>();
    m.profile = j.value("profile", false);
    for (const json& io : j.at("inputs")) m.inputs.push_back(io_from(io));
    for (const json& io : j.at("outputs")) m.outputs.push_back(io_from(io));
    for (const json& t : j.value("tensor_maps", json::array())) {
      TensorMapSpec s;
      if (t.at("arena_offset").get<int64_t>() < 0) user_error(dir, "/manifest.json: tensor map ", m.tensor_maps.size(), ": negative arena offset");
      s.arena_offset = t.at("arena_offset").get<uint64_t>();
      s.rows = t.at("rows").get<int64_t>();
      s.cols = t.at("cols").get<int64_t>();
      s.row_stride = t.at("row_stride").get<int64_t>();
      s.box_rows = t.at("box_rows").get<int>();
      s.box_cols = t.at("box_cols").get<int>();
      const std::string problem = tensor_map_problem(s);
      if (!problem.empty())
        user_error(dir, "/manifest.json: tensor map ", m.tensor_maps.size(), ": ", problem);
      // (no overflow: rows < 2^31 and row_stride < 2^40 by tensor_map_problem)
      const unsigned __int128 end = static_cast<unsigned __int128>(s.arena_offset) +
                                    static_cast<unsigned __int128>(s.row_stride) * static_cast<uint64_t>(s.rows - 1) +
                                    static_cast<uint64_t>(s.cols) * 2;
      if (end > m.arena_bytes)
        user_error(dir, "/manifest.json: tensor map ", m.tensor_maps.size(), " reaches beyond the arena (",
                   m.arena_bytes, " B)");
      m.tensor_maps.push_back(s);
    }
  } catch (const json::exception& e) {
    user_error(dir, "/manifest.json: ", e.what());
  }
  return m;
}

}  // namespace mono
