// ---- buffers, by tensor: the arena (t_), packed constants (w_), the caller's (in_, out_) ----
#define in_input_ids ((const long long*)p.inputs[0])  // i64[1,16]
#define w_m_embeddings_word_embeddings_weight ((const half_t*)(p.weights + 0))  // f16[1000,64]
#define w_embedding_1 ((const half_t*)(p.weights + 128000))  // f16[1,16,64]
#define w_embedding_2 ((const half_t*)(p.weights + 130048))  // f16[1,16,64]
#define t_add_1 ((half_t*)(p.arena + 0))  // f16[1,16,64]
#define t_layer_norm ((half_t*)(p.arena + 2048))  // f16[1,16,64]
#define w_m_embeddings_LayerNorm_weight ((const half_t*)(p.weights + 132096))  // f16[64]
#define w_m_embeddings_LayerNorm_bias ((const half_t*)(p.weights + 132352))  // f16[64]
#define w_val_37_nk_tiles ((const half_t*)(p.weights + 132608))  // f16[64,64] packed nk@t32x64s
#define t_val_78 ((half_t*)(p.arena + 4096))  // f16[1,4,16,16]
#define w_val_45_nk_tiles ((const half_t*)(p.weights + 141056))  // f16[64,64] packed nk@t32x64s
#define t_val_80 ((half_t*)(p.arena + 8192))  // f16[1,4,16,16]
#define w_val_53_nk_tiles ((const half_t*)(p.weights + 149248))  // f16[64,64] packed nk@t32x64s
#define t_transpose_2 ((half_t*)(p.arena + 12288))  // f16[1,4,16,16]
#define t_transpose_3 ((half_t*)(p.arena + 6144))  // f16[1,16,4,16]
#define w_val_94_nk_tiles ((const half_t*)(p.weights + 157696))  // f16[64,64] packed nk@t32x64s
#define t_add_4 ((half_t*)(p.arena + 4096))  // f16[1,16,64]
#define t_layer_norm_1 ((half_t*)(p.arena + 0))  // f16[1,16,64]
#define w_val_98_nk_tiles ((const half_t*)(p.weights + 165888))  // f16[64,128] packed nk@t32x64s
#define t_gelu ((half_t*)(p.arena + 6144))  // f16[1,16,128]
#define w_val_100_nk_tiles ((const half_t*)(p.weights + 182272))  // f16[128,64] packed nk@t32x128s
#define t_add_5 ((half_t*)(p.arena + 2048))  // f16[1,16,64]
#define t_layer_norm_2 ((half_t*)(p.arena + 0))  // f16[1,16,64]
#define w_val_104_nk_tiles ((const half_t*)(p.weights + 198656))  // f16[64,64] packed nk@t32x64s
#define t_val_142 ((half_t*)(p.arena + 4096))  // f16[1,4,16,16]
#define w_val_112_nk_tiles ((const half_t*)(p.weights + 206848))  // f16[64,64] packed nk@t32x64s
#define t_val_144 ((half_t*)(p.arena + 8192))  // f16[1,4,16,16]
#define w_val_120_nk_tiles ((const half_t*)(p.weights + 215040))  // f16[64,64] packed nk@t32x64s
#define t_transpose_6 ((half_t*)(p.arena + 12288))  // f16[1,4,16,16]
#define t_transpose_7 ((half_t*)(p.arena + 6144))  // f16[1,16,4,16]
#define w_val_158_nk_tiles ((const half_t*)(p.weights + 223232))  // f16[64,64] packed nk@t32x64s
#define t_add_6 ((half_t*)(p.arena + 4096))  // f16[1,16,64]
#define t_layer_norm_3 ((half_t*)(p.arena + 0))  // f16[1,16,64]
#define w_val_162_nk_tiles ((const half_t*)(p.weights + 231424))  // f16[64,128] packed nk@t32x64s
#define t_gelu_1 ((half_t*)(p.arena + 6144))  // f16[1,16,128]
#define w_val_164_nk_tiles ((const half_t*)(p.weights + 247808))  // f16[128,64] packed nk@t32x128s
#define t_add_7 ((half_t*)(p.arena + 4096))  // f16[1,16,64]
#define out_layer_norm_4 ((half_t*)p.outputs[0])  // f16[1,16,64]

// Layer loop 0 (stages 1 to 14): per repeat, the offsets of its buffers (bytes; sync words) and its tensor maps
__constant__ long long mono_layers0[2][17] = {
  {0, 2048, 132608, 4096, 0, 141056, 8192, 149248, 12288, 6144, 157696, 4096, 0, 165888, 6144, 182272, 2048},
  {2048, 0, 198656, 4096, 2, 206848, 8192, 215040, 12288, 6144, 223232, 4096, 0, 231424, 6144, 247808, 4096}
};

extern "C" __global__ void __launch_bounds__(MONO_THREADS, 1) mono_main(const MonoParams p) {
  extern __shared__ __align__(1024) unsigned char smem[];  // 1024: TensorK's swizzled stages

  // ---- stage 0 ----
  // group 0: node_embedding (Gather) + node_add (Add) + node_add_1 (Add)
  for (int item = blockIdx.x; item < 4; item += gridDim.x) {
    g0_gather(item, in_input_ids, w_m_embeddings_word_embeddings_weight, w_embedding_1, w_embedding_2, t_add_1);
    __syncthreads();
  }
  grid_barrier(p.sync);

  // ---- stages 1 to 14: 2 repeats of 7 stages (a loop over layers; mono_layers0: what differs; the comments name the first repeat's groups) ----
#pragma unroll 1
  for (int layer = 0; layer < 2; ++layer) {
    // ---- stage 1 + 7 * layer ----
    // group 1: node_layer_norm (LayerNormalization)
    for (int item = blockIdx.x; item < 2; item += gridDim.x) {
      g1_layer_normalization(item, ((half_t*)(p.arena + mono_layers0[layer][0])), ((half_t*)(p.arena + mono_layers0[layer][1])), w_m_embeddings_LayerNorm_weight, w_m_embeddings_LayerNorm_bias);
      __syncthreads();
    }
    grid_barrier(p.sync);

    // ---- stage 2 + 7 * layer ----
    // group 2: node_MatMul_36 (MatMul) + node_transpose (Transpose) + node_Mul_76 (Mul)
    // group 3: node_MatMul_44 (MatMul) + node_Reshape_74.transpose.transpose (Transpose) + node_Mul_78 (Mul)
    // group 4: node_MatMul_52 (MatMul) + node_transpose_2 (Transpose)
    for (int item = blockIdx.x; item < 6; item += gridDim.x) {
      if (item < 2) g2_mat_mul(item, ((half_t*)(p.arena + mono_layers0[layer][1])), ((const half_t*)(p.weights + mono_layers0[layer][2])), G2Epilogue{((half_t*)(p.arena + mono_layers0[layer][1])), ((const half_t*)(p.weights + mono_layers0[layer][2])), ((half_t*)(p.arena + mono_layers0[layer][3])), 0}, (float*)nullptr, (unsigned int*)nullptr, &mono_tmaps[mono_layers0[layer][4]]);
      else if (item < 4) g3_mat_mul(item - 2, ((half_t*)(p.arena + mono_layers0[layer][1])), ((const half_t*)(p.weights + mono_layers0[layer][5])), G3Epilogue{((half_t*)(p.arena + mono_layers0[layer][1])), ((const half_t*)(p.weights + mono_layers0[layer][5])), ((half_t*)(p.arena + mono_layers0[layer][6])), 0}, (float*)nullptr, (unsigned int*)nullptr, &mono_tmaps[mono_layers0[layer][4]]);
      else g4_mat_mul(item - 4, ((half_t*)(p.arena + mono_layers0[layer][1])), ((const half_t*)(p.weights + mono_layers0[layer][7])), G4Epilogue{((half_t*)(p.arena + mono_layers0[layer][1])), ((const half_t*)(p.weights + mono_layers0[layer][7])), ((half_t*)(p.arena + mono_layers0[layer][8])), 0}, (float*)nullptr, (unsigned int*)nullptr, &mono_tmaps[mono_layers0[layer][4]]);
      __syncthreads();
    }
    grid_barrier(p.sync);

    // ---- stage 3 + 7 * layer ----
    // group 5: node_MatMul_82 (MatMul) + node_Softmax_84 (Softmax) + node_IsNaN_85 (IsNaN) + node_Where_86 (Where) + node_scaled_dot_product_attention (MatMul) + node_transpose_3 (Transpose)
    for (int item = blockIdx.x; item < 4; item += gridDim.x) {
      g5_mat_mul(item, ((half_t*)(p.arena + mono_layers0[layer][3])), ((half_t*)(p.arena + mono_layers0[layer][6])), ((half_t*)(p.arena + mono_layers0[layer][8])), ((half_t*)(p.arena + mono_layers0[layer][9])));
      __syncthreads();
    }
    grid_barrier(p.sync);

    // ---- stage 4 + 7 * layer ----
    // group 8: node_MatMul_93 (MatMul) + node_add_4 (Add)
    for (int item = blockIdx.x; item < 2; item += gridDim.x) {
      g8_mat_mul(item, ((half_t*)(p.arena + mono_layers0[layer][9])), ((const half_t*)(p.weights + mono_layers0[layer][10])), G8Epilogue{((half_t*)(p.arena + mono_layers0[layer][9])), ((const half_t*)(p.weights + mono_layers0[layer][10])), ((half_t*)(p.arena + mono_layers0[layer][11])), ((half_t*)(p.arena + mono_layers0[layer][1])), 0}, (float*)nullptr, (unsigned int*)nullptr, &mono_tmaps[1]);
      __syncthreads();
    }
    grid_barrier(p.sync);

    // ---- stage 5 + 7 * layer ----
    // group 9: node_layer_norm_1 (LayerNormalization)
    for (int item = blockIdx.x; item < 2; item += gridDim.x) {
      g1_layer_normalization(item, ((half_t*)(p.arena + mono_layers0[layer][11])), ((half_t*)(p.arena + mono_layers0[layer][12])), w_m_embeddings_LayerNorm_weight, w_m_embeddings_LayerNorm_bias);
      __syncthreads();
    }
    grid_barrier(p.sync);

    // ---- stage 6 + 7 * layer ----
    // group 10: node_MatMul_95 (MatMul) + node_gelu (Gelu)
    for (int item = blockIdx.x; item < 4; item += gridDim.x) {
      g10_mat_mul(item, ((half_t*)(p.arena + mono_layers0[layer][12])), ((const half_t*)(p.weights + mono_layers0[layer][13])), G10Epilogue{((half_t*)(p.arena + mono_layers0[layer][12])), ((const half_t*)(p.weights + mono_layers0[layer][13])), ((half_t*)(p.arena + mono_layers0[layer][14])), 0}, (float*)nullptr, (unsigned int*)nullptr, &mono_tmaps[2]);
      __syncthreads();
    }
    grid_barrier(p.sync);

    // ---- stage 7 + 7 * layer ----
    // group 11: node_MatMul_97 (MatMul) + node_add_5 (Add)
    for (int item = blockIdx.x; item < 2; item += gridDim.x) {
      g11_mat_mul(item, ((half_t*)(p.arena + mono_layers0[layer][14])), ((const half_t*)(p.weights + mono_layers0[layer][15])), G8Epilogue{((half_t*)(p.arena + mono_layers0[layer][14])), ((const half_t*)(p.weights + mono_layers0[layer][15])), ((half_t*)(p.arena + mono_layers0[layer][16])), ((half_t*)(p.arena + mono_layers0[layer][12])), 0}, (float*)nullptr, (unsigned int*)nullptr, &mono_tmaps[3]);
      __syncthreads();
    }
    grid_barrier(p.sync);
  }

  // ---- stage 15 ----
  // group 23: node_layer_norm_4 (LayerNormalization)
  for (int item = blockIdx.x; item < 2; item += gridDim.x) {
    g1_layer_normalization(item, t_add_7, out_layer_norm_4, w_m_embeddings_LayerNorm_weight, w_m_embeddings_LayerNorm_bias);
    __syncthreads();
  }
}
