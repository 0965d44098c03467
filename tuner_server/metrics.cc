#include "tuner_server/metrics.h"

#include "db/records.h"

namespace mono::server {

ServerMetrics::ServerMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  auto& leases = prometheus::BuildCounter().Name("mono_leases_total").Help("Jobs leased to workers, and leases that expired").Register(*registry_);
  leases_granted_ = &leases.Add({{"event", "granted"}});
  leases_expired_ = &leases.Add({{"event", "expired"}});
  auto& reports = prometheus::BuildCounter().Name("mono_reports_total").Help("Worker reports: accepted, ignored as late/duplicate, or refused as invalid").Register(*registry_);
  reports_accepted_ = &reports.Add({{"outcome", "accepted"}});
  reports_duplicate_ = &reports.Add({{"outcome", "ignored"}});
  reports_refused_ = &reports.Add({{"outcome", "refused"}});  // invalid: request_checks.h
  lease_latency_ = &prometheus::BuildHistogram().Name("mono_lease_seconds").Help("Time to serve a Lease RPC").Register(*registry_)
                        .Add({}, prometheus::Histogram::BucketBoundaries{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5});
  jobs_ = &prometheus::BuildGauge().Name("mono_jobs").Help("Jobs by kind and state").Register(*registry_);
  failures_ = &prometheus::BuildGauge().Name("mono_failures").Help("Failed candidates and jobs by failure class").Register(*registry_);
  db_bytes_ = &prometheus::BuildGauge().Name("mono_db_bytes").Help("Size of the SQLite database").Register(*registry_).Add({});
  workers_ = &prometheus::BuildGauge().Name("mono_workers").Help("Registered workers").Register(*registry_).Add({});
}

void ServerMetrics::refresh(db::Store& store) {
  if (auto counts = store.counts_by_state(); counts.ok()) {
    for (const db::StateCount& c : *counts)
      jobs_->Add({{"kind", std::string(db::to_string(c.kind))}, {"state", std::string(db::to_string(c.state))}})
          .Set(static_cast<double>(c.count));
  }
  if (auto f = store.failure_counts(); f.ok()) {
    for (const db::FailureCount& c : *f)
      failures_->Add({{"class", std::string(db::to_string(c.failure))}}).Set(static_cast<double>(c.count));
  }
  if (auto b = store.db_size_bytes(); b.ok()) db_bytes_->Set(static_cast<double>(*b));
  if (auto w = store.list_workers(); w.ok()) workers_->Set(static_cast<double>(w->size()));
}

}  // namespace mono::server
