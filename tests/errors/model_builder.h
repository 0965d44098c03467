// Writes small ONNX models (and damaged copies of real ones) for the error and fuzz tests.
#pragma once

#include <fstream>
#include <string>

#include <onnx/onnx_pb.h>

namespace mono::testing {

inline onnx::ModelProto read_model_proto(const std::string& path) {
  onnx::ModelProto m;
  std::ifstream in(path, std::ios::binary);
  if (!in || !m.ParseFromIstream(&in)) throw std::runtime_error("cannot read " + path);
  return m;
}

inline void write_model_proto(const onnx::ModelProto& m, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out || !m.SerializeToOstream(&out)) throw std::runtime_error("cannot write " + path);
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void set_tensor_type(onnx::ValueInfoProto* v, const std::string& name, int elem,
                            std::initializer_list<int64_t> dims) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

// A model y = Relu(x) over float[2,3] at opset 17; tests edit it.
inline onnx::ModelProto relu_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("relu");
  set_tensor_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {2, 3});
  set_tensor_type(g->add_output(), "y", onnx::TensorProto::FLOAT, {2, 3});
  auto* n = g->add_node();
  n->set_name("relu_0");
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  return m;
}

}  // namespace mono::testing
