// How the service's planning time grows with graph size (issue 22, finding 2): chain models of
// N blocks (MatMul with a 64x64 weight, Add, Relu, then Mul by a constant), written as ONNX,
// then loaded and planned as a submission is (prepare_model + plan_tuning), each step timed.
//   plan_scaling [BLOCKS...]   (default 250 500 1000 2000 4000: 1,000 to 16,000 nodes)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "compiler/tuning/jobs.h"
#include "tests/errors/model_builder.h"

namespace {

void add_init(onnx::GraphProto* g, const std::string& name, std::vector<int64_t> dims, float value) {
  auto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  for (int64_t i = 0; i < n; ++i) t->add_float_data(value * static_cast<float>(1 + i % 7) / 7.0f);
}

void add_node(onnx::GraphProto* g, const char* op, std::vector<std::string> in, const std::string& out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(out);
  for (auto& i : in) n->add_input(i);
  n->add_output(out);
}

std::string chain_model(int blocks) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("chain");
  mono::testing::set_tensor_type(g->add_input(), "x", onnx::TensorProto::FLOAT, {16, 64});
  std::string cur = "x";
  for (int b = 0; b < blocks; ++b) {
    const std::string p = "b" + std::to_string(b);
    add_init(g, p + ".w", {64, 64}, 0.01f);
    add_init(g, p + ".bias", {64}, 0.1f);
    add_init(g, p + ".scale", {64}, 0.5f);
    add_node(g, "MatMul", {cur, p + ".w"}, p + ".mm");
    add_node(g, "Add", {p + ".mm", p + ".bias"}, p + ".add");
    add_node(g, "Relu", {p + ".add"}, p + ".relu");
    add_node(g, "Mul", {p + ".relu", p + ".scale"}, p + ".out");
    cur = p + ".out";
  }
  mono::testing::set_tensor_type(g->add_output(), cur, onnx::TensorProto::FLOAT, {16, 64});
  const std::string path = "/tmp/mono_plan_scaling_" + std::to_string(blocks) + ".onnx";
  mono::testing::write_model_proto(m, path);
  return path;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {250, 500, 1000, 2000, 4000};
  std::printf("%8s %8s %10s %10s %12s\n", "nodes", "groups", "load s", "plan s", "plan us/node");
  for (int blocks : sizes) {
    const std::string path = chain_model(blocks);
    auto t0 = std::chrono::steady_clock::now();
    mono::tuning::PreparedModel model =
        mono::tuning::prepare_model(path, "chain", {}, mono::Precision::kF16);
    const double load = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    mono::tuning::TuningPlanOptions o;
    o.dry_run = true;
    o.task_gpu_kind = mono::tuning::dry_run_kind();
    mono::tuning::TuningPlan plan = mono::tuning::plan_tuning(model, o);
    const double planned = seconds_since(t0);
    std::printf("%8d %8zu %10.2f %10.2f %12.1f\n", 4 * blocks, plan.tasks.size(), load, planned, planned * 1e6 / (4 * blocks));
    std::fflush(stdout);
  }
  return 0;
}
