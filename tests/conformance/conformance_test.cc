// Runs every ONNX node conformance test of Debian's libonnx-testdata whose ops Mono supports
// through the CPU reference (as loaded, and again after simplification) against the expected
// outputs, and reports pass/fail counts. Cases are left out only by the rules of
// node_tests.cc, each printed with its reason. (gpu_conformance.cc runs the same cases as
// compiled kernels.)
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "compiler/passes/passes.h"
#include "compiler/reference/interpreter.h"
#include "compiler/support/error.h"
#include "tests/conformance/node_tests.h"

namespace mono::conformance {
namespace {

// Runs one test data set; returns "" on success, else what went wrong.
std::string run_case(const std::string& name, const std::string& set, bool simplify_first) {
  LoadedCase c = load_case(name, set);
  if (simplify_first) {
    simplify(*c.graph);
    c.inputs = match_inputs(*c.graph, c.data);
  }
  return allclose(run_reference(*c.graph, c.inputs), c.data.outputs);
}

TEST(Conformance, SupportedNodeTestsPass) {
  const std::vector<std::string> cases = list_cases();
  if (cases.empty()) GTEST_SKIP() << node_tests_dir() << " is missing: install libonnx-testdata";
  int passed = 0, failed = 0, left_out = 0;
  std::map<std::string, int> skipped;  // reason -> count
  std::vector<std::string> failures;
  for (const std::string& name : cases) {
    const std::string reason = selection_reason(name);
    if (!reason.empty()) {
      ++skipped[reason];
      continue;
    }
    if (auto it = excluded().find(name); it != excluded().end()) {
      std::printf("left out %s: %s\n", name.c_str(), it->second.c_str());
      ++left_out;
      // Left out means rejected with a clear error, never a wrong answer or a crash.
      std::string error;
      try {
        error = run_case(name, "test_data_set_0", false);
      } catch (const UserError& e) {
        error = e.what();
      }
      EXPECT_NE(error.find("training"), std::string::npos) << name << ": " << error;
      continue;
    }
    std::string error;
    for (const std::string& set : list_dirs(node_tests_dir() + "/" + name)) {
      for (bool simplify_first : {false, true}) {
        try {
          error = run_case(name, set, simplify_first);
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
              passed + failed + left_out, passed, failed, left_out, skipped_total);
  EXPECT_EQ(failed, 0);
  EXPECT_GT(passed, 300);
}

}  // namespace
}  // namespace mono::conformance
