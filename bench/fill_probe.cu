// How fast can one SM fill its shared memory? A GEMM tile's k loop streams stages of A and B
// into shared memory; the probe of session 9 found a 64x64x64 tile (16 KB a stage) taking
// ~870 cycles a stage whatever the stage count, about 20 bytes/cycle per SM. This probe times
// the fill alone (no math) for each way of issuing it, so the ceiling of each is known:
//   cp.async   256 threads, 16 bytes each per instruction, rows of 128 B strided as A's rows are
//   bulk       one cp.async.bulk of the whole stage (contiguous, as tile-packed weights are)
//   bulkrows   one cp.async.bulk of 128 B per row, issued by warp 0 (strided rows)
//   ldg        ld.global.v4 into registers, then st.shared (register staged)
//   tensor     one cp.async.bulk.tensor.2d of a box of 64 k x rows (strided rows, a tensor map)
//   tensorpad  the same with a box 72 k wide: rows land 144 B apart, the GEMM's padded layout
// Sources: per-block regions (streamed from DRAM) or one region shared by all blocks (L2 hits).
//   nvcc -arch=sm_90 -O2 -std=c++17 bench/fill_probe.cu -o fill_probe -lcuda && ./fill_probe
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                             \
  do {                                                                                    \
    cudaError_t e_ = (x);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      std::printf("CUDA error %s at line %d: %s\n", cudaGetErrorString(e_), __LINE__, #x); \
      std::exit(2);                                                                       \
    }                                                                                     \
  } while (0)

constexpr int kThreads = 256;
constexpr int kRowBytes = 128;      // one BK = 64 fp16 row segment
constexpr int kLd = 1536;           // row stride of the source matrix (K = 768 fp16)
constexpr int kSegs = kLd / kRowBytes;  // k tiles per row block

enum Mode { kCpAsync, kBulk, kBulkRows, kLdg, kTensor, kTensorPad, kModes };
static const char* kModeName[] = {"cp.async", "bulk", "bulkrows", "ldg", "tensor", "tensorpad"};

__device__ __forceinline__ unsigned smem_u32(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// Source offset of row r of stage k for the strided (row) modes: rows of a [rows][kLd] matrix,
// k tile k % kSegs of row block k / kSegs.
__device__ __forceinline__ size_t row_off(int k, int r, int rows) {
  return ((size_t)(k / kSegs) * rows + r) * kLd + (size_t)(k % kSegs) * kRowBytes;
}

template <int MODE, int DEPTH>
__global__ void __launch_bounds__(kThreads, 1)
    fill(const char* src, size_t region, int stage_bytes, int iters, int share,
         unsigned long long* cycles, int* sink, const __grid_constant__ CUtensorMap tmap) {
  extern __shared__ __align__(128) char smem[];
  const unsigned bar0 = smem_u32(smem + DEPTH * stage_bytes);
  const char* base = src + (share ? 0 : (size_t)blockIdx.x * region);
  const int rows = MODE == kTensorPad ? stage_bytes / (kRowBytes + 16) : stage_bytes / kRowBytes;
  const int region_rows = (int)(region / kLd);
  if (threadIdx.x == 0)
    for (int s = 0; s < DEPTH; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar0 + 8 * s) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  __syncthreads();

  auto issue = [&](int k) {
    const int slot = k % DEPTH;
    char* dst = smem + slot * stage_bytes;
    const unsigned dst_u = smem_u32(dst), bar = bar0 + 8 * slot;
    if (MODE == kCpAsync) {
      for (int c = threadIdx.x; c < stage_bytes / 16; c += kThreads) {
        const int r = c / (kRowBytes / 16), col = (c % (kRowBytes / 16)) * 16;
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst_u + r * kRowBytes + col),
                     "l"(base + row_off(k, r, rows) + col)
                     : "memory");
      }
      asm volatile("cp.async.commit_group;" ::: "memory");
    } else if (MODE == kBulk) {
      if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(stage_bytes) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst_u),
                     "l"(base + (size_t)k * stage_bytes), "r"(stage_bytes), "r"(bar)
                     : "memory");
      }
    } else if (MODE == kTensor || MODE == kTensorPad) {
      if (threadIdx.x == 0) {
        const int c0 = (k % kSegs) * (kRowBytes / 2);
        const int c1 = (share ? 0 : (int)blockIdx.x * region_rows) + (k / kSegs) * rows;
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(stage_bytes) : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
                dst_u),
            "l"(reinterpret_cast<unsigned long long>(&tmap)), "r"(c0), "r"(c1), "r"(bar)
            : "memory");
      }
    } else if (MODE == kBulkRows) {
      if (threadIdx.x >= 32) return;  // warp 0 issues the rows, after its lane 0's expect_tx
      if (threadIdx.x == 0)
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(stage_bytes) : "memory");
      __syncwarp();
      for (int r = threadIdx.x; r < rows; r += 32)
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                         dst_u + r * kRowBytes),
                     "l"(base + row_off(k, r, rows)), "n"(kRowBytes), "r"(bar)
                     : "memory");
    }
  };
  auto wait = [&](int k) {
    if (MODE == kCpAsync) {
      asm volatile("cp.async.wait_group %0;" ::"n"(DEPTH - 2) : "memory");
    } else {
      const unsigned bar = bar0 + 8 * (k % DEPTH), parity = (k / DEPTH) & 1;
      unsigned done = 0;
      while (!done)
        asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
                     "selp.u32 %0, 1, 0, p;\n\t}"
                     : "=r"(done)
                     : "r"(bar), "r"(parity)
                     : "memory");
    }
    __syncthreads();
  };

  int acc = 0;
  const unsigned long long t0 = clock64();
  if (MODE == kLdg) {  // DEPTH-1 16-byte loads in flight per thread, then stored
    for (int k = 0; k < iters; ++k) {
      int4 v[8];
      const int per = stage_bytes / 16 / kThreads;
#pragma unroll
      for (int u = 0; u < 8; ++u)
        if (u < per) {
          const int c = threadIdx.x + u * kThreads;
          const int r = c / (kRowBytes / 16), col = (c % (kRowBytes / 16)) * 16;
          v[u] = __ldcg(reinterpret_cast<const int4*>(base + row_off(k, r, rows) + col));
        }
#pragma unroll
      for (int u = 0; u < 8; ++u)
        if (u < per) reinterpret_cast<int4*>(smem + (k % DEPTH) * stage_bytes)[threadIdx.x + u * kThreads] = v[u];
      __syncthreads();
      acc += reinterpret_cast<const int*>(smem + (k % DEPTH) * stage_bytes)[threadIdx.x];
    }
  } else {
    for (int k = 0; k < DEPTH - 1 && k < iters; ++k) issue(k);
    if (MODE == kCpAsync)
      for (int k = iters; k < DEPTH - 1; ++k) asm volatile("cp.async.commit_group;" ::: "memory");
    for (int k = 0; k < iters; ++k) {
      wait(k);
      acc += reinterpret_cast<const int*>(smem + (k % DEPTH) * stage_bytes)[threadIdx.x];
      if (k + DEPTH - 1 < iters) issue(k + DEPTH - 1);
      else if (MODE == kCpAsync) asm volatile("cp.async.commit_group;" ::: "memory");
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
  }
  __syncthreads();
  const unsigned long long t1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
  if (acc == 0x12345678) sink[blockIdx.x] = acc;
}

template <int MODE, int DEPTH>
static void run(const char* src, size_t region, int stage_bytes, int iters, int blocks, int share,
                unsigned long long* d_cycles, int* d_sink) {
  CUtensorMap tmap{};
  if (MODE == kTensor || MODE == kTensorPad) {
    const cuuint32_t box_k = MODE == kTensorPad ? (kRowBytes + 16) / 2 : kRowBytes / 2;
    const cuuint32_t box_rows = stage_bytes / (box_k * 2);
    const cuuint64_t dims[2] = {(cuuint64_t)kLd / 2, (cuuint64_t)(region / kLd) * 132};
    const cuuint64_t strides[1] = {(cuuint64_t)kLd};
    const cuuint32_t box[2] = {box_k, box_rows};
    const cuuint32_t estr[2] = {1, 1};
    const CUresult r = cuTensorMapEncodeTiled(&tmap, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void*)src, dims, strides, box,
                                              estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                              CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
      std::printf("cuTensorMapEncodeTiled failed (%d) for box %u x %u\n", (int)r, box_k, box_rows);
      return;
    }
  }
  const int smem = DEPTH * stage_bytes + 8 * DEPTH;
  CK(cudaFuncSetAttribute(fill<MODE, DEPTH>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  float best_ms = 1e9f;
  std::vector<unsigned long long> cyc(blocks);
  std::vector<double> per_stage;
  for (int rep = 0; rep < 5; ++rep) {
    if (!share) CK(cudaMemset((void*)src, rep, 1 << 20));  // not a cache flush; regions are >> L2 in all
    CK(cudaEventRecord(e0));
    fill<MODE, DEPTH><<<blocks, kThreads, smem>>>(src, region, stage_bytes, iters, share, d_cycles, d_sink, tmap);
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    CK(cudaGetLastError());
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    if (rep == 0) continue;  // warm-up (and the L2 fill for shared sources)
    best_ms = std::min(best_ms, ms);
    CK(cudaMemcpy(cyc.data(), d_cycles, blocks * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    std::sort(cyc.begin(), cyc.end());
    per_stage.push_back((double)cyc[blocks / 2] / iters);
  }
  std::sort(per_stage.begin(), per_stage.end());
  const double cps = per_stage[per_stage.size() / 2];
  const double total = (double)stage_bytes * iters * blocks;
  std::printf("%-9s depth %d  stage %5d B  blocks %3d  %-6s  %7.0f cycles/stage  %6.1f B/cycle/SM   all SMs %6.0f GB/s\n",
              kModeName[MODE], DEPTH, stage_bytes, blocks, share ? "L2" : "DRAM", cps, stage_bytes / cps,
              total / (best_ms * 1e-3) / 1e9);
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
}

template <int MODE>
static void run_depths(const char* src, size_t region, int stage_bytes, int iters, int blocks, int share,
                       unsigned long long* c, int* s) {
  run<MODE, 2>(src, region, stage_bytes, iters, blocks, share, c, s);
  run<MODE, 4>(src, region, stage_bytes, iters, blocks, share, c, s);
  run<MODE, 8>(src, region, stage_bytes, iters, blocks, share, c, s);
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("%s, %d SMs, L2 %d MB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
  const int iters = 96;
  const int max_blocks = p.multiProcessorCount;
  // Per-block region: iters stages of 16 KB, strided rows or contiguous alike.
  const size_t region = (size_t)(iters / kSegs + 1) * (16384 / kRowBytes) * kLd;
  char* src;
  CK(cudaMalloc(&src, region * max_blocks));
  CK(cudaMemset(src, 1, region * max_blocks));
  unsigned long long* d_cycles;
  int* d_sink;
  CK(cudaMalloc(&d_cycles, max_blocks * sizeof(unsigned long long)));
  CK(cudaMalloc(&d_sink, max_blocks * sizeof(int)));
  const int block_counts[] = {1, 24, 96, max_blocks};
  for (int share = 0; share < 2; ++share)
    for (int blocks : block_counts) {
      for (int stage : {8192, 16384}) {
        run_depths<kCpAsync>(src, region, stage, iters, blocks, share, d_cycles, d_sink);
        run_depths<kBulk>(src, region, stage, iters, blocks, share, d_cycles, d_sink);
        run_depths<kBulkRows>(src, region, stage, iters, blocks, share, d_cycles, d_sink);
        run_depths<kTensor>(src, region, stage, iters, blocks, share, d_cycles, d_sink);
        run_depths<kTensorPad>(src, region, stage / 128 * 144, iters, blocks, share, d_cycles, d_sink);
      }
      run<kLdg, 2>(src, region, 16384, iters, blocks, share, d_cycles, d_sink);
      std::printf("\n");
    }
  return 0;
}
