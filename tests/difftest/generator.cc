#include "tests/difftest/generator.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <vector>

#include "tests/difftest/cnn_blocks.h"

namespace mono::difftest {
namespace {

class Generator : public GraphWriter {
 public:
  Generator(uint64_t seed, const GeneratorOptions& o) : GraphWriter(seed), opt_(o) {}

  std::string run() {
    const int inputs = 1 + pick(opt_.max_inputs);
    for (int i = 0; i < inputs; ++i) {
      Val v{str_name("x"), random_dims(1 + pick(4))};
      inputs_.push_back(v);
      floats_.push_back(v);
      body_ << "  input %" << v.name << ": f32" << dims_text(v.shape) << "\n";
    }
    const int nodes = opt_.min_nodes + pick(opt_.max_nodes - opt_.min_nodes + 1);
    int made = 0;
    for (int attempt = 0; made < nodes && attempt < 20 * nodes; ++attempt)
      if (step()) ++made;
    // Outputs: the last value, and sometimes others (an input now and then: an output the
    // kernel copies).
    std::vector<std::string> outs = {floats_.back().name};
    for (int k = pick(3); k > 0; --k) {
      const Val& v = chance(0.1) ? inputs_[pick(static_cast<int>(inputs_.size()))] : some_float();
      if (std::find(outs.begin(), outs.end(), v.name) == outs.end()) outs.push_back(v.name);
    }
    std::ostringstream os;
    os << "graph g (opset 17) {\n" << consts_.str() << body_.str();
    for (const std::string& o : outs) os << "  output %" << o << "\n";
    os << "}\n";
    return os.str();
  }

 private:

  Dims random_dims(int rank) {
    static const int64_t kDims[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16};
    Dims d;
    for (int i = 0; i < rank; ++i) d.push_back(kDims[pick(11)]);
    while (numel(d) > kMaxElements / 4) d[pick(rank)] = 1 + pick(4);
    return d;
  }
  // A recent float value more often than an old one: chains, with some DAG edges.
  const Val& some_float() {
    const int n = static_cast<int>(floats_.size());
    return floats_[chance(0.6) ? n - 1 - pick(std::min(n, 3)) : pick(n)];
  }


  // A shape `x` broadcasts with: x's own, or some dims set to 1, or fewer leading dims.
  Dims broadcastable(const Dims& x) {
    Dims d = x;
    for (int64_t& e : d)
      if (chance(0.3)) e = 1;
    if (!d.empty() && chance(0.3)) d.erase(d.begin(), d.begin() + 1 + pick(static_cast<int>(d.size())));
    return d;
  }
  static Dims broadcast(Dims a, Dims b) {
    if (a.size() < b.size()) std::swap(a, b);
    Dims out = a;
    const size_t off = a.size() - b.size();
    for (size_t i = 0; i < b.size(); ++i) out[off + i] = std::max(a[off + i], b[i]);
    return out;
  }
  static bool broadcasts(const Dims& a, const Dims& b) {
    const size_t n = std::min(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
      const int64_t x = a[a.size() - 1 - i], y = b[b.size() - 1 - i];
      if (x != y && x != 1 && y != 1) return false;
    }
    return true;
  }
  // Another operand for an elementwise op on x: an existing value that broadcasts with it, or a
  // constant.
  std::pair<std::string, Dims> other_operand(const Val& x) {
    if (chance(0.5)) {
      std::vector<const Val*> c;
      for (const Val& v : floats_)
        if (v.name != x.name && broadcasts(v.shape, x.shape) && numel(broadcast(v.shape, x.shape)) <= kMaxElements)
          c.push_back(&v);
      if (!c.empty()) {
        const Val* v = c[pick(static_cast<int>(c.size()))];
        return {v->name, v->shape};
      }
    }
    if (chance(0.15)) return {scalar_const(0.5 + pick(3)), {}};
    const Dims d = broadcastable(x.shape);
    return {float_const(d), d};
  }

  // x + 1 > 0 from any x: |x| + 1.
  std::string positive(const Val& x) {
    const Val& a = node("Abs", {x.name}, x.shape);
    const std::string one = scalar_const(1.0);
    return node("Add", {a.name, one}, x.shape).name;
  }

  bool step() {
    const Val x = some_float();  // a copy: node() may grow floats_
    const int rank = static_cast<int>(x.shape.size());
    switch (pick(29)) {
      case 0: {
        static const char* kOps[] = {"Relu", "Neg", "Abs", "Sigmoid", "Tanh", "Erf"};
        const int k = pick(6);
        node(kOps[k], {x.name}, x.shape, "", k >= 3);
        return true;
      }
      case 1:
        node("Gelu", {x.name}, x.shape, chance(0.5) ? "approximate=\"tanh\"" : "");
        return true;
      case 2: {  // Exp of something bounded; Sqrt, Log, Reciprocal of something positive
        if (x.bounded) {
          node("Exp", {x.name}, x.shape);
          return true;
        }
        const std::string p = positive(x);
        static const char* kOps[] = {"Sqrt", "Log", "Reciprocal"};
        node(kOps[pick(3)], {p}, x.shape, "", true);
        return true;
      }
      case 3: {
        node("Clip", {x.name, scalar_const(-0.5 - pick(2)), scalar_const(0.5 + pick(2))}, x.shape, "", true);
        return true;
      }
      case 4:
      case 5: {
        static const char* kOps[] = {"Add", "Sub", "Mul", "Max", "Min"};
        const auto [o, d] = other_operand(x);
        const std::string op = kOps[pick(5)];
        const bool swap = chance(0.3);
        node(op, swap ? std::vector<std::string>{o, x.name} : std::vector<std::string>{x.name, o}, broadcast(x.shape, d));
        return true;
      }
      case 6: {  // Div by something positive; Pow with a small exponent
        if (chance(0.5)) {
          const auto [o, d] = other_operand(x);
          Val tmp{o, d};
          const std::string p = positive(tmp);
          node("Div", {x.name, p}, broadcast(x.shape, d));
        } else {
          node("Pow", {positive(x), scalar_const(chance(0.5) ? 2.0 : 0.5)}, x.shape);
        }
        return true;
      }
      case 7: {  // variadic Max / Min of three
        const auto [a, da] = other_operand(x);
        const auto [b, db] = other_operand(x);
        if (!broadcasts(da, db)) return false;
        node(chance(0.5) ? "Max" : "Min", {x.name, a, b}, broadcast(broadcast(x.shape, da), db));
        return true;
      }
      case 8: {  // Where(x > other, x, other2) (a bool intermediate)
        const auto [a, da] = other_operand(x);
        const auto [b, db] = other_operand(x);
        if (!broadcasts(broadcast(x.shape, da), db)) return false;
        const std::string c = str_name("b");
        body_ << "  %" << c << " = " << (chance(0.5) ? "Greater" : "Less") << "(%" << x.name << ", %" << a << ")\n";
        node("Where", {c, x.name, b}, broadcast(broadcast(x.shape, da), db));
        return true;
      }
      case 9: {  // MatMul with constant weights (2-D, or batched like x)
        if (rank < 1) return false;
        const int64_t K = x.shape.back();
        static const int64_t kN[] = {1, 3, 8, 16, 32, 64};
        const int64_t N = kN[pick(6)];
        Dims w = {K, N};
        if (rank >= 3 && chance(0.3)) w.insert(w.begin(), x.shape.begin(), x.shape.end() - 2);
        Dims out = x.shape;
        if (rank == 1) out = {N};
        else out.back() = N;
        if (numel(out) > kMaxElements) return false;
        node("MatMul", {x.name, float_const(w)}, out);
        return true;
      }
      case 10: {  // Gemm
        if (rank != 2) return false;
        const bool ta = chance(0.3), tb = chance(0.5);
        const int64_t M = ta ? x.shape[1] : x.shape[0], K = ta ? x.shape[0] : x.shape[1];
        const int64_t N = 1 + pick(24);
        std::vector<std::string> args = {x.name, float_const(tb ? Dims{N, K} : Dims{K, N})};
        if (chance(0.7)) args.push_back(float_const(chance(0.5) ? Dims{N} : Dims{M, N}));
        std::string attrs = str_attrs({ta ? "transA=1" : "", tb ? "transB=1" : "", chance(0.3) ? "alpha=0.5" : "",
                                       chance(0.3) && args.size() == 3 ? "beta=2.0" : ""});
        node("Gemm", args, {M, N}, attrs);
        return true;
      }
      case 11: {  // Conv, dense, grouped or depthwise, NCHW: kernels up to 5, strides, dilation, uneven pads, H != W
        const Val* v = float_of_rank(4, 4);
        if (!v || v->shape[2] < 3 || v->shape[3] < 3) return reshape_to_4d(x);
        return conv2d(*this, *v);
      }
      case 12: {  // pools
        const Val* v = float_of_rank(4, 4);
        if (!v || v->shape[2] < 2 || v->shape[3] < 2) return reshape_to_4d(x);
        if (chance(0.25)) {
          node("GlobalAveragePool", {v->name}, {v->shape[0], v->shape[1], 1, 1});
          return true;
        }
        const int64_t k = std::min<int64_t>(chance(0.5) ? 2 : 3, std::min(v->shape[2], v->shape[3]));
        const int64_t s = 1 + pick(2), p = k > 1 && chance(0.4) ? 1 : 0;
        const bool max = chance(0.5);
        const int64_t H = (v->shape[2] + 2 * p - k) / s + 1, W = (v->shape[3] + 2 * p - k) / s + 1;
        node(max ? "MaxPool" : "AveragePool", {v->name}, {v->shape[0], v->shape[1], H, W},
             str_attrs({"kernel_shape=" + ints_text({k, k}), "strides=" + ints_text({s, s}),
                        "pads=" + ints_text({p, p, p, p}), !max && chance(0.5) ? "count_include_pad=1" : ""}));
        return true;
      }
      case 13: {  // reductions over a random non-empty set of axes
        if (rank < 1) return false;
        Dims axes;
        for (int a = 0; a < rank; ++a)
          if (chance(0.5)) axes.push_back(chance(0.3) ? a - rank : a);
        if (axes.empty()) axes.push_back(pick(rank));
        const bool keep = chance(0.5);
        Dims out;
        for (int a = 0; a < rank; ++a) {
          const bool reduced = std::find(axes.begin(), axes.end(), a) != axes.end() ||
                               std::find(axes.begin(), axes.end(), a - rank) != axes.end();
          if (!reduced) out.push_back(x.shape[a]);
          else if (keep) out.push_back(1);
        }
        const int which = pick(3);
        const std::string keepdims = keep ? "" : "keepdims=0";
        if (which == 0) node("ReduceSum", {x.name, int_const(axes)}, out, keepdims);
        else node(which == 1 ? "ReduceMean" : "ReduceMax", {x.name}, out, str_attrs({"axes=" + ints_text(axes), keepdims}));
        return true;
      }
      case 14: {
        if (rank < 1) return false;
        node("Softmax", {x.name}, x.shape, "axis=" + std::to_string(pick(2 * rank) - rank), true);
        return true;
      }
      case 15: {  // LayerNormalization over [axis, rank)
        if (rank < 1) return false;
        const int axis = pick(rank);
        const Dims norm(x.shape.begin() + axis, x.shape.end());
        if (numel(norm) < 2) return false;
        // A row of (nearly) equal values has no direction to normalise to: its output is the
        // rounding noise of its mean, scaled by 1/sqrt(epsilon). A varying offset keeps rows
        // apart (x may be a broadcast or a gathered copy of one value).
        const std::string offset = node("Add", {x.name, float_const(norm)}, x.shape).name;
        std::vector<std::string> args = {offset, float_const(norm)};
        if (chance(0.6)) args.push_back(float_const(norm));
        node("LayerNormalization", args, x.shape,
             str_attrs({"axis=" + std::to_string(chance(0.5) ? axis : axis - rank), chance(0.3) ? "epsilon=0.001" : ""}));
        return true;
      }
      case 16: {  // Transpose (channels-first <-> channels-last among others)
        if (rank < 2) return false;
        Dims perm(rank);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng_);
        Dims out;
        for (int64_t p : perm) out.push_back(x.shape[p]);
        node("Transpose", {x.name}, out, "perm=" + ints_text(perm));
        return true;
      }
      case 17: return reshape(x);
      case 18: {  // Concat with a value or constant that matches but for the axis
        if (rank < 1) return false;
        const int axis = pick(rank);
        Dims other = x.shape;
        other[axis] = 1 + pick(4);
        std::string o;
        for (const Val& v : floats_)
          if (v.name != x.name && v.shape.size() == x.shape.size()) {
            bool ok = true;
            for (int d = 0; d < rank; ++d) ok = ok && (d == axis || v.shape[d] == x.shape[d]);
            if (ok && chance(0.5)) o = v.name, other = v.shape;
          }
        if (o.empty()) o = float_const(other);
        Dims out = x.shape;
        out[axis] += other[axis];
        if (numel(out) > kMaxElements) return false;
        node("Concat", chance(0.5) ? std::vector<std::string>{x.name, o} : std::vector<std::string>{o, x.name}, out,
             "axis=" + std::to_string(chance(0.3) ? axis - rank : axis));
        return true;
      }
      case 19: {  // Slice with steps of 1, 2 or -1; or a roll (Swin's shifted windows as exported)
        if (rank < 1) return false;
        const int axis = pick(rank);
        const int64_t dim = x.shape[axis];
        if (dim < 2) return false;
        if (chance(0.25)) {  // Concat(x[s:], x[:s]) along the axis
          const int64_t s = 1 + pick(static_cast<int>(dim - 1));
          Dims tail = x.shape, head = x.shape;
          tail[axis] = dim - s;
          head[axis] = s;
          const std::string a = node("Slice", {x.name, int_const({s}), int_const({dim}), int_const({axis})}, tail).name;
          const std::string b = node("Slice", {x.name, int_const({0}), int_const({s}), int_const({axis})}, head).name;
          node("Concat", {a, b}, x.shape, "axis=" + std::to_string(axis));
          return true;
        }
        int64_t start, end, step, count;
        if (chance(0.25)) {  // backwards: from start down to end (exclusive); -dim-1 means through 0
          step = -1;
          start = 1 + pick(static_cast<int>(dim - 1));
          end = chance(0.3) ? -dim - 1 : pick(static_cast<int>(start));
          count = end < 0 ? start + 1 : start - end;
        } else {
          step = chance(0.3) ? 2 : 1;
          start = pick(static_cast<int>(dim - 1));
          end = start + 1 + pick(static_cast<int>(dim - start));
          count = (end - start + step - 1) / step;
        }
        Dims out = x.shape;
        out[axis] = count;
        node("Slice", {x.name, int_const({start}), int_const({end}), int_const({axis}), int_const({step})}, out);
        return true;
      }
      case 20: {  // Gather with constant indices (negative ones too)
        if (rank < 1) return false;
        const int axis = pick(rank);
        const int64_t dim = x.shape[axis];
        const int irank = pick(3);
        Dims ishape = irank == 0 ? Dims{} : random_dims(irank);
        if (numel(ishape) > 16) ishape = {2};
        Dims idx;
        for (int64_t i = 0; i < numel(ishape); ++i) idx.push_back(static_cast<int64_t>(pick(static_cast<int>(2 * dim))) - dim);
        const std::string in = str_name("i");
        consts_ << "  const %" << in << ": i64" << dims_text(ishape) << " = " << ints_text(idx) << "\n";
        Dims out(x.shape.begin(), x.shape.begin() + axis);
        out.insert(out.end(), ishape.begin(), ishape.end());
        out.insert(out.end(), x.shape.begin() + axis + 1, x.shape.end());
        if (numel(out) > kMaxElements) return false;
        node("Gather", {x.name, in}, out, "axis=" + std::to_string(axis));
        return true;
      }
      case 21: return big_gemm();
      case 22: return attention();
      case 23:
      case 24: return activation(x);
      case 25: return reduction(x);
      case 26: return conv1d(*this);
      case 27: return index_op(x);
      default: return misc(x);
    }
  }

  // The continuous activations (a step function's jump could flip on a rounding difference
  // between the kernel and the reference, so Floor, Round, Sign, Shrink... are left to the
  // conformance tests), PRelu with a broadcast slope, variadic Sum and Mean.
  bool activation(const Val& x) {
    struct Act { const char* op; const char* attrs; bool bounded; };
    static const Act kActs[] = {
        {"Sin", "", true}, {"Cos", "", true}, {"Atan", "", true}, {"Softsign", "", true},
        {"Softplus", "", false}, {"Mish", "", false}, {"HardSwish", "", false},
        {"HardSigmoid", "alpha=0.25, beta=0.4", true}, {"HardSigmoid", "", true},
        {"LeakyRelu", "alpha=0.1", false}, {"Elu", "alpha=0.7", false}, {"Selu", "", false},
        {"Celu", "alpha=1.5", false}, {"Asinh", "", false}, {"Swish", "", false}, {"Swish", "alpha=0.5", false}};
    const int k = pick(static_cast<int>(sizeof(kActs) / sizeof(kActs[0])) + 2);
    if (k < static_cast<int>(sizeof(kActs) / sizeof(kActs[0]))) {
      node(kActs[k].op, {x.name}, x.shape, kActs[k].attrs, kActs[k].bounded);
      return true;
    }
    const auto [a, da] = other_operand(x);
    if (k == static_cast<int>(sizeof(kActs) / sizeof(kActs[0]))) {  // PRelu: the slope broadcasts to x
      if (broadcast(x.shape, da) != x.shape) return false;
      node("PRelu", {x.name, a}, x.shape);
      return true;
    }
    const auto [b, db] = other_operand(x);
    if (!broadcasts(da, db)) return false;
    node(chance(0.5) ? "Sum" : "Mean", {x.name, a, b}, broadcast(broadcast(x.shape, da), db));
    return true;
  }

  // Pad (each mode, negative pads crop), Tile, Trilu, Resize: outputs that read x at rewritten
  // indices.
  bool index_op(const Val& x) {
    const int rank = static_cast<int>(x.shape.size());
    if (rank < 1) return false;
    const int which = pick(4);
    if (which == 3) {  // Resize of the last one or two axes by 0.5, 1, 1.5 or 2: sizes as input 3 (opset 17)
      static const char* kModes[] = {"nearest", "linear", "cubic"};
      static const char* kTransforms[] = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"};
      Dims sizes = x.shape;
      for (int d = std::max(0, rank - 2); d < rank; ++d)
        if (chance(0.7)) sizes[d] = std::max<int64_t>(1, x.shape[d] * (1 + pick(4)) / 2);
      if (numel(sizes) > kMaxElements) return false;
      const int mode = pick(3);
      node("Resize", {x.name, "_", "_", int_const(sizes)}, sizes,
           str_attrs({std::string("mode=\"") + kModes[mode] + "\"",
                      std::string("coordinate_transformation_mode=\"") + kTransforms[pick(4)] + "\"",
                      mode == 0 && chance(0.5) ? "nearest_mode=\"floor\"" : "",
                      mode == 2 && chance(0.3) ? "exclude_outside=1" : ""}));
      return true;
    }
    if (which == 0) {  // Pad: pads as input 1 (opset 17)
      static const char* kModes[] = {"constant", "edge", "reflect"};
      const int mode = pick(3);
      Dims pads(2 * rank), out = x.shape;
      for (int d = 0; d < rank; ++d) {
        const int64_t n = x.shape[d];
        for (int side = 0; side < 2; ++side) {
          int64_t p = chance(0.5) ? 0 : pick(3);
          if (mode == 2) p = std::min<int64_t>(p, n - 1);
          else if (mode == 0 && n > 2 && chance(0.2)) p = -1;  // crop
          pads[d + side * rank] = p;
          out[d] += p;
        }
      }
      if (numel(out) > kMaxElements) return false;
      std::vector<std::string> args = {x.name, int_const(pads)};
      if (mode == 0 && chance(0.5)) args.push_back(scalar_const(0.25 * pick(5)));
      node("Pad", args, out, std::string("mode=\"") + kModes[mode] + "\"");
      return true;
    }
    if (which == 1) {  // Tile
      Dims reps(rank, 1), out = x.shape;
      for (int d = 0; d < rank; ++d)
        if (chance(0.4)) out[d] *= (reps[d] = 2);
      if (numel(out) > kMaxElements) return false;
      node("Tile", {x.name, int_const(reps)}, out);
      return true;
    }
    if (rank < 2) return false;  // Trilu with a constant k
    node("Trilu", {x.name, int_const({pick(5) - 2}, true)}, x.shape, chance(0.5) ? "upper=0" : "");
    return true;
  }

  // The other Reduce ops over random axes (LogSum of something positive).
  bool reduction(const Val& x) {
    const int rank = static_cast<int>(x.shape.size());
    if (rank < 1) return false;
    Dims axes, out;
    for (int a = 0; a < rank; ++a)
      if (chance(0.5)) axes.push_back(a);
    if (axes.empty()) axes.push_back(pick(rank));
    const bool keep = chance(0.5);
    for (int a = 0; a < rank; ++a) {
      if (std::find(axes.begin(), axes.end(), a) == axes.end()) out.push_back(x.shape[a]);
      else if (keep) out.push_back(1);
    }
    static const char* kOps[] = {"ReduceMin", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSumExp",
                                 "ReduceLogSum"};
    const int k = pick(6);
    const std::string in = k == 5 ? positive(x) : x.name;
    node(kOps[k], {in}, out, str_attrs({"axes=" + ints_text(axes), keep ? "" : "keepdims=0"}));  // opset 17: attributes
    return true;
  }

  // A GEMM of the sizes that take the tiled (tensor core in fp16) paths, on a new input:
  // [B,] M x K times a K x N weight, with the bias, activation and residual steps of a
  // transformer's or a ConvNet head's Linear layers.
  bool big_gemm() {
    // M = 1: a classifier head (one row: the GEMV path).
    static const int64_t kM[] = {1, 16, 64, 128, 197, 256}, kK[] = {64, 96, 128, 256, 512}, kN[] = {32, 64, 128, 192, 384};
    const int64_t M = kM[pick(6)], K = kK[pick(5)], N = kN[pick(5)];
    Dims xs = {M, K};
    if (M > 1 && chance(0.3)) xs.insert(xs.begin(), 2);
    const Val x{str_name("x"), xs};
    inputs_.push_back(x);
    body_ << "  input %" << x.name << ": f32" << dims_text(xs) << "\n";
    Dims out = xs;
    out.back() = N;
    const bool gemm = xs.size() == 2 && chance(0.3);
    std::string y;
    if (gemm) {
      const bool tb = chance(0.5);
      std::vector<std::string> args = {x.name, float_const(tb ? Dims{N, K} : Dims{K, N})};
      if (chance(0.7)) args.push_back(float_const({N}));
      y = node("Gemm", args, out, tb ? "transB=1" : "").name;
    } else {
      y = node("MatMul", {x.name, float_const({K, N})}, out).name;
      if (chance(0.7)) y = node("Add", {y, float_const({N})}, out).name;
    }
    if (chance(0.6)) {
      static const char* kAct[] = {"Relu", "Gelu", "Tanh", "Sigmoid"};
      y = node(kAct[pick(4)], {y}, out).name;
    }
    if (chance(0.3)) node("Add", {y, float_const(out)}, out);
    return true;
  }

  // Multi-head self-attention as exporters write it, on a new input [B, S, E]: projections,
  // heads split by Reshape + Transpose, scores scaled (Div or Mul) and masked (sometimes),
  // Softmax over the keys, the weighted sum of values, heads merged.
  bool attention() {
    static const int64_t kS[] = {8, 16, 50, 64, 128, 197}, kH[] = {1, 2, 4}, kD[] = {8, 16, 32, 64};
    const int64_t B = 1 + pick(2), S = kS[pick(6)], H = kH[pick(3)], D = kD[pick(4)], E = H * D;
    const Val x{str_name("x"), {B, S, E}};
    inputs_.push_back(x);
    body_ << "  input %" << x.name << ": f32" << dims_text(x.shape) << "\n";
    auto head = [&](const Dims& perm) {
      const std::string p = node("MatMul", {x.name, float_const({E, E})}, {B, S, E}).name;
      const std::string b = chance(0.5) ? node("Add", {p, float_const({E})}, {B, S, E}).name : p;
      const std::string r = node("Reshape", {b, int_const({B, S, H, D})}, {B, S, H, D}).name;
      const Dims src = {B, S, H, D};
      Dims out;
      for (int64_t a : perm) out.push_back(src[a]);
      return node("Transpose", {r}, out, "perm=" + ints_text(perm)).name;
    };
    const std::string q = head({0, 2, 1, 3});
    const bool k_transposed = chance(0.7);  // K as [B,H,D,S]; else [B,H,S,D] and a Transpose
    std::string k = head(k_transposed ? Dims{0, 2, 3, 1} : Dims{0, 2, 1, 3});
    if (!k_transposed) k = node("Transpose", {k}, {B, H, D, S}, "perm=[0, 1, 3, 2]").name;
    const std::string v = head({0, 2, 1, 3});
    std::string s = node("MatMul", {q, k}, {B, H, S, S}).name;
    const double scale = 1.0 / std::sqrt(static_cast<double>(D));
    s = chance(0.5) ? node("Div", {s, scalar_const(std::sqrt(static_cast<double>(D)))}, {B, H, S, S}).name
                    : node("Mul", {s, scalar_const(scale)}, {B, H, S, S}).name;
    if (chance(0.4)) s = node("Add", {s, float_const(chance(0.5) ? Dims{B, 1, 1, S} : Dims{S, S})}, {B, H, S, S}).name;
    const std::string p = node("Softmax", {s}, {B, H, S, S}, "axis=-1", true).name;
    const std::string o = node("MatMul", {p, v}, {B, H, S, D}).name;
    const std::string t = node("Transpose", {o}, {B, S, H, D}, "perm=[0, 2, 1, 3]").name;
    node("Reshape", {t, int_const({B, S, E})}, {B, S, E});
    return true;
  }

  // Split, Expand, Cast round trip, CumSum, BatchNormalization.
  bool misc(const Val& x) {
    const int rank = static_cast<int>(x.shape.size());
    switch (pick(5)) {
      case 0: {
        if (rank < 1) return false;
        const int axis = pick(rank);
        const int64_t dim = x.shape[axis];
        if (dim < 2) return false;
        const int64_t first = 1 + pick(static_cast<int>(dim - 1));
        Dims a = x.shape, b = x.shape;
        a[axis] = first, b[axis] = dim - first;
        const std::string n0 = str_name("v"), n1 = str_name("v");
        body_ << "  %" << n0 << ", %" << n1 << " = Split(%" << x.name << ", %" << int_const({first, dim - first})
              << ") {axis=" << axis << "}\n";
        floats_.push_back({n0, a});
        floats_.push_back({n1, b});
        return true;
      }
      case 1: {
        Dims target = x.shape;
        for (int64_t& d : target)
          if (d == 1 && chance(0.5)) d = 2 + pick(4);
        if (chance(0.4)) target.insert(target.begin(), 1 + pick(3));
        if (numel(target) > kMaxElements) return false;
        node("Expand", {x.name, int_const(target)}, target);
        return true;
      }
      case 2: {  // through int64 and back (truncation toward zero)
        const std::string i = str_name("n");
        body_ << "  %" << i << " = Cast(%" << x.name << ") {to=7}\n";
        node("Cast", {i}, x.shape, "to=1");
        return true;
      }
      case 3: {
        if (rank < 1) return false;
        node("CumSum", {x.name, int_const({pick(2 * rank) - rank}, true)}, x.shape,
             str_attrs({chance(0.3) ? "exclusive=1" : "", chance(0.3) ? "reverse=1" : ""}));
        return true;
      }
      default: {
        const Val* v = float_of_rank(4, 4);
        if (!v) return reshape_to_4d(x);
        batch_norm(*this, *v);
        return true;
      }
    }
  }

  // Reshape to another factorisation of the same elements.
  bool reshape(const Val& x) {
    const int64_t n = numel(x.shape);
    Dims out;
    if (chance(0.3) || x.shape.size() < 2) {
      // Split the elements into 1..4 factors.
      int64_t rest = n;
      for (int k = 1 + pick(3); k > 0 && rest > 1; --k) {
        std::vector<int64_t> divs;
        for (int64_t d = 2; d <= rest; ++d)
          if (rest % d == 0) divs.push_back(d);
        const int64_t d = divs[pick(static_cast<int>(divs.size()))];
        out.push_back(d);
        rest /= d;
      }
      out.push_back(rest);
    } else {  // merge two neighbouring dims
      const int a = pick(static_cast<int>(x.shape.size()) - 1);
      out = x.shape;
      out[a] *= out[a + 1];
      out.erase(out.begin() + a + 1);
    }
    Dims spec = out;
    if (chance(0.3)) spec[pick(static_cast<int>(spec.size()))] = -1;
    node("Reshape", {x.name, int_const(spec)}, out);
    return true;
  }
  bool reshape_to_4d(const Val& x) {
    const int64_t n = numel(x.shape);
    for (int64_t h : {4, 3, 2})
      if (n % (h * h) == 0) {
        node("Reshape", {x.name, int_const({1, n / (h * h), h, h})}, {1, n / (h * h), h, h});
        return true;
      }
    return false;
  }


  GeneratorOptions opt_;
};

}  // namespace

std::string generate_graph(uint64_t seed, const GeneratorOptions& options) { return Generator(seed, options).run(); }

}  // namespace mono::difftest
