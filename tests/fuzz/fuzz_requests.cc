// libFuzzer: bytes as the service's requests, as a worker or a client could send them: a
// ReportRequest checked against a measurement job (request_checks.h), a SubmitHeader, and
// the file names of an upload. Each either passes or is refused with a status; nothing may
// crash, and a report that passes must hold only what the checks promise.
#include <cmath>
#include <cstdlib>

#include "mono/v1/tuning.pb.h"
#include "tuner_server/model_inbox.h"
#include "tuner_server/request_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const mono::db::JobRecord job = [] {
    mono::db::JobRecord j;
    j.id = "j";
    j.kind = mono::db::JobKind::kMeasure;
    j.payload = R"({"kind":"measure","candidates":[{"index":0},{"index":1},{"index":5}]})";
    return j;
  }();
  mono::v1::ReportRequest report;
  if (report.ParseFromArray(data, static_cast<int>(size)) && mono::server::check_report(report, job).ok()) {
    for (const auto& c : report.results()) {
      if (c.candidate() != 0 && c.candidate() != 1 && c.candidate() != 5) abort();
      for (double s : c.samples_us())
        if (!std::isfinite(s) || s <= 0) abort();
    }
  }
  mono::v1::SubmitHeader header;
  if (header.ParseFromArray(data, static_cast<int>(size))) (void)mono::server::check_submit_header(header);
  (void)mono::server::is_safe_file_name(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
