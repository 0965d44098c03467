#include "compiler/codegen/emit/expressions.h"

#include "compiler/codegen/emit/index_math.h"
#include "compiler/codegen/emit/names.h"
#include "compiler/codegen/emit/pointwise_ops.h"
#include "compiler/codegen/support.h"
#include "compiler/ops/op.h"
#include "compiler/support/error.h"

namespace mono::emit {

std::string Expressions::load(const Value* v, const std::string& offset, const std::string& role) {
  const Value* r = plan_.root(v);
  const DType d = plan_.dtype_of(r);
  if (r->is_constant() && r->constant->numel() == 1) {
    if (is_float(d)) return literal(r->constant->as_double(0));
    if (d == DType::kBool) return r->constant->as_int(0) ? "true" : "false";
    return str_cat(r->constant->as_int(0), "LL");
  }
  if (plan_.computed.count(r)) return computed(r, offset);
  std::string e = str_cat(params_.ref(r, {}, role), "[", offset, "]");
  if (is_float(d)) return slot("to_float(" + e + ")");
  if (d == DType::kBool) return "(" + e + " != 0)";
  return "(long long)" + e;
}

// The element of movement `root` (Group::at_read) at flat index `offset`: a lambda of the flat
// index, defined once per function, computes it as the movement's own group would have (the
// anchor's code, loading its inputs through load(): computed ones become lambdas first).
// Lambdas are numbered in the function, not by group, so that repeated layers' functions stay
// one text.
std::string Expressions::computed(const Value* root, const std::string& offset) {
  MONO_CHECK(allow_computed_ && !slots_, root->name, " is computed where it is read, by a group that cannot");
  auto it = lambdas_.find(root);
  if (it == lambdas_.end()) {
    const Node& n = *plan_.groups[plan_.computed.at(root)].anchor;
    const std::string body = decompose("i", n.outputs[0]->type.shape, "o") + anchor_code(*this, plan_, n);
    const std::string name = str_cat("at_read", lambdas_.size());
    // An fp16 movement's elements are fp16 (a Pad's fill rounded as its stored result would be).
    const std::string ret = plan_.dtype_of(root) == DType::kF16 ? str_cat("to_float(", store(DType::kF16, "v"), ")") : "v";
    prelude_ += str_cat("  // ", comment_text(n.describe()), ", computed where it is read\n", "  auto ", name,
                        " = [&](long long i) -> float {\n", body, "    return ", ret, ";\n  };\n");
    it = lambdas_.emplace(root, name).first;
  }
  return str_cat(it->second, "(", offset, ")");
}

std::string Expressions::slot(const std::string& e) {
  if (!slots_) return e;
  const size_t k = (*slots_)++;
  return str_cat("(L ? (in.x[", k, "] = ", e, ") : in.x[", k, "])");
}

std::vector<std::string> Expressions::operands(const Node& n, int running, const std::vector<std::string>& idx,
                                               const std::string& role) {
  std::vector<std::string> a;
  for (int i = 0; i < n.num_inputs(); ++i) {
    if (i == running) a.push_back("v");
    else if (!n.inputs[i]) a.push_back("");
    else a.push_back(load(n.inputs[i], broadcast_offset(n.inputs[i]->type.shape, idx), str_cat(role, "in", i)));
  }
  if (n.op == OpKind::kClip) {
    // Bounds: inputs (opset >= 11) or attributes; absent means unbounded.
    MONO_CHECK(is_float(plan_.dtype_of(n.inputs[0])), "integer Clip in CUDA");
    a.resize(3);
    if (n.opset < 11) {
      const AttrReader attrs = node_attrs(n);
      a[1] = attrs.has_attr("min") ? literal(attrs.attr_float("min")) : "";
      a[2] = attrs.has_attr("max") ? literal(attrs.attr_float("max")) : "";
    }
    if (a[1].empty()) a[1] = "-__int_as_float(0x7f800000)";
    if (a[2].empty()) a[2] = "__int_as_float(0x7f800000)";
  }
  return a;
}

std::string Expressions::elementwise(const Node& n, const std::vector<std::string>& a, DType in_dtype) const {
  const bool f = is_float(in_dtype);
  // Variadic Max and Min fold their operands left to right (one operand: itself).
  auto fold = [&](const char* fn) {
    std::string e = a.at(0);
    for (size_t i = 1; i < a.size(); ++i) e = str_cat(fn, "(", e, ", ", a[i], ")");
    return e;
  };
  // Variadic Sum and Mean add their operands left to right.
  auto sum = [&]() {
    std::string e = "(" + a.at(0);
    for (size_t i = 1; i < a.size(); ++i) e += " + " + a[i];
    return e + ")";
  };
  const AttrReader attrs = node_attrs(n);
  auto call = [&](const char* fn, std::initializer_list<const char*> float_attrs = {}) {
    std::string e = str_cat(fn, "(", a.at(0));
    for (const char* name : float_attrs) e += ", " + literal(attrs.attr_float(name));
    return e + ")";
  };
  switch (n.op) {
    case OpKind::kAdd: return "(" + a[0] + " + " + a[1] + ")";
    case OpKind::kSub: return "(" + a[0] + " - " + a[1] + ")";
    case OpKind::kMul: return "(" + a[0] + " * " + a[1] + ")";
    case OpKind::kDiv: return "(" + a[0] + " / " + a[1] + ")";
    case OpKind::kPow: return f ? "powf(" + a[0] + ", (float)" + a[1] + ")" : "ipow(" + a[0] + ", " + a[1] + ")";
    case OpKind::kSum: return sum();
    case OpKind::kMean: return str_cat("(", sum(), " / ", literal(static_cast<double>(a.size())), ")");
    case OpKind::kMod:
      return f ? str_cat("fmodf(", a[0], ", ", a[1], ")")
               : str_cat("imod(", a[0], ", ", a[1], ", ", attrs.attr_int("fmod") ? "true" : "false", ")");
    case OpKind::kPRelu: return str_cat("prelu(", a[0], ", ", a[1], ")");
    case OpKind::kXor: return "(" + a[0] + " != " + a[1] + ")";
    case OpKind::kSign: return call("sign_of");
    case OpKind::kSin: return call("sinf");
    case OpKind::kCos: return call("cosf");
    case OpKind::kTan: return call("tanf");
    case OpKind::kAsin: return call("asinf");
    case OpKind::kAcos: return call("acosf");
    case OpKind::kAtan: return call("atanf");
    case OpKind::kSinh: return call("sinhf");
    case OpKind::kCosh: return call("coshf");
    case OpKind::kAsinh: return call("asinhf");
    case OpKind::kAcosh: return call("acoshf");
    case OpKind::kAtanh: return call("atanhf");
    case OpKind::kFloor: return call("floorf");
    case OpKind::kCeil: return call("ceilf");
    case OpKind::kRound: return call("rintf");  // halves to even, numpy's round
    case OpKind::kSoftplus: return call("softplus");
    case OpKind::kSoftsign: return call("softsign");
    case OpKind::kMish: return call("mish");
    case OpKind::kHardSwish: return call("hard_swish");
    case OpKind::kSwish: return call("swish", {"alpha"});
    case OpKind::kHardSigmoid: return call("hard_sigmoid", {"alpha", "beta"});
    case OpKind::kLeakyRelu: return call("leaky_relu", {"alpha"});
    case OpKind::kElu: return call("elu", {"alpha"});
    case OpKind::kSelu: return call("selu", {"alpha", "gamma"});
    case OpKind::kCelu: return call("celu", {"alpha"});
    case OpKind::kThresholdedRelu: return call("thresholded_relu", {"alpha"});
    case OpKind::kShrink: return call("shrink", {"bias", "lambd"});
    case OpKind::kMax: return fold(f ? "fmax_nan" : "max");
    case OpKind::kMin: return fold(f ? "fmin_nan" : "min");
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
    case OpKind::kGelu:
      return (node_attrs(n).attr_string("approximate") == "tanh" ? "gelu_tanh(" : "gelu_erf(") + a[0] + ")";
    case OpKind::kIsNaN: return "isnan(" + a[0] + ")";
    case OpKind::kIsInf:
      return str_cat("is_inf(", a[0], ", ", attrs.attr_int("detect_positive") ? "true" : "false", ", ",
                     attrs.attr_int("detect_negative") ? "true" : "false", ")");
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

std::string Expressions::cast(const std::string& a, DType from, DType to) const {
  if (is_float(to)) return "(float)(" + a + ")";
  if (to == DType::kBool) return "(" + a + " != 0)";
  if (is_float(from)) return "float_to_int(" + a + ")";
  return "(long long)(" + a + ")";
}

std::string Expressions::store(DType d, const std::string& v) const {
  if (is_float(d)) return str_cat("from_float<", ctype(d), ">(", v, ")");
  return str_cat("(", ctype(d), ")(", v, ")");
}

bool is_elementwise_anchor(OpKind op) {
  switch (op) {
    case OpKind::kIsNaN: case OpKind::kNot: case OpKind::kAnd: case OpKind::kOr: case OpKind::kEqual:
    case OpKind::kLess: case OpKind::kLessOrEqual: case OpKind::kGreater: case OpKind::kGreaterOrEqual:
    case OpKind::kWhere: case OpKind::kCast: case OpKind::kXor: case OpKind::kIsInf:
      return true;
    default:
      return is_epilogue_op(op);
  }
}

}  // namespace mono::emit
