#include "tuner_server/request_checks.h"

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace mono::server {
namespace {

// The candidate indices a job's payload lists; `listed` false when it lists none (a payload
// that is not a tuning job's: only the other checks apply).
std::set<int64_t> payload_indices(const std::string& payload, bool* listed) {
  std::set<int64_t> out;
  *listed = false;
  const nlohmann::json j = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return out;
  for (const char* key : {"candidates", "configs"}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_array()) continue;
    *listed = true;
    for (const auto& c : *it)
      if (c.is_object() && c.contains("index") && c["index"].is_number_integer()) out.insert(c["index"].get<int64_t>());
  }
  return out;
}

bool good_time(double us, const ReportLimits& l) { return std::isfinite(us) && us > 0 && us <= l.max_time_us; }

}  // namespace

absl::Status check_report(const v1::ReportRequest& req, const db::JobRecord& job, const ReportLimits& limits) {
  bool listed = false;
  const std::set<int64_t> valid = payload_indices(job.payload, &listed);
  std::set<int64_t> seen;
  for (const v1::CandidateResult& c : req.results()) {
    const std::string who = absl::StrCat("candidate ", c.candidate());
    if (listed && !valid.count(c.candidate()))
      return absl::InvalidArgumentError(absl::StrCat(who, " is not one of job ", job.id, "'s ", valid.size(), " candidates"));
    if (!seen.insert(c.candidate()).second) return absl::InvalidArgumentError(absl::StrCat(who, " is reported twice"));
    if (static_cast<size_t>(c.samples_us_size()) > limits.max_samples)
      return absl::InvalidArgumentError(absl::StrCat(who, ": ", c.samples_us_size(), " samples (at most ", limits.max_samples, ")"));
    for (double s : c.samples_us())
      if (!good_time(s, limits)) return absl::InvalidArgumentError(absl::StrCat(who, ": sample ", s, " us is not a time"));
    if (c.samples_us_size() > 0 && !good_time(c.median_us(), limits))
      return absl::InvalidArgumentError(absl::StrCat(who, ": median ", c.median_us(), " us is not a time"));
    if (!std::isfinite(c.spread()) || c.spread() < 0)
      return absl::InvalidArgumentError(absl::StrCat(who, ": spread ", c.spread(), " is not finite and >= 0"));
    if (c.registers() < 0 || c.registers() > limits.max_registers)
      return absl::InvalidArgumentError(absl::StrCat(who, ": ", c.registers(), " registers"));
    if (c.spill_bytes() < 0 || c.smem_bytes() < 0 || c.smem_bytes() > limits.max_smem_bytes)
      return absl::InvalidArgumentError(absl::StrCat(who, ": spill or shared-memory bytes out of range"));
  }
  const v1::Environment& e = req.environment();
  for (const std::string* s : {&e.gpu_name(), &e.driver_version(), &e.cuda_version(), &e.codegen_version()})
    if (s->size() > limits.max_env_string)
      return absl::InvalidArgumentError(absl::StrCat("an environment string of ", s->size(), " bytes (at most ",
                                                     limits.max_env_string, ")"));
  if (e.sm_clock_mhz() < 0 || e.mem_clock_mhz() < 0) return absl::InvalidArgumentError("a negative clock");
  if (req.has_kernel_image()) {
    const v1::KernelImage& k = req.kernel_image();
    if (job.kind != db::JobKind::kWholeKernel)
      return absl::InvalidArgumentError(absl::StrCat("a kernel image for ", db::to_string(job.kind), " job ", job.id,
                                                     " (only whole-kernel jobs send one)"));
    bool timed = false;
    for (const v1::CandidateResult& c : req.results()) timed |= c.candidate() == k.candidate() && c.ok() && c.samples_us_size() > 0;
    if (!timed)
      return absl::InvalidArgumentError(absl::StrCat("the kernel image is of configuration ", k.candidate(),
                                                     ", which the report does not time"));
    if (k.cubin().empty()) return absl::InvalidArgumentError("the kernel image has no cubin");
    if (k.cubin().size() + k.log().size() > limits.max_kernel_image_bytes)
      return absl::InvalidArgumentError(absl::StrCat("the kernel image has ", k.cubin().size() + k.log().size(),
                                                     " bytes (at most ", limits.max_kernel_image_bytes, ")"));
    if (k.key().size() != 16 || k.key().find_first_not_of("0123456789abcdef") != std::string::npos)
      return absl::InvalidArgumentError("the kernel image's key is not 16 lowercase hex digits");
  }
  return absl::OkStatus();
}

namespace {

absl::Status check_text(const char* field, const std::string& s, bool may_be_empty) {
  if (s.empty() && may_be_empty) return absl::OkStatus();
  if (s.empty() || s.size() > 200)
    return absl::InvalidArgumentError(absl::StrCat(field, " must be 1 to 200 bytes, got ", s.size()));
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return absl::InvalidArgumentError(absl::StrCat(field, " holds a control byte (", int{c}, ")"));
  return absl::OkStatus();
}

}  // namespace

absl::Status check_submit_header(const v1::SubmitHeader& header) {
  if (auto s = check_text("model_name", header.model_name(), true); !s.ok()) return s;
  if (auto s = check_text("gpu_kind", header.gpu_kind(), true); !s.ok()) return s;
  if (header.shapes_size() > 64) return absl::InvalidArgumentError("more than 64 shape bindings");
  for (const v1::ShapeBinding& b : header.shapes()) {
    if (auto s = check_text("a shape binding's input name", b.input(), false); !s.ok()) return s;
    if (b.dims_size() < 1 || b.dims_size() > 8)
      return absl::InvalidArgumentError(absl::StrCat("shape of ", b.input(), ": 1 to 8 dimensions, got ", b.dims_size()));
    for (int64_t d : b.dims())
      if (d < 1) return absl::InvalidArgumentError(absl::StrCat("shape of ", b.input(), ": dimension ", d, " is not >= 1"));
  }
  return absl::OkStatus();
}

}  // namespace mono::server
