#include "tests/conformance/node_tests.h"

#include <cstdlib>

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include <onnx/onnx_pb.h>

#include "compiler/frontend/onnx_loader.h"
#include "compiler/support/error.h"

namespace mono::conformance {
namespace {

bool read_model_proto(const std::string& path, onnx::ModelProto* m) {
  std::ifstream in(path, std::ios::binary);
  return in && m->ParseFromIstream(&in);
}

std::string model_reason(const onnx::ModelProto& m) {
  for (const auto& n : m.graph().node()) {
    OpKind k;
    if (!n.domain().empty() && n.domain() != "ai.onnx") return "op domain " + n.domain();
    if (!op_from_name(n.op_type().c_str(), &k)) return "op " + n.op_type();
  }
  auto check_type = [](const onnx::ValueInfoProto& v) {
    DType d;
    if (v.type().has_tensor_type() && !dtype_from_onnx(v.type().tensor_type().elem_type(), &d))
      return std::string("dtype ") + onnx_dtype_name(v.type().tensor_type().elem_type());
    if (!v.type().has_tensor_type()) return std::string("non-tensor value (sequence/optional)");
    return std::string();
  };
  for (const auto& v : m.graph().input())
    if (auto r = check_type(v); !r.empty()) return r;
  for (const auto& v : m.graph().output())
    if (auto r = check_type(v); !r.empty()) return r;
  for (const auto& n : m.graph().node())
    for (const auto& a : n.attribute())
      if (a.type() == onnx::AttributeProto::TENSOR) {
        DType d;
        if (!dtype_from_onnx(a.t().data_type(), &d)) return std::string("dtype ") + onnx_dtype_name(a.t().data_type());
      }
  return "";
}

}  // namespace

std::vector<std::string> list_dirs(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = opendir(path.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n == "." || n == "..") continue;
    struct stat st;
    if (stat((path + "/" + n).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::string node_tests_dir() {
  const char* dir = std::getenv("MONO_ONNX_NODE_TESTS");
  return dir && *dir ? dir : "/usr/share/libonnx-testdata/data/node";
}

std::vector<std::string> list_cases() { return list_dirs(node_tests_dir()); }

const std::map<std::string, std::string>& excluded() {
  static const std::map<std::string, std::string> cases = {
    {"test_batchnorm_epsilon_training_mode", "training mode (Mono compiles inference graphs; rejected clearly)"},
    {"test_batchnorm_example_training_mode", "training mode (Mono compiles inference graphs; rejected clearly)"},
    {"test_training_dropout", "training-mode Dropout is random (rejected clearly)"},
    {"test_training_dropout_default", "training-mode Dropout is random (rejected clearly)"},
    {"test_training_dropout_default_mask", "training-mode Dropout is random (rejected clearly)"},
    {"test_training_dropout_mask", "training-mode Dropout is random (rejected clearly)"},
    {"test_training_dropout_zero_ratio", "training-mode Dropout (rejected clearly)"},
    {"test_training_dropout_zero_ratio_mask", "training-mode Dropout (rejected clearly)"},
  };
  return cases;
}

std::string selection_reason(const std::string& name) {
  onnx::ModelProto m;
  if (!read_model_proto(node_tests_dir() + "/" + name + "/model.onnx", &m)) return "unreadable model";
  return model_reason(m);
}

LoadedCase load_case(const std::string& name, const std::string& set) {
  const std::string dir = node_tests_dir() + "/" + name;
  LoadedCase c;
  c.data = read_test_case(dir + "/" + set);
  LoadOptions options;
  LoadResult loaded;
  try {
    loaded = load_onnx(dir + "/model.onnx", options);
  } catch (const UserError& e) {
    // Inputs that decide shapes (axes, shape, indices...) are fixed at compile time: Mono
    // compiles static shapes. Retry with every integer input bound to its test value.
    if (std::string(e.what()).find("must be known at compile time") == std::string::npos) throw;
    for (size_t i = 0; i < c.data.inputs.size(); ++i)
      if (!is_float(c.data.inputs[i].dtype())) options.constant_inputs[c.data.input_names[i]] = c.data.inputs[i];
    try {
      loaded = load_onnx(dir + "/model.onnx", options);
    } catch (const UserError& e2) {
      // Shapes that depend on float inputs (Range over floats): fix every input.
      if (std::string(e2.what()).find("must be known at compile time") == std::string::npos) throw;
      for (size_t i = 0; i < c.data.inputs.size(); ++i) options.constant_inputs[c.data.input_names[i]] = c.data.inputs[i];
      loaded = load_onnx(dir + "/model.onnx", options);
    }
  }
  c.graph = std::move(loaded.graph);
  c.inputs = match_inputs(*c.graph, c.data);
  return c;
}

std::string allclose(const std::vector<Tensor>& got, const std::vector<Tensor>& want) {
  if (got.size() != want.size()) return str_cat(got.size(), " outputs, expected ", want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i].type() != want[i].type())
      return str_cat("output ", i, " is ", got[i].type().str(), ", expected ", want[i].type().str());
    for (int64_t k = 0; k < got[i].numel(); ++k) {
      const double a = got[i].as_double(k), b = want[i].as_double(k);
      if ((std::isnan(a) && std::isnan(b)) || a == b) continue;
      if (!(std::fabs(a - b) <= 1e-7 + 1e-3 * std::fabs(b)))
        return str_cat("output ", i, " element ", k, ": got ", a, ", expected ", b);
    }
  }
  return "";
}

}  // namespace mono::conformance
