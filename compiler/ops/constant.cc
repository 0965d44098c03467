// Constant: a tensor given by exactly one of its attributes (value, value_float(s),
// value_int(s)). String and sparse values are not supported.
#include "compiler/ops/shape_util.h"

namespace mono {

static Tensor constant_value(const AttrReader& ctx) {
  static const char* const kKeys[] = {"value", "value_float", "value_floats", "value_int",
                                      "value_ints", "value_string"};
  int set = 0;
  for (const char* k : kKeys) set += ctx.has_attr(k) ? 1 : 0;
  if (set != 1)
    ctx.fail(str_cat("needs exactly one of the attributes value, value_float, value_floats, "
                     "value_int, value_ints; ", set, " are set"));
  if (ctx.has_attr("value_string")) ctx.fail("string constants (value_string) are not supported");
  if (ctx.has_attr("value")) return ctx.attr_tensor("value");
  if (ctx.has_attr("value_float")) return Tensor::scalar_float(ctx.attr_float("value_float"));
  if (ctx.has_attr("value_int")) return Tensor::scalar_int(ctx.attr_int("value_int"));
  if (ctx.has_attr("value_floats")) {
    std::vector<float> v = ctx.attr_floats("value_floats");
    return Tensor::from_floats({static_cast<int64_t>(v.size())}, v);
  }
  std::vector<int64_t> v = ctx.attr_ints("value_ints");
  return Tensor::from_ints({static_cast<int64_t>(v.size())}, v);
}

static void infer_constant(InferContext& ctx) { ctx.set_output(0, constant_value(ctx).type()); }

static void compute_constant(ComputeContext& ctx) {
  Tensor value = constant_value(ctx);
  MONO_CHECK(value.type() == ctx.output(0).type(), "constant type changed");
  ctx.output(0) = std::move(value);
}

const OpDef& op_def_Constant() {
  static const OpDef def{"Constant",
                         0,
                         0,
                         1,
                         1,
                         {attr_optional("value", AttrType::kTensor),
                          attr_optional("value_float", AttrType::kFloat), attr_floats("value_floats"),
                          attr_optional("value_int", AttrType::kInt), attr_ints("value_ints"),
                          attr_optional("value_string", AttrType::kString)},
                         infer_constant,
                         compute_constant};
  return def;
}

}  // namespace mono
