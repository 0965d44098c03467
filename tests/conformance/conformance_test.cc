// Runs every ONNX node conformance test of Debian's libonnx-testdata whose ops Mono supports
// through the CPU reference (as loaded, and again after simplification) against the expected
// outputs, and reports pass/fail counts. Cases are left out only by the rules below, each
// printed with its reason.
#include <dirent.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <onnx/onnx_pb.h>

#include "client/compare.h"
#include "compiler/frontend/onnx_loader.h"
#include "compiler/passes/passes.h"
#include "compiler/reference/interpreter.h"
#include "compiler/support/error.h"

namespace mono {
namespace {

const char kNodeTests[] = "/usr/share/libonnx-testdata/data/node";

// Cases whose ops Mono supports but which are left out, with the reason.
// Each must still be rejected with a clear error, which the test checks.
const std::map<std::string, std::string> kExcluded = {
    {"test_batchnorm_epsilon_training_mode", "training mode (Mono compiles inference graphs; rejected clearly)"},
    {"test_batchnorm_example_training_mode", "training mode (Mono compiles inference graphs; rejected clearly)"},
    {"test_training_dropout", "training-mode Dropout is random (rejected clearly)"},
    {"test_training_dropout_default", "training-mode Dropout is random (rejected clearly)"},
    {"test_training_dropout_default_mask", "training-mode Dropout is random (rejected clearly)"},
    {"test_training_dropout_mask", "training-mode Dropout is random (rejected clearly)"},
    {"test_training_dropout_zero_ratio", "training-mode Dropout (rejected clearly)"},
    {"test_training_dropout_zero_ratio_mask", "training-mode Dropout (rejected clearly)"},
};

std::vector<std::string> list_dirs(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = opendir(path.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    struct stat st;
    if (stat((path + "/" + n).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool read_model(const std::string& path, onnx::ModelProto* m) {
  std::ifstream in(path, std::ios::binary);
  return in && m->ParseFromIstream(&in);
}

// Why the case is outside what Mono supports, or "" if it is selected.
std::string selection_reason(const onnx::ModelProto& m) {
  for (const auto& n : m.graph().node()) {
    OpKind k;
    if (!n.domain().empty() && n.domain() != "ai.onnx") return "op domain " + n.domain();
    if (!op_from_name(n.op_type().c_str(), &k)) return "op " + n.op_type();
  }
  auto check_type = [](const onnx::ValueInfoProto& v) {
    DType d;
    if (v.type().has_tensor_type() && !dtype_from_onnx(v.type().tensor_type().elem_type(), &d))
      return std::string("dtype ") + onnx_dtype_name(v.type().tensor_type().elem_type());
    if (!v.type().has_tensor_type()) return std::string("non-tensor value (sequence/optional)");
    return std::string();
  };
  for (const auto& v : m.graph().input())
    if (auto r = check_type(v); !r.empty()) return r;
  for (const auto& v : m.graph().output())
    if (auto r = check_type(v); !r.empty()) return r;
  for (const auto& n : m.graph().node())
    for (const auto& a : n.attribute())
      if (a.type() == onnx::AttributeProto::TENSOR) {
        DType d;
        if (!dtype_from_onnx(a.t().data_type(), &d)) return std::string("dtype ") + onnx_dtype_name(a.t().data_type());
      }
  return "";
}

// Runs one test data set; returns "" on success, else what went wrong.
std::string run_case(const std::string& dir, const std::string& set, bool simplify_first) {
  TestCase tc = read_test_case(dir + "/" + set);
  LoadOptions options;
  LoadResult loaded;
  try {
    loaded = load_onnx(dir + "/model.onnx", options);
  } catch (const UserError& e) {
    // Inputs that decide shapes (axes, shape, indices...) are fixed at compile time: Mono
    // compiles static shapes. Retry with every integer input bound to its test value.
    if (std::string(e.what()).find("must be known at compile time") == std::string::npos) throw;
    for (size_t i = 0; i < tc.inputs.size(); ++i)
      if (!is_float(tc.inputs[i].dtype())) options.constant_inputs[tc.input_names[i]] = tc.inputs[i];
    try {
      loaded = load_onnx(dir + "/model.onnx", options);
    } catch (const UserError& e2) {
      // Shapes that depend on float inputs (Range over floats): fix every input.
      if (std::string(e2.what()).find("must be known at compile time") == std::string::npos) throw;
      for (size_t i = 0; i < tc.inputs.size(); ++i) options.constant_inputs[tc.input_names[i]] = tc.inputs[i];
      loaded = load_onnx(dir + "/model.onnx", options);
    }
  }
  Graph& g = *loaded.graph;
  if (simplify_first) simplify(g);
  std::vector<Tensor> outs = run_reference(g, match_inputs(g, tc));
  if (outs.size() != tc.outputs.size()) return str_cat(outs.size(), " outputs, expected ", tc.outputs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    const Tensor& got = outs[i];
    const Tensor& want = tc.outputs[i];
    if (got.type() != want.type()) return str_cat("output ", i, " is ", got.type().str(), ", expected ", want.type().str());
    // numpy.testing.assert_allclose(rtol=1e-3, atol=1e-7), as ONNX's backend tests use.
    for (int64_t k = 0; k < got.numel(); ++k) {
      double a = got.as_double(k), b = want.as_double(k);
      if (std::isnan(a) && std::isnan(b)) continue;
      if (a == b) continue;
      if (!(std::fabs(a - b) <= 1e-7 + 1e-3 * std::fabs(b)))
        return str_cat("output ", i, " element ", k, ": got ", a, ", expected ", b);
    }
  }
  return "";
}

TEST(Conformance, SupportedNodeTestsPass) {
  std::vector<std::string> cases = list_dirs(kNodeTests);
  if (cases.empty()) GTEST_SKIP() << kNodeTests << " is missing: install libonnx-testdata";
  int passed = 0, failed = 0, excluded = 0;
  std::map<std::string, int> skipped;  // reason -> count
  std::vector<std::string> failures;
  for (const std::string& name : cases) {
    const std::string dir = std::string(kNodeTests) + "/" + name;
    onnx::ModelProto m;
    if (!read_model(dir + "/model.onnx", &m)) {
      failures.push_back(name + ": unreadable model");
      ++failed;
      continue;
    }
    std::string reason = selection_reason(m);
    if (!reason.empty()) {
      ++skipped[reason];
      continue;
    }
    if (auto it = kExcluded.find(name); it != kExcluded.end()) {
      std::printf("left out %s: %s\n", name.c_str(), it->second.c_str());
      ++excluded;
      // Left out means rejected with a clear error, never a wrong answer or a crash.
      std::string error;
      try {
        error = run_case(dir, "test_data_set_0", false);
      } catch (const UserError& e) {
        error = e.what();
      }
      EXPECT_NE(error.find("training"), std::string::npos) << name << ": " << error;
      continue;
    }
    std::string error;
    for (const std::string& set : list_dirs(dir)) {
      for (bool simplify_first : {false, true}) {
        try {
          error = run_case(dir, set, simplify_first);
        } catch (const std::exception& e) {
          error = e.what();
        }
        if (!error.empty()) {
          error = str_cat(set, simplify_first ? " (simplified)" : "", ": ", error);
          break;
        }
      }
      if (!error.empty()) break;
    }
    if (error.empty()) {
      ++passed;
    } else {
      ++failed;
      failures.push_back(name + ": " + error);
    }
  }
  int skipped_total = 0;
  std::printf("not selected (outside Mono's ops and dtypes):\n");
  for (const auto& [reason, count] : skipped) {
    std::printf("  %4d  %s\n", count, reason.c_str());
    skipped_total += count;
  }
  for (const std::string& f : failures) std::printf("FAIL %s\n", f.c_str());
  std::printf("conformance: %d selected, %d passed, %d failed, %d left out, %d not selected\n",
              passed + failed + excluded, passed, failed, excluded, skipped_total);
  EXPECT_EQ(failed, 0);
  EXPECT_GT(passed, 300);
}

}  // namespace
}  // namespace mono
