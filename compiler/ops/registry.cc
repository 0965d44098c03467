// The op table built over MONO_OPS, and the contexts ops read their inputs through.
#include <array>

#include "compiler/ops/op.h"

namespace mono {

#define MONO_OP_DECL(name) const OpDef& op_def_##name();
MONO_OPS(MONO_OP_DECL)
#undef MONO_OP_DECL

const OpDef& op_def(OpKind op) {
  static const std::array<const OpDef*, kNumOps> table = {
#define MONO_OP_REF(name) &op_def_##name(),
      MONO_OPS(MONO_OP_REF)
#undef MONO_OP_REF
  };
  return *table[static_cast<int>(op)];
}

bool normalize_axis(int64_t axis, int64_t rank, int64_t* out) {
  if (axis < -rank || axis >= rank) return false;
  *out = axis < 0 ? axis + rank : axis;
  return true;
}

// ---- AttrReader -------------------------------------------------------------------------

const AttrValue& AttrReader::lookup(const char* key, AttrType type) const {
  if (const AttrValue* v = node_.attr(key)) {
    if (attr_type_of(*v) != type)
      fail(str_cat("attribute '", key, "' must be ", attr_type_name(type), ", got ",
                   attr_type_name(attr_type_of(*v))));
    return *v;
  }
  for (const AttrSpec& spec : def_.attrs) {
    if (std::string(spec.name) != key) continue;
    MONO_CHECK(spec.type == type, "attribute ", key, " read with the wrong type in ", def_.name);
    if (spec.required) fail(str_cat("required attribute '", key, "' is missing"));
    MONO_CHECK(spec.has_default, "attribute ", key, " of ", def_.name,
               " has no default: check has_attr() first");
    return spec.default_value;
  }
  MONO_CHECK(false, "attribute ", key, " is not in the spec of ", def_.name);
}

int64_t AttrReader::attr_int(const char* key) const {
  return std::get<int64_t>(lookup(key, AttrType::kInt));
}
float AttrReader::attr_float(const char* key) const {
  return std::get<float>(lookup(key, AttrType::kFloat));
}
std::string AttrReader::attr_string(const char* key) const {
  return std::get<std::string>(lookup(key, AttrType::kString));
}
std::vector<int64_t> AttrReader::attr_ints(const char* key) const {
  if (!has_attr(key)) return {};
  return std::get<std::vector<int64_t>>(lookup(key, AttrType::kInts));
}
std::vector<float> AttrReader::attr_floats(const char* key) const {
  if (!has_attr(key)) return {};
  return std::get<std::vector<float>>(lookup(key, AttrType::kFloats));
}
const Tensor& AttrReader::attr_tensor(const char* key) const {
  return *std::get<std::shared_ptr<const Tensor>>(lookup(key, AttrType::kTensor));
}

void AttrReader::fail(const std::string& msg) const {
  throw UserError(str_cat(node_.describe(), ": ", msg));
}

// ---- InferContext -----------------------------------------------------------------------

const TensorType& InferContext::input(int i) const {
  const Value* v = node().input(i);
  MONO_CHECK(v != nullptr, "input ", i, " of ", node().describe(), " is absent");
  return v->type;
}

const Tensor& InferContext::require_known(int i, const char* what) const {
  const Tensor* t = known(i);
  if (!t)
    throw NotKnownError(str_cat(node().describe(), ": input ", i, " (", what,
                                ") must be known at compile time: Mono compiles static shapes"));
  return *t;
}

void InferContext::set_output(int i, TensorType type) {
  if (i >= num_outputs() || node().outputs[i] == nullptr) return;  // output not wanted
  if (type.numel() < 0) fail(str_cat("output ", i, " would have an invalid or too large shape ", type.str()));
  node().outputs[i]->type = std::move(type);
}

void InferContext::expect_dtype(int i, std::initializer_list<DType> allowed) const {
  DType t = input_dtype(i);
  for (DType a : allowed)
    if (a == t) return;
  std::string names;
  for (DType a : allowed) names += str_cat(names.empty() ? "" : ", ", dtype_name(a));
  fail(str_cat("input ", i, " has type ", dtype_name(t), "; expected one of ", names));
}

void InferContext::expect_same_dtype(int i, int j) const {
  if (input_dtype(i) != input_dtype(j))
    fail(str_cat("inputs ", i, " and ", j, " differ in type: ", input(i).str(), " vs ",
                 input(j).str()));
}

void InferContext::expect_rank(int i, int64_t rank) const {
  if (input(i).rank() != rank)
    fail(str_cat("input ", i, " must have rank ", rank, ", got ", input(i).str()));
}

int64_t InferContext::axis(int64_t axis, int64_t rank, const char* what) const {
  int64_t out;
  if (!normalize_axis(axis, rank, &out))
    fail(str_cat(what, " ", axis, " is out of range for rank ", rank));
  return out;
}

// ---- ComputeContext ---------------------------------------------------------------------

const Tensor& ComputeContext::input(int i) const {
  MONO_CHECK(has_input(i), "input ", i, " of ", node().describe(), " is absent");
  return *inputs_[i];
}

Tensor& ComputeContext::output(int i) const {
  MONO_CHECK(has_output(i), "output ", i, " of ", node().describe(), " is not wanted");
  return *outputs_[i];
}

}  // namespace mono
