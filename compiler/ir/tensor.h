// Typed static tensors. A Tensor is a view on shared bytes: weights read from a model stay
// where they were loaded (a protobuf string moved in, or a memory-mapped external-data
// file) and are copied only when written to.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "compiler/ir/dtype.h"

namespace mono {

using Shape = std::vector<int64_t>;

// Largest tensor Mono accepts (elements): guards allocations against corrupt models.
constexpr int64_t kMaxTensorElements = int64_t{1} << 33;

// Number of elements, or -1 if a dimension is negative or the product overflows
// kMaxTensorElements.
int64_t shape_numel(const Shape& shape);
std::string shape_str(const Shape& shape);  // "1x16x64"; "scalar" for rank 0

struct TensorType {
  DType dtype = DType::kF32;
  Shape shape;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const { return shape_numel(shape); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype); }
  std::string str() const;  // "f32[1,16,64]"
  bool operator==(const TensorType& o) const { return dtype == o.dtype && shape == o.shape; }
  bool operator!=(const TensorType& o) const { return !(*this == o); }
};

// Bytes a tensor points into. Implementations own a vector, a moved-in string or a mapping.
class Storage {
 public:
  virtual ~Storage() = default;
  virtual const uint8_t* data() const = 0;
  virtual size_t size() const = 0;
};

std::shared_ptr<Storage> make_storage(std::vector<uint8_t> bytes);
std::shared_ptr<Storage> make_storage(std::string bytes);  // moved: no copy

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(TensorType type);  // zero-filled, owned
  Tensor(DType dtype, Shape shape) : Tensor(TensorType{dtype, std::move(shape)}) {}

  // A view on `storage` at `offset`; copies only if the bytes are misaligned for the type.
  static Tensor view(TensorType type, std::shared_ptr<Storage> storage, size_t offset);

  const TensorType& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  int64_t rank() const { return type_.rank(); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * dtype_size(type_.dtype); }

  const void* raw() const { return bytes_; }
  void* mutable_raw();  // copies first if the bytes are shared or read-only

  template <typename T>
  const T* data() const { return static_cast<const T*>(raw()); }
  template <typename T>
  T* mutable_data() { return static_cast<T*>(mutable_raw()); }

  // Element i converted, whatever the dtype (for attributes, shapes, printing, tests).
  double as_double(int64_t i) const;
  int64_t as_int(int64_t i) const;
  // All elements of an integer tensor (i64 or i32) as int64.
  std::vector<int64_t> to_int_vector() const;
  std::vector<float> to_float_vector() const;

  // Same bytes seen with another shape of the same element count.
  Tensor reshaped(Shape shape) const;
  // A converted copy.
  Tensor cast(DType to) const;

  static Tensor from_floats(const Shape& shape, const std::vector<float>& values,
                            DType dtype = DType::kF32);
  static Tensor from_ints(const Shape& shape, const std::vector<int64_t>& values,
                          DType dtype = DType::kI64);
  static Tensor scalar_float(float v, DType dtype = DType::kF32);
  static Tensor scalar_int(int64_t v, DType dtype = DType::kI64);

  // True if every element equals v (after conversion to double).
  bool all_equal(double v) const;
  // Bitwise equality of type and contents.
  bool identical(const Tensor& o) const;

 private:
  TensorType type_;
  int64_t numel_ = 0;
  std::shared_ptr<Storage> storage_;
  uint8_t* bytes_ = nullptr;  // into storage_
  bool writable_ = false;
};

}  // namespace mono
