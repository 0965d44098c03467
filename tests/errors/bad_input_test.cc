// Every user-facing error of the front end and the tools: one clear line on stderr naming
// what is wrong, and exit code 2 (never a crash or a hang). The tools are run as processes.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "tests/errors/model_builder.h"

namespace mono::testing {
namespace {

namespace fs = std::filesystem;

const std::string kBin = std::string(MONO_BINARY_DIR) + "/client/";
const std::string kModels = std::string(MONO_SOURCE_DIR) + "/tests/data/models/";

struct Outcome {
  int exit_code = -1;
  std::string err;
};

// Runs a shell command with stderr captured; stdout is discarded.
Outcome run(const std::string& cmd) {
  const std::string err_file = fs::temp_directory_path() / ("mono_err_" + std::to_string(::getpid()));
  int status = std::system((cmd + " >/dev/null 2>" + err_file).c_str());
  Outcome o;
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.err = read_bytes(err_file);
  fs::remove(err_file);
  return o;
}

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mono_bad_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) { return (fs::path(dir_) / name).string(); }

  // Expects `tool args` to fail with exit 2 and exactly one stderr line containing every
  // fragment.
  void expect_one_line_error(const std::string& tool, const std::string& args,
                             std::initializer_list<const char*> fragments) {
    Outcome o = run(kBin + tool + " " + args);
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "expected one line, got:\n" << o.err;
    for (const char* f : fragments) EXPECT_NE(o.err.find(f), std::string::npos) << "missing '" << f << "' in: " << o.err;
  }

  std::string dir_;
};

TEST_F(BadInput, MissingFile) {
  expect_one_line_error("mono-run", path("nope.onnx") + " --cpu", {"cannot open", "nope.onnx"});
}

TEST_F(BadInput, NotOnnx) {
  write_bytes(path("text.onnx"), "this is not a model, just some text\n");
  expect_one_line_error("mono-compile", path("text.onnx"), {"text.onnx", "not"});
  write_bytes(path("empty.onnx"), "");
  expect_one_line_error("mono-compile", path("empty.onnx"), {"empty.onnx", "not an ONNX model"});
}

TEST_F(BadInput, TruncatedFile) {
  std::string bytes = read_bytes(kModels + "tiny-bert-opset20/model.onnx");
  write_bytes(path("cut.onnx"), bytes.substr(0, bytes.size() / 2));
  expect_one_line_error("mono-run", path("cut.onnx") + " --cpu", {"cut.onnx"});
}

TEST_F(BadInput, UnsupportedOpNamesOpNodeAndOpset) {
  onnx::ModelProto m = relu_model();
  m.mutable_graph()->mutable_node(0)->set_op_type("FancyOp");
  write_model_proto(m, path("fancy.onnx"));
  expect_one_line_error("mono-compile", path("fancy.onnx"), {"unsupported op 'FancyOp'", "relu_0", "opset 17"});
}

TEST_F(BadInput, UnsupportedAttribute) {
  onnx::ModelProto m = relu_model();
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("alpha");
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(0.1f);
  write_model_proto(m, path("attr.onnx"));
  expect_one_line_error("mono-compile", path("attr.onnx"), {"unsupported attribute 'alpha'", "relu_0"});
}

// Attributes named mono.* are set by Mono's own passes (channels_last's mono.channels_last on
// Conv); a model cannot set them, on any op.
TEST_F(BadInput, MonosOwnAttribute) {
  onnx::ModelProto m = relu_model();
  auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
  a->set_name("mono.channels_last");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(1);
  write_model_proto(m, path("mono_attr.onnx"));
  expect_one_line_error("mono-compile", path("mono_attr.onnx"), {"attribute 'mono.channels_last' is Mono's own", "relu_0"});
}

TEST_F(BadInput, MissingExternalDataFile) {
  onnx::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  g->mutable_node(0)->set_op_type("Add");
  g->mutable_node(0)->add_input("w");
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value("model.onnx.data");
  write_model_proto(m, path("ext.onnx"));
  expect_one_line_error("mono-compile", path("ext.onnx"), {"initializer 'w'", "model.onnx.data", "cannot open"});
  // A location outside the model's folder is refused, not followed.
  kv->set_value("../../etc/passwd");
  write_model_proto(m, path("escape.onnx"));
  expect_one_line_error("mono-compile", path("escape.onnx"), {"initializer 'w'", "inside the model's folder"});
  // A data file too short for the tensor.
  kv->set_value("short.data");
  write_bytes(path("short.data"), "abcd");
  write_model_proto(m, path("short.onnx"));
  expect_one_line_error("mono-compile", path("short.onnx"), {"initializer 'w'", "too short"});
}

TEST_F(BadInput, Cycle) {
  onnx::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  // relu_0 reads b; neg_1 reads relu_0's output y and writes b.
  g->mutable_node(0)->set_input(0, "b");
  auto* n = g->add_node();
  n->set_name("neg_1");
  n->set_op_type("Neg");
  n->add_input("y");
  n->add_output("b");
  write_model_proto(m, path("cycle.onnx"));
  expect_one_line_error("mono-compile", path("cycle.onnx"), {"cycle"});
}

// A graph over the node limit is refused in one line before any work (issue 22, finding 2).
TEST_F(BadInput, TooManyNodes) {
  onnx::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  std::string cur = g->node(0).output(0);
  for (int i = 0; i < 200000; ++i) {
    auto* n = g->add_node();
    n->set_op_type("Relu");
    n->add_input(cur);
    cur = "r" + std::to_string(i);
    n->add_output(cur);
  }
  g->mutable_output(0)->set_name(cur);
  write_model_proto(m, path("huge.onnx"));
  expect_one_line_error("mono-compile", path("huge.onnx"), {"the graph has 200001 nodes; Mono compiles at most 200000"});
}

TEST_F(BadInput, InconsistentShapes) {
  // Declared output shape disagrees with what the graph computes.
  onnx::ModelProto m = relu_model();
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(4);
  write_model_proto(m, path("declared.onnx"));
  expect_one_line_error("mono-compile", path("declared.onnx"), {"inconsistent shapes", "'y'", "f32[2,3]"});
  // Operands that cannot be combined.
  onnx::ModelProto mm = relu_model();
  auto* g = mm.mutable_graph();
  set_tensor_type(g->add_input(), "z", onnx::TensorProto::FLOAT, {4, 5});
  g->mutable_node(0)->set_op_type("MatMul");
  g->mutable_node(0)->set_name("matmul_0");
  g->mutable_node(0)->add_input("z");
  write_model_proto(mm, path("matmul.onnx"));
  expect_one_line_error("mono-compile", path("matmul.onnx"), {"matmul_0", "MatMul", "2x3", "4x5"});
}

TEST_F(BadInput, UnboundDynamicDimension) {
  onnx::ModelProto m = relu_model();
  auto* dim = m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1);
  dim->set_dim_param("seq");
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("seq");
  write_model_proto(m, path("dyn.onnx"));
  expect_one_line_error("mono-compile", path("dyn.onnx"), {"input 'x'", "'seq'", "--shape x="});
  // Bound, it compiles.
  Outcome ok = run(kBin + "mono-compile " + path("dyn.onnx") + " --shape x=2x7");
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  // A dynamic batch defaults to 1 with a note.
  dim->set_dim_value(3);
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_value(3);
  m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  m.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("batch");
  write_model_proto(m, path("batch.onnx"));
  Outcome batch = run(kBin + "mono-compile " + path("batch.onnx"));
  EXPECT_EQ(batch.exit_code, 0) << batch.err;
  EXPECT_NE(batch.err.find("dynamic batch dimension 'batch' set to 1"), std::string::npos) << batch.err;
}

TEST_F(BadInput, BadFlags) {
  const std::string model = kModels + "tiny-resnet-opset20/model.onnx";
  expect_one_line_error("mono-run", model + " --shape x", {"--shape", "NAME=DIMS"});
  expect_one_line_error("mono-run", model + " --shape nosuch=1x3x32x32", {"'nosuch'", "not an input"});
  expect_one_line_error("mono-compile", model + " --emit llvm", {"--emit llvm"});
  // No GPU on this machine (CI): one clear line, not a crash. (On a GPU machine it runs.)
  Outcome gpu = run(kBin + "mono-run " + model + " --gpu");
  if (gpu.exit_code != 0) {
    EXPECT_EQ(gpu.exit_code, 2) << gpu.err;
    EXPECT_EQ(std::count(gpu.err.begin(), gpu.err.end(), '\n'), 1) << gpu.err;
    EXPECT_NE(gpu.err.find("--gpu"), std::string::npos) << gpu.err;
  }
  expect_one_line_error("mono-run", model + " --test-data " + path("none"), {"test data", "does not exist"});
  expect_one_line_error("mono-run", model + " --bogus", {"unknown flag '--bogus'"});
  expect_one_line_error("mono-compile", "", {"no model given"});
  expect_one_line_error("mono-compile", model + " --dtype fp8", {"--dtype fp8", "fp32|fp16"});
  // Settings: one flag, one table (compiler/codegen/settings.h).
  expect_one_line_error("mono-compile", model + " --set threads=100", {"--set threads=100", "a multiple of 32"});
  expect_one_line_error("mono-compile", model + " --set nosuch=1", {"no setting named 'nosuch'", "inline"});
  expect_one_line_error("mono-compile", model + " --set inline", {"--set inline", "NAME=VALUE"});
  expect_one_line_error("mono-run", model + " --no-tensor-a", {"unknown flag '--no-tensor-a'"});
}

TEST_F(BadInput, MismatchExitsOne) {
  // Wrong expected output: the run succeeds but the comparison fails with exit code 1.
  const std::string m = kModels + "tiny-resnet-opset20";
  fs::create_directories(path("td"));
  fs::copy_file(m + "/test_data_set_0/input_0.pb", path("td/input_0.pb"));
  fs::copy_file(kModels + "tiny-mobilenet-opset20/test_data_set_0/output_0.pb", path("td/output_0.pb"));
  Outcome o = run(kBin + "mono-run " + m + "/model.onnx --test-data " + path("td"));
  EXPECT_EQ(o.exit_code, 1) << o.err;
  Outcome good = run(kBin + "mono-run " + m + "/model.onnx --test-data " + m + "/test_data_set_0");
  EXPECT_EQ(good.exit_code, 0) << good.err;
}

}  // namespace
}  // namespace mono::testing
