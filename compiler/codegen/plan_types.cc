// The plan's value types (plan.h): names, comparisons, lookups.
#include "compiler/codegen/plan.h"

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>

#include "compiler/codegen/support.h"
#include "compiler/support/error.h"

namespace mono {

int KernelContext::register_cap() const {
  int cap = 65536 / (threads * blocks_per_sm);
  return std::min(255, cap - cap % 8);
}

const char* group_kind_name(GroupKind k) {
  switch (k) {
    case GroupKind::kGemm: return "gemm";
    case GroupKind::kConvGemm: return "conv-gemm";
    case GroupKind::kRows: return "rows";
    case GroupKind::kPointwise: return "pointwise";
  }
  return "?";
}

std::string GemmSchedule::str() const {
  return str_cat("tile ", bm, "x", bn, "x", bk, ", warps ", warps_m, "x", warps_n, ", stages ", stages,
                 ", split-k ", splits, wgmma ? ", wgmma" : "");
}

bool GemmSchedule::operator==(const GemmSchedule& o) const {
  return bm == o.bm && bn == o.bn && bk == o.bk && warps_m == o.warps_m && warps_n == o.warps_n &&
         stages == o.stages && splits == o.splits && wgmma == o.wgmma;
}

bool Schedule::operator==(const Schedule& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case GroupKind::kGemm:
    case GroupKind::kConvGemm: return gemm == o.gemm;
    case GroupKind::kPointwise: return pointwise == o.pointwise;
    case GroupKind::kRows: return true;
  }
  return true;
}

std::string Schedule::str() const {
  switch (kind) {
    case GroupKind::kGemm:
    case GroupKind::kConvGemm: return str_cat(group_kind_name(kind), " ", gemm.str());
    case GroupKind::kPointwise:
      return str_cat("pointwise ilp ", pointwise.ilp, pointwise.strip ? str_cat(", strip ", pointwise.strip) : "",
                     pointwise.warps ? str_cat(", warps ", pointwise.warps) : "");
    case GroupKind::kRows: return "rows (no knobs)";
  }
  return "?";
}

Schedule Group::schedule() const {
  Schedule s;
  s.kind = kind;
  s.gemm = gemm;
  s.pointwise = pointwise;
  return s;
}

std::string Group::nodes() const {
  auto node = [](const Node* n) { return n->name.empty() ? op_name(n->op) : str_cat(n->name, " (", op_name(n->op), ")"); };
  std::string s = node(anchor);
  for (const Node* n : epilogue) s += " + " + node(n);
  return s;
}

std::vector<const Value*> Group::inputs() const {
  std::vector<const Value*> out;
  auto add = [&](const Node* n) {
    for (const Value* in : n->inputs)
      if (in) out.push_back(in);
  };
  add(anchor);
  for (const Node* n : epilogue) add(n);
  return out;
}

const Value* KernelPlan::root(const Value* v) const {
  for (auto it = alias.find(v); it != alias.end(); it = alias.find(v)) v = it->second;
  return v;
}

DType KernelPlan::dtype_of(const Value* v) const {
  auto it = device_dtype.find(root(v));
  return it != device_dtype.end() ? it->second : v->type.dtype;
}

bool KernelPlan::own_buffer(const Value* v) const {
  const Placement::Space s = placement.at(root(v)).space;
  return s == Placement::kArena || s == Placement::kWeights;
}

std::vector<int> computed_inputs(const KernelPlan& plan, const Group& g) {
  std::vector<int> out;
  for (const Value* in : g.inputs()) {
    auto it = plan.computed.find(plan.root(in));
    if (it != plan.computed.end() && std::find(out.begin(), out.end(), it->second) == out.end()) out.push_back(it->second);
  }
  return out;
}

std::vector<int> at_read_groups(const KernelPlan& plan, const Group& g) {
  std::vector<int> out;
  std::function<void(const Group&)> walk = [&](const Group& r) {
    for (int id : computed_inputs(plan, r)) {
      if (std::find(out.begin(), out.end(), id) != out.end()) continue;
      out.push_back(id);
      walk(plan.groups[id]);
    }
  };
  walk(g);
  return out;
}

bool tunable(const KernelPlan& plan, const Group& g) {
  if (g.runs_fused()) return false;
  const std::vector<int> movements = at_read_groups(plan, g);
  if (movements.empty()) return true;
  std::set<const Value*> computed_here;
  for (int id : movements) computed_here.insert(plan.root(plan.groups[id].output));
  std::set<int> inside(movements.begin(), movements.end());
  inside.insert(g.id);
  for (const Group& other : plan.groups) {
    if (inside.count(other.id)) continue;
    for (const Value* in : other.inputs())
      if (computed_here.count(plan.root(in))) return false;
  }
  return true;
}

int64_t KernelPlan::stage_items(int s) const {
  int64_t items = 0;
  for (int id : stages[s].groups)
    if (groups[id].fused_into < 0) items += groups[id].items;
  return items;
}

Packing KernelPlan::packing(const Node& n, int i) const {
  if (i == 1) {
    auto t = weight_tiles.find(&n);
    if (t != weight_tiles.end()) return t->second;
  }
  return constant_packing(n, i);
}

size_t KernelPlan::constant_offset(const Value* v, const Packing& packing) const {
  for (const PackedConstant& c : constants)
    if (c.value == v && c.packing == packing) return c.offset;
  MONO_CHECK(false, "constant ", v->name, " was not packed as '", packing.str(), "'");
}

bool Packing::operator<(const Packing& o) const {
  return std::tie(transposed, tile_rows, tile_k, swizzled) < std::tie(o.transposed, o.tile_rows, o.tile_k, o.swizzled);
}

std::string Packing::str() const {
  return str_cat(transposed ? "nk" : "", tiled() ? str_cat("@t", tile_rows, "x", tile_k, swizzled ? "s" : "") : std::string());
}

}  // namespace mono
