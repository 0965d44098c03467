#include <chrono>
#include <ostream>

#include "compiler/ir/printer.h"
#include "compiler/ops/infer.h"
#include "compiler/passes/passes.h"
#include "compiler/support/error.h"

namespace mono {

const std::vector<PipelinePass>& simplification_pipeline() {
  // The pipeline, in order.
  static const std::vector<PipelinePass> passes = {
      {"remove_identity", remove_identity},
      {"fold_shape_arithmetic", fold_shape_arithmetic},
      {"constant_folding", constant_folding},
      {"constant_masks", constant_masks},
      {"decompose", decompose},
      {"canonicalize", canonicalize},
      {"fold_reshape_transpose", fold_reshape_transpose},
      {"fold_batch_norm", fold_batch_norm},
      {"recognize_swish", recognize_swish},
      {"patch_conv", patch_conv},
      {"channels_last", channels_last},
      {"split_gemm", split_gemm},
      {"recognize_gelu", recognize_gelu},
      {"recognize_layer_norm", recognize_layer_norm},
      {"dead_code", dead_code},
  };
  return passes;
}

bool dead_code(Graph& g) {
  size_t values = g.values().size();
  return g.remove_dead_code() > 0 || g.values().size() != values;
}

std::vector<PassStat> simplify(Graph& g, const SimplifyOptions& options) {
  for (const std::string& name : options.skip) {
    bool known = false;
    for (const PipelinePass& pass : simplification_pipeline()) known = known || name == pass.name;
    if (!known) user_error("--skip-pass ", name, ": no simplification pass of that name");
  }
  std::vector<PassStat> stats;
  for (int round = 1; round <= options.max_rounds; ++round) {
    bool any = false;
    for (const PipelinePass& pass : simplification_pipeline()) {
      if (options.skip.count(pass.name)) continue;
      PassStat s;
      s.pass = pass.name;
      s.round = round;
      s.nodes_before = g.num_nodes();
      auto start = std::chrono::steady_clock::now();
      s.changed = pass.run(g);
      s.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      s.nodes_after = g.num_nodes();
      stats.push_back(s);
      if (!s.changed) continue;
      // dead_code alone cannot enable another round.
      if (std::string(pass.name) != "dead_code") any = true;
      if (options.verify_each) verify_graph(g, /*internal=*/true);
      if (options.dump) {
        *options.dump << "// after " << pass.name << " (round " << round << ")\n";
        print_graph(*options.dump, g);
      }
    }
    if (!any) break;
  }
  return stats;
}

bool run_pass_by_name(const std::string& name, Graph& g, bool* changed) {
  for (const PipelinePass& pass : simplification_pipeline()) {
    if (name == pass.name) {
      *changed = pass.run(g);
      return true;
    }
  }
  return false;
}

}  // namespace mono
