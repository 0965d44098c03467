// mono-compile MODEL.onnx [--shape NAME=DIMS]... [--dtype fp32|fp16] [--set NAME=VALUE]...
//                         [--emit ir|plan|cuda|fragment] [--db FILE | --server ADDR] [--gpu-kind NAME] [--out DIR]
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
#include "mono/v1/tuning.grpc.pb.h"
#include "proto/transport.h"

#include <grpcpp/grpcpp.h>

namespace mono {

// The service's final choice for a model (mono-compile --db FILE or --server ADDR).
struct TunedFrom {
  tuning::ContextChoice choice;
  nlohmann::json info;
};

static TunedFrom report_choice(const tuning::ModelChoice& m, const std::string& where) {
  std::fprintf(stderr,
               "tuning results from %s (GPU kind '%s'%s): %d groups tuned, %d with no record keep their default "
               "schedule; context %s\n",
               where.c_str(), m.gpu_kind.c_str(), m.dry_run ? ": a dry run, nothing measured" : "",
               m.choice.groups_tuned, m.choice.groups_default, m.choice.context.str().c_str());
  if (m.pending)
    std::fprintf(stderr, "note: the whole-kernel timing of the tuned contexts has not finished; using the context "
                         "with the best per-group results\n");
  if (m.info.contains("note")) std::fprintf(stderr, "note: %s\n", m.info["note"].get<std::string>().c_str());
  return {m.choice, m.info};
}

static TunedFrom tuning_from_db(const std::string& db_path, const std::string& gpu_kind, const Graph& g,
                                const PlanOptions& plan) {
  db::SystemClock clock;
  auto store = db::Store::Open(db_path, &clock);
  if (!store.ok()) user_error(db_path, ": ", std::string(store.status().message()));
  const tuning::TuningSpace space = tuning::enumerate_space(g, plan);
  tuning::ModelChoice m =
      tuning::model_choice(**store, db_path, gpu_kind, space, [&] { return tuning::whole_model_fragment(g, plan); });
  m.info["database"] = db_path;
  return report_choice(m, db_path);
}

// The same choice made by a remote tuner server over its database (the TunedChoice RPC): the
// model stays here; the server gets its tuning space and whole-model fragment.
static TunedFrom tuning_from_server(const std::string& server, const std::string& token, const transport::TlsFiles& tls,
                                    const std::string& gpu_kind, const Graph& g, const PlanOptions& plan) {
  constexpr size_t kServerLimit = 16 << 20;  // mono-tuner-server's receive limit (server_main.cc)
  grpc::ChannelArguments ca;
  ca.SetMaxReceiveMessageSize(64 << 20);
  auto channel = grpc::CreateCustomChannel(server, transport::channel_credentials(tls), ca);
  if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10)))
    user_error("cannot reach the tuner server at ", server, " (no connection within 10 s)");
  auto stub = v1::Tuning::NewStub(channel);
  v1::ChoiceRequest req;
  req.set_space_json(tuning::space_to_wire(tuning::enumerate_space(g, plan)).dump());
  req.set_fragment_json(tuning::whole_model_fragment(g, plan).dump());
  req.set_gpu_kind(gpu_kind);
  if (req.ByteSizeLong() > kServerLimit)
    user_error("the model's tuning space and fragment are ", req.ByteSizeLong() >> 20,
               " MiB, over the tuner server's 16 MiB request limit: use --db FILE on the server's database");
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
  v1::ChoiceReply reply;
  const grpc::Status s = stub->TunedChoice(&ctx, req, &reply);
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE || s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED)
    user_error("cannot reach the tuner server at ", server, " (", s.error_message(), ")");
  if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED)
    user_error("the tuner server refused the token (", s.error_message(), "): see --token-file");
  if (!s.ok()) user_error(server, ": ", s.error_message());
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(reply.choice_json());
  } catch (const nlohmann::json::exception& e) {
    user_error(server, ": the reply is not JSON (", e.what(), ")");
  }
  tuning::ModelChoice m = tuning::model_choice_from_json(j);
  m.info["server"] = server;
  return report_choice(m, "the tuner server at " + server);
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
    "                    [--emit ir|plan|cuda|fragment] [--out DIR] [--db FILE | --server ADDR] [--gpu-kind NAME]\n"
    "  --emit ir          print the IR after simplification (the default without --out)\n"
    "  --emit plan        print the kernel plan: groups, stages, barriers, schedules, estimates,\n"
    "                     and the tuning space (contexts x unique group signatures x candidates)\n"
    "  --emit cuda        print the generated CUDA source of the one kernel\n"
    "  --emit fragment    print the model as a tuning fragment (JSON: the IR without its float\n"
    "                     weights, precision, ranges, context): what a worker builds for the\n"
    "                     whole-kernel jobs, and what bench/build_time builds\n"
    "  --out DIR          write the artifact: model.cu, kernel.cubin (NVRTC), weights.bin, manifest.json;\n"
    "                     with a GPU here, first verify the kernel against the CPU reference on\n"
    "                     synthetic inputs (a kernel that fails is not written: exit 1); the\n"
    "                     manifest records the verification, or why none was made\n"
    "  --no-verify        with --out: skip the verification (recorded as not verified)\n"
    "  --db FILE          use the tuning results in this tuner database (mono-tuner-server --db):\n"
    "                     the same final kernel the service builds; untuned groups keep defaults\n"
    "  --server ADDR      the same from a running tuner server's results (mono-tuner-server --listen);\n"
    "                     the model is not sent, only its tuning space; --token-file FILE and the\n"
    "                     --tls-* flags as for mono-submit\n"
    "  --gpu-kind NAME    with --db or --server: the GPU kind to take results for (needed if there\n"
    "                     are several)\n"
    "  --dtype fp16       float16 storage and tensor cores with float32 accumulation (default fp32)\n"
    "  --profile          a profiling build: per-stage timestamps (mono-run prints them)\n"
    "  --set NAME=VALUE   a kernel setting (below)\n"
    "  --no-calibrate     fp16: store every float tensor in fp16 (default: tensors whose range on\n"
    "                     synthetic inputs, run on the CPU reference, does not fit stay fp32)\n"
    "  --shape N=DIMS     bind the dynamic dimensions of input N, e.g. input_ids=1x128\n"
    "  --no-simplify      skip the simplification passes\n"
    "  --skip-pass NAME   skip one simplification pass (repeatable; --stats lists them)\n"
    "  --stats            print node counts per pass to stderr\n"
    "  --dump-passes      print the IR after every pass that changed it (stderr)\n"
    "  --all-constants    with --emit ir, print every constant's values\n"
    "settings (--set):\n";

static int compile_main(int argc, char** argv) {
  Flags args(argc, argv);
  cli::ModelFlags options;
  std::string model, emit, out, db_path, gpu_kind, server, token_file;
  transport::TlsFiles tls;
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
    } else if (flag == "--server") {
      server = args.value(flag);
    } else if (flag == "--token-file") {
      token_file = args.value(flag);
    } else if (transport::take_tls_flag(args, flag, &tls)) {
    } else if (flag == "--no-verify") {
      verify = false;
    } else if (flag == "--all-constants") {
      print.max_constant_elements = kMaxTensorElements;
    } else if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      std::fputs(transport::kClientTlsUsage, stdout);
      std::fputs(settings_help().c_str(), stdout);
      return kExitOk;
    } else {
      cli::take_model_argument(flag, &model);
    }
  }
  cli::require_model(model);
  if (!db_path.empty() && !server.empty()) user_error("--db and --server both name where the results are: give one");
  if (!gpu_kind.empty() && db_path.empty() && server.empty()) user_error("--gpu-kind needs --db FILE or --server ADDR");
  if ((!token_file.empty() || tls.enabled()) && server.empty()) user_error("--token-file and --tls-* need --server ADDR");
  std::string token;
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!in || !std::getline(in, token) || token.empty()) user_error("cannot read a token from '", token_file, "'");
  }
  if (emit.empty() && out.empty()) emit = "ir";
  if (!emit.empty() && emit != "ir" && emit != "plan" && emit != "cuda" && emit != "fragment")
    user_error("--emit ", emit, " is not one of: ir, plan, cuda, fragment");
  std::unique_ptr<Graph> g = cli::load_model(model, options);
  if (emit == "ir") {
    print_graph(std::cout, *g, print);
    return kExitOk;
  }
  if (options.calibrate) cli::calibrate(*g, synthetic_inputs(*g), &plan);
  TunedFrom tuned;
  const bool tuned_build = !db_path.empty() || !server.empty();
  if (tuned_build) {
    tuned = !db_path.empty() ? tuning_from_db(db_path, gpu_kind, *g, plan)
                             : tuning_from_server(server, token, tls, gpu_kind, *g, plan);
    plan = tuning::tuned_options(plan, tuned.choice.context, tuned.choice.schedules);
  }
  if (emit == "fragment") {
    std::cout << tuning::whole_model_fragment(*g, plan).dump() << "\n";
    return kExitOk;
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
    if (tuned_build) tuning::add_tuning_section(out, built.plan, tuned.choice, tuned.info);
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
