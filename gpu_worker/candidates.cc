#include "gpu_worker/candidates.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "compiler/backend/artifact_writer.h"
#include "compiler/backend/verify.h"
#include "compiler/reference/compare.h"
#include "compiler/reference/inputs.h"
#include "compiler/reference/interpreter.h"
#include "compiler/runtime/cuda_model.h"
#include "compiler/runtime/nvrtc_compiler.h"
#include "compiler/support/error.h"
#include "compiler/tuning/fragment.h"
#include "compiler/tuning/schedule.h"
#include "compiler/tuning/signature.h"
#include "proto/failure_class.h"

namespace mono::worker {

namespace fs = std::filesystem;
using nlohmann::json;

// The seed of a job's made-up weights: the compile side and the runner's reference must agree.
constexpr uint64_t kWeightSeed = 20261121;

std::string codegen_version() { return "mono-codegen/" + std::to_string(tuning::kSignatureVersion); }

namespace {

// One candidate to build: its index, context and schedule overrides, and — for a group job —
// the signature that must come out tuned.
struct BuildSpec {
  int index = 0;
  tuning::Context context;
  std::map<std::string, Schedule> schedules;
  std::string signature;  // "" for whole-kernel configs
};

std::vector<BuildSpec> build_specs(const json& payload) {
  std::vector<BuildSpec> out;
  const std::string kind = payload.at("kind").get<std::string>();
  if (kind == "whole_kernel") {
    for (const json& c : payload.at("configs")) {
      BuildSpec s;
      s.index = c.at("index").get<int>();
      s.context = tuning::context_from_json(c.at("context"));
      for (const auto& [sig, sched] : c.at("schedules").items()) s.schedules[sig] = tuning::schedule_from_json(sched);
      out.push_back(std::move(s));
    }
    return out;
  }
  if (kind != "compile" && kind != "measure") user_error("job payload: unknown kind '", kind, "'");
  const tuning::Context ctx = tuning::context_from_json(payload.at("context"));
  const std::string sig = payload.at("signature").get<std::string>();
  for (const json& c : payload.at("candidates")) {
    BuildSpec s;
    s.index = c.at("index").get<int>();
    s.context = ctx;
    s.signature = sig;
    s.schedules[sig] = tuning::schedule_from_json(c.at("schedule"));
    out.push_back(std::move(s));
  }
  return out;
}

v1::CandidateResult failed(int index, db::FailureClass f, const std::string& reason) {
  v1::CandidateResult r;
  r.set_candidate(index);
  r.set_ok(false);
  r.set_failure(failure_to_proto(f));
  r.set_reason(reason.substr(0, 2000));
  return r;
}

// Builds one candidate from the job's fragment (shared, read-only, by the build threads).
CompiledCandidate build_one(const tuning::LoadedFragment& f, const BuildSpec& spec, const std::string& work_dir,
                            bool write) {
  CompiledCandidate out;
  PlanOptions o = f.options;
  tuning::use_context(&o, spec.context);
  tuning::use_schedules(&o, spec.schedules);
  NvrtcOptions nvrtc;
  nvrtc.cache_dir = default_cache_dir();
  BuiltKernel built;
  try {
    built = build_kernel(*f.graph, o, "candidate", nvrtc, /*compile=*/false);
  } catch (const std::exception& e) {
    out.result = failed(spec.index, db::FailureClass::kResourceError, std::string("does not fit the context: ") + e.what());
    return out;
  }
  if (!spec.signature.empty()) {
    const Group* g = tuning::find_group(built.plan, spec.signature);
    if (!g) {
      out.result = failed(spec.index, db::FailureClass::kCompileError, "the fragment does not reproduce group " + spec.signature);
      return out;
    }
    if (!g->tuned) {
      out.result = failed(spec.index, db::FailureClass::kResourceError, "schedule refused: " + g->override_rejected);
      return out;
    }
  }
  try {
    built.compiled = compile_cuda(built.source, built.manifest.kernel, nvrtc);
  } catch (const std::exception& e) {
    out.result = failed(spec.index, db::FailureClass::kCompileError, e.what());
    return out;
  }
  built.manifest.usage = built.compiled.usage;
  const ResourceUsage& u = built.compiled.usage;
  out.result.set_candidate(spec.index);
  out.result.set_ok(true);
  out.result.set_registers(u.registers);
  out.result.set_spill_bytes(std::max(0, u.spill_store_bytes) + std::max(0, u.spill_load_bytes));
  out.result.set_smem_bytes(built.manifest.smem_bytes);
  if (write) {
    out.dir = work_dir + "/c" + std::to_string(spec.index);
    write_artifact(out.dir, *f.graph, built,
                   unverified_record("a tuning candidate: the runner compares its outputs with the CPU reference "
                                     "before timing it"));
  }
  return out;
}

}  // namespace

std::vector<CompiledCandidate> compile_job(const json& payload, const std::string& work_dir, int threads, bool write) {
  const std::vector<BuildSpec> specs = build_specs(payload);
  if (write) {
    std::error_code ec;
    fs::create_directories(work_dir, ec);
    if (ec) throw std::runtime_error("cannot create the job folder " + work_dir + ": " + ec.message());
  }
  // Loaded once for every candidate; a malformed fragment is one clear error for the whole job.
  const tuning::LoadedFragment fragment = tuning::load_fragment(payload.at("fragment"), kWeightSeed);
  std::vector<CompiledCandidate> out(specs.size());
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, std::min<int>(threads, static_cast<int>(specs.size()))); ++t)
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < specs.size();) {
        try {
          out[i] = build_one(fragment, specs[i], work_dir, write);
        } catch (const std::exception& e) {
          out[i].result = failed(specs[i].index, db::FailureClass::kCompileError, e.what());
        }
      }
    });
  for (std::thread& t : pool) t.join();
  return out;
}

// ---- the runner (child process) -------------------------------------------------------------

int runner_main(const std::string& dir) {
  std::ifstream in(dir + "/run.json");
  const json run = json::parse(in);
  std::ofstream log(dir + "/results.jsonl", std::ios::app);
  auto emit = [&](const json& j) {
    log << j.dump() << "\n";
    log.flush();
  };
  // The reference: the fragment's CPU reference on deterministic inputs, computed once.
  tuning::LoadedFragment f = tuning::load_fragment(run.at("fragment"), kWeightSeed);
  const std::vector<Tensor> inputs = fragment_inputs(f);
  const std::vector<Tensor> want = run_reference(*f.graph, inputs);
  const double tol = run.at("tolerance").get<double>();
  const int warmup = run.at("warmup").get<int>(), samples = run.at("samples").get<int>();
  const double respread = run.at("respread").get<double>();
  for (const json& c : run.at("candidates")) {
    const int index = c.at("index").get<int>();
    emit({{"start", index}});
    json r = {{"candidate", index}};
    try {
      NvrtcOptions nvrtc;
      std::unique_ptr<GpuModel> gm = GpuModel::load(c.at("dir").get<std::string>(), nvrtc, 0);
      const std::vector<Tensor> got = gm->run_host(inputs);
      double worst = 0;
      std::string bad;
      for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
        const Comparison cmp = compare_tensors(got[i], want[i]);
        worst = std::max(worst, cmp.rel);
        if (!cmp.ok(tol)) bad = f.graph->outputs[i]->name;
      }
      r["rel_err"] = worst;
      if (!bad.empty() || got.size() != want.size()) {
        r["failure"] = db::to_string(db::FailureClass::kWrongAnswer);
        r["reason"] = "output '" + bad + "' differs from the reference: relative error " + std::to_string(worst) +
                      " (tolerance " + std::to_string(tol) + ")";
      } else {
        auto measure = [&](int n) {
          std::vector<double> s = gm->sample_flushed(warmup, n);
          std::vector<double> sorted = s;
          std::sort(sorted.begin(), sorted.end());
          const double median = sorted[sorted.size() / 2];
          return std::make_pair(s, median > 0 ? (sorted.back() - sorted.front()) / median : 0.0);
        };
        auto [s, spread] = measure(samples);
        if (spread > respread) std::tie(s, spread) = measure(2 * samples);  // noisy: once more, longer
        std::vector<double> sorted = s;
        std::sort(sorted.begin(), sorted.end());
        r["samples_us"] = s;
        r["median_us"] = sorted[sorted.size() / 2];
        r["spread"] = spread;
      }
    } catch (const std::exception& e) {
      r["failure"] = db::to_string(db::FailureClass::kLaunchError);
      r["reason"] = e.what();
    }
    emit(r);
  }
  return 0;
}

// ---- the daemon side: one child per attempt, watched ------------------------------------------

namespace {

struct ChildOutcome {
  std::map<int, json> results;  // by candidate index
  int crashed = -1;             // candidate running when the child died or hung
  bool hung = false;
  std::string why;
};

ChildOutcome run_child(const MeasureOptions& opt, const std::string& dir, const json& run, int timeout_per_candidate) {
  ChildOutcome out;
  fs::remove(dir + "/results.jsonl");
  std::ofstream(dir + "/run.json") << run.dump();
  const pid_t pid = fork();
  if (pid == 0) {
    // The child sees only its GPU, numbered as NVML numbers them.
    setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID", 1);
    setenv("CUDA_VISIBLE_DEVICES", std::to_string(opt.gpu).c_str(), 1);
    execl(opt.runner_exe.c_str(), opt.runner_exe.c_str(), "--runner", dir.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  if (pid < 0) {
    out.why = "fork failed";
    return out;
  }
  size_t read_bytes = 0;
  int current = -1;
  auto last_progress = std::chrono::steady_clock::now();
  int status = 0;
  bool exited = false;
  while (true) {
    // Read the lines written so far.
    std::ifstream in(dir + "/results.jsonl");
    in.seekg(static_cast<std::streamoff>(read_bytes));
    std::string line;
    while (std::getline(in, line)) {
      if (in.eof()) break;  // a partial line: read it next time
      read_bytes += line.size() + 1;
      last_progress = std::chrono::steady_clock::now();
      json j = json::parse(line, nullptr, false);
      if (j.is_discarded()) continue;
      if (j.contains("start")) {
        current = j["start"].get<int>();
      } else {
        out.results[j.at("candidate").get<int>()] = j;
        current = -1;
      }
    }
    if (exited) break;
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      exited = true;  // one more pass to read its last lines
      continue;
    }
    // The first candidate also pays for the reference and CUDA start-up: give it longer.
    const int limit = timeout_per_candidate * (out.results.empty() ? 3 : 1);
    if (std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(limit)) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      out.hung = true;
      out.crashed = current;
      out.why = "no progress for " + std::to_string(limit) + " s: killed";
      return out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
    out.crashed = current;
    out.why = WIFSIGNALED(status) ? "runner killed by signal " + std::to_string(WTERMSIG(status))
                                  : "runner exited with status " + std::to_string(WEXITSTATUS(status));
  }
  return out;
}

// The class a runner's result line names; a launch error if it names none this build knows.
db::FailureClass failure_named(const std::string& s) {
  db::FailureClass f = db::FailureClass::kLaunchError;
  db::parse(s, &f);
  return f;
}

}  // namespace

void measure_job(const json& payload, std::vector<CompiledCandidate>* candidates, const std::string& work_dir,
                 const MeasureOptions& opt) {
  const std::string precision = payload.at("fragment").value("precision", "fp32");
  json base = {{"fragment", payload.at("fragment")},
               {"tolerance", precision == "fp16" ? 1e-2 : 1e-4},
               {"warmup", opt.warmup},
               {"samples", opt.samples},
               {"respread", opt.respread}};
  std::map<int, CompiledCandidate*> todo;  // by index: compiled, not yet measured
  for (CompiledCandidate& c : *candidates)
    if (c.result.ok() && !c.dir.empty()) todo[c.result.candidate()] = &c;
  std::map<int, int> strikes;  // hangs or crashes per candidate
  const int timeout = opt.candidate_timeout_s * (payload.at("kind") == "whole_kernel" ? 4 : 1);
  while (!todo.empty()) {
    json run = base;
    run["candidates"] = json::array();
    for (const auto& [index, c] : todo) run["candidates"].push_back({{"index", index}, {"dir", c->dir}});
    ChildOutcome o = run_child(opt, work_dir, run, timeout);
    for (const auto& [index, j] : o.results) {
      auto it = todo.find(index);
      if (it == todo.end()) continue;
      v1::CandidateResult& r = it->second->result;
      if (j.contains("failure")) {
        const int regs = r.registers(), spill = r.spill_bytes(), smem = r.smem_bytes();
        r = failed(index, failure_named(j["failure"].get<std::string>()), j.value("reason", ""));
        r.set_registers(regs);
        r.set_spill_bytes(spill);
        r.set_smem_bytes(smem);
      } else {
        for (double s : j.at("samples_us")) r.add_samples_us(s);
        r.set_median_us(j.at("median_us").get<double>());
        r.set_spread(j.at("spread").get<double>());
      }
      todo.erase(it);
    }
    if (o.crashed >= 0 && todo.count(o.crashed)) {
      // Twice hung or crashed: recorded as failed. Once: it runs again in a fresh child.
      if (++strikes[o.crashed] >= 2) {
        CompiledCandidate* c = todo[o.crashed];
        c->result = failed(o.crashed, o.hung ? db::FailureClass::kTimeout : db::FailureClass::kLaunchError, o.why + " (twice)");
        todo.erase(o.crashed);
      }
    } else if (!o.why.empty() || (!todo.empty() && o.results.empty())) {
      // The child failed outside any candidate (start-up, reference): the worker's fault.
      throw std::runtime_error("the GPU runner failed before measuring anything: " +
                               (o.why.empty() ? std::string("no results") : o.why));
    }
  }
}

}  // namespace mono::worker
