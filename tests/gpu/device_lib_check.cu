// Standalone GPU check of the Mono device library (compiler/codegen/device/*.cuh) against CPU
// references on random data.
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -O2 -I. -std=c++17 tests/gpu/device_lib_check.cu tests/gpu/gemm_checks.cu \
//     tests/gpu/row_barrier_checks.cu tests/gpu/gemm_bench.cu tests/gpu/attention_checks.cu tests/gpu/fusion_probe.cu -o device_lib_check && ./device_lib_check
//   (bench/build_gpu_bundle.sh builds it so; -DMONO_PROBE_BUILD: the probe build, device_lib_check.cuh)
//   ./device_lib_check --bench     # also times GemmF16 tiles on BERT-base shapes (informational)
//   ./device_lib_check --gemm-small                  # small GEMM checks only (for racecheck)
//   ./device_lib_check --bench-one CFG M N K SPLITS  # one benchmark (for ncu), CFG 1..8
//   ./device_lib_check --fusion-probe                # a fused MLP stage's cost, measured first (fusion_probe.cu)
//                                                    # (CFG+100: B stored [K][N], DenseN)
//
// One line per check: name, max relative error (max|diff| / max|ref|), tolerance, PASS/FAIL.
// Exit status is non-zero if any check fails.
#include "tests/gpu/device_lib_check.cuh"

int g_failures = 0;
std::mt19937 g_rng(12345);

void report(const std::string& name, double err, double tol, const std::string& extra) {
  const bool ok = std::isfinite(err) && err < tol;
  std::printf("%-72s max_rel_err=%.3e tol=%.0e %s%s%s\n", name.c_str(), err, tol, ok ? "PASS" : "FAIL",
              extra.empty() ? "" : "  ", extra.c_str());
  if (!ok) ++g_failures;
}
void report_bool(const std::string& name, bool ok, const std::string& extra) {
  std::printf("%-72s %s%s%s\n", name.c_str(), ok ? "PASS" : "FAIL", extra.empty() ? "" : "  ",
              extra.c_str());
  if (!ok) ++g_failures;
}

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--gemm-small") {
    gemm_small_checks();
    std::printf("%s: %d failure(s)\n", g_failures ? "FAILED" : "ALL PASSED", g_failures);
    return g_failures ? 1 : 0;
  }
  if (argc == 7 && std::string(argv[1]) == "--bench-one") {  // --bench-one CFG(1-4) M N K SPLITS
    bench_one_cfg(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]), std::atoi(argv[5]),
                  std::atoi(argv[6]));
    return 0;
  }
  if (argc == 2 && std::string(argv[1]) == "--fusion-probe") {  // tests/gpu/fusion_probe.cu
    fusion_probe();
    std::printf("%s: %d failure(s)\n", g_failures ? "FAILED" : "ALL PASSED", g_failures);
    return g_failures ? 1 : 0;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s (sm_%d%d, %d SMs)\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount);
  common_checks();
  gemm_checks();
  barrier_checks();
  row_checks();
  attention_checks();
  if (argc > 1 && std::string(argv[1]) == "--bench") bench();
  std::printf("%s: %d failure(s)\n", g_failures ? "FAILED" : "ALL PASSED", g_failures);
  return g_failures ? 1 : 0;
}
