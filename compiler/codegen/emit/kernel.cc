// The kernel's translation unit (cuda_emitter.h): a header naming the model and context, the
// device library, MonoParams, the tensor-map table, the group functions and types the
// constructs defined, and `mono_main`, which runs the stages in order with a grid barrier
// between them. Within a stage every block walks the stage's work items (all groups' items,
// one after another) from blockIdx.x in steps of gridDim.x.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <sstream>

#include "compiler/codegen/cuda_emitter.h"
#include "compiler/codegen/emit/module.h"
#include "compiler/codegen/emit/names.h"
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
    const bool wg = d.text.find("GemmWg<") != std::string::npos || d.text.find("FlashWg<") != std::string::npos;
    const char* ab = std::getenv("MONO_AB_LOOP");
    const bool only_wg = ab && std::atoi(ab) == 3;
    const std::string h = only_wg ? (wg ? "__device__ __forceinline__ void " : "static __device__ __noinline__ void ") : head;
    out += (d.function.empty() ? "" : h) + d.text + "\n";
  }
  return out;
}

namespace {

GroupWork group_work(Module& m, const Group& g) {
  if (!g.fused.empty()) return emit_attention(m, g);
  switch (g.kind) {
    case GroupKind::kGemm:
    case GroupKind::kConvGemm: return emit_gemm(m, g);
    case GroupKind::kRows: return emit_rows(m, g);
    case GroupKind::kPointwise: return emit_pointwise(m, g);
  }
  MONO_CHECK(false, "unknown group kind");
}

// A stage's loop over its work items (all its groups' items, one after another).
std::string item_loop(const KernelPlan& plan, int s, const std::vector<GroupWork>& work) {
  std::ostringstream os;
  os << "  for (int item = blockIdx.x; item < " << plan.stage_items(s) << "; item += gridDim.x) {\n";
  int64_t start = 0;
  for (size_t i = 0; i < work.size(); ++i) {
    const int64_t end = start + work[i].items;
    const std::string statement = work[i].statement(start ? str_cat("item - ", start) : std::string("item"));
    if (work.size() == 1)
      os << "    " << statement << ";\n";
    else
      os << "    " << (i ? "else " : "") << (i + 1 < work.size() ? str_cat("if (item < ", end, ") ") : "") << statement << ";\n";
    start = end;
  }
  os << "    __syncthreads();\n  }\n";
  return os.str();
}

// One stage: what its groups implement (comments), its item loop, then the grid barrier
// (`barrier`: not after the last stage) and, in profiling builds, the stamps (`s`: the stage's
// number, a C expression in layer loops).
void print_stage(std::ostream& os, const KernelPlan& plan, const std::string& s, const std::string& comments,
                 const std::string& loop, bool barrier, const std::string& indent = "") {
  os << "\n" << indent << "  // ---- stage " << s << " ----\n" << comments << loop;
  if (plan.settings.profile) os << indent << "  MONO_STAMP(" << s << ", 0);  // work done\n";
  if (barrier) os << indent << "  grid_barrier(p.sync);\n";
  if (plan.settings.profile) os << indent << "  MONO_STAMP(" << s << ", 1);  // left the barrier\n";
}

// Layer loops. A stage's item loop as a shape and values: every buffer whose pointer is an
// offset into the arena, the constants or the sync area, and every tensor-map index, becomes a
// placeholder naming its kind; `values` are what they replaced, in order. Stages of the same
// shape differ only in where their tensors live, so a run of repeated layers (stages s0 ..
// s0 + period - 1, repeated `repeats` times) runs as one loop over the layers that takes the
// values that differ from a table (`mono_layers<k>`, in constant memory).
struct StageShape {
  std::vector<std::string> pieces;  // the text between placeholders (one more than values)
  std::vector<std::string> kinds;   // per placeholder: "map", or the buffer's cast and base
  std::vector<std::string> values;  // per placeholder: the buffer's name or the map's index
  std::string key;                  // pieces and kinds joined: equal keys, same shape
};

StageShape stage_shape(const Module& m, const std::string& text) {
  StageShape sh;
  std::string piece;
  auto is_start = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  auto is_part = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  auto add = [&](const std::string& kind, const std::string& value) {
    sh.pieces.push_back(piece);
    sh.kinds.push_back(kind);
    sh.values.push_back(value);
    sh.key += piece + "\x01" + kind + "\x02";
    piece.clear();
  };
  static const std::string kMaps = "mono_tmaps[";
  for (size_t i = 0; i < text.size();) {
    if (!is_start(text[i]) || (i > 0 && is_part(text[i - 1]))) {
      piece += text[i++];
      continue;
    }
    size_t j = i;
    while (j < text.size() && is_part(text[j])) ++j;
    const std::string word = text.substr(i, j - i);
    auto ref = m.buffer_refs().find(word);
    if (ref != m.buffer_refs().end() && !ref->second.base.empty()) {
      add(ref->second.cast + "|" + ref->second.base, word);
      i = j;
    } else if (text.compare(i, kMaps.size(), kMaps) == 0) {
      const size_t close = text.find(']', i);
      piece += kMaps;
      add("map", text.substr(i + kMaps.size(), close - i - kMaps.size()));
      i = close;
    } else {
      piece += word;
      i = j;
    }
  }
  sh.pieces.push_back(piece);
  sh.key += piece;
  return sh;
}

struct LayerLoop {
  int first = 0, period = 0, repeats = 0;
  int end() const { return first + period * repeats; }
};

// The loops over repeated stages among stages [begin, end): the run that saves the most stages,
// then the same on either side of it.
void find_loops(const std::vector<int>& shape_id, int begin, int end, std::vector<LayerLoop>* loops) {
  LayerLoop best;
  for (int period = 1; 2 * period <= end - begin; ++period) {
    int run = 0;  // stages i - run .. i - 1 each have the shape of the stage a period later
    for (int i = begin; i + period <= end; ++i) {
      const bool same = i + period < end && shape_id[i] == shape_id[i + period];
      if (same) {
        ++run;
        continue;
      }
      const int repeats = run / period + 1, first = i - run;
      if (repeats >= 2 && period * (repeats - 1) > best.period * (best.repeats - 1)) best = {first, period, repeats};
      run = 0;
    }
  }
  if (best.repeats < 2) return;
  find_loops(shape_id, begin, best.first, loops);
  loops->push_back(best);
  find_loops(shape_id, best.end(), end, loops);
}

// The stages of `loop` as one loop over its repeats; its table of the values that differ
// between repeats is appended to `tables`.
void print_loop(std::ostream& os, const Module& m, const LayerLoop& loop, int index, const std::vector<StageShape>& shapes,
                const std::vector<std::string>& comments, std::string* tables) {
  const KernelPlan& plan = m.plan;
  std::vector<std::vector<std::string>> columns;  // per table column: the value in each repeat
  std::ostringstream body;
  const std::string L = str_cat("mono_layers", index);
  for (int j = 0; j < loop.period; ++j) {
    const StageShape& first = shapes[loop.first + j];
    std::string text = first.pieces[0];
    for (size_t q = 0; q < first.values.size(); ++q) {
      std::vector<std::string> values;
      for (int r = 0; r < loop.repeats; ++r) values.push_back(shapes[loop.first + r * loop.period + j].values[q]);
      if (std::all_of(values.begin(), values.end(), [&](const std::string& v) { return v == values[0]; })) {
        text += values[0];
      } else {
        auto col = std::find(columns.begin(), columns.end(), values);  // a buffer the stage names twice: one column
        const std::string cell = str_cat(L, "[layer][", col - columns.begin(), "]");
        if (col == columns.end()) columns.push_back(values);
        if (first.kinds[q] == "map") {
          text += cell;
        } else {
          const std::string& kind = first.kinds[q];
          const size_t bar = kind.find('|');
          const std::string cast = kind.substr(0, bar), base = kind.substr(bar + 1);
          text += cast.empty() ? str_cat("(", base, " + ", cell, ")") : str_cat("((", cast, ")(", base, " + ", cell, "))");
        }
      }
      text += first.pieces[q + 1];
    }
    std::string indented;
    for (size_t i = 0, n; i < text.size(); i = n + 1) {
      n = text.find('\n', i);
      if (n == std::string::npos) n = text.size();
      indented += "  " + text.substr(i, n - i) + "\n";
    }
    std::string notes;
    for (size_t i = 0, n; i < comments[loop.first + j].size(); i = n + 1) {
      n = comments[loop.first + j].find('\n', i);
      notes += "  " + comments[loop.first + j].substr(i, n - i) + "\n";
    }
    print_stage(body, plan, str_cat(loop.first + j, " + ", loop.period, " * layer"), notes, indented, true, "  ");
  }
  os << "\n  // ---- stages " << loop.first << " to " << loop.end() - 1 << ": " << loop.repeats << " repeats of "
     << loop.period << (loop.period > 1 ? " stages" : " stage") << " (a loop over layers; " << L << ": what differs) ----\n";
  os << "#pragma unroll 1\n  for (int layer = 0; layer < " << loop.repeats << "; ++layer) {" << body.str() << "  }\n";
  if (columns.empty()) return;
  *tables += str_cat("// Layer loop ", index, " (stages ", loop.first, " to ", loop.end() - 1,
                     "): per repeat, the offsets of its buffers (bytes; sync words) and its tensor maps\n");
  *tables += str_cat("__constant__ long long ", L, "[", loop.repeats, "][", columns.size(), "] = {\n");
  for (int r = 0; r < loop.repeats; ++r) {
    *tables += "  {";
    for (size_t c = 0; c < columns.size(); ++c) {
      const std::string& v = columns[c][r];
      auto ref = m.buffer_refs().find(v);
      *tables += str_cat(c ? ", " : "", ref == m.buffer_refs().end() ? v : std::to_string(ref->second.offset));
    }
    *tables += r + 1 < loop.repeats ? "},\n" : "}\n";
  }
  *tables += "};\n\n";
}

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

std::string emit_cuda(const Graph& graph, const KernelPlan& plan, const std::string& model_name,
                      std::vector<TensorMapSpec>* tensor_maps) {
  using namespace emit;
  Module m(graph, plan);
  // The stages' work first: it defines the functions, types and tensor maps the prelude lists.
  const int n_stages = static_cast<int>(plan.stages.size());
  std::vector<std::vector<GroupWork>> work(n_stages);
  std::vector<std::string> comments(n_stages);
  for (int s = 0; s < n_stages; ++s) {
    for (int gid : plan.stages[s].groups) {
      const Group& g = plan.groups[gid];
      if (g.fused_into >= 0) continue;  // runs inside its attention group or its squeeze consumer
      comments[s] += str_cat("  // group ", gid, ": ", comment_text(g.nodes()));
      for (int f : g.fused) comments[s] += " + " + comment_text(plan.groups[f].nodes());
      comments[s] += "\n";
      work[s].push_back(group_work(m, g));
    }
  }
  const std::string copies = output_copies(m, graph);  // before the buffer list, which it adds to
  const std::string inputs = input_copies(m, graph);
  std::vector<std::string> loops_text(n_stages);
  std::vector<StageShape> shapes;
  std::vector<int> shape_id;
  std::map<std::string, int> ids;
  for (int s = 0; s < n_stages; ++s) {
    loops_text[s] = item_loop(plan, s, work[s]);
    shapes.push_back(stage_shape(m, loops_text[s]));
    shape_id.push_back(ids.emplace(shapes.back().key, static_cast<int>(ids.size())).first->second);
  }
  const char* ab = std::getenv("MONO_AB_LOOP");  // TEMPORARY A/B: 0 none, 1 loops, 2 loops and inlined
  const int mode = ab ? std::atoi(ab) : 0;
  std::vector<LayerLoop> loops;
  if (mode > 0) find_loops(shape_id, 0, n_stages - 1, &loops);  // the last stage has no barrier
  std::ostringstream main;
  std::string tables;
  size_t next = 0;
  for (int s = 0; s < n_stages;) {
    if (next < loops.size() && loops[next].first == s) {
      print_loop(main, m, loops[next], static_cast<int>(next), shapes, comments, &tables);
      s = loops[next++].end();
      continue;
    }
    print_stage(main, plan, std::to_string(s), comments[s], loops_text[s], s + 1 < n_stages);
    ++s;
  }
  std::ostringstream os;
  print_prelude(os, m, model_name);
  os << "// ---- group functions (shared by groups with the same code) ----\n\n";
  os << m.definitions(mode >= 2 || plan.inline_groups);
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
