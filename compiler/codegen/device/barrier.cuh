// Mono device library: grid-wide barrier for a persistent kernel.
// SELF-CONTAINED (no includes); see common.cuh.
#pragma once

namespace mono_dev {

__device__ __forceinline__ unsigned int ld_acquire_gpu(const unsigned int* p) {
  unsigned int v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

// Grid-wide barrier. Requirements:
//  * every block of the grid is co-resident (persistent grid; guaranteed by the runtime) and every
//    block calls grid_barrier the same number of times, with all its threads;
//  * state[0] (arrival counter) and state[1] (generation) are zero when the buffer is first used.
// Properties:
//  * reusable without limit; the arrival counter is back to 0 after every barrier, so the same
//    state works across kernel launches without host resets (the generation just keeps counting
//    and may wrap: only equality is tested);
//  * memory ordering: every global write made before the barrier by any thread of any block is
//    visible to every read made after it by any thread of any block (bar.sync + gpu-scope fence
//    before the arrival, acquire load + fence after);
//  * one atomic per block per barrier, plus the spin on the generation word.
__device__ __forceinline__ void grid_barrier(unsigned int* state) {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    const unsigned int nblocks = gridDim.x * gridDim.y * gridDim.z;
    // Generation of the barrier we are in. It cannot advance before our own arrival below, and
    // coherence guarantees we see at least the value that released us from the previous barrier.
    const unsigned int gen = ld_acquire_gpu(state + 1);
    __threadfence();  // release this block's writes (cumulative over the __syncthreads above)
    const unsigned int arrived = atomicAdd(state, 1u);
    if (arrived == nblocks - 1) {
      // Last arrival: nobody can arrive at the next barrier before the generation moves, so the
      // counter can be reset with a plain atomic store first.
      atomicExch(state, 0u);
      __threadfence();
      atomicAdd(state + 1, 1u);
    } else {
      while (ld_acquire_gpu(state + 1) == gen) {
        asm volatile("nanosleep.u32 32;" ::: "memory");
      }
    }
    __threadfence();  // acquire side: order later reads of the block after the observation
  }
  __syncthreads();
}

}  // namespace mono_dev
