// Parser for the textual IR printed by print_graph(): golden pass tests are written in it,
// and tuning fragments travel in it (with their float weights elided and made up here).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "compiler/ir/printer.h"
#include "compiler/support/error.h"

namespace mono {
namespace {

class Parser {
 public:
  Parser(const std::string& text, const ParseOptions& options) : s_(text), options_(options) {}

  std::unique_ptr<Graph> parse() {
    auto g = std::make_unique<Graph>();
    graph_ = g.get();
    expect_word("graph");
    g->name = name();
    expect('(');
    expect_word("opset");
    g->opset = static_cast<int>(integer());
    expect(')');
    expect('{');
    while (!try_consume('}')) statement();
    skip_space();
    if (pos_ != s_.size()) fail("text after the closing '}'");
    return g;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) {
    int line = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) line += s_[i] == '\n';
    user_error("IR text line ", line, ": ", msg);
  }

  void skip_space() {
    while (pos_ < s_.size()) {
      if (isspace(static_cast<unsigned char>(s_[pos_]))) {
        ++pos_;
      } else if (s_[pos_] == '#') {  // comment to end of line
        while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }
  char peek() {
    skip_space();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool try_consume(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!try_consume(c)) fail(str_cat("expected '", c, "'"));
  }
  std::string word() {
    skip_space();
    size_t start = pos_;
    while (pos_ < s_.size() && (isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_' || s_[pos_] == '.'))
      ++pos_;
    return s_.substr(start, pos_ - start);
  }
  void expect_word(const char* w) {
    size_t save = pos_;
    if (word() != w) {
      pos_ = save;
      fail(str_cat("expected '", w, "'"));
    }
  }
  // A bare identifier or a "quoted" string with \" \\ \xHH escapes.
  std::string name() {
    if (peek() != '"') {
      std::string w = word();
      if (w.empty()) fail("expected a name");
      return w;
    }
    ++pos_;
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (c == '\\' && pos_ < s_.size()) {
        char e = s_[pos_++];
        if (e == 'x') {  // exactly two hex digits (found by tests/fuzz: "\xz?" threw std::invalid_argument)
          auto hex = [](char h) { return isxdigit(static_cast<unsigned char>(h)) != 0; };
          if (pos_ + 2 > s_.size() || !hex(s_[pos_]) || !hex(s_[pos_ + 1])) fail("a \\x escape needs two hex digits");
          out += static_cast<char>(std::stoi(s_.substr(pos_, 2), nullptr, 16));
          pos_ += 2;
        } else {
          out += e;
        }
      } else {
        out += c;
      }
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    ++pos_;
    return out;
  }
  // A number token: returns its text.
  std::string number_text() {
    skip_space();
    size_t start = pos_;
    if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) ++pos_;
    while (pos_ < s_.size() && (isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' ||
                                ((s_[pos_] == '-' || s_[pos_] == '+') && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E'))))
      ++pos_;
    if (start == pos_) fail("expected a number");
    return s_.substr(start, pos_ - start);
  }
  static bool looks_float(const std::string& t) {
    return t.find_first_of(".eEn") != std::string::npos || t == "inf" || t == "-inf";
  }
  int64_t integer() {
    std::string t = number_text();
    char* end = nullptr;
    long long v = std::strtoll(t.c_str(), &end, 10);
    if (*end) fail(str_cat("bad integer '", t, "'"));
    return v;
  }
  double real(const std::string& t) {
    if (t == "nan" || t == "-nan") return std::nan("");
    if (t == "inf") return INFINITY;
    if (t == "-inf") return -INFINITY;
    char* end = nullptr;
    double v = std::strtod(t.c_str(), &end);
    if (*end) fail(str_cat("bad number '", t, "'"));
    return v;
  }

  TensorType type() {
    std::string dt = word();
    TensorType t;
    if (!dtype_from_name(dt, &t.dtype)) fail(str_cat("unknown type '", dt, "'"));
    expect('[');
    if (!try_consume(']')) {
      do t.shape.push_back(integer());
      while (try_consume(','));
      expect(']');
    }
    if (t.numel() < 0) fail(str_cat("bad shape ", t.str()));
    return t;
  }

  // Integer elements are parsed as integers (exact over the whole int64 range: shape
  // arithmetic uses INT64_MAX as "to the end"), float elements as doubles.
  Tensor tensor_literal(const TensorType& t) {
    expect('[');
    std::vector<std::string> items;
    if (!try_consume(']')) {
      do {
        if (peek() == 't' || peek() == 'f') {
          std::string w = word();
          if (w != "true" && w != "false") fail(str_cat("bad element '", w, "'"));
          items.push_back(w == "true" ? "1" : "0");
        } else {
          items.push_back(number_text());
        }
      } while (try_consume(','));
      expect(']');
    }
    if (static_cast<int64_t>(items.size()) != t.numel())
      fail(str_cat("literal has ", items.size(), " elements; ", t.str(), " needs ", t.numel()));
    Tensor out(t);
    for (int64_t i = 0; i < t.numel(); ++i) {
      switch (t.dtype) {
        case DType::kF32: out.mutable_data<float>()[i] = static_cast<float>(real(items[i])); break;
        case DType::kF16: out.mutable_data<Half>()[i] = float_to_half(static_cast<float>(real(items[i]))); break;
        case DType::kI64: out.mutable_data<int64_t>()[i] = integer_of(items[i]); break;
        case DType::kI32: out.mutable_data<int32_t>()[i] = static_cast<int32_t>(integer_of(items[i])); break;
        case DType::kBool: out.mutable_data<uint8_t>()[i] = real(items[i]) != 0; break;
      }
    }
    return out;
  }

  // `<N elements>`: a constant the printer left out (PrintOptions::max_constant_elements).
  Tensor elided_constant(const std::string& n, const TensorType& t) {
    expect('<');
    const int64_t count = integer();
    expect_word("elements");
    expect('>');
    if (!options_.fill_elided)
      fail(str_cat("constant %", n, " is elided (<", count, " elements>): its values are not in the text"));
    if (!is_float(t.dtype))
      fail(str_cat("constant %", n, ": an elided ", dtype_name(t.dtype), " constant cannot be made up (only float ones)"));
    if (count != t.numel())
      fail(str_cat("constant %", n, " is elided with ", count, " elements; ", t.str(), " has ", t.numel()));
    return made_up_constant(t, n, options_.seed);
  }

  AttrValue attr_value() {
    char c = peek();
    if (c == '"') return name();
    if (c == '[') {
      ++pos_;
      std::vector<std::string> items;
      if (!try_consume(']')) {
        do items.push_back(number_text());
        while (try_consume(','));
        expect(']');
      }
      bool floats = false;
      for (const auto& t : items) floats |= looks_float(t);
      if (floats) {
        std::vector<float> v;
        for (const auto& t : items) v.push_back(static_cast<float>(real(t)));
        return v;
      }
      std::vector<int64_t> v;
      for (const auto& t : items) v.push_back(integer_of(t));
      return v;
    }
    if (isalpha(static_cast<unsigned char>(c)) && s_.compare(pos_, 3, "inf") != 0 &&
        s_.compare(pos_, 3, "nan") != 0) {
      TensorType t = type();
      return std::make_shared<const Tensor>(tensor_literal(t));
    }
    std::string t = number_text();
    if (looks_float(t)) return static_cast<float>(real(t));
    return static_cast<int64_t>(integer_of(t));
  }
  int64_t integer_of(const std::string& t) {
    char* end = nullptr;
    long long v = std::strtoll(t.c_str(), &end, 10);
    if (*end) fail(str_cat("bad integer '", t, "'"));
    return v;
  }

  Value* lookup(const std::string& n) {
    auto it = values_.find(n);
    if (it == values_.end()) fail(str_cat("value %", n, " is not defined"));
    return it->second;
  }
  void define(const std::string& n, Value* v) {
    if (!values_.emplace(n, v).second) fail(str_cat("value %", n, " is defined twice"));
    if (v->name != n) fail(str_cat("value %", n, " clashes with a generated name"));
  }
  // `%name` or `_`.
  bool value_name(std::string* out) {
    if (try_consume('_')) return false;
    expect('%');
    *out = name();
    return true;
  }

  void statement() {
    size_t save = pos_;
    std::string w = word();
    if (w == "input") {
      std::string n;
      if (!value_name(&n)) fail("an input needs a name");
      expect(':');
      Value* v = graph_->add_value(n, type());
      define(n, v);
      graph_->inputs.push_back(v);
      return;
    }
    if (w == "const") {
      std::string n;
      if (!value_name(&n)) fail("a constant needs a name");
      expect(':');
      TensorType t = type();
      expect('=');
      Value* v = graph_->add_constant(n, peek() == '<' ? elided_constant(n, t) : tensor_literal(t));
      define(n, v);
      return;
    }
    if (w == "output") {
      std::string n;
      if (!value_name(&n)) fail("an output needs a name");
      graph_->outputs.push_back(lookup(n));
      return;
    }
    pos_ = save;
    node();
  }

  void node() {
    std::vector<std::string> out_names;
    std::vector<TensorType> out_types;
    std::vector<bool> typed;
    do {
      std::string n;
      bool present = value_name(&n);
      out_names.push_back(present ? n : "");
      bool has_type = present && try_consume(':');
      typed.push_back(has_type);
      out_types.push_back(has_type ? type() : TensorType{});
    } while (try_consume(','));
    expect('=');
    std::string op = word();
    OpKind kind;
    if (!op_from_name(op.c_str(), &kind)) fail(str_cat("unknown op '", op, "'"));
    expect('(');
    std::vector<Value*> inputs;
    if (!try_consume(')')) {
      do {
        std::string n;
        inputs.push_back(value_name(&n) ? lookup(n) : nullptr);
      } while (try_consume(','));
      expect(')');
    }
    std::map<std::string, AttrValue> attrs;
    if (try_consume('{')) {
      if (!try_consume('}')) {
        do {
          std::string key = word();
          if (key.empty()) fail("expected an attribute name");
          expect('=');
          attrs[key] = attr_value();
        } while (try_consume(','));
        expect('}');
      }
    }
    std::string node_name;
    if (try_consume('@')) node_name = name();
    Node* n = graph_->add_node(kind, node_name, inputs, out_names, graph_->opset);
    n->attrs = std::move(attrs);
    for (size_t i = 0; i < out_names.size(); ++i) {
      if (!n->outputs[i]) continue;
      define(out_names[i], n->outputs[i]);
      if (typed[i]) n->outputs[i]->type = out_types[i];
    }
  }

  const std::string& s_;
  const ParseOptions& options_;
  size_t pos_ = 0;
  Graph* graph_ = nullptr;
  std::unordered_map<std::string, Value*> values_;
};

}  // namespace

std::unique_ptr<Graph> parse_graph(const std::string& text, const ParseOptions& options) {
  return Parser(text, options).parse();
}

Tensor made_up_constant(const TensorType& type, const std::string& name, uint64_t seed) {
  // SplitMix64 (exact integer arithmetic: the same values on every platform and compiler),
  // started from the seed and the FNV-1a hash of the name so that a constant's values do
  // not depend on the other constants of the graph.
  uint64_t state = seed;
  for (unsigned char c : name) state = (state ^ c) * 0x100000001b3ull;
  auto next = [&state] {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  // Whichever dimension a GEMM or convolution reduces over (the first of a [K, N] MatMul
  // weight, the others of a [N, K] Gemm or [Co, Ci, kh, kw] Conv weight), it is at most the
  // larger of these two: sums of that many products stay about unit size.
  double scale = 1.0;
  if (type.rank() >= 2 && type.shape[0] > 0) {
    const int64_t first = type.shape[0];
    scale = 1.0 / std::sqrt(static_cast<double>(std::max(first, type.numel() / first)));
  }
  // Written straight into the tensor (a model's 100 M made-up weights: no second copy).
  Tensor t(TensorType{DType::kF32, type.shape});
  float* values = t.mutable_data<float>();
  for (int64_t i = 0, n = t.numel(); i < n; ++i) {
    const double u = static_cast<double>(next() >> 40) / static_cast<double>(1 << 24);  // [0, 1)
    values[i] = static_cast<float>((2 * u - 1) * scale);
  }
  return type.dtype == DType::kF32 ? t : t.cast(type.dtype);
}

}  // namespace mono
