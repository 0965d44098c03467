// Golden tests of the planner (see tests/golden/plan/README.md): a graph in the textual IR, the
// kernel settings, and the plan `mono-compile --emit plan` prints for it. Every planner step
// (planner/steps.h, as plan_kernel reports them) is covered by at least one case.
// MONO_UPDATE_GOLDENS=1 rewrites the expected plans with what the planner prints now (review
// the diff: it is the change's effect on every plan).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "compiler/codegen/plan.h"
#include "compiler/ir/printer.h"
#include "compiler/ops/infer.h"
#include "tests/golden/golden_file.h"

namespace mono {
namespace {

using PlanCase = golden::Case;

std::string plan_dir() { return std::string(MONO_SOURCE_DIR) + "/tests/golden/plan"; }

std::vector<PlanCase> load_cases() { return golden::load_cases(plan_dir()); }

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The plan text of a case, and the steps plan_kernel ran (in order).
std::string plan_text(const PlanCase& c, std::vector<std::string>* steps = nullptr) {
  ParseOptions parse;
  parse.fill_elided = true;
  auto g = parse_graph(c.input, parse);
  infer_shapes(*g);
  verify_graph(*g, /*internal=*/false);
  PlanOptions options;
  for (const std::string& s : words(c.field("settings"))) apply_setting(&options.settings, s);
  if (steps) options.after_step = [&](const char* step, const KernelPlan&) { steps->push_back(step); };
  std::ostringstream os;
  print_plan(os, *g, plan_kernel(*g, options));
  return os.str();
}

// Rewrites the expected sections of every file with the current plans.
void update_goldens() {
  for (const std::string& f : golden::case_files(plan_dir())) {
    std::ostringstream out;
    for (const PlanCase& c : load_cases()) {
      if (c.file != f) continue;
      out << "# case: " << c.name << "\n";
      for (const char* field : {"settings", "covers"})
        if (!c.field(field).empty()) out << "# " << field << ": " << c.field(field) << "\n";
      out << c.input << "# expect:\n" << plan_text(c);
    }
    std::ofstream(plan_dir() + "/" + f) << out.str();
  }
}

class PlanGolden : public ::testing::TestWithParam<PlanCase> {};

TEST_P(PlanGolden, PlanMatches) {
  const PlanCase& c = GetParam();
  EXPECT_EQ(plan_text(c), c.expect) << c.file << ": " << c.name << " (MONO_UPDATE_GOLDENS=1 rewrites the expected plans)";
}

INSTANTIATE_TEST_SUITE_P(Planner, PlanGolden, ::testing::ValuesIn(load_cases()),
                         [](const ::testing::TestParamInfo<PlanCase>& info) { return info.param.name; });

// Every step plan_kernel runs is named by some case's `# covers:` line, and every name there
// is a step.
TEST(PlanGolden, EveryStepHasCases) {
  if (const char* u = std::getenv("MONO_UPDATE_GOLDENS"); u && std::string(u) == "1") update_goldens();
  const std::vector<PlanCase> cases = load_cases();
  ASSERT_FALSE(cases.empty());
  std::vector<std::string> steps;
  plan_text(cases.front(), &steps);
  ASSERT_GE(steps.size(), 8u);
  std::set<std::string> covered;
  for (const PlanCase& c : cases)
    for (const std::string& w : words(c.field("covers"))) {
      EXPECT_NE(std::find(steps.begin(), steps.end(), w), steps.end()) << c.name << " covers '" << w << "', not a step";
      covered.insert(w);
    }
  for (const std::string& s : steps) EXPECT_TRUE(covered.count(s)) << "no plan golden case covers the step " << s;
}

}  // namespace
}  // namespace mono
