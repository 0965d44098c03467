// ---- buffers, by tensor: the arena (t_), packed constants (w_), the caller's (in_, out_) ----
#define in_input ((const float*)p.inputs[0])  // f32[1,3,32,32]
#define t_stem_stem_0_Conv_nhwc_pad_y_nhwc ((float*)(p.arena + 81920))  // f32[1,32,32,8]
#define w_stem_stem_0_Conv_nhwc_weight ((const float*)(p.weights + 256))  // f32[16,3,3,8]
#define w_onnx_Conv_64 ((const float*)(p.weights + 4864))  // f32[16]
#define t_stem_stem_2_Relu_nhwc_y ((float*)(p.arena + 65536))  // f32[1,16,16,16]
#define t_stem_stem_3_MaxPool_nhwc_y ((float*)(p.arena + 49152))  // f32[1,8,8,16]
#define w_b1_b1_0_Conv_nhwc_weight ((const float*)(p.weights + 5120))  // f32[16,3,3,16]
#define t_b1_b1_2_Relu_nhwc_y ((float*)(p.arena + 57344))  // f32[1,8,8,16]
#define splitk_partials_g3 ((float*)(p.arena + 0))
#define splitk_counters_g3 (p.sync + 32)
#define w_b1_b1_3_Conv_nhwc_weight ((const float*)(p.weights + 14336))  // f32[16,3,3,16]
#define t_Relu_nhwc_y ((float*)(p.arena + 61440))  // f32[1,8,8,16]
#define splitk_partials_g4 ((float*)(p.arena + 0))
#define splitk_counters_g4 (p.sync + 32)
#define w_b2_b2_0_Conv_nhwc_weight ((const float*)(p.weights + 23552))  // f32[32,3,3,16]
#define w_onnx_Conv_73 ((const float*)(p.weights + 41984))  // f32[32]
#define t_b2_b2_2_Relu_nhwc_y ((float*)(p.arena + 51200))  // f32[1,4,4,32]
#define splitk_partials_g5 ((float*)(p.arena + 0))
#define splitk_counters_g5 (p.sync + 32)
#define w_down_down_0_Conv_nhwc_weight ((const float*)(p.weights + 79104))  // f32[32,1,1,16]
#define t_down_down_0_Conv_nhwc_y ((float*)(p.arena + 53248))  // f32[1,4,4,32]
#define w_b2_b2_3_Conv_nhwc_weight ((const float*)(p.weights + 42240))  // f32[32,3,3,32]
#define t_Relu_1_output_0_nchw ((float*)(p.arena + 55296))  // f32[1,32,4,4]
#define splitk_partials_g6 ((float*)(p.arena + 0))
#define splitk_counters_g6 (p.sync + 32)
#define t_GlobalAveragePool_output_0 ((float*)(p.arena + 49152))  // f32[1,32,1,1]
#define w_fc_weight ((const float*)(p.weights + 81152))  // f32[10,32]
#define w_fc_bias ((const float*)(p.weights + 82432))  // f32[10]
#define out_output ((float*)p.outputs[0])  // f32[1,10]

extern "C" __global__ void __launch_bounds__(MONO_THREADS, 1) mono_main(const MonoParams p) {
  extern __shared__ __align__(1024) unsigned char smem[];  // 1024: TensorK's swizzled stages

  // ---- stage 0 ----
  // group 0: /stem/stem.0/Conv.nhwc.pad (Pad) + /stem/stem.0/Conv.nhwc.pad.y.nhwc_t (Transpose)
  for (int item = blockIdx.x; item < 4; item += gridDim.x) {
    g0_pad(item, in_input, t_stem_stem_0_Conv_nhwc_pad_y_nhwc);
    __syncthreads();
  }
  grid_barrier(p.sync);

  // ---- stage 1 ----
  // group 1: /stem/stem.0/Conv.nhwc (Conv) + /stem/stem.2/Relu.nhwc (Relu)
  for (int item = blockIdx.x; item < 8; item += gridDim.x) {
    g1_conv(item, t_stem_stem_0_Conv_nhwc_pad_y_nhwc, w_stem_stem_0_Conv_nhwc_weight, G1Epilogue{t_stem_stem_0_Conv_nhwc_pad_y_nhwc, w_stem_stem_0_Conv_nhwc_weight, w_onnx_Conv_64, t_stem_stem_2_Relu_nhwc_y, 0}, (float*)nullptr, (unsigned int*)nullptr);
    __syncthreads();
  }
  grid_barrier(p.sync);

  // ---- stage 2 ----
  // group 2: /stem/stem.3/MaxPool.nhwc (MaxPool)
  for (int item = blockIdx.x; item < 1; item += gridDim.x) {
    g2_max_pool(item, t_stem_stem_2_Relu_nhwc_y, t_stem_stem_3_MaxPool_nhwc_y);
    __syncthreads();
  }
  grid_barrier(p.sync);

  // ---- stage 3 ----
  // group 3: /b1/b1.0/Conv.nhwc (Conv) + /b1/b1.2/Relu.nhwc (Relu)
  for (int item = blockIdx.x; item < 6; item += gridDim.x) {
    g3_conv(item, t_stem_stem_3_MaxPool_nhwc_y, w_b1_b1_0_Conv_nhwc_weight, G1Epilogue{t_stem_stem_3_MaxPool_nhwc_y, w_b1_b1_0_Conv_nhwc_weight, w_onnx_Conv_64, t_b1_b1_2_Relu_nhwc_y, 0}, splitk_partials_g3, splitk_counters_g3);
    __syncthreads();
  }
  grid_barrier(p.sync);

  // ---- stage 4 ----
  // group 4: /b1/b1.3/Conv.nhwc (Conv) + /Add.nhwc (Add) + /Relu.nhwc (Relu)
  for (int item = blockIdx.x; item < 6; item += gridDim.x) {
    g4_conv(item, t_b1_b1_2_Relu_nhwc_y, w_b1_b1_3_Conv_nhwc_weight, G4Epilogue{t_b1_b1_2_Relu_nhwc_y, w_b1_b1_3_Conv_nhwc_weight, w_onnx_Conv_64, t_Relu_nhwc_y, t_stem_stem_3_MaxPool_nhwc_y, 0}, splitk_partials_g4, splitk_counters_g4);
    __syncthreads();
  }
  grid_barrier(p.sync);

  // ---- stage 5 ----
  // group 5: /b2/b2.0/Conv.nhwc (Conv) + /b2/b2.2/Relu.nhwc (Relu)
  // group 7: /down/down.0/Conv.nhwc (Conv)
  for (int item = blockIdx.x; item < 4; item += gridDim.x) {
    if (item < 3) g5_conv(item, t_Relu_nhwc_y, w_b2_b2_0_Conv_nhwc_weight, G5Epilogue{t_Relu_nhwc_y, w_b2_b2_0_Conv_nhwc_weight, w_onnx_Conv_73, t_b2_b2_2_Relu_nhwc_y, 0}, splitk_partials_g5, splitk_counters_g5);
    else g7_conv(item - 3, t_Relu_nhwc_y, w_down_down_0_Conv_nhwc_weight, G7Epilogue{t_Relu_nhwc_y, w_down_down_0_Conv_nhwc_weight, w_onnx_Conv_73, t_down_down_0_Conv_nhwc_y, 0}, (float*)nullptr, (unsigned int*)nullptr);
    __syncthreads();
  }
  grid_barrier(p.sync);

  // ---- stage 6 ----
  // group 6: /b2/b2.3/Conv.nhwc (Conv) + /Add_1.nhwc (Add) + /Relu_1.nhwc (Relu) + /Relu_1.nchw (Transpose)
  for (int item = blockIdx.x; item < 6; item += gridDim.x) {
    g6_conv(item, t_b2_b2_2_Relu_nhwc_y, w_b2_b2_3_Conv_nhwc_weight, G6Epilogue{t_b2_b2_2_Relu_nhwc_y, w_b2_b2_3_Conv_nhwc_weight, w_onnx_Conv_73, t_Relu_1_output_0_nchw, t_down_down_0_Conv_nhwc_y, 0}, splitk_partials_g6, splitk_counters_g6);
    __syncthreads();
  }
  grid_barrier(p.sync);

  // ---- stage 7 ----
  // group 8: /GlobalAveragePool (GlobalAveragePool)
  for (int item = blockIdx.x; item < 4; item += gridDim.x) {
    g8_global_average_pool(item, t_Relu_1_output_0_nchw, t_GlobalAveragePool_output_0);
    __syncthreads();
  }
  grid_barrier(p.sync);

  // ---- stage 8 ----
  // group 9: /fc/Gemm (Gemm)
  for (int item = blockIdx.x; item < 1; item += gridDim.x) {
    g9_gemm(item, t_GlobalAveragePool_output_0, w_fc_weight, w_fc_bias, out_output);
    __syncthreads();
  }
}
