#include "compiler/ir/dtype.h"

#include <cstring>

#include "compiler/support/error.h"

namespace mono {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kF32: return 4;
    case DType::kF16: return 2;
    case DType::kI64: return 8;
    case DType::kI32: return 4;
    case DType::kBool: return 1;
  }
  MONO_CHECK(false, "bad dtype");
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kI64: return "i64";
    case DType::kI32: return "i32";
    case DType::kBool: return "bool";
  }
  return "?";
}

bool dtype_from_name(const std::string& name, DType* out) {
  static const DType all[] = {DType::kF32, DType::kF16, DType::kI64, DType::kI32, DType::kBool};
  for (DType t : all) {
    if (name == dtype_name(t)) {
      *out = t;
      return true;
    }
  }
  return false;
}

bool is_float(DType t) { return t == DType::kF32 || t == DType::kF16; }
bool is_int(DType t) { return t == DType::kI64 || t == DType::kI32; }

// TensorProto.DataType numbers from onnx.proto.
enum OnnxType { FLOAT = 1, UINT8 = 2, INT8 = 3, UINT16 = 4, INT16 = 5, INT32 = 6, INT64 = 7,
                STRING = 8, BOOL = 9, FLOAT16 = 10, DOUBLE = 11, UINT32 = 12, UINT64 = 13,
                COMPLEX64 = 14, COMPLEX128 = 15, BFLOAT16 = 16 };

bool dtype_from_onnx(int onnx_type, DType* out) {
  switch (onnx_type) {
    case FLOAT: *out = DType::kF32; return true;
    case FLOAT16: *out = DType::kF16; return true;
    case INT64: *out = DType::kI64; return true;
    case INT32: *out = DType::kI32; return true;
    case BOOL: *out = DType::kBool; return true;
    default: return false;
  }
}

int dtype_to_onnx(DType t) {
  switch (t) {
    case DType::kF32: return FLOAT;
    case DType::kF16: return FLOAT16;
    case DType::kI64: return INT64;
    case DType::kI32: return INT32;
    case DType::kBool: return BOOL;
  }
  return 0;
}

const char* onnx_dtype_name(int onnx_type) {
  switch (onnx_type) {
    case FLOAT: return "FLOAT";
    case UINT8: return "UINT8";
    case INT8: return "INT8";
    case UINT16: return "UINT16";
    case INT16: return "INT16";
    case INT32: return "INT32";
    case INT64: return "INT64";
    case STRING: return "STRING";
    case BOOL: return "BOOL";
    case FLOAT16: return "FLOAT16";
    case DOUBLE: return "DOUBLE";
    case UINT32: return "UINT32";
    case UINT64: return "UINT64";
    case COMPLEX64: return "COMPLEX64";
    case COMPLEX128: return "COMPLEX128";
    case BFLOAT16: return "BFLOAT16";
    default: return "UNDEFINED";
  }
}

float half_to_float(Half h) {
  uint32_t sign = (h.bits & 0x8000u) << 16;
  uint32_t exp = (h.bits >> 10) & 0x1f;
  uint32_t mant = h.bits & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf or NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (mant << 13);  // normal: rebias 15 -> 127
  } else if (mant == 0) {
    bits = sign;  // signed zero
  } else {
    // Subnormal half: normalise into a float.
    int shift = 0;
    while ((mant & 0x400u) == 0) {
      mant <<= 1;
      ++shift;
    }
    mant &= 0x3ff;
    bits = sign | (static_cast<uint32_t>(113 - shift) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}


void floats_to_halves(const float* src, Half* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = float_to_half(src[i]);
}

}  // namespace mono
