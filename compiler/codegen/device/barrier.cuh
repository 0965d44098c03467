// Mono device library: grid-wide barrier for a persistent kernel.
// SELF-CONTAINED (no includes); requires common.cuh to be included first.
#pragma once

namespace mono_dev {

__device__ __forceinline__ unsigned long long ld_acquire_gpu_u64(const unsigned long long* p) {
  unsigned long long v;
  asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
}

// Grid-wide barrier. Requirements:
//  * every block of the grid is co-resident (persistent grid; guaranteed by the runtime) and every
//    block calls grid_barrier the same number of times, with all its threads;
//  * state[0..1] (one 64-bit arrival count, 8-byte aligned) is zero when the buffer is first used.
// How: the count only grows. A block's arrival number a belongs to round a / n (n blocks), and
// the block waits until the count reaches the end of that round. Nothing is reset, so the
// critical path is the last arrival's fence and atomic plus one poll (the earlier version also
// read a generation word before arriving, and reset the counter and bumped the generation
// after the last arrival: three more round trips to L2). 2^64 arrivals do not wrap.
// Properties:
//  * reusable without limit, across kernel launches without host resets;
//  * memory ordering: every global write made before the barrier by any thread of any block is
//    visible to every read made after it by any thread of any block (bar.sync + gpu-scope fence
//    before the arrival, acquire load + fence after);
//  * one atomic per block per barrier, plus the spin on the count.
//
// grid_arrive + grid_wait are the same barrier in two halves: work placed between them overlaps
// the wait, and must neither read what other blocks write before the barrier nor write what
// they read after it (constant weights, say). Such work belongs after the arrival, not before
// the whole barrier: with weights preloaded before grid_barrier, bert-base ran 941 us instead of
// 883 on the H100 (a gpu-scope fence that waits for the block's outstanding loads delays every
// arrival by a memory latency).
// grid_arrive returns the count to wait for (meaningful in thread 0 only), 0 for the block that
// completed the round: it does not poll.
__device__ __forceinline__ unsigned long long grid_arrive(unsigned int* state) {
  __syncthreads();
  unsigned long long target = 0;
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    unsigned long long* count = reinterpret_cast<unsigned long long*>(state);
    const unsigned long long n = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
    __threadfence();  // release this block's writes (cumulative over the __syncthreads above)
    const unsigned long long arrived = atomicAdd(count, 1ull);
    target = arrived - arrived % n + n;
    if (arrived + 1 == target) target = 0;  // the last arrival completed the round itself
  }
  return target;
}

__device__ __forceinline__ void grid_wait(unsigned int* state, unsigned long long target) {
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const unsigned long long* count = reinterpret_cast<const unsigned long long*>(state);
    while (target != 0 && ld_acquire_gpu_u64(count) < target) {
      asm volatile("nanosleep.u32 20;" ::: "memory");
    }
    __threadfence();  // acquire side: order later reads of the block after the observation
  }
  __syncthreads();
}

__device__ __forceinline__ void grid_barrier(unsigned int* state) { grid_wait(state, grid_arrive(state)); }

// The same barrier with the ordering carried by the atomic and the poll themselves instead of
// full fences: a release add (cumulative over the __syncthreads before it) and acquire loads,
// no fence after the observation and no sleep in the poll. (Temporary: the setting
// barrier=release selects it for an A/B against grid_barrier.)
__device__ __forceinline__ unsigned long long atom_add_release_gpu_u64(unsigned long long* p, unsigned long long v) {
  unsigned long long old;
  asm volatile("atom.add.release.gpu.global.u64 %0, [%1], %2;" : "=l"(old) : "l"(p), "l"(v) : "memory");
  return old;
}
__device__ __forceinline__ void grid_barrier_release(unsigned int* state) {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    unsigned long long* count = reinterpret_cast<unsigned long long*>(state);
    const unsigned long long n = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
    const unsigned long long arrived = atom_add_release_gpu_u64(count, 1ull);
    const unsigned long long target = arrived - arrived % n + n;
    if (arrived + 1 != target)
      while (ld_acquire_gpu_u64(count) < target) {
      }
  }
  __syncthreads();
}

}  // namespace mono_dev
