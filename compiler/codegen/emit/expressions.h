// Expressions over a group's tensors: element loads (scalar constants become literals), the
// elementwise op table, conversions and stores. In a two-phase GEMM epilogue (epilogue.cuh: every
// read of a thread's elements issued before its first store) each float read is made in the
// load phase (L) and kept in a slot for the store phase; `slots` counts them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compiler/codegen/emit/params.h"
#include "compiler/codegen/plan.h"

namespace mono::emit {

class Expressions {
 public:
  // `slots`: null outside a two-phase epilogue.
  Expressions(const KernelPlan& plan, ParamList& params, size_t* slots = nullptr)
      : plan_(plan), params_(params), slots_(slots) {}

  const KernelPlan& plan() const { return plan_; }
  ParamList& params() { return params_; }
  // An element of `v` at an offset expression, converted to its compute type; `role` names
  // its parameter (ParamList::ref).
  std::string load(const Value* v, const std::string& offset, const std::string& role);
  // The operand expressions of an elementwise node whose output axis d has the index
  // expression idx[d]; input `running` (>= 0) is the running value `v` instead. Input i's
  // parameter is named `role` + "in" + i.
  std::vector<std::string> operands(const Node& n, int running, const std::vector<std::string>& idx,
                                    const std::string& role);
  // An elementwise op applied to its operands' expressions (the op table).
  std::string elementwise(const Node& n, const std::vector<std::string>& a, DType in_dtype) const;
  std::string cast(const std::string& a, DType from, DType to) const;
  // `v` (a compute-type expression) converted for a store of dtype `d`.
  std::string store(DType d, const std::string& v) const;

  // Movements computed at read (Group::at_read): a pointwise emitter whose loads are all made
  // by load() at flat indices allows them, and puts prelude() (a lambda per movement it reads,
  // inner ones first) at the top of its function; load() then calls the lambda.
  void allow_computed() { allow_computed_ = true; }
  const std::string& prelude() const { return prelude_; }

 private:
  std::string slot(const std::string& e);
  std::string computed(const Value* root, const std::string& offset);

  const KernelPlan& plan_;
  ParamList& params_;
  size_t* slots_;
  bool allow_computed_ = false;
  std::string prelude_;
  std::map<const Value*, std::string> lambdas_;  // computed value -> its lambda's name
};

// Ops an elementwise group can be anchored on (every epilogue op, comparisons, logic, Where,
// Cast, IsNaN).
bool is_elementwise_anchor(OpKind op);

}  // namespace mono::emit
