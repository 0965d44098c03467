// mono-compile MODEL.onnx [--shape NAME=DIMS]... [--dtype fp32|fp16] [--emit ir|plan|cuda]
//                         [--db FILE [--gpu-kind NAME]] [--out DIR] [--sms N] [--no-simplify] [--stats] [--dump-passes]
// Loads and simplifies a model; prints its IR, kernel plan or CUDA source, or writes the
// artifact (model.cu, kernel.cubin, weights.bin, manifest.json) to DIR.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "client/cli.h"
#include "compiler/codegen/cuda_emitter.h"
#include "compiler/ir/printer.h"
#include "compiler/runtime/artifact.h"
#include "compiler/support/error.h"
#include "compiler/tuning/space.h"
#include "db/clock.h"
#include "db/store.h"
#include "tuner_server/tuning_jobs.h"

namespace mono {

// The service's final choice for a model from a tuner database (mono-compile --db).
struct TunedFromDb {
  server::ContextChoice choice;
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
  const bool dry = gpu_kind == server::dry_run_kind();
  const tuning::TuningSpace space = tuning::enumerate_space(g, plan);
  const nlohmann::json fragment = dry ? nlohmann::json() : server::whole_model_fragment(g, plan);
  server::FinalChoice f = server::final_choice(**store, fragment, space, gpu_kind, dry, 2, "");
  f.info["database"] = db_path;
  std::fprintf(stderr,
               "tuning results from %s (GPU kind '%s'%s): %d groups tuned, %d with no record keep their default "
               "schedule; context %s\n",
               db_path.c_str(), gpu_kind.c_str(), dry ? ": a dry run, nothing measured" : "", f.choice.groups_tuned,
               f.choice.groups_default, f.choice.context.str().c_str());
  if (f.pending)
    std::fprintf(stderr, "note: the whole-kernel timing of the tuned contexts has not finished; using the context "
                         "with the best per-group results\n");
  if (f.info.contains("note")) std::fprintf(stderr, "note: %s\n", f.info["note"].get<std::string>().c_str());
  return {f.choice, f.info};
}

static const char kUsage[] =
    "usage: mono-compile MODEL.onnx [--shape NAME=DIMS]... [--dtype fp32|fp16] [--emit ir|plan|cuda]\n"
    "                    [--out DIR] [--sms N] [--no-simplify] [--stats] [--dump-passes] [--all-constants]\n"
    "  --emit ir          print the IR after simplification (the default without --out)\n"
    "  --emit plan        print the kernel plan: groups, stages, barriers, schedules, estimates,\n"
    "                     and the tuning space (contexts x unique group signatures x candidates)\n"
    "  --emit cuda        print the generated CUDA source of the one kernel\n"
    "  --out DIR          write the artifact: model.cu, kernel.cubin (NVRTC), weights.bin, manifest.json\n"
    "  --db FILE          use the tuning results in this tuner database (mono-tuner-server --db):\n"
    "                     the same final kernel the service builds; untuned groups keep defaults\n"
    "  --gpu-kind NAME    with --db: the GPU kind to take results for (needed if it has several)\n"
    "  --dtype fp16       float16 storage and tensor cores with float32 accumulation (default fp32)\n"
    "  --sms N            multiprocessors the schedule targets (default 132, an H100 SXM)\n"
    "  --no-calibrate     fp16: store every float tensor in fp16 (default: tensors whose range on\n"
    "                     synthetic inputs, run on the CPU reference, does not fit stay fp32)\n"
    "  --prefetch         at the start of each stage, prefetch the weights of the stage\n"
    "                     --prefetch-distance ahead (default 1) into L2; --no-prefetch is accepted\n"
    "  --prefetch-distance N  stages ahead, 1..4 (implies --prefetch)\n"
    "  --inline, --no-inline  group functions inlined into the kernel, or out of line (shared by\n"
    "                     groups with the same code: much faster NVRTC/ptxas on big models);\n"
    "                     default: inline up to 64 groups\n"
    "  --no-fuse-attention  attention (MatMul, Softmax, MatMul) as three groups in three stages\n"
    "  --fold-layernorm   fold each LayerNormalization into the GEMM that writes its input and the\n"
    "                     GEMMs that read its output, where they allow it (default: a stage each)\n"
    "  --no-swap-b        store attention's K^T as computed (default: [N][K], read by cp.async)\n"
    "  --epi-chunk N      two-phase GEMM epilogue elements per memory round trip (default 8)\n"
    "                     instead of one group (for A/B timings)\n"
    "  --bulk-weights     fp16 GEMMs read weights with bulk copies (TMA unit), not cp.async\n"
    "  --no-tile-weights  fp16 GEMM weights read row by row with cp.async (default: packed tile\n"
    "                     by tile, one bulk copy per pipeline stage)\n"
    "  --tile-conv-weights  convolution weights packed tile by tile too (default: off; A/B)\n"
    "  --no-vec-epilogue  fp16 GEMM epilogues store element by element, not 8 per 16-byte store\n"
    "  --no-tensor-a      fp16 GEMM activations read with per-thread cp.async (default: through\n"
    "                     tensor maps, one TMA copy per 64 k of a pipeline stage)\n"
    "  --gemm-bk N        k tile of every default fp16 GEMM tile (not convolutions; A/B; 0: the\n"
    "                     menu's; default: 128 where K >= 128 and activations use tensor maps)\n"
    "  --early-weights    preload the next stage's first weight k tiles while each grid barrier\n"
    "                     waits (default: off; A/B timings)\n"
    "  --staged-epilogue  fp16 GEMM epilogues staged through shared memory for coalesced stores,\n"
    "                     not straight from the mma registers (default: direct; A/B timings)\n"
    "  --gemm-stages N    cp.async pipeline depth of every default fp16 GEMM tile, 2..8 (A/B)\n"
    "  --profile          a profiling build: per-stage timestamps (mono-run prints them)\n"
    "  --shape N=DIMS     bind the dynamic dimensions of input N, e.g. input_ids=1x128\n"
    "  --no-simplify      skip the simplification passes\n"
    "  --stats            print node counts per pass to stderr\n"
    "  --dump-passes      print the IR after every pass that changed it (stderr)\n"
    "  --all-constants    with --emit ir, print every constant's values\n";

static int compile_main(int argc, char** argv) {
  cli::Args args(argc, argv);
  cli::ModelOptions options;
  std::string model, emit, out, db_path, gpu_kind;
  PrintOptions print;
  PlanOptions plan;
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
    } else if (flag == "--all-constants") {
      print.max_constant_elements = kMaxTensorElements;
    } else if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      return cli::kExitOk;
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
    return cli::kExitOk;
  }
  if (options.calibrate) cli::calibrate(*g, cli::synthetic_inputs(*g), &plan);
  TunedFromDb tuned;
  if (!db_path.empty()) {
    tuned = tuning_from_db(db_path, gpu_kind, *g, plan);
    plan = tuning::tuned_options(plan, tuned.choice.context, tuned.choice.schedules);
  }
  NvrtcOptions nvrtc;
  nvrtc.cache_dir = default_cache_dir();
  nvrtc.sm_arch = 90;
  BuiltKernel built = build_kernel(*g, plan, cli::model_label(model), nvrtc, /*compile=*/!out.empty());
  if (emit == "plan") {
    print_plan(std::cout, *g, built.plan);
    // What tuning would measure: contexts x unique group signatures x candidates, with the
    // cost model's pruning.
    tuning::print_space(std::cout, tuning::enumerate_space(*g, plan));
  }
  if (emit == "cuda") std::cout << built.source;
  if (!out.empty()) {
    write_artifact(out, *g, built);
    // The manifest names the records used, as the service's does.
    if (!db_path.empty()) server::add_tuning_section(out, built.plan, tuned.choice, tuned.info);
    std::fprintf(stderr, "wrote %s: %d groups in %d stages, %zu B weights; kernel %s\n", out.c_str(),
                 built.manifest.groups, built.manifest.stages, built.manifest.weights_bytes,
                 built.compiled.usage.str().c_str());
  }
  return cli::kExitOk;
}

}  // namespace mono

int main(int argc, char** argv) {
  return mono::cli::run_main("mono-compile", [&] { return mono::compile_main(argc, argv); });
}
