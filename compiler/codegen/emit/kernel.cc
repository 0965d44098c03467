// The kernel's translation unit (cuda_emitter.h): a header naming the model and context, the
// device library, MonoParams, the tensor-map table, the group functions and types the
// constructs defined, and `mono_main`, which runs the stages in order with a grid barrier
// between them. Within a stage every block walks the stage's work items (all groups' items,
// one after another) from blockIdx.x in steps of gridDim.x.
#include <sstream>

#include "compiler/codegen/cuda_emitter.h"
#include "compiler/codegen/emit/module.h"
#include "compiler/codegen/emit/names.h"
#include "compiler/codegen/emit/stages.h"
#include "compiler/support/error.h"

namespace mono {
namespace emit {

std::string Call::str(const std::string& item) const {
  std::string s = function + "(" + item;
  for (const std::string& a : args) s += ", " + a;
  return s + ")";
}

std::string Module::function(const Group& g, const std::string& params, const std::string& body) {
  const std::string text = str_cat("(", params, ") {\n", body, "}\n");
  const std::string code = code_without_comments(text);
  auto it = functions_.find(code);
  if (it == functions_.end()) {
    const std::string name = str_cat("g", g.id, "_", snake_case(op_name(g.anchor->op)));
    it = functions_.emplace(code, name).first;
    definitions_.push_back({name, name + text});
  }
  users_[it->second].push_back(g.id);
  return it->second;
}

std::string Module::epilogue_struct(const Group& g, const std::string& body) {
  const std::string code = code_without_comments(body);
  auto it = epilogues_.find(code);
  if (it != epilogues_.end()) return it->second;
  const std::string name = str_cat("G", g.id, "Epilogue");
  epilogues_[code] = name;
  definitions_.push_back({"", str_cat("struct ", name, " {\n", body, "};\n")});
  return name;
}

void Module::type(const std::string& name, const std::string& text) {
  if (types_.insert(name).second) definitions_.push_back({"", text});
}

int Module::tensor_map(const TensorMapSpec& spec, const Value* tensor) {
  for (size_t i = 0; i < tensor_maps_.size(); ++i)
    if (tensor_maps_[i] == spec) return static_cast<int>(i);
  tensor_maps_.push_back(spec);
  tensor_map_names_.push_back(buffer(tensor));
  return static_cast<int>(tensor_maps_.size()) - 1;
}

std::string Module::unique(const std::string& name) {
  std::string n = name;
  for (int k = 2; !names_.insert(n).second; ++k) n = str_cat(name, "_", k);
  return n;
}

void Module::declare(const std::string& name, const BufferRef& ref, const std::string& comment) {
  const std::string pointer = ref.base.empty()  ? ref.cast
                              : ref.cast.empty() ? str_cat(ref.base, " + ", ref.offset)
                                                 : str_cat("(", ref.cast, ")(", ref.base, " + ", ref.offset, ")");
  buffer_declarations_ += str_cat("#define ", name, " (", pointer, ")", comment, "\n");
  buffer_refs_[name] = ref;
}

std::string Module::buffer(const Value* root, const Packing& packing) {
  auto key = std::make_pair(root, packing);
  auto it = buffers_.find(key);
  if (it != buffers_.end()) return it->second;
  const Placement& pl = plan.placement.at(root);
  const std::string t = ctype(plan.dtype_of(root));
  std::string id = identifier(root->name);
  if (id.empty()) id = "tensor";
  std::string name;
  BufferRef ref;
  switch (pl.space) {
    case Placement::kArena:
      name = unique("t_" + id);
      ref = {t + "*", "p.arena", static_cast<int64_t>(pl.offset)};
      break;
    case Placement::kWeights:
      name = unique(str_cat("w_", id, packing.transposed ? "_nk" : "", packing.tiled() ? "_tiles" : ""));
      ref = {"const " + t + "*", "p.weights", static_cast<int64_t>(plan.constant_offset(root, packing))};
      break;
    case Placement::kInput:
      name = unique("in_" + id);
      ref = {str_cat("(const ", t, "*)p.inputs[", pl.index, "]"), "", 0};
      break;
    case Placement::kOutput:
      name = unique("out_" + id);
      ref = {str_cat("(", t, "*)p.outputs[", pl.index, "]"), "", 0};
      break;
    case Placement::kComputed:
      MONO_CHECK(false, root->name, " is computed where it is read and has no buffer");
  }
  std::string shape;
  for (size_t d = 0; d < root->type.shape.size(); ++d) shape += str_cat(d ? "," : "", root->type.shape[d]);
  declare(name, ref,
          str_cat("  // ", dtype_name(plan.dtype_of(root)), "[", shape, "]", packing.str().empty() ? "" : " packed " + packing.str()));
  buffers_.emplace(key, name);
  return name;
}

std::string Module::output_buffer(int index, const Value* v) {
  std::string id = identifier(v->name);
  const std::string name = unique("out_" + (id.empty() ? "tensor" : id));
  const std::string t = ctype(plan.dtype_of(v));
  declare(name, {str_cat("(", t, "*)p.outputs[", index, "]"), "", 0}, str_cat("  // output ", index));
  return name;
}

std::string Module::split_k_workspace(const Group& g) {
  const std::string name = unique(str_cat("splitk_partials_g", g.id));
  declare(name, {"float*", "p.arena", static_cast<int64_t>(g.workspace_offset)}, "");
  return name;
}

std::string Module::split_k_counters(const Group& g) {
  const std::string name = unique(str_cat("splitk_counters_g", g.id));
  declare(name, {"", "p.sync", static_cast<int64_t>(g.counters_offset)}, "");
  return name;
}

std::string Module::definitions(bool inline_functions) const {
  // static: only this translation unit's kernel calls them.
  const std::string head = inline_functions ? "__device__ __forceinline__ void " : "static __device__ __noinline__ void ";
  std::string out;
  for (const Definition& d : definitions_) {
    if (!d.function.empty()) {
      std::string groups;
      for (int id : users_.at(d.function)) groups += str_cat(groups.empty() ? "" : ", ", id);
      out += str_cat("// ", users_.at(d.function).size() > 1 ? "groups " : "group ", groups, "\n");
    }
    out += (d.function.empty() ? "" : head) + d.text + "\n";
  }
  return out;
}

namespace {

// Graph outputs no group writes (KernelPlan::output_copies), copied after the stages; a barrier
// first when one of them copies another output, which the last stage may still be writing.
std::string output_copies(Module& m, const Graph& graph) {
  const KernelPlan& plan = m.plan;
  if (plan.output_copies.empty()) return "";
  std::ostringstream os;
  os << "\n  // ---- outputs that no group writes: copied from where they live ----\n";
  bool reads_outputs = false;
  for (const KernelPlan::OutputCopy& c : plan.output_copies)
    reads_outputs = reads_outputs || plan.placement.at(c.source).space == Placement::kOutput;
  if (reads_outputs && !plan.stages.empty()) os << "  grid_barrier(p.sync);\n";
  for (const KernelPlan::OutputCopy& c : plan.output_copies) {
    const Value* out = graph.outputs[c.output];
    const size_t bytes = static_cast<size_t>(out->type.numel()) * dtype_size(plan.dtype_of(c.source));
    const std::string dst = m.output_buffer(c.output, out);
    os << "  grid_copy(" << dst << ", " << m.buffer(c.source) << ", " << bytes << "ULL);  // output " << c.output
       << " '" << comment_text(out->name) << "'\n";
  }
  return os.str();
}

// Graph inputs the groups read from the arena (KernelPlan::arena_inputs), copied there before
// the first stage, then a grid barrier.
std::string input_copies(Module& m, const Graph& graph) {
  const KernelPlan& plan = m.plan;
  if (plan.arena_inputs.empty()) return "";
  std::ostringstream os;
  os << "\n  // ---- inputs the groups read from the arena: copied there first ----\n";
  for (size_t i = 0; i < graph.inputs.size(); ++i) {
    const Value* in = graph.inputs[i];
    if (!plan.arena_inputs.count(in)) continue;
    const size_t bytes = static_cast<size_t>(in->type.numel()) * dtype_size(plan.dtype_of(in));
    os << "  grid_copy(" << m.buffer(in) << ", p.inputs[" << i << "], " << bytes << "ULL);  // input " << i << " '"
       << comment_text(in->name) << "'\n";
  }
  os << "  grid_barrier(p.sync);\n";
  return os.str();
}

void print_prelude(std::ostream& os, const Module& m, const std::string& model_name) {
  const KernelPlan& plan = m.plan;
  const KernelContext& c = plan.ctx;
  os << "// Generated by Mono from " << comment_text(model_name) << " (opset " << m.graph.opset << "), "
     << (plan.settings.precision == Precision::kF16 ? "fp16 with fp32 accumulation" : "fp32") << ", sm_" << c.sm_arch << ".\n";
  os << "// One persistent kernel: " << plan.groups.size() << " groups in " << plan.stages.size()
     << " stages, a grid barrier between stages.\n";
  os << "// Context: " << c.threads << " threads/block, " << c.blocks_per_sm << " block/SM, " << c.smem_bytes
     << " B dynamic shared memory, register cap " << c.register_cap() << ".\n";
  for (const char* h : device_include_order()) os << "#include \"" << h << "\"\n";
  os << "\nusing namespace mono_dev;\n\n";
  os << "#define MONO_THREADS " << c.threads << "\n#define MONO_SMEM_BYTES " << c.smem_bytes << "\n\n";
  os << "struct MonoParams {\n  const unsigned char* weights;  // packed constants\n"
        "  unsigned char* arena;          // activations and split-K workspaces\n"
        "  unsigned int* sync;            // grid barrier and split-K tile counters (zeroed once)\n"
        "  const void* inputs["
     << kMaxKernelIo << "];\n  void* outputs[" << kMaxKernelIo << "];\n"
     << "  unsigned long long* profile;  // profiling builds: [stage][2][block] %globaltimer stamps\n};\n\n";
  if (plan.settings.profile)
    os << "#define MONO_PROFILE 1\n__device__ __forceinline__ unsigned long long mono_now() {\n"
          "  unsigned long long t;\n  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n  return t;\n}\n"
          "// Stamp k of stage s for this block (thread 0 only).\n"
          "#define MONO_STAMP(s, k) do { if (threadIdx.x == 0) p.profile[((s) * 2 + (k)) * gridDim.x + blockIdx.x] = mono_now(); } while (0)\n\n";
  const std::vector<TensorMapSpec>& maps = m.tensor_maps();
  if (!maps.empty()) {
    os << "// Tensor maps of the GEMM operands read through the TMA unit (TensorK), encoded by the\n"
          "// runtime over the arena at load time (manifest.json \"tensor_maps\", in this order):\n";
    for (size_t i = 0; i < maps.size(); ++i) {
      const TensorMapSpec& t = maps[i];
      os << "//   " << i << ": " << m.tensor_map_names()[i] << " (arena + " << t.arena_offset << "), " << t.rows << " x "
         << t.cols << " fp16, row stride " << t.row_stride << " B, box " << t.box_rows << " x " << t.box_cols
         << ", 128-byte swizzle\n";
    }
    os << "__constant__ TensorMap mono_tmaps[" << maps.size() << "];\n\n";
  }
}

}  // namespace
}  // namespace emit

int kernel_calls(const Graph& graph, const KernelPlan& plan) {
  emit::Module m(graph, plan);
  return emit::build_body(m).calls;
}

std::string emit_cuda(const Graph& graph, const KernelPlan& plan, const std::string& model_name,
                      std::vector<TensorMapSpec>* tensor_maps) {
  using namespace emit;
  Module m(graph, plan);
  // The stages' work first: it defines the functions, types and tensor maps the prelude lists.
  const Body body = build_body(m);
  const std::string copies = output_copies(m, graph);  // before the buffer list, which it adds to
  const std::string inputs = input_copies(m, graph);
  std::ostringstream main;
  std::string tables;
  print_body(main, m, body, &tables);
  std::ostringstream os;
  print_prelude(os, m, model_name);
  os << "// ---- group functions (shared by groups with the same code) ----\n\n";
  os << m.definitions(plan.inline_groups);
  // Macros rather than pointer variables: with a variable per buffer at the top of the kernel,
  // ptxas allocated registers differently (tiny-resnet fp32: 154 -> 156 registers, another SASS).
  os << "// ---- buffers, by tensor: the arena (t_), packed constants (w_), the caller's (in_, out_) ----\n"
     << m.buffer_declarations() << "\n" << tables;
  const KernelContext& c = plan.ctx;
  os << "extern \"C\" __global__ void __launch_bounds__(MONO_THREADS, " << c.blocks_per_sm << ") " << kKernelName
     << "(const MonoParams p) {\n  extern __shared__ __align__(1024) unsigned char smem[];  // 1024: TensorK's swizzled stages\n";
  if (plan.settings.profile)
    os << "  const unsigned long long t_start = mono_now();\n  if (threadIdx.x == 0) p.profile[(long long)"
       << 2 * plan.stages.size() << " * gridDim.x + blockIdx.x] = t_start;\n";
  os << inputs << main.str() << copies << "}\n";
  if (tensor_maps) *tensor_maps = m.tensor_maps();
  return os.str();
}

}  // namespace mono
