// mono-compile MODEL.onnx [--shape NAME=DIMS]... [--dtype fp32|fp16] [--set NAME=VALUE]...
//                         [--emit ir|plan|cuda] [--db FILE [--gpu-kind NAME]] [--out DIR]
// Loads and simplifies a model; prints its IR, kernel plan or CUDA source, or writes the
// artifact (model.cu, kernel.cubin, weights.bin, manifest.json) to DIR, verified on the GPU
// when this machine has one.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "client/cli.h"
#include "compiler/backend/artifact_writer.h"
#include "compiler/codegen/cuda_emitter.h"
#include "compiler/ir/printer.h"
#include "compiler/reference/inputs.h"
#include "compiler/support/error.h"
#include "compiler/tuning/merge.h"
#include "compiler/tuning/space.h"
#include "db/clock.h"
#include "db/store.h"

namespace mono {

// The service's final choice for a model from a tuner database (mono-compile --db).
struct TunedFromDb {
  tuning::ContextChoice choice;
  nlohmann::json info;
};

static TunedFromDb tuning_from_db(const std::string& db_path, std::string gpu_kind, const Graph& g,
                                  const PlanOptions& plan) {
  db::SystemClock clock;
  auto store = db::Store::Open(db_path, &clock);
  if (!store.ok()) user_error(db_path, ": ", std::string(store.status().message()));
  auto kinds = (*store)->task_gpu_kinds();
  if (!kinds.ok()) user_error(db_path, ": ", std::string(kinds.status().message()));
  if (gpu_kind.empty()) {
    if (kinds->empty()) user_error(db_path, ": the database has no tuning results");
    if (kinds->size() > 1) {
      std::string list;
      for (const std::string& k : *kinds) list += (list.empty() ? "'" : ", '") + k + "'";
      user_error(db_path, " has results for several GPU kinds (", list, "): name one with --gpu-kind");
    }
    gpu_kind = kinds->front();
  } else if (std::find(kinds->begin(), kinds->end(), gpu_kind) == kinds->end()) {
    user_error(db_path, " has no results for GPU kind '", gpu_kind, "'");
  }
  const bool dry = gpu_kind == tuning::dry_run_kind();
  const tuning::TuningSpace space = tuning::enumerate_space(g, plan);
  const nlohmann::json fragment = dry ? nlohmann::json() : tuning::whole_model_fragment(g, plan);
  tuning::FinalChoice f = tuning::final_choice(**store, fragment, space, gpu_kind, dry, 2, "");
  f.info["database"] = db_path;
  std::fprintf(stderr,
               "tuning results from %s (GPU kind '%s'%s): %d groups tuned, %d with no record keep their default "
               "schedule; context %s\n",
               db_path.c_str(), gpu_kind.c_str(), dry ? ": a dry run, nothing measured" : "", f.choice.groups_tuned,
               f.choice.groups_default, f.choice.context.str().c_str());
  if (f.pending)
    std::fprintf(stderr, "note: the whole-kernel timing of the tuned contexts has not finished; using the context "
                         "with the best per-group results\n");
  if (!f.refused.empty()) user_error(db_path, ": ", f.refused);
  if (f.info.contains("note")) std::fprintf(stderr, "note: %s\n", f.info["note"].get<std::string>().c_str());
  return {f.choice, f.info};
}

// The manifest's verification record of a kernel about to be written: run on this machine's
// GPU against the CPU reference when there is one that can run it.
static nlohmann::json verify_artifact(const std::string& model, const cli::ModelFlags& options, const BuiltKernel& built) {
  std::string why;
  if (!gpu_available(&why))
    return unverified_record("no GPU where it was compiled (" + why + "); mono-run MODEL --gpu --verify checks a model on one");
  const GpuInfo info = gpu_info(0);
  if (info.sm_arch < built.manifest.sm_arch)
    return unverified_record(str_cat("the GPU where it was compiled (", info.name, ", sm_", info.sm_arch,
                                     ") cannot run an sm_", built.manifest.sm_arch, " kernel"));
  std::unique_ptr<GpuModel> gm = GpuModel::create(built.manifest, built.compiled.cubin, built.weights);
  const Verification v = cli::verify_model(model, options, *gm, stderr);
  return verification_record(v, cli::kVerificationAgainst, info.name);
}

static const char kUsage[] =
    "usage: mono-compile MODEL.onnx [--shape NAME=DIMS]... [--dtype fp32|fp16] [--set NAME=VALUE]...\n"
    "                    [--emit ir|plan|cuda] [--out DIR] [--db FILE [--gpu-kind NAME]]\n"
    "  --emit ir          print the IR after simplification (the default without --out)\n"
    "  --emit plan        print the kernel plan: groups, stages, barriers, schedules, estimates,\n"
    "                     and the tuning space (contexts x unique group signatures x candidates)\n"
    "  --emit cuda        print the generated CUDA source of the one kernel\n"
    "  --out DIR          write the artifact: model.cu, kernel.cubin (NVRTC), weights.bin, manifest.json;\n"
    "                     with a GPU here, first verify the kernel against the CPU reference on\n"
    "                     synthetic inputs (a kernel that fails is not written: exit 1); the\n"
    "                     manifest records the verification, or why none was made\n"
    "  --no-verify        with --out: skip the verification (recorded as not verified)\n"
    "  --db FILE          use the tuning results in this tuner database (mono-tuner-server --db):\n"
    "                     the same final kernel the service builds; untuned groups keep defaults\n"
    "  --gpu-kind NAME    with --db: the GPU kind to take results for (needed if it has several)\n"
    "  --dtype fp16       float16 storage and tensor cores with float32 accumulation (default fp32)\n"
    "  --profile          a profiling build: per-stage timestamps (mono-run prints them)\n"
    "  --set NAME=VALUE   a kernel setting (below)\n"
    "  --no-calibrate     fp16: store every float tensor in fp16 (default: tensors whose range on\n"
    "                     synthetic inputs, run on the CPU reference, does not fit stay fp32)\n"
    "  --shape N=DIMS     bind the dynamic dimensions of input N, e.g. input_ids=1x128\n"
    "  --no-simplify      skip the simplification passes\n"
    "  --stats            print node counts per pass to stderr\n"
    "  --dump-passes      print the IR after every pass that changed it (stderr)\n"
    "  --all-constants    with --emit ir, print every constant's values\n"
    "settings (--set):\n";

static int compile_main(int argc, char** argv) {
  Flags args(argc, argv);
  cli::ModelFlags options;
  std::string model, emit, out, db_path, gpu_kind;
  PrintOptions print;
  PlanOptions plan;
  bool verify = true;
  std::string flag;
  while (args.next(&flag)) {
    if (cli::parse_model_flag(flag, args, &options)) continue;
    if (cli::parse_codegen_flag(flag, args, &plan)) continue;
    if (flag == "--emit") {
      emit = args.value(flag);
    } else if (flag == "--out") {
      out = args.value(flag);
    } else if (flag == "--db") {
      db_path = args.value(flag);
    } else if (flag == "--gpu-kind") {
      gpu_kind = args.value(flag);
    } else if (flag == "--no-verify") {
      verify = false;
    } else if (flag == "--all-constants") {
      print.max_constant_elements = kMaxTensorElements;
    } else if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      std::fputs(settings_help().c_str(), stdout);
      return kExitOk;
    } else {
      cli::take_model_argument(flag, &model);
    }
  }
  cli::require_model(model);
  if (emit.empty() && out.empty()) emit = "ir";
  if (!emit.empty() && emit != "ir" && emit != "plan" && emit != "cuda")
    user_error("--emit ", emit, " is not one of: ir, plan, cuda");
  std::unique_ptr<Graph> g = cli::load_model(model, options);
  if (emit == "ir") {
    print_graph(std::cout, *g, print);
    return kExitOk;
  }
  if (options.calibrate) cli::calibrate(*g, synthetic_inputs(*g), &plan);
  TunedFromDb tuned;
  if (!db_path.empty()) {
    tuned = tuning_from_db(db_path, gpu_kind, *g, plan);
    plan = tuning::tuned_options(plan, tuned.choice.context, tuned.choice.schedules);
  }
  NvrtcOptions nvrtc;
  nvrtc.cache_dir = default_cache_dir();
  nvrtc.sm_arch = 90;
  BuiltKernel built = build_kernel(*g, plan, model_label(model), nvrtc, /*compile=*/!out.empty());
  if (emit == "plan") {
    print_plan(std::cout, *g, built.plan);
    // What tuning would measure: contexts x unique group signatures x candidates, with the
    // cost model's pruning.
    tuning::print_space(std::cout, tuning::enumerate_space(*g, plan));
  }
  if (emit == "cuda") std::cout << built.source;
  if (!out.empty()) {
    const nlohmann::json record = verify ? verify_artifact(model, options, built) : unverified_record("--no-verify");
    if (record.value("verified", false) && !record.value("ok", false)) {
      std::fprintf(stderr, "mono-compile: %s: the kernel's outputs differ from the CPU reference; no artifact written\n",
                   model.c_str());
      return kExitMismatch;
    }
    write_artifact(out, *g, built, record);
    // The manifest names the records used, as the service's does.
    if (!db_path.empty()) tuning::add_tuning_section(out, built.plan, tuned.choice, tuned.info);
    std::fprintf(stderr, "wrote %s: %d groups in %d stages, %zu B weights; kernel %s\n", out.c_str(),
                 built.manifest.groups, built.manifest.stages, built.manifest.weights_bytes,
                 built.compiled.usage.str().c_str());
  }
  return kExitOk;
}

}  // namespace mono

int main(int argc, char** argv) {
  return mono::run_main("mono-compile", [&] { return mono::compile_main(argc, argv); });
}
