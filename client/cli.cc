#include "client/cli.h"

#include <cstdio>
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
  } else {
    return false;
  }
  return true;
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
