# NVRTC 13's own cache on the GPU machine: a kernel built twice (two empty Mono caches)
# reports its registers both times with the cache off (the default since 2026-11-25), and -1 the
# second time with it on (CUDA_CACHE_DISABLE=0). Run with the bundle: bash bench/nvcache_check.sh
source .gpu/env.sh
m=tests/data/models/tiny-vit-opset20/model.onnx
mono-compile $m --dtype fp16 --set inline=off --emit fragment > /tmp/f.json
for v in unset unset 0 0; do
  if [ $v = unset ]; then env -u CUDA_CACHE_DISABLE build_time /tmp/f.json --cache /tmp/c_$RANDOM | tail -1 | sed "s/^/default (NVRTC cache off): /"
  else CUDA_CACHE_DISABLE=0 build_time /tmp/f.json --cache /tmp/c_$RANDOM | tail -1 | sed "s/^/CUDA_CACHE_DISABLE=0: /"; fi
done
ls ~/.nv/ComputeCache 2>&1 | head -3
