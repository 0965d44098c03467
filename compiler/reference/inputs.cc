#include "compiler/reference/inputs.h"

#include <random>

namespace mono {

std::vector<Tensor> synthetic_inputs(const std::vector<TensorType>& types) {
  std::mt19937 rng(0);
  std::normal_distribution<float> normal;
  std::vector<Tensor> inputs;
  for (const TensorType& type : types) {
    Tensor t(type);
    if (is_float(type.dtype)) {
      std::vector<float> v(t.numel());
      for (float& x : v) x = normal(rng);
      t = Tensor::from_floats(type.shape, v, type.dtype);
    }
    inputs.push_back(std::move(t));
  }
  return inputs;
}

std::vector<Tensor> synthetic_inputs(const Graph& g) {
  std::vector<TensorType> types;
  for (const Value* in : g.inputs) types.push_back(in->type);
  return synthetic_inputs(types);
}

}  // namespace mono
