// Encoding the tensor maps through which fp16 GEMMs read their activation operand (loaders.cuh
// TensorK; what each describes: tensor_map_spec.h): 128-byte swizzle, zero fill out of range.
// Header-only so that the runtime and the standalone device-library check share
// it; the driver's encoder is reached through the runtime (cudaGetDriverEntryPointByVersion),
// so nothing links libcuda.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <string>

#include "compiler/codegen/tensor_map_spec.h"

namespace mono {

// Encodes `s` over the buffer at `arena` into `out` (128 bytes). Returns "" or the error.
inline std::string encode_tensor_map(const TensorMapSpec& s, const void* arena, CUtensorMap* out) {
  const std::string problem = tensor_map_problem(s);
  if (!problem.empty()) return problem;
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {  // once, thread-safe
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult q;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  if (!encode) return "the CUDA driver has no cuTensorMapEncodeTiled (a driver for CUDA 12 or newer is needed)";
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(s.cols), static_cast<cuuint64_t>(s.rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(s.row_stride)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(s.box_cols), static_cast<cuuint32_t>(s.box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  void* base = static_cast<char*>(const_cast<void*>(arena)) + s.arena_offset;
  const CUresult r = encode(out, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, base, dims, strides, box, element_strides,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return "cuTensorMapEncodeTiled failed (CUresult " + std::to_string(static_cast<int>(r)) + ")";
  return "";
}

}  // namespace mono
