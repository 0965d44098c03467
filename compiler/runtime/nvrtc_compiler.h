// Compiles generated CUDA source to a cubin with NVRTC (no GPU needed), caching results by a
// hash of everything that determines them.
#pragma once

#include <string>
#include <vector>

namespace mono {

struct ResourceUsage {
  int registers = -1;
  int spill_store_bytes = -1;
  int spill_load_bytes = -1;
  int stack_frame_bytes = -1;
  int shared_static_bytes = 0;
  std::string str() const;
};

struct CompiledKernel {
  std::vector<char> cubin;
  std::string log;        // NVRTC and ptxas output
  ResourceUsage usage;    // of the kernel (parsed from ptxas -v)
  bool from_cache = false;
  bool offered = false;   // compiled elsewhere (a worker) and taken for the same key
  std::string key;        // cache key (compile_key)
};

struct NvrtcOptions {
  int sm_arch = 90;
  std::string cache_dir;  // empty: no cache
  bool line_info = false;
};

// Throws UserError with the compiler log on a compile error.
CompiledKernel compile_cuda(const std::string& source, const std::string& kernel_name, const NvrtcOptions& options);

// The key compile_cuda caches `source` under: a hash of the NVRTC version, its options, the
// device headers and the source. Equal keys mean the same compile, on whichever machine.
std::string compile_key(const std::string& source, const NvrtcOptions& options);

// Parses ptxas -v output for one function.
ResourceUsage parse_ptxas_usage(const std::string& log, const std::string& kernel_name);

// The default cache folder: $XDG_CACHE_HOME/mono/cubin or ~/.cache/mono/cubin (read by tools,
// passed down explicitly).
std::string default_cache_dir();

}  // namespace mono
