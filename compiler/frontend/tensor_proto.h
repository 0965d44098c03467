// onnx::TensorProto <-> Tensor. Private to the front end (the only place that sees protobuf).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "compiler/ir/tensor.h"

namespace onnx {
class TensorProto;
}

namespace mono {

// Memory-maps external-data files once per model and hands out views into them.
class ExternalDataFiles {
 public:
  explicit ExternalDataFiles(std::string model_dir) : model_dir_(std::move(model_dir)) {}
  // The mapping of `location` (relative to the model's folder). Throws UserError.
  std::shared_ptr<Storage> open(const std::string& location, const std::string& tensor_name);

 private:
  std::string model_dir_;
  std::map<std::string, std::shared_ptr<Storage>> files_;
};

// Converts a TensorProto; moves raw_data out of it (no copy). `what` names it in errors
// ("initializer 'x'"). `external` may be null when external data is not allowed.
Tensor tensor_from_proto(onnx::TensorProto* proto, const std::string& what,
                         ExternalDataFiles* external);
void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* proto);

}  // namespace mono
