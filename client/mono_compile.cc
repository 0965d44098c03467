// mono-compile MODEL.onnx [--shape NAME=DIMS]... [--emit ir] [--no-simplify] [--stats]
//                         [--dump-passes]
// Loads and simplifies a model and prints its IR.
#include <cstdio>
#include <iostream>

#include "client/cli.h"
#include "compiler/ir/printer.h"
#include "compiler/support/error.h"

namespace mono {

static const char kUsage[] =
    "usage: mono-compile MODEL.onnx [--shape NAME=DIMS]... [--emit ir] [--no-simplify]\n"
    "                    [--stats] [--dump-passes] [--all-constants]\n"
    "  --emit ir          print the IR after simplification (the default)\n"
    "  --shape N=DIMS     bind the dynamic dimensions of input N, e.g. input_ids=1x128\n"
    "  --no-simplify      print the IR as loaded\n"
    "  --stats            print node counts per pass to stderr\n"
    "  --dump-passes      print the IR after every pass that changed it (stderr)\n"
    "  --all-constants    print every constant's values, not only small ones\n";

static int compile_main(int argc, char** argv) {
  cli::Args args(argc, argv);
  cli::ModelOptions options;
  std::string model, emit = "ir";
  PrintOptions print;
  std::string flag;
  while (args.next(&flag)) {
    if (cli::parse_model_flag(flag, args, &options)) continue;
    if (flag == "--emit") {
      emit = args.value(flag);
    } else if (flag == "--all-constants") {
      print.max_constant_elements = kMaxTensorElements;
    } else if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      return cli::kExitOk;
    } else if (!flag.empty() && flag[0] == '-') {
      user_error("unknown flag '", flag, "'\n", kUsage);
    } else if (model.empty()) {
      model = flag;
    } else {
      user_error("more than one model given ('", model, "' and '", flag, "')");
    }
  }
  if (model.empty()) user_error("no model given\n", kUsage);
  if (emit != "ir") user_error("--emit ", emit, " is not available; this build emits: ir");
  std::unique_ptr<Graph> g = cli::load_model(model, options);
  print_graph(std::cout, *g, print);
  return cli::kExitOk;
}

}  // namespace mono

int main(int argc, char** argv) {
  return mono::cli::run_main("mono-compile", [&] { return mono::compile_main(argc, argv); });
}
