// mono-worker --server ADDR [--gpus LIST] [--compile-only] [--token-file FILE] [--name NAME]
//             [--metrics ADDR] [--work-dir DIR] [--compile-threads N]
//             [--tls-ca FILE [--tls-cert FILE --tls-key FILE]]
// A fleet daemon: registers with the tuner server, leases jobs, keeps the leases alive by
// heartbeat, builds candidate kernels on all cores, runs and times them in a child process
// per GPU (the runner: this program with --runner), and reports. It survives server restarts
// (it retries and re-registers) and kernels that hang or crash (the child dies, not it).
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include <grpcpp/grpcpp.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "compiler/support/elapsed.h"
#include "compiler/support/error.h"
#include "compiler/support/flags.h"
#include "gpu_worker/candidates.h"
#include "gpu_worker/gpu_health.h"
#include "mono/v1/tuning.grpc.pb.h"
#include "proto/failure_class.h"
#include "proto/transport.h"

namespace mono::worker {
namespace {

namespace fs = std::filesystem;
std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

const char kUsage[] =
    "usage: mono-worker --server ADDR [--gpus LIST] [--compile-only] [--token-file FILE] [--name NAME]\n"
    "                   [--metrics ADDR] [--work-dir DIR] [--compile-threads N] [--tls-ca F [--tls-cert F --tls-key F]]\n"
    "  --server ADDR        the tuner server's gRPC address (host:port)\n"
    "  --gpus LIST          GPUs to run candidates on, e.g. 0,1 (default: all); one runner each\n"
    "  --compile-only       take only compile and resource-check work (no GPU needed)\n"
    "  --token-file FILE    send 'authorization: Bearer <token>'\n"
    "  --name NAME          a stable worker name (default: host name, plus the GPU list)\n"
    "  --metrics ADDR       serve Prometheus metrics at http://ADDR/metrics\n"
    "  --work-dir DIR       candidate kernels are built here (default /tmp/mono-worker-<pid>)\n"
    "  --compile-threads N  NVRTC compiles in parallel (default: all cores)\n";

void log(const std::string& msg) { std::fprintf(stderr, "mono-worker: %s\n", msg.c_str()); }

struct Metrics {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Counter>& jobs =
      prometheus::BuildCounter().Name("mono_worker_jobs_total").Help("Jobs finished, by kind and outcome").Register(*registry);
  prometheus::Family<prometheus::Counter>& candidates = prometheus::BuildCounter()
                                                             .Name("mono_worker_candidates_total")
                                                             .Help("Candidates compiled and measured")
                                                             .Register(*registry);
  prometheus::Family<prometheus::Counter>& failures = prometheus::BuildCounter()
                                                           .Name("mono_worker_failures_total")
                                                           .Help("Failed candidates by class")
                                                           .Register(*registry);
  prometheus::Histogram& spread = prometheus::BuildHistogram()
                                      .Name("mono_worker_measurement_spread")
                                      .Help("(max - min) / median of each measured candidate's samples")
                                      .Register(*registry)
                                      .Add({}, prometheus::Histogram::BucketBoundaries{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1});
  prometheus::Family<prometheus::Gauge>& clock =
      prometheus::BuildGauge().Name("mono_worker_gpu_sm_clock_mhz").Help("SM clock").Register(*registry);
  prometheus::Family<prometheus::Gauge>& temperature =
      prometheus::BuildGauge().Name("mono_worker_gpu_temperature_celsius").Help("GPU temperature").Register(*registry);
  prometheus::Family<prometheus::Gauge>& busy =
      prometheus::BuildGauge().Name("mono_worker_busy").Help("1 while a lane works on a job").Register(*registry);
  // Seconds on jobs per lane label; over a period of wall time, the rest is a GPU lane's idle time.
  prometheus::Family<prometheus::Counter>& busy_seconds = prometheus::BuildCounter()
                                                               .Name("mono_worker_busy_seconds_total")
                                                               .Help("Seconds a lane spent on jobs (lease to report)")
                                                               .Register(*registry);
};

class Worker {
 public:
  struct Options {
    std::string server, token, name, work_dir, exe;
    transport::TlsFiles tls;
    bool compile_only = false;
    std::vector<int> gpus;
    int compile_threads = 1;
  };

  Worker(Options o, Nvml* nvml, Metrics* metrics) : o_(std::move(o)), nvml_(nvml), metrics_(metrics) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(64 << 20);
    stub_ = v1::Workers::NewStub(grpc::CreateCustomChannel(o_.server, transport::channel_credentials(o_.tls), args));
  }

  int run() {
    if (!register_until_done()) return 0;
    std::thread heartbeat([this] { heartbeat_loop(); });
    std::vector<std::thread> lanes;
    const int n = o_.compile_only ? 1 : static_cast<int>(o_.gpus.size());
    if (!o_.compile_only)
      for (int g : o_.gpus) {
        MeasureOptions mo;
        mo.gpu = g;
        mo.runner_exe = o_.exe;
        runners_.push_back(std::make_unique<Runner>(mo));  // its child starts with the first GPU job
      }
    for (int i = 0; i < n; ++i) lanes.emplace_back([this, i] { lane(i); });
    for (std::thread& t : lanes) t.join();
    heartbeat.join();
    return 0;
  }

 private:
  void context(grpc::ClientContext* ctx, int deadline_s = 30) {
    if (!o_.token.empty()) ctx->AddMetadata("authorization", "Bearer " + o_.token);
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(deadline_s));
  }

  // Registers, retrying while the server is unreachable. False when stopped first.
  bool register_until_done() {
    v1::RegisterRequest req;
    req.set_worker_name(o_.name);
    v1::Capabilities* caps = req.mutable_capabilities();
    caps->set_compile_only(o_.compile_only);
    caps->set_compile_threads(o_.compile_threads);
    caps->set_sm_arch(90);
    if (!o_.compile_only) {
      std::vector<GpuStatic> gpus = nvml_->gpus();
      for (const GpuStatic& g : gpus)
        if (g.index == o_.gpus.front()) {
          caps->set_gpu_name(g.name);
          caps->set_sm_arch(g.sm_arch);
          caps->set_memory_bytes(g.memory_bytes);
          gpu_name_ = g.name;
        }
      caps->set_gpus(static_cast<int>(o_.gpus.size()));
      caps->set_driver_version(nvml_->driver_version());
      caps->set_cuda_version(nvml_->cuda_version());
    }
    int backoff_ms = 200;
    while (!g_stop) {
      grpc::ClientContext ctx;
      context(&ctx);
      v1::RegisterReply reply;
      grpc::Status s = stub_->Register(&ctx, req, &reply);
      if (s.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        worker_id_ = reply.worker_id();
        heartbeat_s_ = std::max(1, reply.heartbeat_seconds());
        log("registered as " + worker_id_ + " (" + (o_.compile_only ? "compile-only" : gpu_name_) + ") with " +
            o_.server);
        return true;
      }
      if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED || s.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
        log("registration refused: " + s.error_message());
        g_stop = true;
        exit_code_ = 2;
        return false;
      }
      log("server " + o_.server + " unreachable (" + s.error_message() + "); retrying");
      sleep_ms(backoff_ms);
      backoff_ms = std::min(backoff_ms * 2, 5000);
    }
    return false;
  }

  std::string worker_id() {
    std::lock_guard<std::mutex> lock(mu_);
    return worker_id_;
  }

  static void sleep_ms(int ms) {
    for (int t = 0; t < ms && !g_stop; t += 50) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

  void heartbeat_loop() {
    while (!g_stop || !held_empty()) {
      int period;
      {
        std::lock_guard<std::mutex> lock(mu_);
        period = heartbeat_s_;
      }
      for (int i = 0; i < period * 10 && !(g_stop && held_empty()); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      update_gpu_gauges();
      v1::RenewRequest req;
      req.set_worker_id(worker_id());
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (const std::string& id : held_) req.add_job_ids(id);
      }
      if (req.job_ids_size() == 0) continue;
      grpc::ClientContext ctx;
      context(&ctx, 10);
      v1::RenewReply reply;
      if (!stub_->Renew(&ctx, req, &reply).ok()) continue;  // the next beat tries again
      std::lock_guard<std::mutex> lock(mu_);
      for (const std::string& id : reply.lost()) {
        if (held_.erase(id)) log("lost the lease of job " + id + " (it expired or was reassigned)");
        lost_.insert(id);
      }
    }
  }

  bool held_empty() {
    std::lock_guard<std::mutex> lock(mu_);
    return held_.empty();
  }

  void update_gpu_gauges() {
    if (o_.compile_only) return;
    for (int g : o_.gpus) {
      GpuReading r = nvml_->read(g);
      metrics_->clock.Add({{"gpu", std::to_string(g)}}).Set(r.sm_clock_mhz);
      metrics_->temperature.Add({{"gpu", std::to_string(g)}}).Set(r.temperature_c);
    }
  }

  // One lane: lease a job, do it, report; lane i runs candidates on GPU o_.gpus[i].
  void lane(int i) {
    const std::string gpu_label = o_.compile_only ? "cpu" : std::to_string(o_.gpus[i]);
    prometheus::Gauge& busy = metrics_->busy.Add({{"gpu", gpu_label}});
    prometheus::Counter& busy_seconds = metrics_->busy_seconds.Add({{"gpu", gpu_label}});
    const int threads = std::max(1, o_.compile_threads / (o_.compile_only ? 1 : static_cast<int>(o_.gpus.size())));
    int idle_ms = 100;
    while (!g_stop) {
      v1::LeaseRequest req;
      req.set_worker_id(worker_id());
      req.set_max_jobs(1);
      v1::LeaseReply reply;
      grpc::ClientContext ctx;
      context(&ctx);
      grpc::Status s = stub_->Lease(&ctx, req, &reply);
      if (!s.ok()) {
        if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
          log("the server does not know this worker (new database?): registering again");
          register_until_done();
        } else {
          log("lease failed (" + s.error_message() + "); retrying");
        }
        sleep_ms(1000);
        continue;
      }
      if (reply.jobs_size() == 0) {
        sleep_ms(idle_ms);
        idle_ms = std::min(idle_ms * 2, 1000);
        continue;
      }
      idle_ms = 100;
      for (const v1::Job& job : reply.jobs()) {
        {
          std::lock_guard<std::mutex> lock(mu_);
          held_.insert(job.job_id());
        }
        busy.Set(1);
        const auto job_start = std::chrono::steady_clock::now();
        do_job(job, i, threads);
        busy_seconds.Increment(seconds_since(job_start));
        busy.Set(0);
        std::lock_guard<std::mutex> lock(mu_);
        held_.erase(job.job_id());
      }
    }
  }

  void do_job(const v1::Job& job, int lane, int threads) {
    const std::string kind = job.kind() == v1::COMPILE ? "compile" : job.kind() == v1::MEASURE ? "measure" : "whole_kernel";
    const std::string dir = o_.work_dir + "/" + job.job_id() + "-" + std::to_string(job.attempt());
    v1::ReportRequest report;
    report.set_worker_id(worker_id());
    report.set_job_id(job.job_id());
    const auto start = std::chrono::steady_clock::now();
    double compile_s = 0;
    std::string runner_times;
    try {
      const nlohmann::json payload = nlohmann::json::parse(job.payload());
      const bool gpu = job.kind() != v1::COMPILE;
      if (gpu && o_.compile_only) throw std::runtime_error("a GPU job was leased to a compile-only worker");
      std::vector<CompiledCandidate> cands = compile_job(payload, dir, threads, /*write_artifacts=*/gpu);
      metrics_->candidates.Add({{"stage", "compiled"}}).Increment(static_cast<double>(cands.size()));
      compile_s = seconds_since(start);
      if (gpu) runner_times = measure_job(payload, &cands, dir, runners_[lane].get());
      // The server takes 16 MB a message: the image leaves room for the results.
      if (job.kind() == v1::WHOLE_KERNEL) attach_kernel_image(cands, &report, size_t{12} << 20);
      for (const CompiledCandidate& c : cands) {
        *report.add_results() = c.result;
        if (!c.result.ok())
          metrics_->failures.Add({{"class", db::to_string(failure_from_proto(c.result.failure()))}}).Increment();
        if (c.result.samples_us_size() > 0) {
          metrics_->candidates.Add({{"stage", "measured"}}).Increment();
          metrics_->spread.Observe(c.result.spread());
        }
      }
      v1::Environment* env = report.mutable_environment();
      env->set_codegen_version(codegen_version());
      if (gpu) {
        GpuReading r = nvml_->read(o_.gpus[lane]);
        env->set_gpu_name(gpu_name_);
        env->set_sm_clock_mhz(r.sm_clock_mhz);
        env->set_mem_clock_mhz(r.mem_clock_mhz);
        env->set_driver_version(nvml_->driver_version());
        env->set_cuda_version(nvml_->cuda_version());
      }
    } catch (const std::exception& e) {
      report.clear_results();
      report.clear_kernel_image();
      report.set_worker_failure(true);
      report.set_worker_failure_reason(e.what());
      log("job " + job.job_id() + " failed on this worker: " + e.what());
    }
    std::error_code ec;
    fs::remove_all(dir, ec);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (lost_.count(job.job_id())) {
        log("job " + job.job_id() + " finished after its lease was lost: reporting anyway (the server decides)");
      }
    }
    const bool accepted = send_report(report);
    const double secs = seconds_since(start);
    metrics_->jobs.Add({{"kind", kind}, {"outcome", report.worker_failure() ? "worker_failure" : accepted ? "accepted" : "ignored"}})
        .Increment();
    const std::string image =
        report.has_kernel_image()
            ? str_cat("; kernel of configuration ", report.kernel_image().candidate(), " sent, ",
                      report.kernel_image().cubin().size() / 1024, " KB")
            : "";
    char buf[560];
    std::snprintf(buf, sizeof buf, "job %s (%s, %d candidates) in %.1f s (compile %.1f s%s%s%s): %s", job.job_id().c_str(),
                  kind.c_str(), report.results_size(), secs, compile_s, runner_times.empty() ? "" : "; ",
                  runner_times.c_str(), image.c_str(), accepted ? "accepted" : "not accepted (late or duplicate)");
    log(buf);
  }

  // Sends a report, retrying while the server is unreachable (a restart): the result is kept
  // until the server has it or says it is not wanted.
  bool send_report(const v1::ReportRequest& report) {
    int backoff_ms = 200;
    for (int attempt = 0; attempt < 200; ++attempt) {
      grpc::ClientContext ctx;
      context(&ctx);
      v1::ReportReply reply;
      grpc::Status s = stub_->Report(&ctx, report, &reply);
      if (s.ok()) return reply.accepted();
      if (s.error_code() != grpc::StatusCode::UNAVAILABLE && s.error_code() != grpc::StatusCode::DEADLINE_EXCEEDED) {
        log("report of job " + report.job_id() + " refused: " + s.error_message());
        return false;
      }
      if (attempt == 0) log("server unreachable while reporting job " + report.job_id() + "; keeping the result and retrying");
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
      backoff_ms = std::min(backoff_ms * 2, 3000);
    }
    return false;
  }

  Options o_;
  Nvml* nvml_;
  Metrics* metrics_;
  std::unique_ptr<v1::Workers::Stub> stub_;
  std::mutex mu_;
  std::string worker_id_;
  std::string gpu_name_;
  int heartbeat_s_ = 10;
  std::set<std::string> held_, lost_;
  std::vector<std::unique_ptr<Runner>> runners_;  // per GPU lane (none on a compile-only worker)

 public:
  int exit_code_ = 0;
};

std::string self_exe(const char* argv0) {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

int worker_main(int argc, char** argv) {
  Worker::Options o;
  std::string token_file, metrics_addr, gpus;
  o.compile_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  Flags flags(argc, argv);
  std::string flag;
  while (flags.next(&flag)) {
    if (flag == "--server") o.server = flags.value(flag);
    else if (flag == "--gpus") gpus = flags.value(flag);
    else if (flag == "--compile-only") o.compile_only = true;
    else if (flag == "--token-file") token_file = flags.value(flag);
    else if (flag == "--name") o.name = flags.value(flag);
    else if (flag == "--metrics") metrics_addr = flags.value(flag);
    else if (flag == "--work-dir") o.work_dir = flags.value(flag);
    else if (flag == "--compile-threads") o.compile_threads = flags.int_value(flag);
    else if (transport::take_tls_flag(flags, flag, &o.tls)) {
    } else if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      std::fputs(transport::kClientTlsUsage, stdout);
      return kExitOk;
    } else Flags::unknown(flag);
  }
  if (o.server.empty()) user_error("--server ADDR is required (see --help)");
  if (o.compile_threads < 1) user_error("--compile-threads must be at least 1");
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!in || !std::getline(in, o.token) || o.token.empty()) user_error("cannot read a token from '", token_file, "'");
  }
  Nvml nvml;
  if (!o.compile_only) {
    if (!nvml.ok()) user_error(nvml.why(), " (use --compile-only on a machine without a GPU)");
    std::vector<GpuStatic> all = nvml.gpus();
    if (all.empty()) user_error("no GPU found (use --compile-only on a machine without a GPU)");
    if (gpus.empty()) {
      for (const GpuStatic& g : all) o.gpus.push_back(g.index);
    } else {
      std::stringstream ss(gpus);
      for (std::string item; std::getline(ss, item, ',');) {
        int g = -1;
        try {
          g = std::stoi(item);
        } catch (const std::exception&) {
        }
        if (g < 0 || g >= static_cast<int>(all.size()))
          user_error("--gpus: '", item, "' is not a GPU of this machine (it has ", all.size(), ")");
        o.gpus.push_back(g);
      }
    }
    for (int g : o.gpus)
      if (all[g].name != all[o.gpus.front()].name)
        user_error("--gpus: mixed GPU kinds on one worker; run one worker per kind");
  } else if (!gpus.empty()) {
    user_error("--gpus and --compile-only exclude each other");
  }
  if (o.name.empty()) {
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    o.name = std::string(host) + (o.compile_only ? "-compile" : "-gpu" + gpus);
  }
  const bool own_work_dir = o.work_dir.empty();  // only a folder it made is removed at the end
  if (own_work_dir) o.work_dir = "/tmp/mono-worker-" + std::to_string(getpid());
  std::error_code ec;
  fs::create_directories(o.work_dir, ec);
  if (ec) user_error("cannot create --work-dir ", o.work_dir, ": ", ec.message());
  o.exe = self_exe(argv[0]);

  Metrics metrics;
  std::unique_ptr<prometheus::Exposer> exposer;
  if (!metrics_addr.empty()) {
    try {
      exposer = std::make_unique<prometheus::Exposer>(metrics_addr);
    } catch (const std::exception& e) {
      user_error("cannot serve metrics on ", metrics_addr, ": ", e.what());
    }
    exposer->RegisterCollectable(metrics.registry);
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  Worker w(o, &nvml, &metrics);
  int rc = w.run();
  if (own_work_dir) fs::remove_all(o.work_dir, ec);
  log("stopped");
  return rc ? rc : w.exit_code_;
}

}  // namespace
}  // namespace mono::worker

int main(int argc, char** argv) {
  // The runner: a child of the daemon (candidates.h), not a command for users.
  if (argc == 2 && std::string(argv[1]) == "--runner") {
    try {
      return mono::worker::runner_main();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "mono-worker runner: %s\n", e.what());
      return 3;
    }
  }
  return mono::run_main("mono-worker", [&] { return mono::worker::worker_main(argc, argv); });
}
