// Element types of tensors in the IR, and float16 conversion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mono {

enum class DType : uint8_t {
  kF32,
  kF16,
  kI64,
  kI32,
  kBool,
};

size_t dtype_size(DType t);
const char* dtype_name(DType t);  // "f32", "f16", "i64", "i32", "bool": the IR spelling
bool dtype_from_name(const std::string& name, DType* out);
bool is_float(DType t);
bool is_int(DType t);

// ONNX TensorProto.DataType number <-> DType. Returns false for types Mono does not support.
bool dtype_from_onnx(int onnx_type, DType* out);
int dtype_to_onnx(DType t);
const char* onnx_dtype_name(int onnx_type);  // "FLOAT", "DOUBLE", ... for error messages

// IEEE binary16 stored as its bits. Arithmetic happens in float.
struct Half {
  uint16_t bits = 0;
};
float half_to_float(Half h);
Half float_to_half(float f);  // round to nearest even, overflow to inf, NaN kept

}  // namespace mono
