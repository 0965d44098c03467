#include "compiler/backend/verify.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "compiler/ir/printer.h"
#include "compiler/reference/interpreter.h"
#include "compiler/support/error.h"

namespace mono {

double default_tolerance(const std::string& precision) { return precision == "fp16" ? 1e-2 : 1e-4; }

std::string Verification::summary() const {
  std::string where;
  for (const OutputCheck& o : outputs)
    if (o.comparison.rel == worst || (!o.comparison.same_type && std::isinf(worst))) where = o.name;
  return str_cat(ok ? "PASS" : "FAIL", ", worst relative error ", format_float(worst),
                 where.empty() ? std::string() : str_cat(" (output '", where, "')"));
}

Verification compare_outputs(const std::vector<std::string>& names, const std::vector<Tensor>& got,
                             const std::vector<Tensor>& want, const std::string& precision, double tolerance) {
  MONO_CHECK(got.size() == want.size() && names.size() == want.size(), "compare_outputs: ", got.size(), " outputs, ",
             want.size(), " expected, ", names.size(), " names");
  Verification v;
  v.ok = true;
  for (size_t i = 0; i < got.size(); ++i) {
    OutputCheck o;
    o.name = names[i];
    o.comparison = compare_tensors(got[i], want[i]);
    o.got_type = got[i].type().str();
    o.want_type = want[i].type().str();
    o.tolerance = tolerance >= 0 ? tolerance : default_tolerance(precision);
    if (want[i].dtype() == DType::kF16) o.tolerance = std::max(o.tolerance, 1e-2);
    o.ok = o.comparison.ok(o.tolerance);
    v.ok = v.ok && o.ok;
    v.worst = std::max(v.worst, o.comparison.same_type ? o.comparison.rel : std::numeric_limits<double>::infinity());
    v.outputs.push_back(o);
  }
  return v;
}

void print_verification(std::FILE* out, const Verification& v) {
  for (size_t i = 0; i < v.outputs.size(); ++i) {
    const OutputCheck& o = v.outputs[i];
    const Comparison& c = o.comparison;
    if (!c.same_type) {
      std::fprintf(out, "output %zu '%s': type %s, expected %s  FAIL\n", i, o.name.c_str(), o.got_type.c_str(),
                   o.want_type.c_str());
      continue;
    }
    std::fprintf(out, "output %zu '%s' %s: max abs error %.3g, relative error %.3g (tolerance %.0e)%s  %s\n", i,
                 o.name.c_str(), o.want_type.c_str(), c.max_abs, c.rel, o.tolerance,
                 c.nan_mismatch ? str_cat(", ", c.nan_mismatch, " NaN mismatches").c_str() : "", o.ok ? "ok" : "FAIL");
  }
  std::fprintf(out, "worst relative error: %.3g  %s\n", v.worst, v.ok ? "PASS" : "FAIL");
}

nlohmann::json verification_record(const Verification& v, const std::string& against, const std::string& gpu) {
  double tolerance = 0;
  for (const OutputCheck& o : v.outputs) tolerance = std::max(tolerance, o.tolerance);
  return {{"verified", true},
          {"ok", v.ok},
          {"worst_relative_error", std::isfinite(v.worst) ? nlohmann::json(v.worst) : nlohmann::json("type mismatch")},
          {"tolerance", tolerance},
          {"against", against},
          {"gpu", gpu}};
}

nlohmann::json unverified_record(const std::string& reason) { return {{"verified", false}, {"reason", reason}}; }

Verification verify(const Graph& graph, GpuModel& model, const std::vector<Tensor>& inputs, double tolerance) {
  const std::vector<Tensor> want = run_reference(graph, inputs);
  const std::vector<Tensor> got = model.run_host(inputs);
  std::vector<std::string> names;
  for (const Value* v : graph.outputs) names.push_back(v->name);
  return compare_outputs(names, got, want, model.manifest().precision, tolerance);
}

}  // namespace mono
