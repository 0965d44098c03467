#include "compiler/codegen/emit/params.h"

#include "compiler/codegen/emit/module.h"
#include "compiler/codegen/emit/names.h"
#include "compiler/support/error.h"

namespace mono::emit {

namespace {
// Names the generated functions use for their own variables (emit/*.cc): a parameter never
// takes one. Index variables (o0, e0_1, x0, r2, bb0...) carry digits no role has; the GEMM
// tile functions' own names (A, B, b, epi, ws...) never meet a parameter of a role.
bool is_local_name(const std::string& s) {
  static const char* const kLocals[] = {"L",  "S",  "base", "bi", "c",    "cnt",  "col",  "e",     "g",     "i",
                                        "ih", "in", "item", "iw", "j",    "k",    "kh",   "kw",    "m",     "mean",
                                        "mu", "mx", "n",    "n0", "r",    "row",  "rstd", "sc",    "stats", "store",
                                        "sum", "v", "va"};
  for (const char* l : kLocals)
    if (s == l) return true;
  return false;
}
}  // namespace

std::string ParamList::ref(const Value* v, const Packing& packing, const std::string& role) {
  const Value* r = m_.plan.root(v);
  for (const Param& p : params_)
    if (p.value == r && p.packing == packing) return p.name;
  std::string name = is_local_name(role) ? role + "_in" : role;
  for (int k = 2;; ++k) {
    bool taken = false;
    for (const Param& p : params_) taken = taken || p.name == name;
    if (!taken) break;
    name = str_cat(role, "_", k);
  }
  params_.push_back({r, packing, name});
  return name;
}

std::string ParamList::type(const Param& p, const std::set<const Value*>& written) const {
  return str_cat(written.count(p.value) ? "" : "const ", ctype(m_.plan.dtype_of(p.value)), "*");
}

std::string ParamList::declarations(const std::set<const Value*>& written) const {
  std::string s;
  for (const Param& p : params_) s += str_cat(", ", type(p, written), " __restrict__ ", p.name);
  return s;
}

std::string ParamList::fields(const std::set<const Value*>& written) const {
  std::string s;
  for (const Param& p : params_) s += str_cat("  ", type(p, written), " ", p.name, ";\n");
  return s;
}

std::vector<std::string> ParamList::arguments() const {
  std::vector<std::string> out;
  for (const Param& p : params_) out.push_back(m_.buffer(p.value, p.packing));
  return out;
}

}  // namespace mono::emit
