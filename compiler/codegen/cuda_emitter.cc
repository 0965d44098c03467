#include "compiler/codegen/cuda_emitter.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <algorithm>
#include <set>
#include <sstream>

#include "compiler/codegen/support.h"
#include "compiler/ir/printer.h"
#include "compiler/support/error.h"

namespace mono {
namespace {

const char* ctype(DType d) {
  switch (d) {
    case DType::kF32: return "float";
    case DType::kF16: return "half_t";
    case DType::kI64: return "long long";
    case DType::kI32: return "int";
    case DType::kBool: return "unsigned char";
  }
  return "?";
}

// The arithmetic type an element is computed in.
const char* compute_type(DType d) {
  if (is_float(d)) return "float";
  if (d == DType::kBool) return "bool";
  return "long long";
}

std::string lit(double v) {
  if (std::isnan(v)) return "__int_as_float(0x7fc00000)";
  if (std::isinf(v)) return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  return format_float(v) + "f";
}

std::string comment_safe(const std::string& s) {
  std::string out;
  for (char c : s) out += (c == '\n' || c == '\r') ? ' ' : c;
  // Never let model text close the comment.
  size_t p;
  while ((p = out.find("*/")) != std::string::npos) out.replace(p, 2, "* /");
  return out;
}

int64_t attr_i(const Node& n, const char* key, int64_t def) {
  const AttrValue* a = n.attr(key);
  return a ? std::get<int64_t>(*a) : def;
}
float attr_f(const Node& n, const char* key, float def) {
  const AttrValue* a = n.attr(key);
  return a ? std::get<float>(*a) : def;
}
std::vector<int64_t> attr_is(const Node& n, const char* key) {
  const AttrValue* a = n.attr(key);
  return a ? std::get<std::vector<int64_t>>(*a) : std::vector<int64_t>{};
}

// Collects the pointer parameters of one group function: each distinct root value becomes
// `pN`, with its C type; the call site passes the matching pointer expressions.
class Params {
 public:
  Params(const KernelPlan& plan) : plan_(plan) {}

  std::string ref(const Value* v, const std::string& packing = "") {
    const Value* r = plan_.root(v);
    auto key = std::make_pair(r, packing);
    auto it = names_.find(key);
    if (it != names_.end()) return it->second;
    std::string name = "p" + std::to_string(order_.size());
    names_[key] = name;
    order_.push_back({r, packing, name});
    return name;
  }
  // A pointer that is no value of the graph (LayerNorm statistics, counters): `pointer` is the
  // kernel-side expression, of type `type*` (const unless `written`).
  std::string ref_raw(const std::string& key, const std::string& type, const std::string& pointer, bool written) {
    auto k = std::make_pair(static_cast<const Value*>(nullptr), key);
    auto it = names_.find(k);
    if (it != names_.end()) return it->second;
    std::string name = "p" + std::to_string(order_.size());
    names_[k] = name;
    order_.push_back({nullptr, key, name, type, pointer, written});
    return name;
  }
  // `const T* p0, T* p1` for the function signature.
  std::string signature(const std::set<const Value*>& written) const {
    std::string s;
    for (const auto& e : order_) {
      if (!e.value) {
        s += str_cat(", ", e.written ? "" : "const ", e.type, "* __restrict__ ", e.name);
        continue;
      }
      bool w = written.count(e.value) > 0;
      s += str_cat(", ", w ? "" : "const ", ctype(plan_.dtype_of(e.value)), "* __restrict__ ", e.name);
    }
    return s;
  }
  std::string call_args() const {
    std::string s;
    for (const auto& e : order_) s += ", " + (e.value ? pointer(e.value, e.packing) : e.pointer);
    return s;
  }
  std::string pointer(const Value* r, const std::string& packing) const {
    const Placement& pl = plan_.placement.at(r);
    const std::string t = ctype(plan_.dtype_of(r));
    switch (pl.space) {
      case Placement::kArena: return str_cat("(", t, "*)(p.arena + ", pl.offset, ")");
      case Placement::kWeights: return str_cat("(const ", t, "*)(p.weights + ", plan_.constant_offset(r, packing), ")");
      case Placement::kInput: return str_cat("(const ", t, "*)p.inputs[", pl.index, "]");
      case Placement::kOutput: return str_cat("(", t, "*)p.outputs[", pl.index, "]");
    }
    return "";
  }

 private:
  struct Entry {
    const Value* value;  // null: a raw pointer (ref_raw)
    std::string packing;
    std::string name;
    std::string type = "", pointer = "";
    bool written = false;
  };
  const KernelPlan& plan_;
  std::map<std::pair<const Value*, std::string>, std::string> names_;
  std::vector<Entry> order_;
};

// Index arithmetic over a shape: decomposes a flat index into per-axis variables.
std::string decompose(const std::string& flat, const Shape& shape, const std::string& prefix) {
  const std::string rem = prefix + "_rest";
  // 32-bit division by a constant is a multiply-high and a shift; 64-bit is several times that,
  // per element of every epilogue and pointwise group. flat < numel(shape) always.
  const bool narrow = shape_numel(shape) <= INT32_MAX;
  const std::string t = narrow ? "int" : "long long", lit = narrow ? "" : "LL";
  std::string s = narrow ? str_cat("    int ", rem, " = (int)(", flat, ");\n") : str_cat("    long long ", rem, " = ", flat, ";\n");
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    s += str_cat("    const ", t, " ", prefix, d, " = ", rem, " % ", shape[d], lit, "; ", rem, " /= ", shape[d], lit, ";\n");
  }
  s += str_cat("    (void)", rem, ";\n");
  return s;
}

// Linear offset into a tensor of `in` shape broadcast against the output index variables
// `prefix0..` of an output of rank `out_rank`.
std::string broadcast_offset(const Shape& in, int64_t out_rank, const std::string& prefix) {
  const int64_t r = static_cast<int64_t>(in.size());
  std::string expr;
  int64_t stride = 1;
  for (int64_t d = r - 1; d >= 0; --d) {
    if (in[d] != 1) {
      std::string term = str_cat(prefix, d + (out_rank - r));
      if (stride != 1) term += str_cat(" * ", stride, "LL");
      expr = expr.empty() ? term : term + " + " + expr;
    }
    stride *= in[d];
  }
  return expr.empty() ? "0" : expr;
}

class Emitter {
 public:
  Emitter(const Graph& g, const KernelPlan& plan) : g_(g), plan_(plan) {}
  const std::vector<TensorMapSpec>& tensor_maps() const { return tensor_maps_; }  // after run()

  std::string run(const std::string& model_name) {
    std::ostringstream calls;
    // Stage s prefetches stage s + distance; stages 1 .. distance - 1 have no such stage, so
    // the kernel prefetches them on entry (stage 0's weights are read at once: no point).
    if (plan_.prefetch_weights)
      for (int t = 1; t < plan_.prefetch_distance && t < static_cast<int>(plan_.stages.size()); ++t)
        emit_prefetch(calls, t);
    const int n_stages = static_cast<int>(plan_.stages.size());
    std::vector<std::vector<StageCall>> work(n_stages);
    std::vector<std::string> comments(n_stages);
    for (int s = 0; s < n_stages; ++s) {
      std::ostringstream c;
      work[s] = stage_calls(s, c);
      comments[s] = c.str();
    }
    static const std::vector<StageCall> kNone;
    for (int s = 0; s < n_stages; ++s)
      emit_stage(calls, s, comments[s], work[s], s + 1 < n_stages ? work[s + 1] : kNone, s > 0 && has_preload(work[s]));
    std::ostringstream os;
    const KernelContext& c = plan_.ctx;
    os << "// Generated by Mono from " << comment_safe(model_name) << " (opset " << g_.opset << "), "
       << (plan_.precision == Precision::kF16 ? "fp16 with fp32 accumulation" : "fp32") << ", sm_" << c.sm_arch << ".\n";
    os << "// One persistent kernel: " << plan_.groups.size() << " groups in " << plan_.stages.size()
       << " stages, a grid barrier between stages.\n";
    os << "// Context: " << c.threads << " threads/block, " << c.blocks_per_sm << " block/SM, " << c.smem_bytes
       << " B dynamic shared memory, register cap " << c.register_cap() << ".\n";
    if (!plan_.staged_epilogue) os << "#define MONO_DIRECT_EPILOGUE 1  // GEMM epilogues from the mma registers\n";
    if (plan_.epi_chunk != 8) os << "#define MONO_EPI_CHUNK " << plan_.epi_chunk << "  // two-phase epilogue elements per round trip\n";
    os << "#include \"mono_dev/common.cuh\"\n#include \"mono_dev/barrier.cuh\"\n#include \"mono_dev/gemm.cuh\"\n"
          "#include \"mono_dev/rows.cuh\"\n#include \"mono_dev/elementwise.cuh\"\n\nusing namespace mono_dev;\n\n";
    os << "#define MONO_THREADS " << c.threads << "\n#define MONO_SMEM_BYTES " << c.smem_bytes << "\n\n";
    os << "struct MonoParams {\n  const unsigned char* weights;  // packed constants\n"
          "  unsigned char* arena;          // activations and split-K workspaces\n"
          "  unsigned int* sync;            // grid barrier and split-K tile counters (zeroed once)\n"
          "  const void* inputs["
       << kMaxKernelIo << "];\n  void* outputs[" << kMaxKernelIo << "];\n"
       << "  unsigned long long* profile;  // profiling builds: [stage][2][block] %globaltimer stamps\n};\n\n";
    if (plan_.profile)
      os << "#define MONO_PROFILE 1\n__device__ __forceinline__ unsigned long long mono_now() {\n"
            "  unsigned long long t;\n  asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n  return t;\n}\n"
            "// Stamp k of stage s for this block (thread 0 only).\n"
            "#define MONO_STAMP(s, k) do { if (threadIdx.x == 0) p.profile[((s) * 2 + (k)) * gridDim.x + blockIdx.x] = mono_now(); } while (0)\n\n";
    if (!tensor_maps_.empty()) {
      os << "// Tensor maps of the GEMM operands read through the TMA unit (gemm.cuh TensorK), encoded by\n"
            "// the runtime over the arena at load time (manifest.json \"tensor_maps\", in this order):\n";
      for (size_t i = 0; i < tensor_maps_.size(); ++i) {
        const TensorMapSpec& t = tensor_maps_[i];
        os << "//   " << i << ": arena + " << t.arena_offset << ", " << t.rows << " x " << t.cols << " fp16, row stride "
           << t.row_stride << " B, box " << t.box_rows << " x " << t.box_cols << ", 128-byte swizzle\n";
      }
      os << "__constant__ TensorMap mono_tmaps[" << tensor_maps_.size() << "];\n\n";
    }
    os << "// ---- group functions (shared by groups with the same code) ----\n\n";
    for (const std::string& f : functions_) os << f << "\n";
    os << "extern \"C\" __global__ void __launch_bounds__(MONO_THREADS, " << c.blocks_per_sm << ") " << kKernelName
       << "(const MonoParams p) {\n  extern __shared__ __align__(1024) unsigned char smem[];  // 1024: TensorK's swizzled stages\n"
       << (plan_.profile ? "  const unsigned long long t_start = mono_now();\n  if (threadIdx.x == 0) p.profile[(long long)" + std::to_string(2 * plan_.stages.size()) + " * gridDim.x + blockIdx.x] = t_start;\n" : "")
       << calls.str() << "}\n";
    return os.str();
  }

 private:
  // Registers a function body under a name derived from its text; returns the name.
  std::string define(const std::string& kind, const std::string& signature_tail, const std::string& body,
                     const std::string& prelude = "") {
    std::string text = prelude + (plan_.inline_groups ? "__device__ __forceinline__ void @(" : "__device__ __noinline__ void @(") +
                       signature_tail + ") {\n" + body + "}\n";
    auto it = by_text_.find(text);
    if (it != by_text_.end()) return it->second;
    std::string name = str_cat(kind, "_", by_text_.size());
    by_text_[text] = name;
    std::string out = text;
    size_t pos;
    while ((pos = out.find("@")) != std::string::npos) out.replace(pos, 1, name);
    functions_.push_back(out);
    return name;
  }

  // A stage's work: each group's call (ITEM, and PRE for preloadable GEMMs, still to fill in)
  // with its items, in item order.
  struct StageCall {
    std::string call;
    int64_t items;
    bool pre;
  };
  std::vector<StageCall> stage_calls(int s, std::ostream& comments) {
    std::vector<StageCall> calls;
    for (int gid : plan_.stages[s].groups) {
      const Group& grp = plan_.groups[gid];
      if (grp.fused_into >= 0) continue;  // runs inside its attention group
      if (grp.folded_ln >= 0) {             // applied by its neighbours (plan.h LnFold)
        comments << "  // group " << gid << ": " << comment_safe(grp.nodes()) << ": folded into group "
                 << plan_.ln_folds[grp.folded_ln].producer << " (statistics) and the readers of its output\n";
        continue;
      }
      comments << "  // group " << gid << ": " << comment_safe(grp.nodes());
      for (int f : grp.fused) comments << " + " << comment_safe(plan_.groups[f].nodes());
      comments << "\n";
      std::string call = grp.fused.empty() ? emit_group(grp) : emit_attention(grp);
      calls.push_back({call, grp.items, preloadable_.count(gid) > 0});
    }
    return calls;
  }

  static std::string fill(std::string call, const std::string& item, const std::string& pre) {
    call.replace(call.find("ITEM"), 4, item);
    const size_t p = call.find("PRE");
    if (p != std::string::npos) call.replace(p, 3, pre);
    return call;
  }

  // calls: this stage's; next: the next stage's (empty for the last stage); `preloaded`: the
  // previous stage issued this stage's preloads.
  void emit_stage(std::ostream& os, int s, const std::string& comments, const std::vector<StageCall>& calls,
                  const std::vector<StageCall>& next, bool preloaded) {
    os << "\n  // ---- stage " << s << " ----\n";
    // Weights of a later stage go to L2 now, a whole stage before they are read.
    if (plan_.prefetch_weights && s + plan_.prefetch_distance < static_cast<int>(plan_.stages.size()))
      emit_prefetch(os, s + plan_.prefetch_distance);
    os << comments;
    int64_t total = 0;
    for (const StageCall& c : calls) total += c.items;
    os << "  for (int item = blockIdx.x; item < " << total << "; item += gridDim.x) {\n";
    int64_t start = 0;
    for (size_t i = 0; i < calls.size(); ++i) {
      const int64_t end = start + calls[i].items;
      const std::string call = fill(calls[i].call, start ? str_cat("item - ", start) : std::string("item"),
                                    preloaded ? "item == (int)blockIdx.x" : "0");
      if (calls.size() == 1) {
        os << "    " << call << ";\n";
      } else {
        os << "    " << (i ? "else " : "") << (i + 1 < calls.size() ? str_cat("if (item < ", end, ") ") : "") << call
           << ";\n";
      }
      start = end;
    }
    os << "    __syncthreads();\n  }\n";
    if (plan_.profile) os << "  MONO_STAMP(" << s << ", 0);  // work done\n";
    if (!next.empty()) {
      if (has_preload(next)) {
        // The weights of this block's first item of the next stage do not depend on this stage:
        // their first k tiles load into shared memory while the block waits at the barrier
        // (after its arrival: barrier.cuh).
        os << "  {\n    const unsigned long long bar = grid_arrive(p.sync);\n"
           << "    const int item = blockIdx.x;  // preload: this block's first GEMM item of stage " << s + 1 << "\n";
        int64_t first = 0;
        for (const StageCall& c : next) {
          if (c.pre)
            os << "    if (" << (first ? str_cat("item >= ", first, " && ") : std::string()) << "item < " << first + c.items << ") "
               << fill(c.call, first ? str_cat("item - ", first) : std::string("item"), "2") << ";\n";
          first += c.items;
        }
        os << "    grid_wait(p.sync, bar);\n  }\n";
      } else {
        os << "  grid_barrier(p.sync);\n";
      }
    }
    if (plan_.profile) os << "  MONO_STAMP(" << s << ", 1);  // left the barrier\n";
  }

  static bool has_preload(const std::vector<StageCall>& calls) {
    for (const StageCall& c : calls)
      if (c.pre) return true;
    return false;
  }

  // Prefetches into L2 the packed weights stage `s` reads, each block a slice, 128-byte lines.
  void emit_prefetch(std::ostream& os, int s) {
    std::set<size_t> seen;
    std::vector<std::pair<size_t, size_t>> ranges;  // offset, bytes
    for (int gid : plan_.stages[s].groups) {
      const Group& grp = plan_.groups[gid];
      auto visit = [&](const Node* n) {
        for (int i = 0; i < n->num_inputs(); ++i) {
          const Value* v = n->inputs[i] ? plan_.root(n->inputs[i]) : nullptr;
          if (!v || !v->is_constant() || v->constant->numel() <= 1) continue;
          const std::string packing = plan_.packing(*n, i);
          for (const auto& c : plan_.constants) {
            if (c.value != v || (c.packing != packing && c.packing != "cd" + packing) || !seen.insert(c.offset).second)
              continue;
            ranges.emplace_back(c.offset, c.bytes);
          }
        }
      };
      visit(grp.anchor);
      for (const Node* e : grp.epilogue) visit(e);
    }
    if (ranges.empty()) return;
    // Merge adjacent ranges (constants of one layer are packed next to each other).
    std::sort(ranges.begin(), ranges.end());
    std::vector<std::pair<size_t, size_t>> merged;
    for (const auto& r : ranges) {
      if (!merged.empty() && merged.back().first + merged.back().second == r.first) merged.back().second += r.second;
      else merged.push_back(r);
    }
    size_t total = 0;
    for (const auto& r : merged) total += r.second;
    os << "  // prefetch the " << total << " B of weights stage " << s << " reads into L2\n";
    for (const auto& r : merged) os << "  prefetch_l2(p.weights + " << r.first << ", " << r.second << ");\n";
  }

  std::string emit_group(const Group& grp) {
    switch (grp.kind) {
      case GroupKind::kGemm: return emit_gemm(grp, true);
      case GroupKind::kConvGemm: return emit_gemm(grp, true);
      case GroupKind::kRows: return emit_rows(grp);
      case GroupKind::kPointwise: return emit_pointwise(grp);
    }
    return "";
  }

  // ---- operands --------------------------------------------------------------------------

  // An element of `v` at an offset expression, converted to its compute type. Scalar constants
  // become literals.
  std::string load(Params& P, const Value* v, const std::string& offset) {
    const Value* r = plan_.root(v);
    const DType d = plan_.dtype_of(r);
    if (r->is_constant() && r->constant->numel() == 1) {
      if (is_float(d)) return lit(r->constant->as_double(0));
      if (d == DType::kBool) return r->constant->as_int(0) ? "true" : "false";
      return str_cat(r->constant->as_int(0), "LL");
    }
    auto fold = plan_.ln_fold_of_y.find(r);
    if (fold != plan_.ln_fold_of_y.end()) return load_folded_ln(P, fold->second, offset);
    std::string e = str_cat(P.ref(r), "[", offset, "]");
    if (is_float(d)) return slot("to_float(" + e + ")");
    if (d == DType::kBool) return "(" + e + " != 0)";
    return "(long long)" + e;
  }
  // A float read: in a two-phase GEMM epilogue it is made in the load phase (L) and kept in
  // in.x[k] for the store phase.
  std::string slot(const std::string& e) {
    if (!epi_slots_) return e;
    const size_t k = (*epi_slots_)++;
    return str_cat("(L ? (in.x[", k, "] = ", e, ") : in.x[", k, "])");
  }
  // The float pair at ptr[2 * i], ptr[2 * i + 1] (8-byte aligned): in a two-phase epilogue one
  // 8-byte load into two slots.
  std::pair<std::string, std::string> slot_pair(const std::string& ptr, const std::string& i) {
    if (!epi_slots_) return {str_cat(ptr, "[2 * (", i, ")]"), str_cat(ptr, "[2 * (", i, ") + 1]")};
    const size_t k = *epi_slots_;
    *epi_slots_ += 2;
    return {str_cat("(L ? ld_pair_slots(in.x + ", k, ", ", ptr, " + 2 * (", i, ")) : in.x[", k, "])"),
            str_cat("in.x[", k + 1, "]")};
  }
  // The arena pointer to a folded LayerNorm's statistics (float pairs: rstd, -mean * rstd).
  std::string ln_stats(Params& P, int f) {
    return P.ref_raw(str_cat("lnstats", f), "float", str_cat("(const float*)(p.arena + ", plan_.ln_folds[f].stats_offset, ")"),
                     false);
  }
  // y = LayerNorm(x) at `offset` of y (plan.h LnFold: y is never stored).
  std::string load_folded_ln(Params& P, int f, const std::string& offset) {
    const LnFold& fold = plan_.ln_folds[f];
    const Node& ln = *plan_.groups[fold.ln_group].anchor;
    const std::string o = fold.x->type.numel() <= INT32_MAX ? str_cat("(int)(", offset, ")") : str_cat("(", offset, ")");
    const std::string row = str_cat(o, " / ", fold.len), col = str_cat(o, " % ", fold.len);
    const auto st = slot_pair(ln_stats(P, f), row);
    std::string e = str_cat("(", slot(str_cat("to_float(", P.ref(fold.x), "[", offset, "])")), " * ", st.first, " + ",
                            st.second, ")");
    e = str_cat("(", e, " * ", slot(str_cat("to_float(", P.ref(ln.inputs[1]), "[", col, "])")));
    if (ln.input(2)) e += str_cat(" + ", slot(str_cat("to_float(", P.ref(ln.inputs[2]), "[", col, "])")));
    return e + ")";
  }
  std::string store_expr(DType d, const std::string& v) {
    if (is_float(d)) return str_cat("from_float<", ctype(d), ">(", v, ")");
    return str_cat("(", ctype(d), ")(", v, ")");
  }

  // ---- elementwise expressions (the op table) -------------------------------------------

  // The expression of an elementwise op given its operands' expressions.
  std::string elementwise_expr(const Node& n, const std::vector<std::string>& a, DType in_dtype) {
    const bool f = is_float(in_dtype);
    switch (n.op) {
      case OpKind::kAdd: return "(" + a[0] + " + " + a[1] + ")";
      case OpKind::kSub: return "(" + a[0] + " - " + a[1] + ")";
      case OpKind::kMul: return "(" + a[0] + " * " + a[1] + ")";
      case OpKind::kDiv: return "(" + a[0] + " / " + a[1] + ")";
      case OpKind::kPow: return f ? "powf(" + a[0] + ", (float)" + a[1] + ")" : "ipow(" + a[0] + ", " + a[1] + ")";
      case OpKind::kMax: return f ? "fmax_nan(" + a[0] + ", " + a[1] + ")" : "max(" + a[0] + ", " + a[1] + ")";
      case OpKind::kMin: return f ? "fmin_nan(" + a[0] + ", " + a[1] + ")" : "min(" + a[0] + ", " + a[1] + ")";
      case OpKind::kRelu: return f ? "fmaxf(" + a[0] + ", 0.0f)" : "max(" + a[0] + ", 0LL)";
      case OpKind::kAbs: return f ? "fabsf(" + a[0] + ")" : "llabs(" + a[0] + ")";
      case OpKind::kNeg: return "(-" + a[0] + ")";
      case OpKind::kExp: return "expf(" + a[0] + ")";
      case OpKind::kLog: return "logf(" + a[0] + ")";
      case OpKind::kSqrt: return "sqrtf(" + a[0] + ")";
      case OpKind::kErf: return "erff(" + a[0] + ")";
      case OpKind::kTanh: return "tanhf(" + a[0] + ")";
      case OpKind::kSigmoid: return "sigmoid(" + a[0] + ")";
      case OpKind::kReciprocal: return "(1.0f / " + a[0] + ")";
      case OpKind::kGelu: {
        const AttrValue* ap = n.attr("approximate");
        bool tanh_form = ap && std::get<std::string>(*ap) == "tanh";
        return (tanh_form ? "gelu_tanh(" : "gelu_erf(") + a[0] + ")";
      }
      case OpKind::kIsNaN: return "isnan(" + a[0] + ")";
      case OpKind::kNot: return "(!" + a[0] + ")";
      case OpKind::kAnd: return "(" + a[0] + " && " + a[1] + ")";
      case OpKind::kOr: return "(" + a[0] + " || " + a[1] + ")";
      case OpKind::kEqual: return "(" + a[0] + " == " + a[1] + ")";
      case OpKind::kLess: return "(" + a[0] + " < " + a[1] + ")";
      case OpKind::kLessOrEqual: return "(" + a[0] + " <= " + a[1] + ")";
      case OpKind::kGreater: return "(" + a[0] + " > " + a[1] + ")";
      case OpKind::kGreaterOrEqual: return "(" + a[0] + " >= " + a[1] + ")";
      case OpKind::kWhere: return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
      case OpKind::kClip: return "fminf(fmaxf(" + a[0] + ", " + a[1] + "), " + a[2] + ")";
      case OpKind::kCast: return a[0];
      default: MONO_CHECK(false, "not an elementwise op: ", n.describe());
    }
  }

  // Operand expressions of an elementwise node reading at the output index `prefix*`; the
  // input `running` (if >= 0) is the value `v` instead.
  std::vector<std::string> elementwise_operands(Params& P, const Node& n, int running, const std::string& prefix) {
    const int64_t out_rank = n.outputs[0]->type.rank();
    std::vector<std::string> a;
    for (int i = 0; i < n.num_inputs(); ++i) {
      if (i == running) {
        a.push_back("v");
      } else if (!n.inputs[i]) {
        a.push_back("");
      } else {
        a.push_back(load(P, n.inputs[i], broadcast_offset(n.inputs[i]->type.shape, out_rank, prefix)));
      }
    }
    if (n.op == OpKind::kClip) {
      // Bounds: inputs (opset >= 11) or attributes; absent means unbounded.
      a.resize(3);
      if (n.opset < 11) {
        a[1] = n.attr("min") ? lit(attr_f(n, "min", 0)) : "-__int_as_float(0x7f800000)";
        a[2] = n.attr("max") ? lit(attr_f(n, "max", 0)) : "__int_as_float(0x7f800000)";
      } else {
        if (a[1].empty()) a[1] = "-__int_as_float(0x7f800000)";
        if (a[2].empty()) a[2] = "__int_as_float(0x7f800000)";
      }
      if (!is_float(plan_.dtype_of(n.inputs[0]))) MONO_CHECK(false, "integer Clip in CUDA");
    }
    return a;
  }

  // Statements applying the epilogue steps to `v`, the anchor's element at flat index `flat`
  // of the anchor's output. Transposes in the chain permute the index; views keep the flat
  // index. Returns the code; `store` receives the flat index to store the result at.
  std::string epilogue_code(Params& P, const Group& grp, const std::string& flat, std::string* store) {
    std::string s;
    Shape cur = grp.anchor->outputs[0]->type.shape;
    std::string cur_flat = flat;
    std::vector<std::string> idx;  // index variables over `cur`, when decomposed
    int decompositions = 0;
    std::map<std::string, int64_t> flat_stride;  // index variable -> its stride in the anchor's output
    std::map<std::string, int64_t> flat_extent;  // index variable -> its extent
    epi_m_fastest_ = false;
    epi_n_vec8_ = false;
    epi_index_code_.clear();
    auto ensure_index = [&](const Shape& shape) {
      if (!idx.empty() && shape == cur) return;
      if (shape != cur) {
        // A view between steps: same elements in the same order, another shape.
        cur = shape;
      }
      const std::string prefix = str_cat("e", decompositions++, "_");
      if (cur_flat == flat) {  // not yet permuted: strides relative to the anchor's output
        int64_t stride = 1;
        for (int64_t d = static_cast<int64_t>(cur.size()) - 1; d >= 0; --d) {
          flat_stride[str_cat(prefix, d)] = stride;
          flat_extent[str_cat(prefix, d)] = cur[d];
          stride *= cur[d];
        }
      }
      const std::string dec = decompose(cur_flat, cur, prefix);
      s += dec;
      epi_index_code_ += dec;
      idx.clear();
      for (size_t d = 0; d < cur.size(); ++d) idx.push_back(str_cat(prefix, d));
    };
    for (size_t k = 0; k < grp.epilogue.size(); ++k) {
      const Node* e = grp.epilogue[k];
      if (e->op == OpKind::kIsNaN) continue;  // fused with the Where that follows
      const Shape& in_shape = running_input_shape(grp, e);
      if (in_shape != cur) {
        cur = in_shape;
        idx.clear();
      }
      if (e->op == OpKind::kTranspose) {
        ensure_index(cur);
        std::vector<int64_t> perm = attr_is(*e, "perm");
        if (perm.empty())
          for (int64_t d = static_cast<int64_t>(cur.size()) - 1; d >= 0; --d) perm.push_back(d);
        std::vector<std::string> next(perm.size());
        for (size_t d = 0; d < perm.size(); ++d) next[d] = idx[perm[d]];
        idx = next;
        cur = e->outputs[0]->type.shape;
        cur_flat = linear(idx, cur);
        s += str_cat("    // ", comment_safe(e->name), ": stored transposed\n");
        continue;
      }
      if (e->op == OpKind::kWhere) {
        // Where(IsNaN(v), c, v) or Where(IsNaN(v), v, c).
        const bool v_in_x = plan_.root(e->inputs[2]) == plan_.root(running_value(grp, e));
        const Value* c = v_in_x ? e->inputs[1] : e->inputs[2];
        std::string cv = load(P, c, "0");
        s += str_cat("    v = isnan(v) ? ", v_in_x ? cv : "v", " : ", v_in_x ? "v" : cv, ";  // ",
                     comment_safe(e->name), " (NaN guard)\n");
        continue;
      }
      int running = -1;
      for (int i = 0; i < e->num_inputs(); ++i)
        if (e->inputs[i] && plan_.root(e->inputs[i]) == plan_.root(running_value(grp, e))) running = i;
      const Shape& shape = e->outputs[0]->type.shape;
      bool needs_index = false;
      for (int i = 0; i < e->num_inputs(); ++i)
        if (i != running && e->inputs[i] && !(plan_.root(e->inputs[i])->is_constant() && e->inputs[i]->type.numel() == 1))
          needs_index = true;
      std::string prefix = "o";
      if (needs_index) {
        ensure_index(shape);
        prefix = idx.empty() ? "o" : idx[0].substr(0, idx[0].find('_') + 1);
      }
      cur = shape;
      std::vector<std::string> a = elementwise_operands(P, *e, running, prefix);
      s += str_cat("    v = ", elementwise_expr(*e, a, DType::kF32), ";  // ", comment_safe(e->name), "\n");
    }
    if (plan_.swapped_last2.count(plan_.root(grp.output))) {
      // Stored with the last two axes swapped (KernelPlan::swapped_last2).
      ensure_index(cur);
      MONO_CHECK(idx.size() >= 2, "swapped store of rank < 2");
      std::swap(idx[idx.size() - 1], idx[idx.size() - 2]);
      Shape swapped = cur;
      std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
      cur_flat = linear(idx, swapped);
      s += "    // stored [.., b, a] (its readers load it as [N][K])\n";
    }
    *store = cur_flat;
    // Stores contiguous along m: after the transposes, the innermost index of the store is a
    // dimension whose stride in the anchor's output is N, one row.
    const Shape& ys = grp.anchor->outputs[0]->type.shape;
    // Stores 8-wide (gemm.cuh vec8_stores): 8 consecutive n (n % 8 == 0, N % 8 == 0, so the chunk
    // starts at a flat index that is a multiple of 8) are 8 consecutive addresses when the store
    // index is the flat index itself, or when its innermost index is the anchor output's
    // innermost digit (stride 1) with an extent that is a multiple of 8 (the chunk then stays
    // inside one run of it).
    if (cur_flat == flat) {
      epi_n_vec8_ = true;
    } else if (!idx.empty()) {
      auto it = flat_stride.find(idx.back());
      epi_n_vec8_ = it != flat_stride.end() && it->second == 1 && flat_extent.at(idx.back()) % 8 == 0;
    }
    if (cur_flat != flat && !idx.empty() && !ys.empty() && ys.back() > 1) {
      auto it = flat_stride.find(idx.back());
      epi_m_fastest_ = it != flat_stride.end() && it->second == ys.back();
    }
    return s;
  }
  // Shape of the running value as `e` reads it (views may reshape it between steps).
  const Shape& running_input_shape(const Group& grp, const Node* e) {
    const Value* r = plan_.root(running_value(grp, e));
    for (const Value* in : e->inputs)
      if (in && plan_.root(in) == r) return in->type.shape;
    return r->type.shape;
  }
  // The value an epilogue node reads as its running input: the previous step's output.
  const Value* running_value(const Group& grp, const Node* e) {
    const Value* prev = grp.anchor->outputs[0];
    for (const Node* x : grp.epilogue) {
      if (x == e) return prev;
      if (x->op != OpKind::kIsNaN) prev = x->outputs[0];
    }
    return prev;
  }

  // ---- pointwise groups -----------------------------------------------------------------

  std::string emit_pointwise(const Group& grp) {
    const Node& n = *grp.anchor;
    if (n.op == OpKind::kSplit) return emit_split(grp);
    Params P(plan_);
    const Value* out = grp.output;
    const DType out_dtype = plan_.dtype_of(out);
    const Shape& shape = n.outputs[0]->type.shape;
    const int64_t total = out->type.numel();
    std::string body;
    body += str_cat("  for (int e = 0; e < ", grp.pointwise.ilp, "; ++e) {\n");
    body += str_cat("    const long long i = ((long long)item * ", grp.pointwise.ilp, " + e) * MONO_THREADS + threadIdx.x;\n");
    body += str_cat("    if (i >= ", total, "LL) return;\n");
    body += decompose("i", shape, "o");
    body += anchor_code(P, n);
    std::string store;
    body += epilogue_code(P, grp, "i", &store);
    const std::string out_name = P.ref(out);
    body += str_cat("    ", out_name, "[", store, "] = ", store_expr(out_dtype, "v"), ";\n  }\n");
    std::set<const Value*> written = {plan_.root(out)};
    std::string name = define("pw", "int item" + P.signature(written), body);
    return str_cat(name, "(ITEM", P.call_args(), ")");
  }

  // Statements computing `v` (the anchor's element at output index o0..o{r-1}).
  std::string anchor_code(Params& P, const Node& n) {
    const Value* out = n.outputs[0];
    const int64_t rank = out->type.rank();
    const DType out_dtype = plan_.dtype_of(out);
    const std::string ct = compute_type(out_dtype);
    if (is_elementwise_anchor(n.op)) {
      std::vector<std::string> a = elementwise_operands(P, n, -1, "o");
      DType in_dtype = n.inputs[0] ? plan_.dtype_of(n.inputs[0]) : out_dtype;
      if (n.op == OpKind::kWhere) in_dtype = plan_.dtype_of(n.inputs[1]);
      std::string e = elementwise_expr(n, a, in_dtype);
      if (n.op == OpKind::kCast) e = cast_expr(a[0], plan_.dtype_of(n.inputs[0]), out_dtype);
      return str_cat("    ", ct, " v = ", e, ";\n");
    }
    const Value* x = n.inputs[0];
    const Shape& xs = x->type.shape;
    switch (n.op) {
      case OpKind::kTranspose: {
        std::vector<int64_t> perm = attr_is(n, "perm");
        if (perm.empty())
          for (int64_t d = rank - 1; d >= 0; --d) perm.push_back(d);
        // Input axis perm[d] takes output index o{d}.
        std::vector<std::string> idx(rank);
        for (int64_t d = 0; d < rank; ++d) idx[perm[d]] = str_cat("o", d);
        return str_cat("    ", ct, " v = ", load(P, x, linear(idx, xs)), ";\n");
      }
      case OpKind::kExpand:
        return str_cat("    ", ct, " v = ", load(P, x, broadcast_offset(xs, rank, "o")), ";\n");
      case OpKind::kSlice: return slice_code(P, n, ct);
      case OpKind::kConcat: return concat_code(P, n, ct);
      case OpKind::kGather: return gather_code(P, n, ct);
      case OpKind::kGatherElements: return gather_elements_code(P, n, ct);
      case OpKind::kMaxPool:
      case OpKind::kAveragePool: return pool_code(P, n);
      case OpKind::kGlobalAveragePool: return global_pool_code(P, n);
      case OpKind::kReduceMean:
      case OpKind::kReduceSum:
      case OpKind::kReduceMax: return reduce_code(P, n, ct);
      case OpKind::kConv: return direct_conv_code(P, n);
      case OpKind::kSoftmax: return softmax_axis_code(P, n);
      case OpKind::kBatchNormalization: return batch_norm_code(P, n);
      default: user_error(n.describe(), ": ", op_name(n.op), " cannot be compiled to CUDA yet");
    }
  }

  static bool is_elementwise_anchor(OpKind op) {
    switch (op) {
      case OpKind::kIsNaN: case OpKind::kNot: case OpKind::kAnd: case OpKind::kOr: case OpKind::kEqual:
      case OpKind::kLess: case OpKind::kLessOrEqual: case OpKind::kGreater: case OpKind::kGreaterOrEqual:
      case OpKind::kWhere: case OpKind::kCast:
        return true;
      default:
        return is_epilogue_op(op);
    }
  }

  std::string cast_expr(const std::string& a, DType from, DType to) {
    if (is_float(to)) return "(float)(" + a + ")";
    if (to == DType::kBool) return "(" + a + " != 0)";
    if (is_float(from)) return "float_to_int(" + a + ")";
    return "(long long)(" + a + ")";
  }

  static std::string linear(const std::vector<std::string>& idx, const Shape& shape) {
    std::string e;
    int64_t stride = 1;
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      if (shape[d] != 1) {
        std::string t = stride == 1 ? idx[d] : str_cat("(", idx[d], ") * ", stride, "LL");
        e = e.empty() ? t : t + " + " + e;
      }
      stride *= shape[d];
    }
    return e.empty() ? "0" : e;
  }

  std::vector<int64_t> const_ints(const Node& n, int i) {
    const Value* v = n.input(i) ? plan_.root(n.input(i)) : nullptr;
    if (!v) return {};
    if (!v->is_constant()) user_error(n.describe(), ": input ", i, " must be a constant for the CUDA backend");
    return v->constant->to_int_vector();
  }

  std::string slice_code(Params& P, const Node& n, const std::string& ct) {
    const Shape& xs = n.inputs[0]->type.shape;
    const int64_t rank = static_cast<int64_t>(xs.size());
    std::vector<int64_t> starts, ends, axes, steps;
    if (n.opset < 10) {
      starts = attr_is(n, "starts");
      ends = attr_is(n, "ends");
      axes = attr_is(n, "axes");
    } else {
      starts = const_ints(n, 1);
      ends = const_ints(n, 2);
      axes = const_ints(n, 3);
      steps = const_ints(n, 4);
    }
    if (axes.empty())
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    if (steps.empty()) steps.assign(starts.size(), 1);
    std::vector<int64_t> start(rank, 0), step(rank, 1);
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
      int64_t dim = xs[a], s = starts[k];
      if (s < 0) s += dim;
      s = steps[k] > 0 ? std::min(std::max<int64_t>(s, 0), dim) : std::min(std::max<int64_t>(s, 0), dim - 1);
      start[a] = s;
      step[a] = steps[k];
    }
    std::vector<std::string> idx(rank);
    for (int64_t d = 0; d < rank; ++d) idx[d] = str_cat(start[d], "LL + o", d, " * ", step[d], "LL");
    return str_cat("    ", ct, " v = ", load(P, n.inputs[0], linear(idx, xs)), ";\n");
  }

  std::string concat_code(Params& P, const Node& n, const std::string& ct) {
    const int64_t rank = n.outputs[0]->type.rank();
    int64_t axis = attr_i(n, "axis", 0);
    if (axis < 0) axis += rank;
    std::string s = str_cat("    ", ct, " v;\n");
    int64_t base = 0;
    bool first = true;
    for (int i = 0; i < n.num_inputs(); ++i) {
      const Shape& xs = n.inputs[i]->type.shape;
      if (xs[axis] == 0) continue;
      std::vector<std::string> idx(rank);
      for (int64_t d = 0; d < rank; ++d) idx[d] = d == axis ? str_cat("(o", d, " - ", base, "LL)") : str_cat("o", d);
      s += str_cat("    ", first ? "" : "else ", "if (o", axis, " < ", base + xs[axis], "LL) v = ",
                   load(P, n.inputs[i], linear(idx, xs)), ";\n");
      base += xs[axis];
      first = false;
    }
    return s;
  }

  std::string gather_code(Params& P, const Node& n, const std::string& ct) {
    const Shape& xs = n.inputs[0]->type.shape;
    const Shape& is = n.inputs[1]->type.shape;
    const int64_t r = static_cast<int64_t>(xs.size()), q = static_cast<int64_t>(is.size());
    int64_t axis = attr_i(n, "axis", 0);
    if (axis < 0) axis += r;
    // Output index: data[:axis] + indices + data[axis+1:].
    std::vector<std::string> iidx(q);
    for (int64_t d = 0; d < q; ++d) iidx[d] = str_cat("o", axis + d);
    std::string s = str_cat("    long long g = ", load(P, n.inputs[1], linear(iidx, is)), ";\n");
    s += str_cat("    if (g < 0) g += ", xs[axis], "LL;\n");
    s += str_cat("    g = g < 0 ? 0 : (g >= ", xs[axis], "LL ? ", xs[axis] - 1, "LL : g);  // clamp: never read outside\n");
    std::vector<std::string> didx(r);
    for (int64_t d = 0; d < r; ++d) didx[d] = d < axis ? str_cat("o", d) : d == axis ? "g" : str_cat("o", d - 1 + q);
    s += str_cat("    ", ct, " v = ", load(P, n.inputs[0], linear(didx, xs)), ";\n");
    return s;
  }

  std::string gather_elements_code(Params& P, const Node& n, const std::string& ct) {
    const Shape& xs = n.inputs[0]->type.shape;
    const Shape& is = n.inputs[1]->type.shape;
    const int64_t r = static_cast<int64_t>(xs.size());
    int64_t axis = attr_i(n, "axis", 0);
    if (axis < 0) axis += r;
    std::vector<std::string> oidx(r);
    for (int64_t d = 0; d < r; ++d) oidx[d] = str_cat("o", d);
    std::string s = str_cat("    long long g = ", load(P, n.inputs[1], linear(oidx, is)), ";\n");
    s += str_cat("    if (g < 0) g += ", xs[axis], "LL;\n");
    s += str_cat("    g = g < 0 ? 0 : (g >= ", xs[axis], "LL ? ", xs[axis] - 1, "LL : g);\n");
    oidx[axis] = "g";
    s += str_cat("    ", ct, " v = ", load(P, n.inputs[0], linear(oidx, xs)), ";\n");
    return s;
  }

  // Max/average pooling over the spatial axes of N C D1..Dk, with pads and dilations.
  std::string pool_code(Params& P, const Node& n) {
    const Shape& xs = n.inputs[0]->type.shape;
    const int64_t k = static_cast<int64_t>(xs.size()) - 2;
    std::vector<int64_t> kernel = attr_is(n, "kernel_shape"), strides = attr_is(n, "strides"),
                         pads = attr_is(n, "pads"), dil = attr_is(n, "dilations");
    if (strides.empty()) strides.assign(k, 1);
    if (dil.empty()) dil.assign(k, 1);
    if (pads.empty()) pads.assign(2 * k, 0);
    const AttrValue* ap = n.attr("auto_pad");
    if (ap && std::get<std::string>(*ap) != "NOTSET" && std::get<std::string>(*ap) != "VALID") {
      // SAME_*: derive the begin pads from the output size.
      const Shape& ys = n.outputs[0]->type.shape;
      bool upper = std::get<std::string>(*ap) == "SAME_UPPER";
      for (int64_t d = 0; d < k; ++d) {
        int64_t total = std::max<int64_t>(0, (ys[d + 2] - 1) * strides[d] + (kernel[d] - 1) * dil[d] + 1 - xs[d + 2]);
        pads[d] = upper ? total / 2 : total - total / 2;
      }
    }
    const bool is_max = n.op == OpKind::kMaxPool;
    const bool include_pad = attr_i(n, "count_include_pad", 0) != 0;
    std::string s = is_max ? "    float v = -__int_as_float(0x7f800000);\n" : "    float v = 0.0f; int cnt = 0;\n";
    std::string inner_idx = "(o0 * " + std::to_string(xs[1]) + "LL + o1)";
    for (int64_t d = 0; d < k; ++d) {
      s += str_cat("    for (int k", d, " = 0; k", d, " < ", kernel[d], "; ++k", d, ") {\n");
      s += str_cat("    const long long x", d, " = o", d + 2, " * ", strides[d], "LL - ", pads[d], "LL + k", d, " * ", dil[d], "LL;\n");
      if (!is_max && include_pad) {
        // count_include_pad counts positions inside the padded input (not past the end pads).
        s += str_cat("    if (x", d, " >= ", xs[d + 2] + pads[d + k], "LL) continue;\n");
      }
    }
    std::string inside;
    for (int64_t d = 0; d < k; ++d) inside += str_cat(d ? " && " : "", "x", d, " >= 0 && x", d, " < ", xs[d + 2], "LL");
    std::string off = inner_idx;
    for (int64_t d = 0; d < k; ++d) off = str_cat("(", off, ") * ", xs[d + 2], "LL + x", d);
    std::string val = load(P, n.inputs[0], off);
    if (is_max) {
      s += str_cat("    if (", inside, ") v = fmax_nan(v, ", val, ");\n");
    } else if (include_pad) {
      s += str_cat("    ++cnt; if (", inside, ") v += ", val, ";\n");
    } else {
      s += str_cat("    if (", inside, ") { v += ", val, "; ++cnt; }\n");
    }
    for (int64_t d = 0; d < k; ++d) s += "    }\n";
    if (!is_max) s += "    v = cnt ? v / (float)cnt : 0.0f;\n";
    return s;
  }

  std::string global_pool_code(Params& P, const Node& n) {
    const Shape& xs = n.inputs[0]->type.shape;
    int64_t spatial = 1;
    for (size_t d = 2; d < xs.size(); ++d) spatial *= xs[d];
    return str_cat("    float v = 0.0f;\n    const long long base = (o0 * ", xs[1], "LL + o1) * ", spatial, "LL;\n",
                   "    for (long long k = 0; k < ", spatial, "LL; ++k) v += ", load(P, n.inputs[0], "base + k"), ";\n",
                   "    v *= ", lit(1.0 / static_cast<double>(spatial)), ";\n");
  }

  std::string reduce_code(Params& P, const Node& n, const std::string& ct) {
    const Shape& xs = n.inputs[0]->type.shape;
    const int64_t r = static_cast<int64_t>(xs.size());
    std::vector<int64_t> axes;
    bool axes_input = (n.op == OpKind::kReduceSum && n.opset >= 13) || n.opset >= 18;
    if (axes_input) axes = n.input(1) ? const_ints(n, 1) : std::vector<int64_t>{};
    else axes = attr_is(n, "axes");
    if (axes.empty()) {
      if (attr_i(n, "noop_with_empty_axes", 0)) return str_cat("    ", ct, " v = ", load(P, n.inputs[0], broadcast_offset(xs, r, "o")), ";\n");
      for (int64_t d = 0; d < r; ++d) axes.push_back(d);
    }
    std::vector<bool> reduced(r, false);
    for (int64_t a : axes) reduced[a < 0 ? a + r : a] = true;
    const bool keep = attr_i(n, "keepdims", 1) != 0;
    // Output index -> input index for kept axes; loop over reduced ones.
    std::vector<std::string> idx(r);
    int64_t od = 0, count = 1;
    std::string loops, close;
    for (int64_t d = 0; d < r; ++d) {
      if (reduced[d]) {
        idx[d] = str_cat("r", d);
        loops += str_cat("    for (long long r", d, " = 0; r", d, " < ", xs[d], "LL; ++r", d, ")\n");
        count *= xs[d];
        if (keep) ++od;
      } else {
        idx[d] = str_cat("o", od++);
      }
    }
    const bool is_max = n.op == OpKind::kReduceMax;
    std::string init = is_max ? (ct == "float" ? "-__int_as_float(0x7f800000)" : "(-9223372036854775807LL - 1)") : "0";
    std::string val = load(P, n.inputs[0], linear(idx, xs));
    std::string s = str_cat("    ", ct, " v = ", init, ";\n", loops, "      v = ",
                            is_max ? (ct == "float" ? "fmax_nan(v, " + val + ")" : "max(v, " + val + ")") : "v + " + val, ";\n");
    if (n.op == OpKind::kReduceMean) s += str_cat("    v = v / (", ct, ")", count, ";\n");
    return s;
  }

  // Grouped or depthwise convolution, one output element per thread.
  std::string direct_conv_code(Params& P, const Node& n) {
    const Shape& xs = n.inputs[0]->type.shape;
    const Shape& ws = n.inputs[1]->type.shape;
    const int64_t k = static_cast<int64_t>(xs.size()) - 2;
    if (k != 2) user_error(n.describe(), ": grouped Conv is compiled for 2-D only");
    const int64_t groups = attr_i(n, "group", 1);
    std::vector<int64_t> strides = attr_is(n, "strides"), pads = conv_pads(n), dil = attr_is(n, "dilations");
    if (strides.empty()) strides.assign(k, 1);
    if (dil.empty()) dil.assign(k, 1);
    const int64_t cin_g = ws[1], cout_g = ws[0] / groups;
    std::string s = "    float v = 0.0f;\n";
    s += str_cat("    const long long g = o1 / ", cout_g, "LL;\n");
    s += str_cat("    for (long long c = 0; c < ", cin_g, "LL; ++c)\n    for (int kh = 0; kh < ", ws[2],
                 "; ++kh) {\n      const long long ih = o2 * ", strides[0], "LL - ", pads[0], "LL + kh * ", dil[0],
                 "LL;\n      if (ih < 0 || ih >= ", xs[2], "LL) continue;\n      for (int kw = 0; kw < ", ws[3],
                 "; ++kw) {\n        const long long iw = o3 * ", strides[1], "LL - ", pads[1], "LL + kw * ", dil[1],
                 "LL;\n        if (iw < 0 || iw >= ", xs[3], "LL) continue;\n");
    std::string xoff = str_cat("((o0 * ", xs[1], "LL + g * ", cin_g, "LL + c) * ", xs[2], "LL + ih) * ", xs[3], "LL + iw");
    std::string woff = str_cat("((o1 * ", cin_g, "LL + c) * ", ws[2], "LL + kh) * ", ws[3], "LL + kw");
    s += str_cat("        v += ", load(P, n.inputs[0], xoff), " * ", load(P, n.inputs[1], woff), ";\n      }\n    }\n");
    if (n.input(2)) s += str_cat("    v += ", load(P, n.inputs[2], "o1"), ";\n");
    return s;
  }

  std::vector<int64_t> conv_pads(const Node& n) {
    const Shape& xs = n.inputs[0]->type.shape;
    const Shape& ws = n.inputs[1]->type.shape;
    const Shape& ys = n.outputs[0]->type.shape;
    const int64_t k = static_cast<int64_t>(xs.size()) - 2;
    std::vector<int64_t> pads = attr_is(n, "pads"), strides = attr_is(n, "strides"), dil = attr_is(n, "dilations");
    if (strides.empty()) strides.assign(k, 1);
    if (dil.empty()) dil.assign(k, 1);
    if (pads.empty()) pads.assign(2 * k, 0);
    const AttrValue* ap = n.attr("auto_pad");
    if (ap && (std::get<std::string>(*ap) == "SAME_UPPER" || std::get<std::string>(*ap) == "SAME_LOWER")) {
      bool upper = std::get<std::string>(*ap) == "SAME_UPPER";
      for (int64_t d = 0; d < k; ++d) {
        int64_t total = std::max<int64_t>(0, (ys[d + 2] - 1) * strides[d] + (ws[d + 2] - 1) * dil[d] + 1 - xs[d + 2]);
        pads[d] = upper ? total / 2 : total - total / 2;
      }
    }
    return pads;
  }

  // Softmax along a non-last axis: each thread recomputes its axis' max and sum.
  std::string softmax_axis_code(Params& P, const Node& n) {
    const Shape& xs = n.inputs[0]->type.shape;
    const int64_t r = static_cast<int64_t>(xs.size());
    int64_t axis = n.attr("axis") ? attr_i(n, "axis", -1) : (n.opset < 13 ? 1 : -1);
    if (axis < 0) axis += r;
    if (n.opset < 13) user_error(n.describe(), ": Softmax before opset 13 on a non-last axis is not compiled to CUDA yet");
    std::vector<std::string> idx(r);
    for (int64_t d = 0; d < r; ++d) idx[d] = d == axis ? "a" : str_cat("o", d);
    std::string val = load(P, n.inputs[0], linear(idx, xs));
    idx[axis] = str_cat("o", axis);
    std::string self = load(P, n.inputs[0], linear(idx, xs));
    return str_cat("    float mx = -__int_as_float(0x7f800000), sum = 0.0f;\n",
                   "    for (long long a = 0; a < ", xs[axis], "LL; ++a) mx = fmaxf(mx, ", val, ");\n",
                   "    for (long long a = 0; a < ", xs[axis], "LL; ++a) sum += expf(", val, " - mx);\n",
                   "    float v = expf(", self, " - mx) / sum;\n");
  }

  std::string batch_norm_code(Params& P, const Node& n) {
    const Shape& xs = n.inputs[0]->type.shape;
    float eps = attr_f(n, "epsilon", 1e-5f);
    (void)xs;
    return str_cat("    const float sc = ", load(P, n.inputs[1], "o1"), ", bi = ", load(P, n.inputs[2], "o1"),
                   ", mu = ", load(P, n.inputs[3], "o1"), ", va = ", load(P, n.inputs[4], "o1"), ";\n",
                   "    float v = (", load(P, n.inputs[0], broadcast_offset(xs, xs.size(), "o")), " - mu) * rsqrtf(va + ",
                   lit(eps), ") * sc + bi;\n");
  }

  // Split: one loop over the input, each element written to the output its position falls in.
  std::string emit_split(const Group& grp) {
    const Node& n = *grp.anchor;
    Params P(plan_);
    const Shape& xs = n.inputs[0]->type.shape;
    const int64_t r = static_cast<int64_t>(xs.size());
    int64_t axis = attr_i(n, "axis", 0);
    if (axis < 0) axis += r;
    std::string body = str_cat("  for (int e = 0; e < ", grp.pointwise.ilp, "; ++e) {\n");
    body += str_cat("    const long long i = ((long long)item * ", grp.pointwise.ilp, " + e) * MONO_THREADS + threadIdx.x;\n");
    body += str_cat("    if (i >= ", shape_numel(xs), "LL) return;\n");
    body += decompose("i", xs, "o");
    const DType dt = plan_.dtype_of(n.inputs[0]);
    body += str_cat("    const ", ctype(dt), " x = ", P.ref(n.inputs[0]), "[i];\n");
    std::set<const Value*> written;
    int64_t base = 0;
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const Value* out = n.outputs[k];
      const int64_t len = out ? out->type.shape[axis] : 0;
      if (out) {
        std::vector<std::string> idx(r);
        for (int64_t d = 0; d < r; ++d) idx[d] = d == axis ? str_cat("(o", d, " - ", base, "LL)") : str_cat("o", d);
        body += str_cat("    ", k ? "else " : "", "if (o", axis, " < ", base + len, "LL) ", P.ref(out), "[",
                        linear(idx, out->type.shape), "] = x;\n");
        written.insert(plan_.root(out));
      }
      base += len;
    }
    body += "  }\n";
    // Items cover the input.
    std::string name = define("split", "int item" + P.signature(written), body);
    return str_cat(name, "(ITEM", P.call_args(), ")");
  }

  // ---- row groups -------------------------------------------------------------------------

  // Attention as one group (plan.h Group::fused): work item = (batch entry, BM query rows).
  // The block computes those rows of S = QK^T (all key tiles), their softmax (a warp per row),
  // then the same rows of O = PV, with a block barrier between the phases: S and P go through
  // the arena, written and read back by this block only.
  std::string emit_attention(const Group& qk) {
    const Group& sm = plan_.groups[qk.fused[0]];
    const Group& pv = plan_.groups[qk.fused[1]];
    const GemmProblem a = gemm_problem(qk), b = gemm_problem(pv);
    const int64_t tm = ceil_div(a.m, qk.gemm.bm), tn1 = ceil_div(a.n, qk.gemm.bn), tn3 = ceil_div(b.n, pv.gemm.bn);
    auto at = [](std::string call, const std::string& item) {
      call.replace(call.find("ITEM"), 4, item);
      return call;
    };
    const std::string s_call = at(emit_gemm(qk), str_cat("(int)(ai * ", tn1, " + t)"));
    const std::string p_call = at(emit_rows(sm, /*row_item=*/true), str_cat("(int)(ai / ", tm, ") * ", a.m, " + q0 + r"));
    const std::string o_call = at(emit_gemm(pv), str_cat("(int)(ai * ", tn3, " + t)"));
    return str_cat("do {  // attention\n",
                   "      const long long ai = ITEM;\n",
                   "      const int q0 = (int)(ai % ", tm, ") * ", qk.gemm.bm, ", nq = min(", qk.gemm.bm, ", ", a.m, " - q0);\n",
                   "      for (int t = 0; t < ", tn1, "; ++t) ", s_call, ";  // S rows q0.. (all keys)\n",
                   "      __syncthreads();\n",
                   "      for (int r = threadIdx.x / 32; r < nq; r += MONO_THREADS / 32) ", p_call, ";  // P = softmax(S)\n",
                   "      __syncthreads();\n",
                   "      for (int t = 0; t < ", tn3, "; ++t) ", o_call, ";  // O rows q0..\n",
                   "    } while (0)");
  }

  // row_item: the function's item is one row (the caller's warp's), not a block of rows.
  std::string emit_rows(const Group& grp, bool row_item = false) {
    const Node& n = *grp.anchor;
    Params P(plan_);
    const int64_t len = row_length(n);
    const int64_t rows = n.inputs[0]->type.numel() / len;
    const DType in_dt = plan_.dtype_of(n.inputs[0]);
    const DType out_dt = plan_.dtype_of(grp.output);
    const std::string T = ctype(in_dt);
    const std::string tag = T == "float" ? "f" : "h";
    std::string x = P.ref(n.inputs[0]);
    // The input functor is shared by every row function of a dtype: define it once.
    if (!row_prelude_done_.count(T)) {
      functions_.push_back(str_cat("struct RowIn_", tag, " {\n  const ", T,
                                   "* x; long long len;\n  __device__ float operator()(int row, int i) const { return "
                                   "to_float(x[(long long)row * len + i]); }\n};\n"));
      row_prelude_done_.insert(T);
    }
    // The output functor: the epilogue steps, then the store.
    std::string epi = "    const long long i = (long long)row * " + std::to_string(len) + "LL + col;\n";
    std::string store;
    epi += epilogue_code(P, grp, "i", &store);
    const std::string out = P.ref(grp.output);
    epi += str_cat("    ", out, "[", store, "] = ", store_expr(out_dt, "v"), ";\n");
    std::set<const Value*> written = {plan_.root(grp.output)};
    std::string fields = P.signature(written);
    std::string out_fn = str_cat("  const auto store = [&](int row, int col, float v) {\n", epi, "  };\n");
    std::string body = str_cat(row_item ? "  const int row = item;\n" : "  const int row = item * (MONO_THREADS / 32) + threadIdx.x / 32;\n",
                               "  if (row >= ", rows,
                               ") return;\n  const RowIn_", tag, " in{", x, ", ", len, "};\n", out_fn);
    if (n.op == OpKind::kLayerNormalization) {
      const std::string gamma = P.ref(n.inputs[1]);
      const std::string beta_arg = n.input(2) ? P.ref(n.inputs[2]) : str_cat("(const ", T, "*)nullptr");
      body += str_cat("  layer_norm_row_f(in, row, ", len, ", ", gamma, ", ", beta_arg, ", ",
                      lit(attr_f(n, "epsilon", 1e-5f)), ", store);\n");
    } else {
      body += str_cat("  softmax_row_f(in, row, ", len, ", store);\n");
    }
    (void)fields;
    std::string name = define(n.op == OpKind::kSoftmax ? "softmax" : "layernorm", "int item" + P.signature(written), body);
    return str_cat(name, "(ITEM", P.call_args(), ")");
  }

  // ---- GEMM groups ------------------------------------------------------------------------

  // ", true" when a Dense operand over `v` with row stride `stride` (elements; batch offsets are
  // multiples of it) always takes the 16-byte path: arena and weights buffers start 256-byte
  // aligned; model inputs and outputs are the caller's pointers and are not assumed to be.
  std::string dense_aligned(const Value* v, int64_t stride, bool f16) const {
    const Placement& pl = plan_.placement.at(plan_.root(v));
    const bool ours = pl.space == Placement::kArena || pl.space == Placement::kWeights;
    return ours && stride % (f16 ? 8 : 4) == 0 ? ", true" : "";
  }

  // The loader of a GEMM operand stored densely: [rows][K] (K contiguous) or, `transposed`,
  // [K][rows]. A stride that is not a multiple of 16 bytes (known here) rules out 16-byte loads:
  // such operands go through Gather with a strided functor (register-staged element loads).
  // With plan_.bulk_weights, fp16 weights stored [rows][K] whose K is whole `bk` tiles are read
  // with bulk copies (BulkK: the TMA unit moves each tile row, gemm.cuh).
  std::string dense_loader(const std::string& var, const std::string& ptr, bool transposed, const Value* v,
                           int64_t rows, int64_t K, bool f16, int64_t bk = 0) {
    const std::string T = f16 ? "half_t" : "float";
    const int64_t stride = transposed ? rows : K;
    // (packed weights start 256-byte aligned, so a 16-byte multiple stride keeps every row aligned)
    if (plan_.bulk_weights && f16 && !transposed && bk > 0 && K % bk == 0 && stride % 8 == 0 &&
        plan_.placement.at(plan_.root(v)).space == Placement::kWeights)
      return str_cat("BulkK<half_t> ", var, "{", ptr, ", ", rows, ", ", K, ", ", stride, "};");
    if (stride % (f16 ? 8 : 4) != 0) {
      const std::string f = str_cat(transposed ? "StridedN<" : "StridedK<", T, ">");
      return str_cat("Gather<", T, ", ", f, "> ", var, "{", f, "{", ptr, ", ", rows, ", ", K, ", ", stride, "}};");
    }
    return str_cat(transposed ? "DenseN<" : "DenseK<", T, dense_aligned(v, stride, f16), "> ", var, "{", ptr, ", ", rows,
                   ", ", K, ", ", stride, "};");
  }

  // The loader of fp16 weights packed tile by tile (KernelPlan::weight_tiles; one bulk copy per
  // stage, gemm.cuh BulkTileK), or "" when `packing` is not a tile packing.
  static std::string tiled_loader(const std::string& var, const std::string& ptr, const std::string& packing, int64_t K) {
    TilePacking t;
    if (!parse_tile_packing(packing, &t)) return "";
    return str_cat("BulkTileK<half_t> ", var, "{", ptr, ", ", ceil_div(K, t.bk), "};  // packed tile by tile");
  }

  // allow_pre: the caller may preload the constant operand's first k tiles (gemm.cuh preload)
  // before the grid barrier ahead of the stage: the call then ends in ", PRE)" (0: no, 1: this
  // item's operand was preloaded, 2: preload only) and the group is added to preloadable_.
  std::string emit_gemm(const Group& grp, bool allow_pre = false) {
    const Node& n = *grp.anchor;
    const bool conv = n.op == OpKind::kConv;
    const bool f16 = grp.f16;
    const std::string T = f16 ? "half_t" : "float";
    Params P(plan_);
    size_t slots = 0;
    struct SlotScope {  // every float read until the store belongs to the epilogue (operands use P.ref)
      size_t*& p;
      ~SlotScope() { p = nullptr; }
    } slot_scope{epi_slots_};
    epi_slots_ = &slots;
    const GemmSchedule& gs = grp.gemm;
    const Value* out = grp.output;
    const DType out_dtype = plan_.dtype_of(out);
    const Shape& ys = n.outputs[0]->type.shape;

    int64_t batch = 1, M = 0, N = 0, K = 0;
    int a_map = -1;  // A's tensor map (mono_tmaps index), or -1
    std::string a_loader, b_loader, a_batch, b_batch, prelude;
    std::string bias_code, ln_prefix;
    if (conv) {
      const Shape& xs = n.inputs[0]->type.shape;
      const Shape& ws = n.inputs[1]->type.shape;
      const int64_t k = static_cast<int64_t>(xs.size()) - 2;
      if (k < 1 || k > 2) user_error(n.describe(), ": Conv is compiled for 1-D and 2-D only");
      batch = xs[0];
      M = ws[0];
      K = shape_numel(ws) / ws[0];
      N = shape_numel(ys) / (ys[0] * ys[1]);
      std::vector<int64_t> strides = attr_is(n, "strides"), dil = attr_is(n, "dilations");
      std::vector<int64_t> pads = conv_pads(n);
      if (strides.empty()) strides.assign(k, 1);
      if (dil.empty()) dil.assign(k, 1);
      const int64_t H = k == 2 ? xs[2] : 1, W = xs[k + 1], KH = k == 2 ? ws[2] : 1, KW = ws[k + 1];
      const int64_t OW = ys[k + 1];
      const int64_t SH = k == 2 ? strides[0] : 1, SW = strides[k - 1], DH = k == 2 ? dil[0] : 1, DW = dil[k - 1];
      const int64_t PH = k == 2 ? pads[0] : 0, PW = pads[k - 1];
      // A pointwise (1x1, stride 1, no padding) convolution's B is the input itself, [Cin][H*W]
      // per image: a dense [K][N] operand (16-byte loads where aligned) instead of im2col.
      const bool pointwise = KH == 1 && KW == 1 && SH == 1 && SW == 1 && PH == 0 && PW == 0 && N == H * W;  // no end padding
      // im2col on the fly: B(n = output pixel, k = (ci, kh, kw)).
      std::string fname = str_cat("Im2col_", H, "x", W, "_k", KH, "x", KW, "_s", SH, "x", SW, "_p", PH, "x", PW, "_d",
                                  DH, "x", DW, "_c", xs[1], "_", f16 ? "h" : "f");
      std::string im2col = str_cat(
          "struct ", fname, " {\n  static constexpr bool rows_fastest = true;  // coalesced: neighbouring pixels\n  const ", T,
          "* x;\n  __device__ ", T, " operator()(int r, int k) const {\n",
          "    if (r >= ", N, " || k >= ", K, ") return from_float<", T, ">(0.0f);\n",
          "    const int ci = k / ", KH * KW, ", kk = k % ", KH * KW, ", kh = kk / ", KW, ", kw = kk % ", KW, ";\n",
          "    const int oh = r / ", OW, ", ow = r % ", OW, ";\n",
          "    const int ih = oh * ", SH, " - ", PH, " + kh * ", DH, ", iw = ow * ", SW, " - ", PW, " + kw * ", DW, ";\n",
          "    if (ih < 0 || ih >= ", H, " || iw < 0 || iw >= ", W, ") return from_float<", T, ">(0.0f);\n",
          "    return x[((long long)ci * ", H, " + ih) * ", W, " + iw];\n  }\n};\n");
      if (!pointwise && !structs_done_.count(fname)) {
        functions_.push_back(im2col);
        structs_done_.insert(fname);
      }
      const std::string w_pack = plan_.packing(n, 1);
      a_loader = tiled_loader("la", "A", w_pack, K);
      if (a_loader.empty()) a_loader = dense_loader("la", "A", false, n.inputs[1], M, K, f16, gs.bk);
      b_loader = pointwise ? dense_loader("lb", str_cat("B + (long long)b * ", xs[1] * H * W), true, n.inputs[0], N, K, f16)
                           : str_cat("Gather<", T, ", ", fname, "> lb{", fname, "{B + (long long)b * ", xs[1] * H * W, "}};");
      P.ref(n.inputs[1], w_pack);  // p0 = weights (A)
      P.ref(n.inputs[0]);  // p1 = input (B)
      if (n.input(2)) bias_code = str_cat("    v += ", load(P, n.inputs[2], "m"), ";  // bias\n");
    } else {
      const Value* a = n.inputs[0];
      const Value* bv = n.inputs[1];
      const Shape& as = a->type.shape;
      const Shape& bs = bv->type.shape;
      bool trans_a = n.op == OpKind::kGemm && attr_i(n, "transA", 0);
      bool trans_b = n.op == OpKind::kGemm && attr_i(n, "transB", 0);
      if (n.op == OpKind::kGemm) {
        M = trans_a ? as[1] : as[0];
        K = trans_a ? as[0] : as[1];
        N = trans_b ? bs[0] : bs[1];
      } else {
        if (as.size() < 2 || bs.size() < 2) user_error(n.describe(), ": 1-D MatMul operands are not compiled to CUDA yet");
        M = as[as.size() - 2];
        K = as.back();
        N = bs.back();
        batch = shape_numel(ys) / (M * N);
      }
      // Batch offsets of A and B (broadcast batch dims read the same matrix).
      const int64_t out_rank = static_cast<int64_t>(ys.size());
      Shape batch_shape(ys.begin(), ys.end() - 2);
      auto batch_offset = [&](const Shape& s, int64_t mat) {
        if (s.size() <= 2) return std::string("0");
        Shape bsh(s.begin(), s.end() - 2);
        std::string off = broadcast_offset(bsh, out_rank - 2, "bb");
        return off == "0" ? off : str_cat("(", off, ") * ", mat, "LL");
      };
      std::string decompose_b = batch > 1 ? decompose("b", batch_shape, "bb") : "";
      a_batch = decompose_b + str_cat("    const long long a_off = ", batch_offset(as, M * K), ";\n");
      b_batch = str_cat("    const long long b_off = ", batch_offset(bs, K * N), ";\n");
      const std::string b_pack = bv->is_constant() || plan_.root(bv)->is_constant() ? plan_.packing(n, 1) : "";
      // A folded LayerNorm's output as A (plan.h LnFold): read its input x instead, against
      // gamma-scaled weights; the epilogue starts with the correction.
      auto fold = plan_.ln_fold_of_gemm.find(&n);
      if (fold != plan_.ln_fold_of_gemm.end()) a = plan_.ln_folds[fold->second].x;
      P.ref(a);  // p0 = A, p1 = B (the call below relies on the order)
      P.ref(bv, b_pack);
      if (fold != plan_.ln_fold_of_gemm.end()) {
        const LnFold& f = plan_.ln_folds[fold->second];
        const std::string st = ln_stats(P, fold->second);
        const std::string cd = P.ref_raw("cd" + b_pack, "float",
                                         str_cat("(const float*)(p.weights + ", plan_.constant_offset(plan_.root(bv), "cd" + b_pack), ")"),
                                         false);
        const std::string row = plan_.root(out)->type.numel() <= INT32_MAX ? str_cat("(int)i / ", N) : str_cat("i / ", N);
        const auto rs = slot_pair(st, "row"), cs = slot_pair(cd, "n");
        bias_code = str_cat("    {  // ", comment_safe(plan_.groups[f.ln_group].anchor->name),
                            " folded: v = acc rstd - mean rstd c[n] + d[n]\n      const int row = ", row, ";\n",
                            "      v = v * ", rs.first, " + ", rs.second, " * ", cs.first, " + ", cs.second, ";\n    }\n");
        std::swap(bias_code, ln_prefix);
      }
      a_loader = dense_loader("la", "A + a_off", trans_a, a, M, K, f16, gs.bk);
      // A through a tensor map (gemm.cuh TensorK): an fp16 activation in the arena, one [M][K]
      // matrix (no batch), whose rows start 16-byte aligned, read by whole 64-k swizzle rows.
      const Placement& apl = plan_.placement.at(plan_.root(a));
      TensorMapSpec spec;
      spec.arena_offset = apl.offset, spec.rows = M, spec.cols = K, spec.row_stride = K * 2, spec.box_rows = gs.bm;
      if (plan_.tensor_a && f16 && !trans_a && batch == 1 && apl.space == Placement::kArena && gs.bk % 64 == 0 &&
          plan_.dtype_of(a) == DType::kF16 && tensor_map_problem(spec).empty()) {
        a_map = static_cast<int>(std::find(tensor_maps_.begin(), tensor_maps_.end(), spec) - tensor_maps_.begin());
        if (a_map == static_cast<int>(tensor_maps_.size())) tensor_maps_.push_back(spec);
        a_loader = "TensorK<half_t> la{amap};  // through a tensor map (TMA unit)";
      }
      // B is read [N][K]: packed weights ("nk"), Gemm transB or a value stored swapped
      // (KernelPlan::swapped_last2); else [K][N] (DenseN).
      bool b_nk = b_pack.rfind("nk", 0) == 0 || trans_b || plan_.swapped_last2.count(plan_.root(bv)) > 0;
      b_loader = tiled_loader("lb", "B + b_off", b_pack, K);
      if (b_loader.empty()) b_loader = dense_loader("lb", "B + b_off", !b_nk, bv, N, K, f16, gs.bk);
      if (n.op == OpKind::kGemm) {
        float alpha = attr_f(n, "alpha", 1.0f), beta = attr_f(n, "beta", 1.0f);
        if (alpha != 1.0f) bias_code += str_cat("    v *= ", lit(alpha), ";\n");
        if (n.input(2) && beta != 0.0f) {
          const Shape& cs = n.inputs[2]->type.shape;
          std::vector<std::string> idx = {"m", "n"};
          std::string off;
          if (cs.size() == 2) off = linear({cs[0] == 1 ? "0" : "m", cs[1] == 1 ? "0" : "n"}, cs);
          else if (cs.size() == 1) off = cs[0] == 1 ? "0" : "n";
          else off = "0";
          std::string c = load(P, n.inputs[2], off);
          bias_code += beta == 1.0f ? str_cat("    v += ", c, ";\n") : str_cat("    v += ", lit(beta), " * ", c, ";\n");
        }
      }
    }
    // The epilogue functor: bias, fused elementwise nodes, store.
    const std::string out_ptr = P.ref(out);
    std::string epi_body = str_cat("    const long long i = base + (long long)m * ", N, "LL + n;\n");
    epi_body += ln_prefix + bias_code;
    std::string store;
    epi_body += epilogue_code(P, grp, "i", &store);
    epi_slots_ = nullptr;
    const std::string store_stmt = str_cat(out_ptr, "[", store, "] = ", store_expr(out_dtype, "v"), ";");
    // A folded LayerNorm's statistics of the output rows (plan.h LnFold), after the epilogue.
    std::string stats_call;
    if (grp.computes_stats >= 0) {
      const LnFold& f = plan_.ln_folds[grp.computes_stats];
      const int64_t tm = ceil_div(M, gs.bm);
      const std::string part = P.ref_raw(str_cat("lnpart", grp.computes_stats), "float2",
                                         str_cat("(float2*)(p.arena + ", f.partial_offset, ")"), true);
      const std::string st = P.ref_raw(str_cat("lnstats2_", grp.computes_stats), "float2",
                                       str_cat("(float2*)(p.arena + ", f.stats_offset, ")"), true);
      const std::string cnt = P.ref_raw(str_cat("lncnt", grp.computes_stats), "unsigned int",
                                        str_cat("p.sync + ", f.counters_offset), true);
      stats_call = str_cat("  if (split == ", gs.splits - 1, ")  // ",
                           comment_safe(plan_.groups[f.ln_group].anchor->name), " folded: its row statistics\n",
                           "    ln_row_stats<", gs.bm, ", ", gs.bn, ", ", f.parts, ", ", gs.warps_m * gs.warps_n * 32, ">(epi.",
                           out_ptr, ", ", N, ", min(", gs.bm, ", ", M, " - tm * ", gs.bm, "), b * ", M, " + tm * ", gs.bm,
                           ", tn * ", gs.bn, ", epi.", part, ", epi.", st, ", epi.", cnt, " + b * ", tm, " + tm, ", lit(f.eps),
                           ", smem);\n");
    }
    std::set<const Value*> written = {plan_.root(out)};
    // Epilogue struct: the group's pointer params are its fields.
    std::string fields = P.signature(written);  // ", const T* __restrict__ p0, ..."
    std::string field_decls, field_init;
    {
      std::string f = fields;
      size_t pos = 0;
      while ((pos = f.find(", ", pos)) != std::string::npos) f.replace(pos, 2, ";\n  "), pos += 4;
      field_decls = f.substr(f.find_first_not_of(";\n ")) + ";\n";
      size_t r;
      while ((r = field_decls.find("__restrict__ ")) != std::string::npos) field_decls.erase(r, 13);
    }
    std::string epi_text = str_cat("  ", field_decls, "  long long base;\n");
    if (epi_m_fastest_)
      epi_text += "  static constexpr bool m_fastest = true;  // stores contiguous along m (gemm.cuh)\n";
    // 8-wide stores (gemm.cuh vec8_stores): fp16 tiles, an arena output (16-byte aligned) whose
    // rows are whole chunks of 8 and whose store runs along n.
    const bool vec8 = plan_.vec_epilogue && f16 && epi_n_vec8_ && !epi_m_fastest_ && N % 8 == 0 &&
                      (out_dtype == DType::kF16 || out_dtype == DType::kF32) &&
                      plan_.placement.at(plan_.root(out)).space == Placement::kArena && grp.computes_stats < 0;
    const std::string vec8_store = str_cat("    const long long i = base + (long long)m * ", N, "LL + n0;\n", epi_index_code_,
                                           "    store8(", out_ptr, " + (", store, "), r);\n  }\n");
    const std::string vec8_head = "  static constexpr bool vec8_stores = true;  // 8 consecutive n: one 16-byte store\n"
                                  "  __device__ __forceinline__ void vec8(int m, int n0, const float (&acc)[8]) const {\n";
    if (slots == 0 && !vec8) {
      epi_text += str_cat("  __device__ void operator()(int m, int n, float v) const {\n", epi_body, "    ", store_stmt, "\n  }\n");
    } else if (slots == 0) {  // run<false>: the value without its store, for vec8
      epi_text += str_cat("  template <bool S = true>\n  __device__ __forceinline__ float run(int m, int n, float v) const {\n",
                          epi_body, "    if (S) ", store_stmt, "\n    return v;\n  }\n",
                          "  __device__ void operator()(int m, int n, float v) const { run(m, n, v); }\n", vec8_head,
                          "    float r[8];\n#pragma unroll\n    for (int j = 0; j < 8; ++j) r[j] = run<false>(m, n0 + j, acc[j]);\n",
                          vec8_store);
    } else {
      // Two phases (gemm.cuh): all reads of all the thread's elements before its first store.
      epi_text += str_cat("  struct In { float x[", slots, "]; };\n",
                          "  template <bool L, bool S = true>\n  __device__ __forceinline__ float run(int m, int n, float v, In& in) const {\n",
                          epi_body, "    if (!L && S) ", store_stmt, "\n    return v;\n  }\n",
                          "  __device__ __forceinline__ void load(int m, int n, In& in) const { run<true>(m, n, 0.0f, in); }\n",
                          "  __device__ __forceinline__ void operator()(int m, int n, float v, const In& in) const {\n",
                          "    run<false>(m, n, v, const_cast<In&>(in));\n  }\n");
      if (vec8)
        epi_text += str_cat(vec8_head, "    In in[8];\n#pragma unroll\n    for (int j = 0; j < 8; ++j) run<true>(m, n0 + j, 0.0f, in[j]);\n",
                            "    float r[8];\n#pragma unroll\n    for (int j = 0; j < 8; ++j) r[j] = run<false, false>(m, n0 + j, acc[j], in[j]);\n",
                            vec8_store);
    }
    // Name the epilogue by its text so identical layers share it.
    std::string epi_name;
    auto it = epi_names_.find(epi_text);
    if (it != epi_names_.end()) {
      epi_name = it->second;
    } else {
      epi_name = str_cat("Epi_", epi_names_.size());
      epi_names_[epi_text] = epi_name;
      functions_.push_back(str_cat("struct ", epi_name, " {\n", epi_text, "};\n"));
    }
    const int64_t tm = ceil_div(M, gs.bm), tn = ceil_div(N, gs.bn);
    const int64_t chunk = ceil_div(ceil_div(K, gs.splits), gs.bk) * gs.bk;
    const std::string gemm_t = f16 ? str_cat("GemmF16<", gs.bm, ", ", gs.bn, ", ", gs.bk, ", ", gs.warps_m, ", ", gs.warps_n, ", ", gs.stages, ">")
                                   : str_cat("GemmF32<", gs.bm, ", ", gs.bn, ", ", gs.bk, ", ", gs.warps_m, ", ", gs.warps_n, ">");
    std::string body = str_cat("  static_assert(", gemm_t, "::kSmemBytes <= MONO_SMEM_BYTES, \"tile does not fit the context\");\n",
                               // Split slowest: split-K reducers (the last split) come after every producer (gemm.cuh).
                               gs.splits > 1 ? str_cat("  const int split = item / ", batch * tm * tn, ";\n  int t = item % ", batch * tm * tn, ";\n")
                                             : std::string("  const int split = 0;\n  int t = item;\n"),
                               "  const int tn = t % ", tn, "; t /= ", tn, ";\n  const int tm = t % ", tm, ";\n",
                               "  const long long b = t / ", tm, ";\n");
    body += a_batch + b_batch;
    body += str_cat("  const int k0 = split * ", chunk, ", k1 = min(", K, ", k0 + ", chunk, ");\n");
    body += "  " + a_loader + "\n  " + b_loader + "\n";
    body += str_cat("  epi.base = b * ", M * N, "LL;\n");
    // The operand that is a weights constant read by cp.async (DenseK): input 1, which is conv's A
    // (weights [Cout][Cin*KH*KW]) and MatMul/Gemm's B.
    const Value* w = n.inputs[1];
    const std::string& w_loader = conv ? a_loader : b_loader;
    const bool pre = allow_pre && plan_.early_weights && f16 && w_loader.rfind("DenseK<", 0) == 0 &&
                     plan_.placement.at(plan_.root(w)).space == Placement::kWeights;
    std::string pre_arg;
    if (pre) {
      body += str_cat("  if (pre == 2) {  // preload only\n    ", gemm_t, "::preload<", conv ? "kPreA>(tm * " : "kPreB>(tn * ",
                      conv ? gs.bm : gs.bn, ", k0, k1, ", conv ? "la" : "lb", ", smem);\n    return;\n  }\n");
      pre_arg = str_cat(", pre ? ", conv ? "kPreA" : "kPreB", " : kPreNone");
      preloadable_.insert(grp.id);
    }
    if (gs.splits > 1) {
      // This tile's partial slots (gemm.cuh: splits - 1 of BM x BN floats) and counter.
      body += str_cat("  const long long tile_id = (b * ", tm, " + tm) * ", tn, " + tn;\n");
      body += str_cat("  ", gemm_t, "::tile(", M, ", ", N, ", tm * ", gs.bm, ", tn * ", gs.bn, ", k0, k1, la, lb, epi, smem, ws + tile_id * ",
                      (gs.splits - 1) * gs.bm * gs.bn, "LL, cnt + tile_id, ", gs.splits, ", split", pre_arg, ");\n");
    } else {
      body += str_cat("  ", gemm_t, "::tile(", M, ", ", N, ", tm * ", gs.bm, ", tn * ", gs.bn,
                      ", k0, k1, la, lb, epi, smem, (float*)nullptr, (unsigned int*)nullptr, 1, 0", pre_arg, ");\n");
    }
    body += stats_call;
    std::string sig = str_cat("int item, unsigned char* smem, const ", T, "* __restrict__ A, const ", T, "* __restrict__ B, ",
                              epi_name, " epi, float* ws, unsigned int* cnt", pre ? ", int pre" : "",
                              a_map >= 0 ? ", const TensorMap* amap" : "");
    std::string name = define(conv ? "conv" : "gemm", sig, body);
    // Call: A and B pointers, the epilogue's fields, workspace and counters.
    std::string args = P.call_args();  // ", ptrA, ptrB, ..."
    std::vector<std::string> parts;
    {
      std::string a2 = args;
      size_t start = 0;
      // split on top-level ", " (pointer expressions contain no commas)
      while (start < a2.size()) {
        size_t next = a2.find(", ", start + 2);
        parts.push_back(a2.substr(start + 2, (next == std::string::npos ? a2.size() : next) - start - 2));
        if (next == std::string::npos) break;
        start = next;
      }
    }
    std::string a_ptr = parts[0], b_ptr = parts[1];
    std::string epi_init = epi_name + "{";
    for (size_t i = 0; i < parts.size(); ++i) epi_init += parts[i] + ", ";
    epi_init += "0}";
    std::string ws = gs.splits > 1 ? str_cat("(float*)(p.arena + ", grp.workspace_offset, ")") : "(float*)nullptr";
    std::string cnt = gs.splits > 1 ? str_cat("p.sync + ", grp.counters_offset) : "(unsigned int*)nullptr";
    return str_cat(name, "(ITEM, smem, ", a_ptr, ", ", b_ptr, ", ", epi_init, ", ", ws, ", ", cnt, pre ? ", PRE" : "",
                   a_map >= 0 ? str_cat(", &mono_tmaps[", a_map, "]") : "", ")");
  }

  const Graph& g_;
  const KernelPlan& plan_;
  std::map<std::string, std::string> by_text_;
  std::map<std::string, std::string> epi_names_;
  size_t* epi_slots_ = nullptr;  // while emitting a GEMM epilogue: float reads counted into slots
  bool epi_m_fastest_ = false;   // set by epilogue_code: the store is contiguous along m
  bool epi_n_vec8_ = false;      // set by epilogue_code: 8 consecutive n are 8 consecutive stores
  std::string epi_index_code_;   // set by epilogue_code: its index decompositions alone
  std::set<std::string> row_prelude_done_, structs_done_;
  std::set<int> preloadable_;  // GEMM groups whose calls take PRE (emit_gemm)
  std::vector<std::string> functions_;
  std::vector<TensorMapSpec> tensor_maps_;  // mono_tmaps, in index order (emit_gemm)
};

}  // namespace

std::string emit_cuda(const Graph& graph, const KernelPlan& plan, const std::string& model_name,
                      std::vector<TensorMapSpec>* tensor_maps) {
  Emitter e(graph, plan);
  std::string source = e.run(model_name);
  if (tensor_maps) *tensor_maps = e.tensor_maps();
  return source;
}

}  // namespace mono
