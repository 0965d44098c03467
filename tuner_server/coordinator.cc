#include "tuner_server/coordinator.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <system_error>

#include "compiler/support/error.h"

namespace mono::server {

namespace fs = std::filesystem;
using nlohmann::json;

static std::map<std::string, Shape> shapes_of(const std::string& shapes_json) {
  std::map<std::string, Shape> out;
  if (shapes_json.empty()) return out;
  for (const json& s : json::parse(shapes_json)) out[s.at("input").get<std::string>()] = s.at("dims").get<Shape>();
  return out;
}

// The GPU kind the submission's tasks are keyed by.
static std::string task_kind_of(const db::SubmissionRecord& s) {
  return s.dry_run ? tuning::dry_run_kind() : s.gpu_kind;
}

// The submission's model, loaded as its record describes (files, shapes, precision).
static tuning::PreparedModel load_model_of(const db::SubmissionRecord& s) {
  tuning::PreparedModel m = tuning::prepare_model(s.model_dir + "/model.onnx", s.model_name, shapes_of(s.shapes_json),
                                                  s.precision == "fp32" ? Precision::kF32 : Precision::kF16);
  for (const std::string& note : m.notes) std::fprintf(stderr, "note: %s\n", note.c_str());
  return m;
}

Coordinator::Coordinator(db::Store* store, const db::Clock* clock, CoordinatorOptions options)
    : store_(store), clock_(clock), options_(std::move(options)) {
  for (int i = 0; i < std::max(1, options_.build_threads); ++i) builders_.emplace_back([this] { work_loop(); });
}

Coordinator::~Coordinator() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  build_cv_.notify_all();
  for (std::thread& t : builders_) t.join();
}

void Coordinator::work_loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    build_cv_.wait(lock, [this] { return stopping_ || !build_queue_.empty(); });
    if (stopping_) return;  // queued builds are dropped: their submissions stay merging
    std::function<void()> task = std::move(build_queue_.front());
    build_queue_.pop_front();
    ++builds_running_;
    lock.unlock();
    task();
    lock.lock();
    --builds_running_;
    idle_cv_.notify_all();
  }
}

bool Coordinator::drain(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(mu_);
  stopping_ = true;
  build_queue_.clear();
  build_cv_.notify_all();
  return idle_cv_.wait_for(lock, limit, [this] { return builds_running_ == 0; });
}

int Coordinator::builds_in_flight() {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(building_.size());
}

std::string Coordinator::pick_gpu_kind(const std::string& asked, bool dry_run, absl::Status* error) {
  if (dry_run) return tuning::dry_run_kind();
  if (!asked.empty()) return asked;
  // Not named: the kind of the GPU workers registered, most recently seen first.
  auto workers = store_->list_workers();
  if (!workers.ok()) {
    *error = workers.status();
    return "";
  }
  const db::WorkerRecord* best = nullptr;
  for (const db::WorkerRecord& w : *workers)
    if (!w.caps.compile_only && !w.caps.gpu_name.empty() && (!best || w.last_seen_ms > best->last_seen_ms)) best = &w;
  if (!best) {
    *error = absl::FailedPreconditionError(
        "no GPU worker has registered with this server: start mono-worker on a GPU machine, name the GPU kind, "
        "or submit with --dry-run (compile-only, nothing measured)");
    return "";
  }
  return best->caps.gpu_name;
}

absl::StatusOr<v1::SubmitReply> Coordinator::submit(const v1::SubmitHeader& header, const std::string& model_dir,
                                                    const std::string& model_sha256) {
  db::SubmissionRecord s;
  s.model_name = header.model_name().empty() ? "model" : header.model_name();
  s.model_sha256 = model_sha256;
  s.model_dir = model_dir;
  json shapes = json::array();
  for (const v1::ShapeBinding& b : header.shapes())
    shapes.push_back({{"input", b.input()}, {"dims", std::vector<int64_t>(b.dims().begin(), b.dims().end())}});
  s.shapes_json = shapes.dump();
  s.precision = header.precision() == v1::PRECISION_FP32 ? "fp32" : "fp16";
  s.dry_run = header.dry_run();
  s.max_measurements = header.max_measurements();
  absl::Status kind_error;
  s.gpu_kind = pick_gpu_kind(header.gpu_kind(), s.dry_run, &kind_error);
  if (!kind_error.ok()) return kind_error;

  // Load and plan before recording anything: a model that cannot be compiled is refused.
  auto l = std::make_shared<Loaded>();
  try {
    l->model = load_model_of(s);
  } catch (const std::exception& e) {
    // Name the model as the user knows it, not by the server's storage path.
    std::string why = e.what();
    const std::string path = model_dir + "/model.onnx";
    for (size_t at; (at = why.find(path)) != std::string::npos;) why.replace(at, path.size(), s.model_name);
    return absl::InvalidArgumentError("model rejected: " + why);
  }
  // The tuning plan too (a budget below the task count is refused here): nothing is recorded
  // for a submission the server refuses.
  auto tp = tuning_plan(s, *l);
  if (!tp.ok()) return tp.status();
  auto id = store_->create_submission(s);
  if (!id.ok()) return id.status();
  s.id = *id;
  v1::SubmitReply reply;
  reply.set_submission_id(s.id);
  {
    std::lock_guard<std::mutex> lock(l->mu);
    if (absl::Status st = record_plan(s, *l, std::move(*tp), &reply); !st.ok()) {
      (void)store_->set_submission_state(s.id, db::SubmissionState::kFailed, std::string(st.message()));
      return st;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  loaded_.emplace(s.id, l);
  work_ = true;
  work_cv_.notify_all();
  return reply;
}

void Coordinator::offer_kernel(const std::string& job_id, const v1::KernelImage& image) {
  auto o = std::make_shared<Offered>();
  o->config = image.candidate();
  o->kernel.cubin.assign(image.cubin().begin(), image.cubin().end());
  o->kernel.log = image.log();
  o->kernel.key = image.key();
  const size_t bytes = o->kernel.cubin.size() + o->kernel.log.size();
  std::lock_guard<std::mutex> lock(mu_);
  drop_offer(job_id);
  offered_[job_id] = std::move(o);
  offered_order_.push_back(job_id);
  offered_bytes_ += bytes;
  while (offered_.size() > 1 && (offered_.size() > options_.max_offered_kernels || offered_bytes_ > options_.max_offered_bytes))
    drop_offer(offered_order_.front());  // the oldest first: that build compiles for itself
}

void Coordinator::drop_offer(const std::string& job_id) {
  auto it = offered_.find(job_id);
  if (it == offered_.end()) return;
  offered_bytes_ -= it->second->kernel.cubin.size() + it->second->kernel.log.size();
  offered_.erase(it);
  offered_order_.erase(std::find(offered_order_.begin(), offered_order_.end(), job_id));
}

bool Coordinator::wait_for_work(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> lock(mu_);
  work_cv_.wait_for(lock, limit, [this] { return work_ || stopping_; });
  const bool woken = work_;
  work_ = false;
  return woken;
}

absl::StatusOr<tuning::TuningPlan> Coordinator::tuning_plan(const db::SubmissionRecord& s, const Loaded& l) {
  tuning::TuningPlanOptions o;
  o.dry_run = s.dry_run;
  o.task_gpu_kind = task_kind_of(s);
  o.budget = s.max_measurements;
  try {
    return tuning::plan_tuning(l.model, o);
  } catch (const tuning::BudgetTooSmall& e) {
    return absl::InvalidArgumentError(e.what());
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(std::string("model rejected: ") + e.what());
  }
}

absl::Status Coordinator::plan(const db::SubmissionRecord& s, Loaded& l, v1::SubmitReply* reply) {
  auto tp = tuning_plan(s, l);
  if (!tp.ok()) return tp.status();
  return record_plan(s, l, std::move(*tp), reply);
}

absl::Status Coordinator::record_plan(const db::SubmissionRecord& s, Loaded& l, tuning::TuningPlan tp,
                                      v1::SubmitReply* reply) {
  l.space = std::move(tp.space);
  if (auto st = store_->set_submission_groups_total(s.id, static_cast<int>(tp.tasks.size())); !st.ok()) return st;
  auto r = store_->add_plan(s.id, tp.tasks);
  if (!r.ok()) return r.status();
  if (reply) {
    reply->set_groups_total(static_cast<int>(tp.tasks.size()));
    reply->set_groups_reused(r->tasks_reused);
    reply->set_jobs_created(r->jobs_created);
  }
  std::fprintf(stderr, "mono-tuner-server: submission %s (%s, %s%s): %zu tasks (%d reused), %lld new jobs\n",
               s.id.c_str(), s.model_name.c_str(), s.precision.c_str(), s.dry_run ? ", dry run" : "",
               tp.tasks.size(), r->tasks_reused, static_cast<long long>(r->jobs_created));
  return store_->set_submission_state(s.id, db::SubmissionState::kTuning);
}

absl::StatusOr<std::shared_ptr<Coordinator::Loaded>> Coordinator::loaded(const db::SubmissionRecord& s) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = loaded_.find(s.id);
    if (it != loaded_.end()) return it->second;
  }
  // After a restart: load the model again (the plan is deterministic, the jobs exist), without
  // holding the lock.
  auto l = std::make_shared<Loaded>();
  try {
    l->model = load_model_of(s);
    l->space = tuning::enumerate_space(*l->model.graph, l->model.options);
  } catch (const std::exception& e) {
    return absl::FailedPreconditionError(std::string("cannot load the submitted model again: ") + e.what());
  }
  std::lock_guard<std::mutex> lock(mu_);
  return loaded_.emplace(s.id, l).first->second;  // another thread's copy, if it was first
}

void Coordinator::step() {
  auto subs = store_->unfinished_submissions();
  if (!subs.ok()) return;
  for (const db::SubmissionRecord& s : *subs) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stopping_ || building_.count(s.id)) continue;  // its artifact is being built
    }
    auto l = loaded(s);
    absl::Status st = l.status();
    if (l.ok()) st = advance(s, *l);
    if (!st.ok()) fail(s.id, st);
  }
}

void Coordinator::fail(const std::string& submission_id, const absl::Status& why) {
  std::fprintf(stderr, "mono-tuner-server: submission %s failed: %s\n", submission_id.c_str(), std::string(why.message()).c_str());
  (void)store_->set_submission_state(submission_id, db::SubmissionState::kFailed, std::string(why.message()));
  // Its jobs that no other submission needs leave the queue (workers would spend time on them).
  if (auto n = store_->cancel_orphaned_jobs(); n.ok() && *n > 0)
    std::fprintf(stderr, "mono-tuner-server: submission %s: %d queued job(s) no other submission needs were cancelled\n",
                 submission_id.c_str(), *n);
  std::lock_guard<std::mutex> lock(mu_);
  loaded_.erase(submission_id);
}

void Coordinator::build(const db::SubmissionRecord& s, std::shared_ptr<Loaded> l, tuning::FinalChoice f) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopping_ || !building_.insert(s.id).second) return;
  // The worker's compile of the configuration chosen, when it sent one (else the build compiles).
  // Kept until a build succeeds: a build retried after a full disk takes it too.
  std::shared_ptr<const Offered> offered;
  if (auto it = offered_.find(f.job.id); it != offered_.end() && it->second->config == f.config) offered = it->second;
  build_queue_.push_back([this, s, l, f = std::move(f), offered] {
    const absl::Status st = finish(s, *l, f.choice, f.info, f.verification, offered ? &offered->kernel : nullptr);
    if (st.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      drop_offer(f.job.id);
    } else if (absl::IsUnavailable(st)) {  // retried after a pause, not failed
      std::fprintf(stderr, "mono-tuner-server: submission %s: %s; trying again in %d s\n", s.id.c_str(),
                   std::string(st.message()).c_str(), options_.retry_seconds);
      std::lock_guard<std::mutex> lock(l->mu);
      l->retry_at_ms = clock_->now_ms() + int64_t{options_.retry_seconds} * 1000;
    } else if (!st.ok()) {
      fail(s.id, st);
    }
    std::lock_guard<std::mutex> lock(mu_);
    building_.erase(s.id);
  });
  build_cv_.notify_all();
}

absl::Status Coordinator::advance(const db::SubmissionRecord& s, const std::shared_ptr<Loaded>& l) {
  std::lock_guard<std::mutex> lock(l->mu);
  Loaded& L = *l;
  if (s.state == db::SubmissionState::kQueued) {
    // Recorded, but the server stopped before its jobs were: plan again (idempotent).
    return plan(s, L, nullptr);
  }
  auto prog = store_->submission_progress(s.id);
  if (!prog.ok()) return prog.status();
  if (s.state == db::SubmissionState::kTuning && prog->jobs_pending > 0) return absl::OkStatus();
  if (!s.dry_run && L.fragment.is_null()) L.fragment = tuning::whole_model_fragment(*L.model.graph, L.model.options);
  tuning::FinalChoice f = tuning::final_choice(*store_, L.fragment, L.space, task_kind_of(s), s.dry_run, s.id,
                                               L.model.label);
  if (f.pending) {
    if (f.job_missing) {
      // Groups tuned: time the best contexts as whole kernels (a resubmission finds the job done).
      if (auto added = store_->add_job(f.job); !added.ok()) return added.status();
      std::fprintf(stderr, "mono-tuner-server: submission %s: groups tuned; whole-kernel timing job %s\n", s.id.c_str(),
                   f.job.id.c_str());
    }
    return s.state == db::SubmissionState::kMerging ? absl::OkStatus()
                                                    : store_->set_submission_state(s.id, db::SubmissionState::kMerging);
  }
  if (!f.refused.empty()) return absl::FailedPreconditionError(f.refused);
  if (clock_->now_ms() < L.retry_at_ms) return absl::OkStatus();  // after a full disk
  build(s, l, std::move(f));  // on the build pool: NVRTC may take minutes
  return absl::OkStatus();
}

absl::Status Coordinator::finish(const db::SubmissionRecord& s, Loaded& l, const tuning::ContextChoice& choice,
                                 json info, const json& verification, const CompiledKernel* offered) {
  info["submission"] = s.id;
  info["model_sha256"] = s.model_sha256;
  const std::string dir = options_.data_dir + "/artifacts/" + s.id;
  const std::string tmp = dir + ".tmp";
  std::error_code ec;
  fs::create_directories(options_.data_dir + "/artifacts", ec);
  fs::remove_all(tmp, ec);
  std::string manifest;
  std::string error;
  try {
    manifest = options_.build(l.model, choice, info, verification, tmp, offered);
  } catch (const std::exception& e) {
    error = std::string("building the artifact failed: ") + e.what();
  }
  if (error.empty()) {
    fs::remove_all(dir, ec);
    fs::rename(tmp, dir, ec);
    if (ec) error = "cannot move the artifact into place: " + ec.message();
  }
  if (!error.empty()) {
    fs::remove_all(tmp, ec);
    // A full disk is transient: the submission stays merging and its build is tried again.
    const fs::space_info space = fs::space(options_.data_dir, ec);
    if (!ec && space.available < options_.min_free_bytes)
      return absl::UnavailableError(error + " (only " + std::to_string(space.available >> 20) + " MiB free in " +
                                    options_.data_dir + ")");
    return absl::InternalError(error);
  }
  if (auto st = store_->save_artifact(s.id, dir, manifest); !st.ok()) return st;
  std::fprintf(stderr, "mono-tuner-server: submission %s done: artifact %s\n", s.id.c_str(), dir.c_str());
  {
    std::lock_guard<std::mutex> lock(mu_);
    loaded_.erase(s.id);
  }
  return store_->set_submission_state(s.id, db::SubmissionState::kDone);
}

static v1::SubmissionState state_to_proto(db::SubmissionState s) {
  switch (s) {
    case db::SubmissionState::kQueued: return v1::QUEUED;
    case db::SubmissionState::kTuning: return v1::TUNING;
    case db::SubmissionState::kMerging: return v1::MERGING;
    case db::SubmissionState::kDone: return v1::DONE;
    case db::SubmissionState::kFailed: return v1::FAILED;
  }
  return v1::SUBMISSION_STATE_UNSPECIFIED;
}

absl::StatusOr<v1::Progress> Coordinator::progress(const std::string& submission_id) {
  auto s = store_->get_submission(submission_id);
  if (!s.ok()) return s.status();
  auto p = store_->submission_progress(submission_id);
  if (!p.ok()) return p.status();
  v1::Progress out;
  out.set_submission_id(submission_id);
  out.set_state(state_to_proto(s->state));
  out.set_groups_done(p->groups_done);
  out.set_groups_total(p->groups_total);
  out.set_candidates_compiled(p->candidates_compiled);
  out.set_candidates_measured(p->candidates_measured);
  out.set_message(s->error);
  // ETA from the rate at which its jobs finished so far.
  const int64_t done = p->jobs_total - p->jobs_pending;
  out.set_eta_seconds(-1);
  if (done > 0 && p->jobs_pending > 0) {
    const double elapsed_s = static_cast<double>(std::max<int64_t>(1, clock_->now_ms() - s->created_at_ms)) / 1000.0;
    out.set_eta_seconds(elapsed_s / static_cast<double>(done) * static_cast<double>(p->jobs_pending));
  }
  // Best-so-far speed-up against the untuned default (measured submissions only), computed
  // again only when more candidates have been measured: Watch asks several times a second.
  if (!s->dry_run && s->state != db::SubmissionState::kFailed) {
    std::shared_ptr<Loaded> found;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = loaded_.find(submission_id);
      if (it != loaded_.end()) found = it->second;
    }
    if (found) {
      Loaded& l = *found;
      std::lock_guard<std::mutex> lock(l.mu);
      if (l.speedup_at != p->candidates_measured) {
        l.speedup = 0;
        for (const tuning::ContextChoice& c : tuning::choose_schedules(*store_, l.space, task_kind_of(*s), false))
          if (c.total_us > 0) l.speedup = std::max(l.speedup, c.default_total_us / c.total_us);
        l.speedup_at = p->candidates_measured;
      }
      out.set_best_speedup(l.speedup);
    }
  }
  return out;
}

}  // namespace mono::server
