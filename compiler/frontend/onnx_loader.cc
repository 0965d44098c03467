#include "compiler/frontend/onnx_loader.h"

#include <climits>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/onnx_pb.h>

#include "compiler/frontend/tensor_proto.h"
#include "compiler/ops/infer.h"
#include "compiler/support/error.h"

namespace mono {

// ai.onnx opset versions whose semantics Mono follows. Attributes that only old opsets have
// (Add's `broadcast`, BatchNormalization's `is_test`...) are rejected by name, so an old
// model either means what Mono computes or gets a clear error.
constexpr int kMinOpset = 1;
constexpr int kMaxOpset = 21;

namespace {

constexpr int kMaxNodes = 200000;  // nodes in one graph (ONNX functions and subgraphs aside)

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) user_error("cannot open '", path, "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) user_error("cannot read '", path, "'");
  return ss.str();
}

template <typename Message>
bool parse_message(const std::string& bytes, Message* msg) {
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  coded.SetRecursionLimit(100);
  return msg->ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
}

std::string dirname_of(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
}

class Loader {
 public:
  Loader(const std::string& path, const LoadOptions& options)
      : path_(path), options_(options), external_(dirname_of(path)) {}

  LoadResult load() {
    std::string bytes = read_file(path_);
    if (bytes.size() > static_cast<size_t>(INT_MAX))
      fail("the model file is larger than 2 GiB; keep weights in external data");
    onnx::ModelProto model;
    if (!parse_message(bytes, &model)) fail("not a valid ONNX model (protobuf parse failed: truncated or not ONNX)");
    bytes.clear();
    bytes.shrink_to_fit();
    if (!model.has_graph() || model.ir_version() <= 0 || model.opset_import_size() == 0)
      fail("not an ONNX model (no graph, IR version or opset)");
    opset_ = find_opset(model);
    auto g = std::make_unique<Graph>();
    graph_ = g.get();
    onnx::GraphProto* gp = model.mutable_graph();
    g->name = gp->name().empty() ? "main" : gp->name();
    g->opset = opset_;
    for (const auto& f : model.functions()) functions_.insert(f.domain() + "::" + f.name());
    if (gp->sparse_initializer_size() > 0) fail("sparse initializers are not supported");
    // Compilation and planning are linear in the graph's size (bench/plan_scaling), but one
    // kernel of more nodes than this is not a model anyone runs: refuse before the work.
    if (gp->node_size() > kMaxNodes)
      fail("the graph has ", gp->node_size(), " nodes; Mono compiles at most ", kMaxNodes, " into one kernel");
    add_initializers(gp);
    add_inputs(*gp);
    add_nodes(gp);
    add_outputs(*gp);
    graph_->sort_topologically();
    infer_shapes(*graph_);
    check_declared_types(*gp);
    LoadResult result;
    result.graph = std::move(g);
    result.notes = std::move(notes_);
    return result;
  }

 private:
  template <typename... Args>
  [[noreturn]] void fail(Args&&... args) {
    user_error(path_, ": ", std::forward<Args>(args)...);
  }

  int find_opset(const onnx::ModelProto& model) {
    int version = -1;
    for (const auto& imp : model.opset_import()) {
      if (imp.domain().empty() || imp.domain() == "ai.onnx") version = static_cast<int>(imp.version());
    }
    if (version < 0) fail("the model imports no ai.onnx opset");
    if (version < kMinOpset || version > kMaxOpset)
      fail("opset ", version, " is not supported (Mono supports ai.onnx opsets ", kMinOpset, " to ", kMaxOpset, ")");
    return version;
  }

  void define(const std::string& name, Value* v, const char* what) {
    if (name.empty()) fail(what, " has an empty name");
    if (!values_.emplace(name, v).second) fail("value '", name, "' is defined twice (", what, ")");
  }

  void add_initializers(onnx::GraphProto* gp) {
    for (onnx::TensorProto& t : *gp->mutable_initializer()) {
      std::string what = str_cat("initializer '", t.name(), "'");
      Tensor tensor = tensor_from_proto(&t, str_cat(path_, ": ", what), &external_);
      define(t.name(), graph_->add_constant(t.name(), std::move(tensor)), "an initializer");
    }
  }

  TensorType declared_type(const onnx::ValueInfoProto& info, const char* what) {
    if (!info.type().has_tensor_type()) fail(what, " '", info.name(), "' is not a tensor");
    const auto& tt = info.type().tensor_type();
    TensorType type;
    if (!dtype_from_onnx(tt.elem_type(), &type.dtype))
      fail(what, " '", info.name(), "' has element type ", onnx_dtype_name(tt.elem_type()), ", which is not supported");
    return type;
  }

  void add_inputs(const onnx::GraphProto& gp) {
    for (const onnx::ValueInfoProto& in : gp.input()) {
      if (values_.count(in.name())) continue;  // an initializer listed as input (IR < 4)
      TensorType type = declared_type(in, "input");
      const auto& tt = in.type().tensor_type();
      auto bound = options_.input_shapes.find(in.name());
      if (!tt.has_shape() && bound == options_.input_shapes.end())
        fail("input '", in.name(), "' has no shape: bind it with --shape ", in.name(), "=DIMS");
      if (bound != options_.input_shapes.end()) {
        type.shape = bound->second;
        if (tt.has_shape() && tt.shape().dim_size() != static_cast<int>(type.shape.size()))
          fail("--shape ", in.name(), "=", shape_str(type.shape), " has rank ", type.shape.size(),
               "; the model's input has rank ", tt.shape().dim_size());
      }
      for (int i = 0; tt.has_shape() && i < tt.shape().dim_size(); ++i) {
        const auto& dim = tt.shape().dim(i);
        if (dim.has_dim_value()) {
          if (dim.dim_value() < 0) fail("input '", in.name(), "' has negative dimension ", dim.dim_value());
          if (bound == options_.input_shapes.end()) type.shape.push_back(dim.dim_value());
          else if (type.shape[i] != dim.dim_value())
            fail("--shape ", in.name(), "=", shape_str(type.shape), " contradicts the model's dimension ",
                 dim.dim_value(), " on axis ", i);
          continue;
        }
        if (bound != options_.input_shapes.end()) continue;
        std::string label = dim.has_dim_param() ? "'" + dim.dim_param() + "'" : "(unnamed)";
        if (i == 0 && options_.default_batch_to_one) {
          type.shape.push_back(1);
          notes_.push_back(str_cat("input '", in.name(), "': dynamic batch dimension ", label, " set to 1"));
          continue;
        }
        fail("input '", in.name(), "' has a dynamic dimension ", label, " on axis ", i,
             ": bind it with --shape ", in.name(), "=DIMS");
      }
      if (type.numel() < 0) fail("input '", in.name(), "' has an invalid shape ", type.str());
      auto fixed = options_.constant_inputs.find(in.name());
      if (fixed != options_.constant_inputs.end()) {
        if (fixed->second.type() != type)
          fail("the value given for input '", in.name(), "' is ", fixed->second.type().str(), "; it needs ", type.str());
        define(in.name(), graph_->add_constant(in.name(), fixed->second), "an input");
        continue;
      }
      Value* v = graph_->add_value(in.name(), type);
      define(in.name(), v, "an input");
      graph_->inputs.push_back(v);
    }
    for (const auto& [name, shape] : options_.input_shapes) {
      bool found = false;
      for (const Value* v : graph_->inputs) found |= v->name == name;
      if (!found) fail("--shape names '", name, "', which is not an input of the model");
    }
  }

  AttrValue convert_attribute(onnx::AttributeProto* a, const Node& node) {
    if (!a->ref_attr_name().empty())
      fail(node.describe(), ": attribute '", a->name(), "' refers to a function attribute");
    switch (a->type()) {
      case onnx::AttributeProto::INT: return static_cast<int64_t>(a->i());
      case onnx::AttributeProto::FLOAT: return a->f();
      case onnx::AttributeProto::STRING: return a->s();
      case onnx::AttributeProto::INTS: return std::vector<int64_t>(a->ints().begin(), a->ints().end());
      case onnx::AttributeProto::FLOATS: return std::vector<float>(a->floats().begin(), a->floats().end());
      case onnx::AttributeProto::TENSOR:
        return std::make_shared<const Tensor>(tensor_from_proto(
            a->mutable_t(), str_cat(path_, ": ", node.describe(), ": attribute '", a->name(), "'"), &external_));
      default:
        fail(node.describe(), ": attribute '", a->name(), "' has a type Mono does not support (",
             onnx::AttributeProto::AttributeType_Name(a->type()), ")");
    }
  }

  void add_nodes(onnx::GraphProto* gp) {
    // First create every node and its outputs, then wire inputs (nodes may come in any order).
    std::vector<std::pair<Node*, onnx::NodeProto*>> created;
    int index = 0;
    for (onnx::NodeProto& np : *gp->mutable_node()) {
      std::string name = np.name().empty() ? str_cat(np.op_type(), "_", index) : np.name();
      ++index;
      std::string where = str_cat("node '", name, "' (", np.op_type(), ", opset ", opset_, ")");
      if (!np.domain().empty() && np.domain() != "ai.onnx") {
        if (functions_.count(np.domain() + "::" + np.op_type()))
          fail(where, ": calls a model-local function, which Mono does not support");
        fail("unsupported op '", np.domain(), ".", np.op_type(), "' in ", where);
      }
      OpKind kind;
      if (!op_from_name(np.op_type().c_str(), &kind)) fail("unsupported op '", np.op_type(), "' in ", where);
      std::vector<std::string> outs;
      for (const std::string& o : np.output()) outs.push_back(o);
      Node* node = graph_->add_node(kind, name, {}, outs, opset_);
      for (size_t i = 0; i < outs.size(); ++i) {
        if (outs[i].empty()) continue;
        if (node->outputs[i]->name != outs[i] || values_.count(outs[i]))
          fail(where, ": output '", outs[i], "' is already defined elsewhere");
        define(outs[i], node->outputs[i], "a node output");
      }
      for (onnx::AttributeProto& a : *np.mutable_attribute()) {
        if (node->attrs.count(a.name())) fail(where, ": attribute '", a.name(), "' is set twice");
        if (a.name().rfind("mono.", 0) == 0) fail(where, ": attribute '", a.name(), "' is Mono's own, not a model's");
        node->attrs[a.name()] = convert_attribute(&a, *node);
      }
      created.emplace_back(node, &np);
    }
    for (auto& [node, np] : created) {
      for (const std::string& in : np->input()) {
        if (in.empty()) {
          node->inputs.push_back(nullptr);
          continue;
        }
        auto it = values_.find(in);
        if (it == values_.end())
          fail(node->describe(), " reads '", in, "', which no node, input or initializer defines");
        node->inputs.push_back(it->second);
      }
      try {
        check_node_signature(*node);
      } catch (const UserError& e) {
        fail(e.what());
      }
    }
  }

  void add_outputs(const onnx::GraphProto& gp) {
    if (gp.output_size() == 0) fail("the graph has no outputs");
    for (const onnx::ValueInfoProto& out : gp.output()) {
      auto it = values_.find(out.name());
      if (it == values_.end()) fail("graph output '", out.name(), "' is never computed");
      graph_->outputs.push_back(it->second);
    }
  }

  // Declared output and value_info types must agree with what the graph computes.
  void check_declared(const onnx::ValueInfoProto& info, const char* what) {
    auto it = values_.find(info.name());
    if (it == values_.end() || !info.type().has_tensor_type()) return;
    const Value* v = it->second;
    const auto& tt = info.type().tensor_type();
    DType declared;
    if (tt.elem_type() != 0 && (!dtype_from_onnx(tt.elem_type(), &declared) || declared != v->type.dtype))
      fail("inconsistent types: ", what, " '", info.name(), "' is declared ", onnx_dtype_name(tt.elem_type()),
           " but computes ", v->type.str());
    if (!tt.has_shape()) return;
    bool mismatch = tt.shape().dim_size() != v->type.rank();
    for (int i = 0; !mismatch && i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      if (d.has_dim_value() && d.dim_value() != v->type.shape[i]) mismatch = true;
    }
    if (mismatch) {
      std::string dims;
      for (int i = 0; i < tt.shape().dim_size(); ++i) {
        const auto& d = tt.shape().dim(i);
        dims += str_cat(i ? "," : "", d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param().empty() ? "?" : d.dim_param());
      }
      std::string producer = v->producer ? str_cat(" (from ", v->producer->describe(), ")") : "";
      fail("inconsistent shapes: ", what, " '", info.name(), "' is declared [", dims, "] but computes ",
           v->type.str(), producer);
    }
  }

  void check_declared_types(const onnx::GraphProto& gp) {
    for (const auto& out : gp.output()) check_declared(out, "output");
    for (const auto& vi : gp.value_info()) check_declared(vi, "value");
  }

  std::string path_;
  const LoadOptions& options_;
  ExternalDataFiles external_;
  Graph* graph_ = nullptr;
  int opset_ = 0;
  std::unordered_map<std::string, Value*> values_;
  std::set<std::string> functions_;
  std::vector<std::string> notes_;
};

}  // namespace

LoadResult load_onnx(const std::string& path, const LoadOptions& options) {
  try {
    return Loader(path, options).load();
  } catch (const UserError& e) {
    std::string msg = e.what();
    if (msg.rfind(path, 0) == 0) throw;
    throw UserError(str_cat(path, ": ", msg));
  }
}

Shape parse_dims(const std::string& text) {
  Shape shape;
  if (text.empty() || text == "scalar") return shape;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('x', start);
    if (end == std::string::npos) end = text.size();
    std::string part = text.substr(start, end - start);
    char* stop = nullptr;
    long long d = std::strtoll(part.c_str(), &stop, 10);
    if (part.empty() || *stop || d < 0) user_error("bad dimensions '", text, "': expected e.g. 1x128");
    shape.push_back(d);
    start = end + 1;
  }
  if (shape_numel(shape) < 0) user_error("dimensions '", text, "' are too large");
  return shape;
}

std::pair<std::string, Shape> parse_shape_binding(const std::string& text) {
  size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0) user_error("bad --shape '", text, "': expected NAME=DIMS, e.g. input_ids=1x128");
  return {text.substr(0, eq), parse_dims(text.substr(eq + 1))};
}

Tensor read_tensor_file(const std::string& path, std::string* name) {
  std::string bytes = read_file(path);
  onnx::TensorProto proto;
  if (!parse_message(bytes, &proto)) user_error(path, ": not a valid TensorProto file");
  if (name) *name = proto.name();
  ExternalDataFiles external(dirname_of(path));
  return tensor_from_proto(&proto, path, &external);
}

void write_tensor_file(const std::string& path, const Tensor& tensor, const std::string& name) {
  onnx::TensorProto proto;
  tensor_to_proto(tensor, name, &proto);
  std::ofstream out(path, std::ios::binary);
  if (!out || !proto.SerializeToOstream(&out)) user_error("cannot write '", path, "'");
}

}  // namespace mono
