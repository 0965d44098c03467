#include "gpu_worker/candidates.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
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

extern char** environ;

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
  tuning::KernelConfig config;  // its context and schedule overrides by signature
  std::string signature;  // "" for whole-kernel configs
  std::string name = "candidate";  // the model name its source carries (whole-kernel: the artifact's)
};

std::vector<BuildSpec> build_specs(const json& payload) {
  std::vector<BuildSpec> out;
  const std::string kind = payload.at("kind").get<std::string>();
  if (kind == "whole_kernel") {
    const std::string name = payload.value("name", BuildSpec{}.name);
    for (const json& c : payload.at("configs")) {
      BuildSpec s;
      s.index = c.at("index").get<int>();
      s.name = name;
      s.config = tuning::kernel_config_from_json(c);
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
    s.config.context = ctx;
    s.signature = sig;
    s.config.schedules[sig] = tuning::schedule_from_json(c.at("schedule"));
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
  tuning::use_context(&o, spec.config.context);
  tuning::use_schedules(&o, spec.config.schedules);
  NvrtcOptions nvrtc;
  nvrtc.cache_dir = default_cache_dir();
  BuiltKernel built;
  try {
    built = build_kernel(*f.graph, o, spec.name, nvrtc, /*compile=*/false);
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
  if (spec.signature.empty()) out.kernel = built.compiled;  // a whole kernel: the server may take it
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

void attach_kernel_image(const std::vector<CompiledCandidate>& candidates, v1::ReportRequest* report, size_t max_bytes) {
  const CompiledCandidate* best = nullptr;
  for (const CompiledCandidate& c : candidates)
    if (c.result.ok() && c.result.samples_us_size() > 0 && !c.kernel.cubin.empty() &&
        (!best || c.result.median_us() < best->result.median_us()))
      best = &c;
  if (!best || best->kernel.cubin.size() + best->kernel.log.size() > max_bytes) return;
  v1::KernelImage* image = report->mutable_kernel_image();
  image->set_candidate(best->result.candidate());
  image->set_key(best->kernel.key);
  image->set_cubin(best->kernel.cubin.data(), best->kernel.cubin.size());
  image->set_log(best->kernel.log);
}

// ---- the runner (child process) -------------------------------------------------------------

namespace {

// One job's candidates, in the runner. Returns false when a candidate failed to launch: its
// CUDA context may be lost (a sticky error), so the runner stops and the daemon starts a fresh
// one for the rest of the job.
bool run_one_job(const std::string& dir) {
  std::ifstream in(dir + "/run.json");
  const json run = json::parse(in);
  std::ofstream log(dir + "/results.jsonl", std::ios::app);
  auto emit = [&](const json& j) {
    log << j.dump() << "\n";
    log.flush();
  };
  // Where the runner's time goes (seconds), for the daemon's log: the preparation once a job,
  // then each candidate's load, check (its first run and the comparison) and timing.
  auto since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  };
  auto t0 = std::chrono::steady_clock::now();
  // The reference: the fragment's CPU reference on deterministic inputs, computed once.
  tuning::LoadedFragment f = tuning::load_fragment(run.at("fragment"), kWeightSeed);
  const double fragment_s = since(t0);
  t0 = std::chrono::steady_clock::now();
  const std::vector<Tensor> inputs = fragment_inputs(f);
  const std::vector<Tensor> want = run_reference(*f.graph, inputs);
  const double reference_s = since(t0);
  const double tol = run.at("tolerance").get<double>();
  const int warmup = run.at("warmup").get<int>(), samples = run.at("samples").get<int>();
  const double respread = run.at("respread").get<double>();
  bool context_ok = true;
  for (const json& c : run.at("candidates")) {
    const int index = c.at("index").get<int>();
    emit({{"start", index}});
    json r = {{"candidate", index}};
    try {
      auto t = std::chrono::steady_clock::now();
      NvrtcOptions nvrtc;
      std::unique_ptr<GpuModel> gm = GpuModel::load(c.at("dir").get<std::string>(), nvrtc, 0);
      r["load_s"] = since(t);
      t = std::chrono::steady_clock::now();
      const std::vector<Tensor> got = gm->run_host(inputs);
      double worst = 0;
      std::string bad;
      for (size_t i = 0; i < want.size() && i < got.size(); ++i) {
        const Comparison cmp = compare_tensors(got[i], want[i]);
        worst = std::max(worst, cmp.rel);
        if (!cmp.ok(tol)) bad = f.graph->outputs[i]->name;
      }
      r["rel_err"] = worst;
      r["check_s"] = since(t);
      t = std::chrono::steady_clock::now();
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
        r["time_s"] = since(t);
      }
    } catch (const std::exception& e) {
      r["failure"] = db::to_string(db::FailureClass::kLaunchError);
      r["reason"] = e.what();
      context_ok = false;
    }
    emit(r);
    if (!context_ok) break;
  }
  emit({{"done", true}, {"stays", context_ok}, {"fragment_s", fragment_s}, {"reference_s", reference_s}});
  return context_ok;
}

}  // namespace

int runner_main() {
  // Kept across jobs, so CUDA starts once per runner, not once per job.
  for (std::string dir; std::getline(std::cin, dir);)
    if (!run_one_job(dir)) return 0;
  return 0;
}

// ---- the daemon side: the runner child, watched ---------------------------------------------

Runner::Runner(MeasureOptions options) : opt_(std::move(options)) {}

Runner::~Runner() { stop(/*kill_it=*/false); }

bool Runner::start(std::string* why) {
  // Prepared before fork: the child of a threaded process may only exec.
  std::vector<std::string> env_text = {"CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=" + std::to_string(opt_.gpu)};
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "CUDA_DEVICE_ORDER=", 18) != 0 && std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0)
      env_text.push_back(*e);
  std::vector<char*> envp;
  for (std::string& e : env_text) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string exe = opt_.runner_exe, flag = "--runner";
  char* argv[] = {exe.data(), flag.data(), nullptr};
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    *why = std::string("cannot make a pipe to the GPU runner: ") + std::strerror(errno);
    return false;
  }
  // A runner that died leaves its pipe closed: the daemon gets EPIPE from write, not a signal.
  signal(SIGPIPE, SIG_IGN);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // its own process group: a kill takes anything it started with it
    // Not left running on the GPU when the daemon dies (its own group no longer gets the
    // daemon's signals); the check covers a daemon that died before the prctl.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    // The job folders arrive on standard input. With the daemon's own standard input closed,
    // the pipe's read end is already fd 0: then only its close-on-exec flag goes.
    if (fds[0] == 0) fcntl(0, F_SETFD, 0);
    else dup2(fds[0], 0);
    execve(argv[0], argv, envp.data());
    _exit(127);
  }
  if (pid > 0) setpgid(pid, pid);  // as the child does: whichever runs first
  close(fds[0]);
  if (pid < 0) {
    close(fds[1]);
    *why = "fork failed";
    return false;
  }
  pid_ = pid;
  to_child_ = fds[1];
  ++starts_;
  return true;
}

void Runner::stop(bool kill_it) {
  if (pid_ < 0) return;
  close(to_child_);  // an idle runner reads end-of-file and exits
  to_child_ = -1;
  if (kill_it) kill(-pid_, SIGKILL);
  int status = 0;
  for (int waited_ms = 0; waitpid(pid_, &status, WNOHANG) == 0; waited_ms += 20) {
    if (waited_ms == 5000) kill(-pid_, SIGKILL);  // it did not exit: a stuck runner
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  pid_ = -1;
}

Runner::Outcome Runner::run(const std::string& dir, const json& run, int timeout_per_candidate) {
  try {
    std::ofstream(dir + "/run.json") << run.dump();
    // A runner left from an earlier job may have died since (a crash between jobs, an OOM
    // kill): if it dies before it starts this job, one fresh runner gets the job again.
    Outcome out = watch(dir, timeout_per_candidate);
    if (out.why.empty() || out.started) return out;
    return watch(dir, timeout_per_candidate);
  } catch (...) {
    stop(/*kill_it=*/true);  // never left working on a job nobody watches
    throw;
  }
}

Runner::Outcome Runner::watch(const std::string& dir, int timeout_per_candidate) {
  Outcome out;
  std::error_code ec;
  fs::remove(dir + "/results.jsonl", ec);
  if (pid_ < 0 && !start(&out.why)) return out;
  const std::string line = dir + "\n";
  if (write(to_child_, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
    stop(/*kill_it=*/true);
    out.why = "the GPU runner is gone";
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
    std::string text;
    while (std::getline(in, text)) {
      if (in.eof()) break;  // a partial line: read it next time
      read_bytes += text.size() + 1;
      last_progress = std::chrono::steady_clock::now();
      out.started = true;
      json j = json::parse(text, nullptr, false);
      if (j.is_discarded()) continue;
      if (j.contains("done")) {
        if (!j.value("stays", true)) stop(/*kill_it=*/false);  // it exits: its context may be lost
        out.done = j;
        return out;
      }
      if (j.contains("start")) {
        current = j["start"].get<int>();
      } else {
        out.results[j.at("candidate").get<int>()] = j;
        current = -1;
      }
    }
    if (exited) break;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      exited = true;  // one more pass to read its last lines
      close(to_child_);
      to_child_ = -1;
      pid_ = -1;
      continue;
    }
    // The first candidate also pays for the reference (and a fresh runner's CUDA start-up).
    const int limit = timeout_per_candidate * (out.results.empty() ? 3 : 1);
    if (std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(limit)) {
      stop(/*kill_it=*/true);
      out.hung = true;
      out.started = true;  // a hang is the job's, not a stale runner's
      out.crashed = current;
      out.why = "no progress for " + std::to_string(limit) + " s: killed";
      return out;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // It exited before finishing the job.
  out.crashed = current;
  out.why = WIFSIGNALED(status) ? "runner killed by signal " + std::to_string(WTERMSIG(status))
                                : "runner exited with status " + std::to_string(WEXITSTATUS(status));
  return out;
}

namespace {

// The class a runner's result line names; a launch error if it names none this build knows.
db::FailureClass failure_named(const std::string& s) {
  db::FailureClass f = db::FailureClass::kLaunchError;
  db::parse(s, &f);
  return f;
}

}  // namespace

std::string measure_job(const json& payload, std::vector<CompiledCandidate>* candidates, const std::string& work_dir,
                        Runner* runner) {
  double fragment_s = 0, reference_s = 0, load_s = 0, check_s = 0, time_s = 0;
  const MeasureOptions& opt = runner->options();
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
    Runner::Outcome o = runner->run(work_dir, run, timeout);
    if (o.done.is_object()) {  // none when the runner died or hung
      fragment_s += o.done.value("fragment_s", 0.0);
      reference_s += o.done.value("reference_s", 0.0);
    }
    for (const auto& [index, j] : o.results) {
      load_s += j.value("load_s", 0.0);
      check_s += j.value("check_s", 0.0);
      time_s += j.value("time_s", 0.0);
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
    } else if (o.results.empty() && !todo.empty()) {
      // The runner failed outside any candidate (start-up, reference) and measured nothing:
      // the worker's fault. (Between two candidates it measured, it is only started again:
      // every round measures one candidate more, or strikes one.)
      throw std::runtime_error("the GPU runner failed before measuring anything: " +
                               (o.why.empty() ? std::string("no results") : o.why));
    }
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "runner: fragment %.1f s, reference %.1f s, load %.1f s, check %.1f s, timing %.1f s",
                fragment_s, reference_s, load_s, check_s, time_s);
  return buf;
}
}  // namespace mono::worker
