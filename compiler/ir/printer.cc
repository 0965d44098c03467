#include "compiler/ir/printer.h"

#include <cmath>
#include <cstdio>
#include <sstream>

namespace mono {

static bool is_bare(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')) return false;
  return true;
}

std::string quote_string(const std::string& name) {
  std::string out = "\"";
  for (unsigned char c : name) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string quote_name(const std::string& name) { return is_bare(name) ? name : quote_string(name); }

std::string format_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  // Shortest precision that reads back to the same float.
  for (int prec = 6; prec <= 9; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (static_cast<float>(std::strtod(buf, nullptr)) == static_cast<float>(v)) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

static std::string format_elements(const Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (i) s += ", ";
    if (is_float(t.dtype())) s += format_float(t.as_double(i));
    else if (t.dtype() == DType::kBool) s += t.as_int(i) ? "true" : "false";
    else s += std::to_string(t.as_int(i));
  }
  return s + "]";
}

std::string format_attr(const AttrValue& v) {
  switch (attr_type_of(v)) {
    case AttrType::kInt: return std::to_string(std::get<int64_t>(v));
    case AttrType::kFloat: return format_float(std::get<float>(v));
    case AttrType::kString: return quote_string(std::get<std::string>(v));
    case AttrType::kInts: {
      std::string s = "[";
      for (int64_t x : std::get<std::vector<int64_t>>(v)) s += (s.size() > 1 ? ", " : "") + std::to_string(x);
      return s + "]";
    }
    case AttrType::kFloats: {
      std::string s = "[";
      for (float x : std::get<std::vector<float>>(v)) s += (s.size() > 1 ? ", " : "") + format_float(x);
      return s + "]";
    }
    case AttrType::kTensor: {
      const Tensor& t = *std::get<std::shared_ptr<const Tensor>>(v);
      return t.type().str() + " " + format_elements(t);
    }
  }
  return "?";
}

static std::string value_ref(const Value* v) { return v ? "%" + quote_name(v->name) : "_"; }

void print_graph(std::ostream& os, const Graph& g, const PrintOptions& options) {
  os << "graph " << quote_name(g.name.empty() ? "main" : g.name) << " (opset " << g.opset << ") {\n";
  for (const Value* in : g.inputs) os << "  input " << value_ref(in) << ": " << in->type.str() << "\n";
  for (const Value* c : g.constants()) {
    os << "  const " << value_ref(c) << ": " << c->type.str() << " = ";
    const bool elidable = !options.elide_floats_only || is_float(c->type.dtype);
    if (!elidable || c->constant->numel() <= options.max_constant_elements || options.in_full.count(c))
      os << format_elements(*c->constant);
    else os << "<" << c->constant->numel() << " elements>";
    os << "\n";
  }
  for (const auto& n : g.nodes()) {
    os << "  ";
    for (size_t i = 0; i < n->outputs.size(); ++i) {
      if (i) os << ", ";
      const Value* out = n->outputs[i];
      os << value_ref(out);
      if (out) os << ": " << out->type.str();
    }
    os << " = " << op_name(n->op) << "(";
    for (size_t i = 0; i < n->inputs.size(); ++i) os << (i ? ", " : "") << value_ref(n->inputs[i]);
    os << ")";
    if (!n->attrs.empty()) {
      os << " {";
      bool first = true;
      for (const auto& [key, value] : n->attrs) {
        os << (first ? "" : ", ") << key << "=" << format_attr(value);
        first = false;
      }
      os << "}";
    }
    if (options.node_names && !n->name.empty()) os << " @" << quote_name(n->name);
    os << "\n";
  }
  for (const Value* out : g.outputs) os << "  output " << value_ref(out) << "\n";
  os << "}\n";
}

std::string graph_to_string(const Graph& graph, const PrintOptions& options) {
  std::ostringstream os;
  print_graph(os, graph, options);
  return os.str();
}

}  // namespace mono
