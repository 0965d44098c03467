#include "compiler/codegen/settings.h"

#include <cstdlib>
#include <functional>
#include <vector>

#include "compiler/support/error.h"

namespace mono {
namespace {

struct Setting {
  const char* name;
  const char* values;  // what it accepts, for the help and the error
  const char* doc;
  std::function<bool(KernelSettings*, const std::string&)> set;  // false: the value is not accepted
};

bool parse_int(const std::string& v, long lo, long hi, int* out) {
  char* end = nullptr;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end || n < lo || n > hi) return false;
  *out = static_cast<int>(n);
  return true;
}

bool parse_switch(const std::string& v, bool* out) {
  if (v == "on" || v == "1" || v == "true") *out = true;
  else if (v == "off" || v == "0" || v == "false") *out = false;
  else return false;
  return true;
}

const std::vector<Setting>& table() {
  static const std::vector<Setting> settings = {
      {"dtype", "fp32|fp16", "storage precision; fp16 runs GEMMs on tensor cores with fp32 accumulation (default fp32)",
       [](KernelSettings* s, const std::string& v) {
         if (v == "fp32") s->precision = Precision::kF32;
         else if (v == "fp16") s->precision = Precision::kF16;
         else return false;
         return true;
       }},
      {"profile", "on|off", "a profiling build: per-stage timestamps (mono-run prints them) (default off)",
       [](KernelSettings* s, const std::string& v) { return parse_switch(v, &s->profile); }},
      {"sms", "1..1024", "multiprocessors the schedule targets (default 132, an H100 SXM; mono-run --gpu: the GPU's)",
       [](KernelSettings* s, const std::string& v) { return parse_int(v, 1, 1024, &s->sms); }},
      {"threads", "32..1024, a multiple of 32", "threads per block (default 256)",
       [](KernelSettings* s, const std::string& v) { return parse_int(v, 32, 1024, &s->threads) && s->threads % 32 == 0; }},
      {"blocks-per-sm", "1..32", "resident blocks per multiprocessor (default 1)",
       [](KernelSettings* s, const std::string& v) { return parse_int(v, 1, 32, &s->blocks_per_sm); }},
      {"smem-limit", "0..232448", "dynamic shared memory a group may use, bytes (default 0: 227 KB / blocks-per-sm)",
       [](KernelSettings* s, const std::string& v) { return parse_int(v, 0, 232448, &s->smem_limit); }},
      {"inline", "auto|on|off",
       "group functions inlined into the kernel, or out of line and shared by groups with the same code (much "
       "faster NVRTC on big models) (default auto: inline where the kernel's text makes at most 200 calls, a layer "
       "loop's stages counted once)",
       [](KernelSettings* s, const std::string& v) {
         if (v == "auto") s->inline_groups = -1;
         else if (v == "on") s->inline_groups = 1;
         else if (v == "off") s->inline_groups = 0;
         else return false;
         return true;
       }},
  };
  return settings;
}

}  // namespace

void set_setting(KernelSettings* settings, const std::string& name, const std::string& value, const std::string& spelled) {
  for (const Setting& s : table()) {
    if (name != s.name) continue;
    if (!s.set(settings, value)) user_error(spelled, ": ", name, " takes ", s.values);
    return;
  }
  std::string names;
  for (const Setting& s : table()) names += (names.empty() ? "" : ", ") + std::string(s.name);
  user_error(spelled, ": no setting named '", name, "' (settings: ", names, ")");
}

void apply_setting(KernelSettings* settings, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) user_error("--set ", assignment, ": expected NAME=VALUE (see --help)");
  set_setting(settings, assignment.substr(0, eq), assignment.substr(eq + 1), "--set " + assignment);
}

std::string settings_help() {
  // "  NAME=VALUES" then the text from column 22, wrapped at 100 columns.
  constexpr size_t kColumn = 22, kWidth = 100;
  std::string out;
  for (const Setting& s : table()) {
    std::string line = str_cat("  ", s.name, "=", s.values);
    line += line.size() < kColumn ? std::string(kColumn - line.size(), ' ') : "\n" + std::string(kColumn, ' ');
    size_t col = line.size() - line.rfind('\n') - 1;
    const std::string doc = s.doc;
    for (size_t at = 0; at < doc.size();) {
      size_t end = doc.find(' ', at);
      if (end == std::string::npos) end = doc.size();
      const std::string word = doc.substr(at, end - at);
      if (col > kColumn && col + 1 + word.size() > kWidth) {
        line += "\n" + std::string(kColumn, ' ');
        col = kColumn;
      } else if (col > kColumn) {
        line += ' ';
        ++col;
      }
      line += word;
      col += word.size();
      at = end + 1;
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace mono
