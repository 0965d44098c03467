// Mono device library: grid-wide barrier for a persistent kernel.
// SELF-CONTAINED (no includes); requires common.cuh to be included first.
#pragma once

namespace mono_dev {

__device__ __forceinline__ unsigned long long ld_acquire_gpu_u64(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

__device__ __forceinline__ unsigned long long atom_add_acq_rel_gpu_u64(unsigned long long* p, unsigned long long v) {
  unsigned long long old;
  asm volatile("atom.add.acq_rel.gpu.global.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
  return old;
}

// Grid-wide barrier. Requirements:
//  * every block of the grid is co-resident (persistent grid; guaranteed by the runtime) and every
//    block calls grid_barrier the same number of times, with all its threads;
//  * state[0..1] (one 64-bit arrival count, 8-byte aligned) is zero when the buffer is first used.
// How: the count only grows. A block's arrival number a belongs to round a / n (n blocks), and
// the block waits until the count reaches the end of that round; the last arrival completed the
// round itself and does not poll. Nothing is reset, so the critical path is the last arrival's
// atomic plus one poll. 2^64 arrivals do not wrap.
// Properties:
//  * reusable without limit, across kernel launches without host resets;
//  * memory ordering: every global write made before the barrier by any thread of any block is
//    visible to every read made after it by any thread of any block. The ordering rides on the
//    atomic and the poll themselves: an acq_rel add (its release cumulative over the bar.sync
//    before it; its acquire for the last arrival, which reads what the others released without
//    polling) and acquire polls (the bar.sync after them orders the block's later reads), no
//    fences. With a release-only add the last arrival could read stale data: tiny fp16
//    mobilenet and convnext failed now and then (run67);
//  * one atomic per block per barrier, plus the spin on the count.
// Measured on the H100 (bench/RESULTS.md): the earlier form (__threadfence, atomicAdd, polls
// with nanosleep, __threadfence) took 1.35 us a barrier over 132 blocks, a release-only add
// 1.02 (run65; incorrect, above).
__device__ __forceinline__ void grid_barrier(unsigned int* state) {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    unsigned long long* count = reinterpret_cast<unsigned long long*>(state);
    const unsigned long long n = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
    const unsigned long long arrived = atom_add_acq_rel_gpu_u64(count, 1ull);
    const unsigned long long target = arrived - arrived % n + n;
    if (arrived + 1 != target)
      while (ld_acquire_gpu_u64(count) < target) {
      }
  }
  __syncthreads();
}

}  // namespace mono_dev
