// The server's Prometheus metrics, served at /metrics on its --http address.
#pragma once

#include <memory>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "db/store.h"

namespace mono::server {

class ServerMetrics {
 public:
  ServerMetrics();
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // Counters the RPC handlers bump.
  void lease_granted(int jobs) { leases_granted_->Increment(jobs); }
  void leases_expired(int jobs) { leases_expired_->Increment(jobs); }
  void report(bool accepted) { (accepted ? reports_accepted_ : reports_duplicate_)->Increment(); }
  void report_refused() { reports_refused_->Increment(); }
  void lease_latency(double seconds) { lease_latency_->Observe(seconds); }
  // Gauges read from the database (jobs by state, failures by class, DB size).
  void refresh(db::Store& store);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Counter* leases_granted_;
  prometheus::Counter* leases_expired_;
  prometheus::Counter* reports_accepted_;
  prometheus::Counter* reports_duplicate_;
  prometheus::Counter* reports_refused_;
  prometheus::Histogram* lease_latency_;
  prometheus::Family<prometheus::Gauge>* jobs_;
  prometheus::Family<prometheus::Gauge>* failures_;
  prometheus::Gauge* db_bytes_;
  prometheus::Gauge* workers_;
};

}  // namespace mono::server
