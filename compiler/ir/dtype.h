// Element types of tensors in the IR, and float16 conversion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
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
// Round to nearest even, overflow to inf, NaN kept (quiet). Inline: weight packing converts
// ~100 M values a model, element by element where a transposed weight is tiled.
inline Half float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  uint32_t abs = x & 0x7fffffffu;
  Half h;
  if (abs >= 0x7f800000u) {  // inf or NaN
    h.bits = sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u);
    return h;
  }
  if (abs >= 0x477ff000u) {  // rounds to >= 65520: overflow to inf
    h.bits = sign | 0x7c00u;
    return h;
  }
  if (abs < 0x38800000u) {  // below the smallest normal half (2^-14): subnormal or zero
    if (abs < 0x33000000u) {  // below half of the smallest subnormal (2^-25): zero
      h.bits = sign;
      return h;
    }
    uint32_t exp = abs >> 23;
    uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126 - exp;  // 14 + (127 - exp) - 1 ... aligns to 2^-24 units
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (q & 1u))) ++q;
    h.bits = sign | static_cast<uint16_t>(q);
    return h;
  }
  // Normal: rebias and round the 13 dropped mantissa bits to nearest even.
  uint32_t v = abs - 0x38000000u;  // exponent 127 -> 15
  uint32_t q = v >> 13;
  uint32_t rem = v & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (q & 1u))) ++q;
  h.bits = sign | static_cast<uint16_t>(q);
  return h;
}

// float_to_half over n values.
void floats_to_halves(const float* src, Half* dst, int64_t n);

}  // namespace mono
