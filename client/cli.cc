#include "client/cli.h"

#include <cstdio>
#include <iostream>

#include "compiler/reference/inputs.h"
#include "compiler/support/error.h"

namespace mono::cli {

void take_model_argument(const std::string& flag, std::string* model) {
  if (!flag.empty() && flag[0] == '-') Flags::unknown(flag);
  if (!model->empty()) user_error("more than one model given ('", *model, "' and '", flag, "')");
  *model = flag;
}

void require_model(const std::string& model) {
  if (model.empty()) user_error("no model given (see --help)");
}

bool parse_model_flag(const std::string& flag, Flags& args, ModelFlags* flags) {
  if (flag == "--shape") {
    auto [name, shape] = parse_shape_binding(args.value(flag));
    flags->model.load.input_shapes[name] = shape;
  } else if (flag == "--no-simplify") {
    flags->model.simplify = false;
  } else if (flag == "--skip-pass") {
    flags->model.skip_passes.insert(args.value(flag));
  } else if (flag == "--stats") {
    flags->stats = true;
  } else if (flag == "--dump-passes") {
    flags->model.dump_passes = &std::cerr;
  } else if (flag == "--no-calibrate") {
    flags->calibrate = false;
  } else {
    return false;
  }
  return true;
}

bool parse_codegen_flag(const std::string& flag, Flags& args, PlanOptions* options) {
  if (flag == "--dtype") {
    const std::string v = args.value(flag);
    set_setting(&options->settings, "dtype", v, "--dtype " + v);
  } else if (flag == "--profile") {
    options->settings.profile = true;
  } else if (flag == "--set") {
    apply_setting(&options->settings, args.value(flag));
  } else {
    return false;
  }
  return true;
}

std::unique_ptr<Graph> load_model(const std::string& path, const ModelFlags& flags) {
  LoadedModel m = mono::load_model(path, flags.model);
  for (const std::string& note : m.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  if (flags.stats) {
    if (flags.model.simplify) {
      std::fprintf(stderr, "%-24s %5s %7s %7s %9s\n", "pass", "round", "before", "after", "ms");
      for (const PassStat& s : m.passes) {
        if (!s.changed) continue;
        std::fprintf(stderr, "%-24s %5d %7zu %7zu %9.2f\n", s.pass.c_str(), s.round, s.nodes_before, s.nodes_after,
                     s.ms);
      }
    }
    std::fprintf(stderr, "%s: %zu nodes loaded, %zu after simplification\n", path.c_str(), m.nodes_loaded,
                 m.graph->num_nodes());
  }
  return std::move(m.graph);
}

const char kVerificationAgainst[] = "the CPU reference of the model as imported, on the synthetic inputs (seed 0)";

Verification verify_model(const std::string& path, const ModelFlags& flags, GpuModel& gm, std::FILE* out) {
  ModelOptions o = flags.model;
  o.simplify = false;
  o.dump_passes = nullptr;
  const LoadedModel reference = mono::load_model(path, o);
  const Verification v = verify(*reference.graph, gm, synthetic_inputs(*reference.graph));
  std::fprintf(out, "verification against %s:\n", kVerificationAgainst);
  print_verification(out, v);
  return v;
}

void calibrate(const Graph& g, const std::vector<Tensor>& inputs, PlanOptions* plan) {
  const int out_of_range = mono::calibrate(g, inputs, plan);
  if (out_of_range)
    std::fprintf(stderr, "note: %d float tensors have a calibrated range outside fp16's; they stay fp32\n", out_of_range);
}

}  // namespace mono::cli
