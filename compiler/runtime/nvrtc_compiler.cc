#include "compiler/runtime/nvrtc_compiler.h"

#include <nvrtc.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "compiler/codegen/device_headers.h"
#include "compiler/support/atomic_file.h"
#include "compiler/support/error.h"

namespace mono {

// Bump when anything that changes generated cubins outside the source text changes.
// 1: first version.
// 2: entries are committed by a .meta file (sizes and hashes), each file written atomically.
constexpr int kCacheVersion = 2;

std::string ResourceUsage::str() const {
  return str_cat(registers, " registers, ", spill_store_bytes, " B spill stores, ", spill_load_bytes,
                 " B spill loads, ", stack_frame_bytes, " B stack frame, ", shared_static_bytes, " B static shared");
}

static uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

static void check(nvrtcResult r, const char* what) {
  if (r != NVRTC_SUCCESS) user_error("NVRTC ", what, ": ", nvrtcGetErrorString(r));
}

// NVRTC 13 keeps a cache of its own in the driver's compute cache (~/.nv/ComputeCache), keyed
// so that sources differing only in comments hit it. A hit returns the cubin without ptxas's
// output, so the kernel's registers and spills read -1, and a build that looks cold is not.
// Mono caches cubins itself (with their logs), so NVRTC's is switched off, before main() runs
// and before any thread reads the environment; a CUDA_CACHE_DISABLE the user set is kept.
// (The driver's JIT cache, which the variable also governs, is unused: Mono loads cubins.)
static const bool kNvrtcCacheOff = setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/0) == 0;

std::string default_cache_dir() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/mono/cubin";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/mono/cubin";
  return "";
}

// The commit record of a cache entry: the sizes and hashes of its cubin and log.
static std::string cache_meta(const std::string& cubin, const std::string& log) {
  char text[128];
  std::snprintf(text, sizeof text, "cubin %zu %016llx\nlog %zu %016llx\n", cubin.size(),
                static_cast<unsigned long long>(fnv1a(cubin)), log.size(), static_cast<unsigned long long>(fnv1a(log)));
  return text;
}

static void make_dirs(const std::string& path) {
  std::string cur;
  std::stringstream ss(path);
  std::string part;
  if (!path.empty() && path[0] == '/') cur = "/";
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    cur += part + "/";
    mkdir(cur.c_str(), 0755);
  }
}

ResourceUsage parse_ptxas_usage(const std::string& log, const std::string& kernel) {
  ResourceUsage u;
  // ptxas prints, per function: "Compiling entry function 'K' ...", "Function properties for K",
  // "N bytes stack frame, N bytes spill stores, N bytes spill loads", "Used N registers, ...".
  size_t at = log.find("Function properties for " + kernel);
  if (at == std::string::npos) at = log.find("'" + kernel + "'");
  if (at == std::string::npos) return u;
  std::string tail = log.substr(at, 800);
  std::smatch m;
  if (std::regex_search(tail, m, std::regex(R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)"))) {
    u.stack_frame_bytes = std::stoi(m[1]);
    u.spill_store_bytes = std::stoi(m[2]);
    u.spill_load_bytes = std::stoi(m[3]);
  }
  if (std::regex_search(tail, m, std::regex(R"(Used (\d+) registers)"))) u.registers = std::stoi(m[1]);
  if (std::regex_search(tail, m, std::regex(R"((\d+) bytes smem)"))) u.shared_static_bytes = std::stoi(m[1]);
  return u;
}

// NVRTC's options for `options`. sm_90 builds target sm_90a, Hopper's own features (wgmma,
// gemm_wg.cuh): the cubin runs on sm_90 GPUs only, which an sm_90 cubin does anyway.
static std::vector<std::string> nvrtc_flags(const NvrtcOptions& options) {
  const std::string arch = "sm_" + std::to_string(options.sm_arch) + (options.sm_arch == 90 ? "a" : "");
  std::vector<std::string> opts = {"--gpu-architecture=" + arch, "--std=c++17",
                                   "--ptxas-options=--verbose", "--device-as-default-execution-space"};
  if (options.line_info) opts.push_back("--generate-line-info");
  return opts;
}

// compile_key for NVRTC options already made.
static std::string key_of(const std::string& source, const std::vector<std::string>& flags) {
  int major = 0, minor = 0;
  check(nvrtcVersion(&major, &minor), "version");
  std::string key_text = str_cat("v", kCacheVersion, " nvrtc ", major, ".", minor, "\n");
  for (const auto& o : flags) key_text += o + "\n";
  for (const DeviceHeader& h : device_headers()) key_text += std::string(h.include_name) + "\n" + h.text;
  key_text += source;
  char key[32];
  std::snprintf(key, sizeof key, "%016llx", static_cast<unsigned long long>(fnv1a(key_text)));
  return key;
}

std::string compile_key(const std::string& source, const NvrtcOptions& options) {
  return key_of(source, nvrtc_flags(options));
}

CompiledKernel compile_cuda(const std::string& source, const std::string& kernel_name, const NvrtcOptions& options) {
  const std::vector<std::string> opts = nvrtc_flags(options);
  CompiledKernel result;
  result.key = key_of(source, opts);
  const std::string& key = result.key;
  const std::string base = options.cache_dir.empty() ? "" : options.cache_dir + "/" + key;
  if (!base.empty()) {
    // An entry counts only when its .meta (written last) names the cubin's and log's sizes and
    // hashes: a torn or tampered entry is a miss, rebuilt and rewritten.
    std::string cubin, log, meta;
    if (read_file_whole(base + ".meta", &meta) && read_file_whole(base + ".cubin", &cubin) && read_file_whole(base + ".log", &log) &&
        meta == cache_meta(cubin, log)) {
      result.cubin.assign(cubin.begin(), cubin.end());
      result.log = log;
      result.usage = parse_ptxas_usage(log, kernel_name);
      result.from_cache = true;
      return result;
    }
  }

  std::vector<const char*> header_texts, header_names;
  for (const DeviceHeader& h : device_headers()) {
    header_texts.push_back(h.text);
    header_names.push_back(h.include_name);
  }
  nvrtcProgram prog;
  check(nvrtcCreateProgram(&prog, source.c_str(), "model.cu", static_cast<int>(header_texts.size()),
                           header_texts.data(), header_names.data()),
        "create program");
  std::vector<const char*> copts;
  for (const auto& o : opts) copts.push_back(o.c_str());
  nvrtcResult r = nvrtcCompileProgram(prog, static_cast<int>(copts.size()), copts.data());
  size_t log_size = 0;
  nvrtcGetProgramLogSize(prog, &log_size);
  result.log.resize(log_size);
  if (log_size) nvrtcGetProgramLog(prog, &result.log[0]);
  while (!result.log.empty() && result.log.back() == '\0') result.log.pop_back();
  if (r != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    // The first error line is the one line; the full log follows for the curious.
    std::string first;
    std::istringstream ls(result.log);
    for (std::string line; std::getline(ls, line);)
      if (line.find("error") != std::string::npos) {
        first = line;
        break;
      }
    user_error("generated CUDA failed to compile (", nvrtcGetErrorString(r), "): ", first.empty() ? result.log : first);
  }
  size_t cubin_size = 0;
  check(nvrtcGetCUBINSize(prog, &cubin_size), "cubin size");
  result.cubin.resize(cubin_size);
  check(nvrtcGetCUBIN(prog, result.cubin.data()), "cubin");
  nvrtcDestroyProgram(&prog);
  result.usage = parse_ptxas_usage(result.log, kernel_name);
  if (!base.empty()) {
    make_dirs(options.cache_dir);
    // Each file whole or not at all (temporary file, fsync, rename), the .meta last. A cache that
    // cannot be written (a full disk) costs the next build a compile, nothing else.
    const std::string cubin(result.cubin.begin(), result.cubin.end());
    std::string ignored;
    if (write_file_atomic(base + ".cubin", cubin, &ignored) && write_file_atomic(base + ".log", result.log, &ignored))
      write_file_atomic(base + ".meta", cache_meta(cubin, result.log), &ignored);
  }
  return result;
}

}  // namespace mono
