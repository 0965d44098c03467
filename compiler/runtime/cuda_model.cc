#include "compiler/runtime/cuda_model.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>

#include "compiler/runtime/tensor_map.h"
#include "compiler/support/error.h"

namespace mono {

#define CUDA_TRY(call)                                                                              \
  do {                                                                                              \
    cudaError_t err_ = (call);                                                                      \
    if (err_ != cudaSuccess) user_error("CUDA error in ", #call, ": ", cudaGetErrorString(err_)); \
  } while (0)

bool gpu_available(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) {
      if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice)
        *why = str_cat("this machine has no CUDA GPU or driver (", cudaGetErrorString(e), ")");
      else
        *why = str_cat("no usable CUDA GPU (", cudaGetErrorString(e), ")");
    }
    cudaGetLastError();
    return false;
  }
  if (n == 0) {
    if (why) *why = "no CUDA GPU found";
    return false;
  }
  return true;
}

GpuInfo gpu_info(int device) {
  cudaDeviceProp p;
  CUDA_TRY(cudaGetDeviceProperties(&p, device));
  GpuInfo g;
  g.name = p.name;
  g.sm_arch = p.major * 10 + p.minor;
  g.sms = p.multiProcessorCount;
  g.memory_bytes = p.totalGlobalMem;
  cudaDriverGetVersion(&g.driver_version);
  cudaRuntimeGetVersion(&g.runtime_version);
  return g;
}

std::unique_ptr<GpuModel> GpuModel::create(const Manifest& m, const std::vector<char>& cubin,
                                           const std::vector<unsigned char>& weights, int device) {
  std::string why;
  if (!gpu_available(&why)) user_error(why);
  std::unique_ptr<GpuModel> g(new GpuModel());
  g->manifest_ = m;
  g->device_ = device;
  CUDA_TRY(cudaSetDevice(device));
  g->info_ = gpu_info(device);
  if (g->info_.sm_arch < 80) user_error("GPU ", g->info_.name, " is sm_", g->info_.sm_arch, "; Mono kernels need sm_80 or newer");
  if (g->info_.sm_arch / 10 != m.sm_arch / 10 || g->info_.sm_arch < m.sm_arch)
    user_error("the kernel was built for sm_", m.sm_arch, " but GPU ", g->info_.name, " is sm_", g->info_.sm_arch,
               ": rebuild it for this GPU");
  cudaLibrary_t lib;
  CUDA_TRY(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  g->library_ = lib;
  cudaKernel_t k;
  CUDA_TRY(cudaLibraryGetKernel(&k, lib, m.kernel.c_str()));
  g->kernel_ = reinterpret_cast<void*>(k);
  CUDA_TRY(cudaFuncSetAttribute(reinterpret_cast<const void*>(k), cudaFuncAttributeMaxDynamicSharedMemorySize, m.smem_bytes));
  int per_sm = 0;
  CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reinterpret_cast<const void*>(k), m.threads, m.smem_bytes));
  if (per_sm < m.blocks_per_sm)
    user_error("the persistent grid would not be resident on ", g->info_.name, ": the kernel needs ", m.blocks_per_sm,
               " block(s) of ", m.threads, " threads with ", m.smem_bytes, " B shared memory per SM, the occupancy API allows ",
               per_sm, "; refusing to launch (it would deadlock)");
  g->grid_ = g->info_.sms * m.blocks_per_sm;
  CUDA_TRY(cudaMalloc(&g->weights_, std::max<size_t>(weights.size(), 256)));
  if (!weights.empty()) CUDA_TRY(cudaMemcpy(g->weights_, weights.data(), weights.size(), cudaMemcpyHostToDevice));
  CUDA_TRY(cudaMalloc(&g->arena_, std::max<size_t>(m.arena_bytes, 256)));
  CUDA_TRY(cudaMemset(g->arena_, 0, std::max<size_t>(m.arena_bytes, 256)));  // split-K workspaces start at zero
  {  // the kernel's __constant__ mono_tmaps (if it has one), encoded over this arena
    void* table = nullptr;
    size_t bytes = 0;
    if (cudaLibraryGetGlobal(&table, &bytes, lib, "mono_tmaps") != cudaSuccess) bytes = 0;
    cudaGetLastError();  // "not found" is expected for kernels without tensor maps
    if (bytes != m.tensor_maps.size() * sizeof(CUtensorMap))
      user_error("the kernel's tensor map table holds ", bytes / sizeof(CUtensorMap), " maps; the manifest lists ",
                 m.tensor_maps.size());
    std::vector<CUtensorMap> maps(m.tensor_maps.size());
    for (size_t i = 0; i < maps.size(); ++i) {
      const std::string err = encode_tensor_map(m.tensor_maps[i], g->arena_, &maps[i]);
      if (!err.empty()) user_error("tensor map ", i, " of the kernel: ", err);
    }
    if (bytes) CUDA_TRY(cudaMemcpy(table, maps.data(), bytes, cudaMemcpyHostToDevice));
  }
  CUDA_TRY(cudaMalloc(&g->sync_, std::max<size_t>(m.sync_words, 64) * 4));
  CUDA_TRY(cudaMemset(g->sync_, 0, std::max<size_t>(m.sync_words, 64) * 4));
  if (m.profile) {
    const size_t bytes = static_cast<size_t>(2 * m.stages + 1) * g->grid_ * 8;
    CUDA_TRY(cudaMalloc(&g->profile_, bytes));
    CUDA_TRY(cudaMemset(g->profile_, 0, bytes));
  }
  for (const ArtifactIo& io : m.inputs) {
    void* p;
    CUDA_TRY(cudaMalloc(&p, std::max<size_t>(shape_numel(io.shape) * dtype_size(io.device_dtype), 16)));
    g->in_bufs_.push_back(p);
  }
  for (const ArtifactIo& io : m.outputs) {
    void* p;
    CUDA_TRY(cudaMalloc(&p, std::max<size_t>(shape_numel(io.shape) * dtype_size(io.device_dtype), 16)));
    g->out_bufs_.push_back(p);
  }
  return g;
}

std::unique_ptr<GpuModel> GpuModel::load(const std::string& dir, const NvrtcOptions& nvrtc, int device) {
  Manifest m = read_manifest(dir);
  if (m.verification_failed)
    user_error("'", dir, "' failed its verification (", m.verification, "): it would give wrong answers; not loaded");
  std::vector<char> cubin;
  struct stat;
  std::vector<unsigned char> raw;
  bool have_cubin = true;
  try {
    raw = read_binary(dir + "/kernel.cubin");
  } catch (const UserError&) {
    have_cubin = false;
  }
  if (have_cubin) {
    cubin.assign(raw.begin(), raw.end());
  } else {
    std::vector<unsigned char> src = read_binary(dir + "/model.cu");
    NvrtcOptions o = nvrtc;
    o.sm_arch = m.sm_arch;
    cubin = compile_cuda(std::string(src.begin(), src.end()), m.kernel, o).cubin;
  }
  std::vector<unsigned char> weights = read_binary(dir + "/weights.bin");
  if (weights.size() != m.weights_bytes)
    user_error(dir, "/weights.bin has ", weights.size(), " bytes; the manifest says ", m.weights_bytes);
  return create(m, cubin, weights, device);
}

GpuModel::~GpuModel() {
  for (void* p : in_bufs_) cudaFree(p);
  for (void* p : out_bufs_) cudaFree(p);
  if (weights_) cudaFree(weights_);
  if (arena_) cudaFree(arena_);
  if (sync_) cudaFree(sync_);
  if (profile_) cudaFree(profile_);
  if (flush_) cudaFree(flush_);
  if (library_) cudaLibraryUnload(static_cast<cudaLibrary_t>(library_));
}

// Mirrors MonoParams in the generated source.
struct KernelParams {
  const void* weights;
  void* arena;
  void* sync;
  const void* inputs[16];
  void* outputs[16];
  void* profile;
};

void GpuModel::run(const std::vector<const void*>& inputs, const std::vector<void*>& outputs, void* stream) {
  if (inputs.size() != manifest_.inputs.size() || outputs.size() != manifest_.outputs.size())
    user_error("the model takes ", manifest_.inputs.size(), " inputs and ", manifest_.outputs.size(), " outputs");
  KernelParams p{};
  p.weights = weights_;
  p.arena = arena_;
  p.sync = sync_;
  for (size_t i = 0; i < inputs.size(); ++i) p.inputs[i] = inputs[i];
  for (size_t i = 0; i < outputs.size(); ++i) p.outputs[i] = outputs[i];
  p.profile = profile_;
  void* args[] = {&p};
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(grid_);
  cfg.blockDim = dim3(manifest_.threads);
  cfg.dynamicSmemBytes = manifest_.smem_bytes;
  cfg.stream = static_cast<cudaStream_t>(stream);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeCooperative;  // the runtime guarantees co-residency
  attr[0].val.cooperative = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_TRY(cudaLaunchKernelExC(&cfg, kernel_, args));
}

static Tensor to_device_dtype(const Tensor& t, DType d) { return t.dtype() == d ? t : t.cast(d); }

std::vector<Tensor> GpuModel::run_host(const std::vector<Tensor>& inputs) {
  if (inputs.size() != manifest_.inputs.size()) user_error("the model takes ", manifest_.inputs.size(), " inputs");
  std::vector<const void*> ins;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ArtifactIo& io = manifest_.inputs[i];
    if (inputs[i].shape() != io.shape)
      user_error("input '", io.name, "' must have shape ", shape_str(io.shape), "; got ", shape_str(inputs[i].shape()));
    Tensor d = to_device_dtype(inputs[i], io.device_dtype);
    CUDA_TRY(cudaMemcpy(in_bufs_[i], d.raw(), d.nbytes(), cudaMemcpyHostToDevice));
    ins.push_back(in_bufs_[i]);
  }
  run(ins, out_bufs_, nullptr);
  CUDA_TRY(cudaGetLastError());
  CUDA_TRY(cudaDeviceSynchronize());
  std::vector<Tensor> outs;
  for (size_t i = 0; i < manifest_.outputs.size(); ++i) {
    const ArtifactIo& io = manifest_.outputs[i];
    Tensor t(TensorType{io.device_dtype, io.shape});
    CUDA_TRY(cudaMemcpy(t.mutable_raw(), out_bufs_[i], t.nbytes(), cudaMemcpyDeviceToHost));
    outs.push_back(t.dtype() == io.model_dtype ? t : t.cast(io.model_dtype));
  }
  return outs;
}

std::vector<StageTime> GpuModel::stage_times() {
  if (!profile_) return {};
  const int S = manifest_.stages, G = grid_;
  std::vector<unsigned long long> t(static_cast<size_t>(2 * S + 1) * G);
  CUDA_TRY(cudaMemcpy(t.data(), profile_, t.size() * 8, cudaMemcpyDeviceToHost));
  return stage_times_from_stamps(t, S, G);
}

std::vector<StageTime> stage_times_from_stamps(const std::vector<unsigned long long>& t, int S, int G) {
  std::vector<StageTime> out;
  if (S <= 0 || G <= 0 || t.size() < static_cast<size_t>(2 * S + 1) * G) return out;
  auto at = [&](int s, int k, int b) { return t[(static_cast<size_t>(s) * 2 + k) * G + b]; };
  // Block b's release into stage s: the kernel's start for stage 0, else the stamp after the
  // barrier that ends stage s - 1.
  auto release = [&](int s, int b) { return s == 0 ? t[static_cast<size_t>(2 * S) * G + b] : at(s - 1, 1, b); };
  unsigned long long released = ~0ull;
  for (int b = 0; b < G; ++b) released = std::min(released, release(0, b));
  for (int s = 0; s < S; ++s) {
    unsigned long long done = 0, next = ~0ull, last_release = 0;
    std::vector<unsigned long long> ends(G);
    StageTime st;
    for (int b = 0; b < G; ++b) {
      ends[b] = at(s, 0, b);
      if (ends[b] > done) done = ends[b], st.slowest_block = b;
      next = std::min(next, at(s, 1, b));
      last_release = std::max(last_release, release(s, b));
    }
    st.release_spread_us = (static_cast<double>(last_release) - static_cast<double>(released)) / 1000.0;
    std::nth_element(ends.begin(), ends.begin() + G / 2, ends.end());
    st.stage = s;
    st.work_us = (static_cast<double>(done) - static_cast<double>(released)) / 1000.0;
    st.median_us = (static_cast<double>(ends[G / 2]) - static_cast<double>(released)) / 1000.0;
    st.barrier_us = s + 1 < S ? (static_cast<double>(next) - static_cast<double>(done)) / 1000.0 : 0.0;
    out.push_back(st);
    released = next;
  }
  return out;
}

namespace {

// Two CUDA events that time work enqueued on the default stream between them.
class EventTimer {
 public:
  EventTimer() {
    CUDA_TRY(cudaEventCreate(&start_));
    CUDA_TRY(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;

  // Microseconds that the work `enqueue` puts on the stream takes on the GPU.
  template <class F>
  double us(F&& enqueue) {
    CUDA_TRY(cudaEventRecord(start_));
    enqueue();
    CUDA_TRY(cudaEventRecord(stop_));
    CUDA_TRY(cudaEventSynchronize(stop_));
    float ms = 0;
    CUDA_TRY(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1000.0;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

}  // namespace

void GpuModel::warm_up(int launches) {
  std::vector<const void*> ins(in_bufs_.begin(), in_bufs_.end());
  for (int i = 0; i < launches; ++i) run(ins, out_bufs_, nullptr);
  CUDA_TRY(cudaDeviceSynchronize());
}

Timing GpuModel::bench(int warmup, int iters, int reps) {
  warm_up(warmup);
  std::vector<const void*> ins(in_bufs_.begin(), in_bufs_.end());
  EventTimer timer;
  std::vector<double> per_launch;
  for (int r = 0; r < reps; ++r)
    per_launch.push_back(timer.us([&] {
                           for (int i = 0; i < iters; ++i) run(ins, out_bufs_, nullptr);
                         }) /
                         iters);
  CUDA_TRY(cudaGetLastError());
  std::sort(per_launch.begin(), per_launch.end());
  Timing t;
  t.median_us = per_launch[per_launch.size() / 2];
  t.min_us = per_launch.front();
  t.max_us = per_launch.back();
  t.launches = warmup + iters * reps;
  return t;
}

std::vector<double> GpuModel::sample_flushed(int warmup, int samples) {
  CUDA_TRY(cudaSetDevice(device_));
  if (!flush_) {
    int l2 = 0;
    CUDA_TRY(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device_));
    flush_bytes_ = 2 * static_cast<size_t>(std::max(l2, 1 << 20));
    CUDA_TRY(cudaMalloc(&flush_, flush_bytes_));
  }
  warm_up(warmup);
  std::vector<const void*> ins(in_bufs_.begin(), in_bufs_.end());
  EventTimer timer;
  std::vector<double> out;
  for (int i = 0; i < samples; ++i) {
    CUDA_TRY(cudaMemsetAsync(flush_, i & 0xff, flush_bytes_, nullptr));
    out.push_back(timer.us([&] { run(ins, out_bufs_, nullptr); }));
  }
  CUDA_TRY(cudaGetLastError());
  return out;
}

}  // namespace mono
