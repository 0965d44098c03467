// What the random graphs (generator.cc, cnn_blocks.cc) are written with: values and their
// shapes, the seeded choices, and the graph text (constants and nodes) as it grows.
#pragma once

#include <cstdint>
#include <functional>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace mono::difftest {

using Dims = std::vector<int64_t>;

struct Val {
  std::string name;
  Dims shape;
  bool bounded = false;  // |x| <= ~1 (Tanh, Sigmoid, Softmax...): safe for Exp
};

inline int64_t numel(const Dims& d) { return std::accumulate(d.begin(), d.end(), int64_t{1}, std::multiplies<int64_t>()); }

inline std::string dims_text(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s + "]";
}

inline std::string ints_text(const Dims& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

// An attribute list from its non-empty parts.
inline std::string str_attrs(const std::vector<std::string>& parts) {
  std::string s;
  for (const std::string& p : parts)
    if (!p.empty()) s += (s.empty() ? "" : ", ") + p;
  return s;
}

constexpr int64_t kMaxElements = 4096;

class GraphWriter {
 public:
  explicit GraphWriter(uint64_t seed) : rng_(seed) {}

  int pick(int n) { return n <= 1 ? 0 : static_cast<int>(rng_() % static_cast<uint64_t>(n)); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  std::string str_name(const char* prefix) { return prefix + std::to_string(counter_++); }

  // One of the float values of rank lo..hi, or null.
  const Val* float_of_rank(int lo, int hi) {
    std::vector<const Val*> c;
    for (const Val& v : floats_)
      if (static_cast<int>(v.shape.size()) >= lo && static_cast<int>(v.shape.size()) <= hi) c.push_back(&v);
    return c.empty() ? nullptr : c[pick(static_cast<int>(c.size()))];
  }

  // Constants: float ones elided (the parser makes their values up from the seed).
  std::string float_const(const Dims& d) {
    const std::string n = str_name("c");
    consts_ << "  const %" << n << ": f32" << dims_text(d) << " = <" << numel(d) << " elements>\n";
    return n;
  }
  std::string scalar_const(double v) {
    const std::string n = str_name("s");
    consts_ << "  const %" << n << ": f32[] = [" << v << "]\n";
    return n;
  }
  std::string int_const(const Dims& values, bool scalar = false) {
    const std::string n = str_name("i");
    consts_ << "  const %" << n << ": i64" << (scalar ? "[]" : dims_text({static_cast<int64_t>(values.size())})) << " = "
            << ints_text(values) << "\n";
    return n;
  }
  // A float constant named `name` with its values written out (`values`: "[a, b, ...]").
  void const_line(const std::string& name, const Dims& d, const std::string& values) {
    consts_ << "  const %" << name << ": f32" << dims_text(d) << " = " << values << "\n";
  }
  // Emits `%out = OP(args) {attrs}` and records the float result.
  const Val& node(const std::string& op, const std::vector<std::string>& args, const Dims& out, const std::string& attrs = "",
                  bool bounded = false) {
    Val v{str_name("v"), out, bounded};
    body_ << "  %" << v.name << " = " << op << "(";
    for (size_t i = 0; i < args.size(); ++i) body_ << (i ? ", " : "") << (args[i] == "_" ? "" : "%") << args[i];
    body_ << ")" << (attrs.empty() ? "" : " {" + attrs + "}") << "\n";
    floats_.push_back(v);
    return floats_.back();
  }

 protected:
  std::mt19937_64 rng_;
  int counter_ = 0;
  std::vector<Val> inputs_, floats_;
  std::ostringstream consts_, body_;
};

}  // namespace mono::difftest
