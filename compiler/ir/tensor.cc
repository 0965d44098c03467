#include "compiler/ir/tensor.h"

#include <cstring>
#include <sstream>

#include "compiler/support/error.h"

namespace mono {

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d == 0) return 0;
    if (n > kMaxTensorElements / d) {
      // Keep scanning: a zero dimension later makes the product 0.
      for (int64_t e : shape)
        if (e == 0) return 0;
      return -1;
    }
    n *= d;
  }
  return n;
}

std::string shape_str(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(shape[i]);
  }
  return s;
}

std::string TensorType::str() const {
  std::string s = dtype_name(dtype);
  s += '[';
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  s += ']';
  return s;
}

namespace {

class VectorStorage : public Storage {
 public:
  explicit VectorStorage(std::vector<uint8_t> b) : bytes_(std::move(b)) {}
  const uint8_t* data() const override { return bytes_.data(); }
  size_t size() const override { return bytes_.size(); }
  uint8_t* mutable_data() { return bytes_.data(); }

 private:
  std::vector<uint8_t> bytes_;
};

class StringStorage : public Storage {
 public:
  explicit StringStorage(std::string b) : bytes_(std::move(b)) {}
  const uint8_t* data() const override { return reinterpret_cast<const uint8_t*>(bytes_.data()); }
  size_t size() const override { return bytes_.size(); }

 private:
  std::string bytes_;
};

}  // namespace

std::shared_ptr<Storage> make_storage(std::vector<uint8_t> bytes) {
  return std::make_shared<VectorStorage>(std::move(bytes));
}
std::shared_ptr<Storage> make_storage(std::string bytes) {
  return std::make_shared<StringStorage>(std::move(bytes));
}

Tensor::Tensor(TensorType type) : type_(std::move(type)) {
  numel_ = type_.numel();
  if (numel_ < 0) user_error("tensor of type ", type_.str(), " is too large or malformed");
  auto storage = std::make_shared<VectorStorage>(std::vector<uint8_t>(nbytes() + 1, 0));
  bytes_ = storage->mutable_data();
  storage_ = std::move(storage);
  writable_ = true;
}

Tensor Tensor::view(TensorType type, std::shared_ptr<Storage> storage, size_t offset) {
  int64_t numel = type.numel();
  if (numel < 0) user_error("tensor of type ", type.str(), " is too large or malformed");
  size_t need = static_cast<size_t>(numel) * dtype_size(type.dtype);
  MONO_CHECK(offset <= storage->size() && need <= storage->size() - offset, "view out of range");
  const uint8_t* p = storage->data() + offset;
  if (reinterpret_cast<uintptr_t>(p) % dtype_size(type.dtype) != 0) {
    Tensor t(type);
    std::memcpy(t.bytes_, p, need);
    return t;
  }
  Tensor t;
  t.type_ = std::move(type);
  t.numel_ = numel;
  t.storage_ = std::move(storage);
  t.bytes_ = const_cast<uint8_t*>(p);
  t.writable_ = false;
  return t;
}

void* Tensor::mutable_raw() {
  if (!writable_ || storage_.use_count() > 1) {
    Tensor copy(type_);
    if (numel_ > 0) std::memcpy(copy.bytes_, bytes_, nbytes());
    *this = std::move(copy);
  }
  return bytes_;
}

double Tensor::as_double(int64_t i) const {
  switch (dtype()) {
    case DType::kF32: return data<float>()[i];
    case DType::kF16: return half_to_float(data<Half>()[i]);
    case DType::kI64: return static_cast<double>(data<int64_t>()[i]);
    case DType::kI32: return data<int32_t>()[i];
    case DType::kBool: return data<uint8_t>()[i] ? 1.0 : 0.0;
  }
  return 0;
}

int64_t Tensor::as_int(int64_t i) const {
  switch (dtype()) {
    case DType::kI64: return data<int64_t>()[i];
    case DType::kI32: return data<int32_t>()[i];
    case DType::kBool: return data<uint8_t>()[i] ? 1 : 0;
    default: return static_cast<int64_t>(as_double(i));
  }
}

std::vector<int64_t> Tensor::to_int_vector() const {
  std::vector<int64_t> v(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) v[i] = as_int(i);
  return v;
}

std::vector<float> Tensor::to_float_vector() const {
  std::vector<float> v(static_cast<size_t>(numel_));
  for (int64_t i = 0; i < numel_; ++i) v[i] = static_cast<float>(as_double(i));
  return v;
}

Tensor Tensor::reshaped(Shape shape) const {
  MONO_CHECK(shape_numel(shape) == numel_, "reshape changes element count");
  Tensor t = *this;
  t.type_.shape = std::move(shape);
  return t;
}

Tensor Tensor::cast(DType to) const {
  Tensor out(TensorType{to, shape()});
  if (to == dtype()) {
    if (numel_ > 0) std::memcpy(out.bytes_, bytes_, nbytes());
    return out;
  }
  if (dtype() == DType::kF32 && to == DType::kF16) {  // fp16 weights: no per-element dispatch
    floats_to_halves(data<float>(), out.mutable_data<Half>(), numel_);
    return out;
  }
  for (int64_t i = 0; i < numel_; ++i) {
    switch (to) {
      case DType::kF32: out.mutable_data<float>()[i] = static_cast<float>(as_double(i)); break;
      case DType::kF16: out.mutable_data<Half>()[i] = float_to_half(static_cast<float>(as_double(i))); break;
      case DType::kI64: out.mutable_data<int64_t>()[i] = as_int(i); break;
      case DType::kI32: out.mutable_data<int32_t>()[i] = static_cast<int32_t>(as_int(i)); break;
      case DType::kBool: out.mutable_data<uint8_t>()[i] = as_double(i) != 0.0; break;
    }
  }
  return out;
}

Tensor Tensor::from_floats(const Shape& shape, const std::vector<float>& values, DType dtype) {
  Tensor t(TensorType{DType::kF32, shape});
  MONO_CHECK(static_cast<int64_t>(values.size()) == t.numel(), "value count");
  if (!values.empty()) std::memcpy(t.bytes_, values.data(), values.size() * 4);
  return dtype == DType::kF32 ? t : t.cast(dtype);
}

Tensor Tensor::from_ints(const Shape& shape, const std::vector<int64_t>& values, DType dtype) {
  Tensor t(TensorType{DType::kI64, shape});
  MONO_CHECK(static_cast<int64_t>(values.size()) == t.numel(), "value count");
  if (!values.empty()) std::memcpy(t.bytes_, values.data(), values.size() * 8);
  return dtype == DType::kI64 ? t : t.cast(dtype);
}

Tensor Tensor::scalar_float(float v, DType dtype) { return from_floats({}, {v}, dtype); }
Tensor Tensor::scalar_int(int64_t v, DType dtype) { return from_ints({}, {v}, dtype); }

bool Tensor::all_equal(double v) const {
  for (int64_t i = 0; i < numel_; ++i)
    if (as_double(i) != v) return false;
  return true;
}

bool Tensor::identical(const Tensor& o) const {
  return type_ == o.type_ && (numel_ == 0 || std::memcmp(bytes_, o.bytes_, nbytes()) == 0);
}

}  // namespace mono
