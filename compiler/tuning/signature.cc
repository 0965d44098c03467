#include "compiler/tuning/signature.h"

#include "compiler/ir/printer.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <map>
#include <set>

#include "compiler/codegen/support.h"
#include "compiler/ops/op.h"
#include "compiler/ops/pool.h"
#include "compiler/ops/reduce.h"
#include "compiler/ops/softmax.h"
#include "compiler/support/error.h"

namespace mono::tuning {

namespace {

// Integer constants up to this many elements are part of the signature by value (axes,
// starts, shapes, small index lists); larger ones and float constants only by type.
constexpr int64_t kMaxStructuralInts = 64;

std::string dims(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += str_cat(i ? "," : "", s[i]);
  return out + "]";
}

std::string ints(const std::vector<int64_t>& v) { return dims(v); }

std::string real(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string attr_text(const AttrValue& a) {
  switch (attr_type_of(a)) {
    case AttrType::kInt: return str_cat(std::get<int64_t>(a));
    case AttrType::kFloat: return real(std::get<float>(a));
    case AttrType::kString: return quote_string(std::get<std::string>(a));
    case AttrType::kInts: return ints(std::get<std::vector<int64_t>>(a));
    case AttrType::kFloats: {
      const auto& v = std::get<std::vector<float>>(a);
      std::string out = "[";
      for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + real(v[i]);
      return out + "]";
    }
    case AttrType::kTensor: {
      const auto& t = std::get<std::shared_ptr<const Tensor>>(a);
      return t ? str_cat("tensor ", dtype_name(t->dtype()), dims(t->shape())) : "tensor none";
    }
  }
  return "?";
}

int64_t rank_of(const Node& n, int i) {
  const Value* v = n.input(i);
  return v ? v->type.rank() : 0;
}

int64_t normalize_axis(int64_t a, int64_t rank) { return a < 0 ? a + rank : a; }

const Value* constant_input(const KernelPlan& plan, const Node& n, int i) {
  const Value* v = n.input(i);
  if (!v) return nullptr;
  const Value* r = plan.root(v);
  return r->is_constant() ? r : nullptr;
}

// Inputs that are folded into the canonical attributes (so that the opset-17 attribute and
// the opset-18 input forms of the same op read the same) or implied by the output shapes.
bool input_is_attribute(const KernelPlan& plan, const Node& n, int i) {
  if (i == 1 && is_reduce_op(n.op)) return constant_input(plan, n, 1) != nullptr;  // axes
  if (i == 1 && n.op == OpKind::kSplit) return true;                           // split sizes: the output shapes
  return false;
}

// The node's attributes, canonical: defaults filled in, axes normalised and sorted, inputs
// that replaced attributes in later opsets read back as attributes, opset-dependent
// semantics made explicit.
std::map<std::string, std::string> canonical_attrs(const KernelPlan& plan, const Node& n) {
  std::map<std::string, AttrValue> a(n.attrs.begin(), n.attrs.end());
  auto fill = [&](const std::string& key, AttrValue v) { a.emplace(key, std::move(v)); };
  // Every default the op's definition has (compiler/ops): absent means the default.
  for (const AttrSpec& spec : op_def(n.op).attrs)
    if (spec.has_default) fill(spec.name, spec.default_value);
  const int64_t rank0 = rank_of(n, 0);
  switch (n.op) {
    case OpKind::kSoftmax:
      a["axis"] = softmax_axis(n);  // its default depends on the opset (softmax.h)
      if (n.opset < 13) a["coerce_2d"] = int64_t{1};  // the input is flattened to 2-D at `axis`
      break;
    case OpKind::kSplit:
      a.erase("split");  // the output shapes say it
      a.erase("num_outputs");
      break;
    case OpKind::kTranspose:
      if (!a.count("perm")) {
        std::vector<int64_t> perm(static_cast<size_t>(rank0));
        for (int64_t i = 0; i < rank0; ++i) perm[i] = rank0 - 1 - i;
        a["perm"] = perm;
      }
      break;
    case OpKind::kCast:
      a.erase("saturate");  // float8 targets only
      break;
    case OpKind::kConv:
    case OpKind::kAveragePool:
    case OpKind::kMaxPool: {
      const int64_t spatial = std::max<int64_t>(0, rank0 - 2);
      if (n.op == OpKind::kConv) {
        if (const Value* w = n.input(1); w && w->type.rank() >= 2)
          fill("kernel_shape", conv_geometry(n).kernel);  // from W, in either layout
      }
      fill("strides", std::vector<int64_t>(spatial, 1));
      fill("dilations", std::vector<int64_t>(spatial, 1));
      fill("pads", std::vector<int64_t>(2 * spatial, 0));
      break;
    }
    default:
      break;
  }
  if (is_reduce_op(n.op)) {
    std::vector<int64_t> axes;
    if (const Value* c = constant_input(plan, n, 1)) axes = c->constant->to_int_vector();
    else if (auto it = a.find("axes"); it != a.end()) axes = std::get<std::vector<int64_t>>(it->second);
    int64_t noop = 0;
    if (auto it = a.find("noop_with_empty_axes"); it != a.end()) noop = std::get<int64_t>(it->second);
    a.erase("noop_with_empty_axes");
    if (axes.empty() && !noop)
      for (int64_t i = 0; i < rank0; ++i) axes.push_back(i);  // empty: every axis
    a["axes"] = axes;
  }
  // Axes relative to input 0's rank: non-negative, and sets sorted.
  if (auto it = a.find("axis"); it != a.end() && attr_type_of(it->second) == AttrType::kInt && n.op != OpKind::kFlatten)
    it->second = normalize_axis(std::get<int64_t>(it->second), rank0);
  if (auto it = a.find("axes"); it != a.end() && attr_type_of(it->second) == AttrType::kInts) {
    std::set<int64_t> s;
    for (int64_t x : std::get<std::vector<int64_t>>(it->second)) s.insert(normalize_axis(x, rank0));
    it->second = std::vector<int64_t>(s.begin(), s.end());
  }
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : a) out[k] = attr_text(v);
  return out;
}

// A one-element constant: the generated code inlines it as a literal, whatever its shape
// ([] or [1] depending on the exporter).
bool is_scalar_constant(const KernelPlan& plan, const Value* v) {
  return v && plan.root(v)->is_constant() && v->type.numel() == 1;
}

// An operand that is not the group's running value: where it comes from, its device dtype
// and shape, its packing if constant, small integer constants by value.
std::string operand_text(const KernelPlan& plan, const Node& n, int i) {
  const Value* v = n.input(i);
  if (!v) return "none";
  const Value* r = plan.root(v);
  if (is_scalar_constant(plan, v)) {
    std::string s = str_cat("const ", dtype_name(plan.dtype_of(v)), " scalar");
    if (!is_float(r->type.dtype)) s += str_cat(" value=", r->constant->as_int(0));
    return s;
  }
  // A movement computed where it is read (Group::at_read) is code of the group, not a load.
  std::string s = str_cat(r->is_constant() ? "const " : plan.computed.count(r) ? "computed " : "act ", dtype_name(plan.dtype_of(v)),
                          dims(v->type.shape));
  if (r->is_constant()) {
    const std::string packing = constant_packing(n, i).str();
    if (!packing.empty()) s += " packing=" + packing;
    if (!is_float(r->type.dtype) && r->constant->numel() <= kMaxStructuralInts)
      s += " values=" + ints(r->constant->to_int_vector());
  }
  return s;
}

// How an operand broadcasts against the node's output, right-aligned: '=' same size,
// 'b' broadcast (size 1), '_' missing dimension.
std::string broadcast_text(const Shape& operand, const Shape& out) {
  std::string s;
  const int64_t r = static_cast<int64_t>(out.size()), ro = static_cast<int64_t>(operand.size());
  for (int64_t j = 0; j < r; ++j) {
    const int64_t k = j - (r - ro);
    if (k < 0) s += '_';
    else if (operand[k] == out[j]) s += '=';
    else s += 'b';
  }
  return s;
}

bool commutative(OpKind op) {
  return op == OpKind::kAdd || op == OpKind::kMul || op == OpKind::kMax || op == OpKind::kMin;
}

void node_header(std::string* t, const KernelPlan& plan, const char* role, const Node& n) {
  *t += str_cat(role, " ", op_name(n.op));
  for (const auto& [k, v] : canonical_attrs(plan, n)) *t += str_cat(" ", k, "=", v);
  *t += "\n";
}

void outputs_text(std::string* t, const KernelPlan& plan, const Node& n) {
  for (size_t o = 0; o < n.outputs.size(); ++o) {
    const Value* v = n.outputs[o];
    *t += v ? str_cat("  out ", dtype_name(plan.dtype_of(v)), dims(v->type.shape), "\n") : "  out none\n";
  }
}

}  // namespace

std::string group_signature_text(const KernelPlan& plan, const Group& g) {
  std::string t = str_cat("mono-group-signature v", kSignatureVersion, "\n");
  t += str_cat("kind ", group_kind_name(g.kind));
  if (g.kind == GroupKind::kGemm || g.kind == GroupKind::kConvGemm) t += g.f16 ? " f16-mma" : " f32-ffma";
  t += "\n";
  // The anchor: every operand as it is.
  const Node& a = *g.anchor;
  node_header(&t, plan, "anchor", a);
  for (int i = 0; i < a.num_inputs(); ++i)
    if (!input_is_attribute(plan, a, i)) t += str_cat("  in ", operand_text(plan, a, i), "\n");
  outputs_text(&t, plan, a);
  // The epilogue: each step names the running value (the group's result so far) and values
  // computed inside the group; commutative ops list the running value first.
  const Value* running = a.outputs.empty() || !a.outputs[0] ? nullptr : plan.root(a.outputs[0]);
  std::set<const Value*> internal;
  for (const Node* e : g.epilogue) {
    node_header(&t, plan, "epilogue", *e);
    std::vector<std::string> ins;
    const Shape& out_shape = e->outputs[0]->type.shape;
    for (int i = 0; i < e->num_inputs(); ++i) {
      const Value* v = e->input(i);
      const Value* r = v ? plan.root(v) : nullptr;
      std::string s;
      if (r && r == running) s = "running";
      else if (r && internal.count(r)) s = "internal";
      else if (input_is_attribute(plan, *e, i)) continue;
      else if (!v || is_scalar_constant(plan, v)) s = operand_text(plan, *e, i);
      else s = operand_text(plan, *e, i) + " bcast=" + broadcast_text(v->type.shape, out_shape);
      ins.push_back(s);
    }
    if (commutative(e->op))
      std::stable_partition(ins.begin(), ins.end(), [](const std::string& s) { return s == "running"; });
    for (const std::string& s : ins) t += "  in " + s + "\n";
    outputs_text(&t, plan, *e);
    const Value* out = plan.root(e->outputs[0]);
    if (e->op == OpKind::kIsNaN) internal.insert(out);  // a condition, the running value stays
    else running = out;
  }
  // A squeeze computed inside every item (Group::squeeze) is part of the group's code and time.
  if (g.squeeze >= 0) t += "squeeze inside: " + group_signature_text(plan, plan.groups[g.squeeze]);
  // So are the movements it computes where it reads them (Group::at_read): those it reads
  // itself, in the order it reads them, each with the ones it reads in turn.
  for (int id : computed_inputs(plan, g)) t += "computed at read: " + group_signature_text(plan, plan.groups[id]);
  return t;
}

std::string signature_hash(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, h);
  return buf;
}

GroupSignature group_signature(const KernelPlan& plan, const Group& group) {
  GroupSignature s;
  s.text = group_signature_text(plan, group);
  s.hash = signature_hash(s.text);
  return s;
}

std::string group_signature_hash(const KernelPlan& plan, const Group& group) {
  return signature_hash(group_signature_text(plan, group));
}

void enable_signatures(PlanOptions* options) { options->signature = group_signature_hash; }

}  // namespace mono::tuning
