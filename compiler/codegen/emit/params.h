// The pointer parameters of one group function, in order of first use: each distinct (value,
// packing) is one parameter, named after its role in the group ("out", "in1", "bias",
// "add2_in1": input 1 of the group's second node, an Add), so that groups with the same code
// share the function. The function's signature declares them; its call site passes the
// kernel's buffer of each (Module::buffer: named after the tensor).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "compiler/codegen/plan.h"

namespace mono::emit {

class Module;

class ParamList {
 public:
  explicit ParamList(Module& m) : m_(m) {}

  // The parameter for `v` (its root) with `packing`, named `role` (made unique) at first use.
  std::string ref(const Value* v, const Packing& packing, const std::string& role);

  // ", const half_t* __restrict__ in0, half_t* __restrict__ out": the values in `written` are
  // not const.
  std::string declarations(const std::set<const Value*>& written) const;
  // "  const half_t* in0;\n  half_t* out;\n": the same as the fields of a struct.
  std::string fields(const std::set<const Value*>& written) const;
  // The buffer the kernel passes for each parameter, in order.
  std::vector<std::string> arguments() const;

 private:
  struct Param {
    const Value* value;
    Packing packing;
    std::string name;
  };
  std::string type(const Param& p, const std::set<const Value*>& written) const;

  Module& m_;
  std::vector<Param> params_;
};

}  // namespace mono::emit
