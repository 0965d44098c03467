#include "client/cli.h"

#include <cstdio>
#include <cstdlib>
#include <random>

#include "compiler/reference/interpreter.h"
#include <iostream>

#include "compiler/ir/printer.h"
#include "compiler/support/error.h"

namespace mono::cli {

int run_main(const char* tool, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UserError& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool, e.what());
  } catch (const InternalError& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", tool, e.what());
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "%s: error: out of memory\n", tool);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: internal error: %s\n", tool, e.what());
  }
  return kExitError;
}

bool Args::next(std::string* flag) {
  if (i_ >= args_.size()) return false;
  *flag = args_[i_++];
  return true;
}

std::string Args::value(const std::string& flag) {
  if (i_ >= args_.size()) user_error(flag, " needs a value");
  return args_[i_++];
}

void take_model_argument(const std::string& flag, std::string* model) {
  if (!flag.empty() && flag[0] == '-') user_error("unknown flag '", flag, "' (see --help)");
  if (!model->empty()) user_error("more than one model given ('", *model, "' and '", flag, "')");
  *model = flag;
}

void require_model(const std::string& model) {
  if (model.empty()) user_error("no model given (see --help)");
}

bool parse_model_flag(const std::string& flag, Args& args, ModelOptions* options) {
  if (flag == "--shape") {
    auto [name, shape] = parse_shape_binding(args.value(flag));
    options->load.input_shapes[name] = shape;
  } else if (flag == "--no-simplify") {
    options->simplify = false;
  } else if (flag == "--stats") {
    options->stats = true;
  } else if (flag == "--dump-passes") {
    options->dump_passes = true;
  } else if (flag == "--no-calibrate") {
    options->calibrate = false;
  } else {
    return false;
  }
  return true;
}

namespace {
// The value of an integer flag, in [lo, hi]; anything else is a user error naming `what`.
int int_flag(const std::string& flag, Args& args, long lo, long hi, const char* what) {
  const std::string v = args.value(flag);
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || n < lo || n > hi) user_error(flag, " ", v, " is not ", what);
  return static_cast<int>(n);
}
}  // namespace

bool parse_codegen_flag(const std::string& flag, Args& args, PlanOptions* options) {
  if (flag == "--dtype") {
    std::string v = args.value(flag);
    if (v == "fp16") options->precision = Precision::kF16;
    else if (v == "fp32") options->precision = Precision::kF32;
    else user_error("--dtype ", v, " is not one of: fp32, fp16");
  } else if (flag == "--profile") {
    options->profile = true;
  } else if (flag == "--no-prefetch" || flag == "--prefetch") {
    options->prefetch_weights = flag == "--prefetch";
  } else if (flag == "--prefetch-distance") {
    options->prefetch_distance = int_flag(flag, args, 1, 4, "a number in 1..4");
    options->prefetch_weights = true;
  } else if (flag == "--gemm-stages") {
    options->gemm_stages = int_flag(flag, args, 2, 8, "a number in 2..8");
  } else if (flag == "--bulk-weights" || flag == "--no-bulk-weights") {
    options->bulk_weights = flag == "--bulk-weights";
  } else if (flag == "--gemm-bk") {
    options->gemm_bk = int_flag(flag, args, 0, 256, "a k tile in 16..256, or 0 for the menu's");
    if (options->gemm_bk % 16) user_error("--gemm-bk ", options->gemm_bk, " is not a multiple of 16");
  } else if (flag == "--vec-epilogue" || flag == "--no-vec-epilogue") {
    options->vec_epilogue = flag == "--vec-epilogue";
  } else if (flag == "--tensor-a" || flag == "--no-tensor-a") {
    options->tensor_a = flag == "--tensor-a";
  } else if (flag == "--tile-weights" || flag == "--no-tile-weights") {
    options->tile_weights = flag == "--tile-weights";
  } else if (flag == "--tile-conv-weights" || flag == "--no-tile-conv-weights") {
    options->tile_conv_weights = flag == "--tile-conv-weights";
  } else if (flag == "--early-weights" || flag == "--no-early-weights") {
    options->early_weights = flag == "--early-weights";
  } else if (flag == "--direct-epilogue" || flag == "--staged-epilogue") {
    options->staged_epilogue = flag == "--staged-epilogue";
  } else if (flag == "--no-fold-layernorm" || flag == "--fold-layernorm") {
    options->fold_layernorm = flag == "--fold-layernorm";
  } else if (flag == "--epi-chunk") {
    options->epi_chunk = int_flag(flag, args, 1, 64, "a number in 1..64");
  } else if (flag == "--no-swap-b" || flag == "--swap-b") {
    options->swap_b_operands = flag == "--swap-b";
  } else if (flag == "--no-fuse-attention") {
    options->fuse_attention = false;
  } else if (flag == "--no-inline" || flag == "--inline") {
    options->inline_groups = flag == "--inline";
  } else if (flag == "--sms") {
    options->sms = int_flag(flag, args, 1, 1024, "a multiprocessor count");
  } else {
    return false;
  }
  return true;
}

std::vector<Tensor> synthetic_inputs(const Graph& g) {
  std::mt19937 rng(0);
  std::normal_distribution<float> normal;
  std::vector<Tensor> inputs;
  for (const Value* in : g.inputs) {
    Tensor t(in->type);
    if (is_float(in->type.dtype)) {
      std::vector<float> v(t.numel());
      for (float& x : v) x = normal(rng);
      t = Tensor::from_floats(in->type.shape, v, in->type.dtype);
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

void calibrate(const Graph& g, const std::vector<Tensor>& inputs, PlanOptions* plan) {
  if (plan->precision != Precision::kF16) return;
  plan->ranges = float_ranges(g, inputs);
  int out_of_range = 0;
  for (const auto& [v, r] : plan->ranges)
    if (r != 0.0f && (r < kMinFp16Range || r > kMaxFp16Range)) ++out_of_range;
  if (out_of_range)
    std::fprintf(stderr, "note: %d float tensors have a calibrated range outside fp16's; they stay fp32\n", out_of_range);
}

std::string model_label(const std::string& path) {
  std::string p = path;
  while (!p.empty() && p.back() == '/') p.pop_back();
  size_t slash = p.rfind('/');
  std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
  if (base == "model.onnx" && slash != std::string::npos && slash > 0) {
    std::string dir = p.substr(0, slash);
    size_t s2 = dir.rfind('/');
    return s2 == std::string::npos ? dir : dir.substr(s2 + 1);
  }
  return base;
}

std::unique_ptr<Graph> load_model(const std::string& path, const ModelOptions& options) {
  LoadResult loaded = load_onnx(path, options.load);
  for (const std::string& note : loaded.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  std::unique_ptr<Graph> g = std::move(loaded.graph);
  const size_t before = g->num_nodes();
  if (options.simplify) {
    SimplifyOptions so;
    if (options.dump_passes) so.dump = &std::cerr;
    std::vector<PassStat> stats = simplify(*g, so);
    if (options.stats) {
      std::fprintf(stderr, "%-24s %5s %7s %7s %9s\n", "pass", "round", "before", "after", "ms");
      for (const PassStat& s : stats) {
        if (!s.changed) continue;
        std::fprintf(stderr, "%-24s %5d %7zu %7zu %9.2f\n", s.pass.c_str(), s.round, s.nodes_before,
                     s.nodes_after, s.ms);
      }
    }
  }
  if (options.stats)
    std::fprintf(stderr, "%s: %zu nodes loaded, %zu after simplification\n", path.c_str(), before, g->num_nodes());
  return g;
}

}  // namespace mono::cli
