#include "compiler/frontend/tensor_proto.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <onnx/onnx_pb.h>

#include "compiler/support/error.h"

namespace mono {
namespace {

class MappedFile : public Storage {
 public:
  MappedFile(void* p, size_t n) : p_(p), n_(n) {}
  ~MappedFile() override {
    if (p_ && n_) munmap(p_, n_);
  }
  const uint8_t* data() const override { return static_cast<const uint8_t*>(p_); }
  size_t size() const override { return n_; }

 private:
  void* p_;
  size_t n_;
};

// An external-data location must stay inside the model's folder.
bool location_is_safe(const std::string& loc) {
  if (loc.empty() || loc[0] == '/' || loc.find('\0') != std::string::npos) return false;
  size_t start = 0;
  while (start <= loc.size()) {
    size_t end = loc.find('/', start);
    if (end == std::string::npos) end = loc.size();
    if (loc.compare(start, end - start, "..") == 0 && end - start == 2) return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

std::shared_ptr<Storage> ExternalDataFiles::open(const std::string& location,
                                                 const std::string& tensor_name) {
  if (!location_is_safe(location))
    user_error(tensor_name, ": external data location '", location,
               "' must be a relative path inside the model's folder");
  auto it = files_.find(location);
  if (it != files_.end()) return it->second;
  std::string path = model_dir_.empty() ? location : model_dir_ + "/" + location;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) user_error(tensor_name, ": cannot open external data file '", path, "': ", std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    user_error(tensor_name, ": external data '", path, "' is not a regular file");
  }
  size_t size = static_cast<size_t>(st.st_size);
  void* p = nullptr;
  if (size > 0) {
    p = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      ::close(fd);
      user_error(tensor_name, ": cannot map external data file '", path, "': ", std::strerror(errno));
    }
  }
  ::close(fd);
  auto storage = std::make_shared<MappedFile>(p, size);
  files_[location] = storage;
  return storage;
}

static Tensor external_tensor(const onnx::TensorProto& proto, const TensorType& type,
                              const std::string& what, ExternalDataFiles* external) {
  if (!external) user_error(what, ": external data is not allowed here");
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : proto.external_data()) {
    const std::string& key = kv.key();
    auto number = [&](const char* field) {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(kv.value().c_str(), &end, 10);
      if (kv.value().empty() || *end || errno || v < 0)
        user_error(what, ": external data ", field, " '", kv.value(), "' is not a valid number");
      return static_cast<int64_t>(v);
    };
    if (key == "location") location = kv.value();
    else if (key == "offset") offset = number("offset");
    else if (key == "length") length = number("length");
  }
  if (location.empty()) user_error(what, ": external data has no location");
  std::shared_ptr<Storage> file = external->open(location, what);
  const int64_t need = static_cast<int64_t>(type.nbytes());
  if (length >= 0 && length != need)
    user_error(what, ": external data length ", length, " does not match ", type.str(), " (", need, " bytes)");
  if (static_cast<uint64_t>(offset) > file->size() ||
      static_cast<uint64_t>(need) > file->size() - static_cast<uint64_t>(offset))
    user_error(what, ": external data '", location, "' is too short (", file->size(),
               " bytes) for ", need, " bytes at offset ", offset);
  return Tensor::view(type, std::move(file), static_cast<size_t>(offset));
}

Tensor tensor_from_proto(onnx::TensorProto* proto, const std::string& what,
                         ExternalDataFiles* external) {
  TensorType type;
  if (!dtype_from_onnx(proto->data_type(), &type.dtype))
    user_error(what, ": element type ", onnx_dtype_name(proto->data_type()), " is not supported");
  for (int64_t d : proto->dims()) {
    if (d < 0) user_error(what, ": negative dimension ", d);
    type.shape.push_back(d);
  }
  const int64_t n = type.numel();
  if (n < 0) user_error(what, ": shape ", type.str(), " is too large");
  if (proto->has_segment()) user_error(what, ": segmented tensors are not supported");
  if (proto->data_location() == onnx::TensorProto::EXTERNAL)
    return external_tensor(*proto, type, what, external);

  const size_t nbytes = type.nbytes();
  if (proto->has_raw_data()) {
    if (proto->raw_data().size() != nbytes)
      user_error(what, ": raw data has ", proto->raw_data().size(), " bytes; ", type.str(), " needs ", nbytes);
    std::string bytes;
    bytes.swap(*proto->mutable_raw_data());
    return Tensor::view(type, make_storage(std::move(bytes)), 0);
  }
  auto mismatch = [&](size_t got) {
    user_error(what, ": holds ", got, " values; ", type.str(), " needs ", n);
  };
  Tensor t(type);
  switch (type.dtype) {
    case DType::kF32:
      if (proto->float_data_size() != n) mismatch(proto->float_data_size());
      if (n) std::memcpy(t.mutable_raw(), proto->float_data().data(), nbytes);
      break;
    case DType::kI64:
      if (proto->int64_data_size() != n) mismatch(proto->int64_data_size());
      if (n) std::memcpy(t.mutable_raw(), proto->int64_data().data(), nbytes);
      break;
    case DType::kI32:
      if (proto->int32_data_size() != n) mismatch(proto->int32_data_size());
      if (n) std::memcpy(t.mutable_raw(), proto->int32_data().data(), nbytes);
      break;
    case DType::kF16:  // bits in int32_data
      if (proto->int32_data_size() != n) mismatch(proto->int32_data_size());
      for (int64_t i = 0; i < n; ++i) t.mutable_data<Half>()[i].bits = static_cast<uint16_t>(proto->int32_data(i));
      break;
    case DType::kBool:
      if (proto->int32_data_size() != n) mismatch(proto->int32_data_size());
      for (int64_t i = 0; i < n; ++i) t.mutable_data<uint8_t>()[i] = proto->int32_data(i) != 0;
      break;
  }
  return t;
}

void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* proto) {
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(dtype_to_onnx(t.dtype()));
  for (int64_t d : t.shape()) proto->add_dims(d);
  proto->set_raw_data(t.raw(), t.nbytes());
}

}  // namespace mono
